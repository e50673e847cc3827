//! DSI: distributed shift-and-invert power method (Garber, Shamir, Srebro, "Communication-efficient
//! algorithms for distributed stochastic principal component analysis", ICML 2017), a baseline of
//! the CEDRE paper (Huang, Pan, ICML 2020, §6, Figure 1), for the leading eigenvector of
//! Â = Σ_k (n_k/N) A_k. Reconstructed from both papers' descriptions (spec: cedre.md); every
//! choice the sources leave open is marked CHOICE with its reason.
//!
//! One [`Server::step`] is one outer iteration, the shift-and-invert power step
//!   w_(s+1) = z/‖z‖,  z ≈ H⁻¹w_s,  H = λI − Â,  λ slightly above λ₁(Â),
//! which shrinks each component off v₁ by (λ − λ₁)/(λ − λ_i) ≤ (λ − λ₁)/(λ − λ₂). The linear
//! system is the convex problem min_z ½zᵀHz − w_sᵀz, solved by gradient descent preconditioned
//! with machine 1's C = (λ + μ)I − A_1: when μ ≥ ‖A_1 − Â‖, C ⪰ H and C⁻¹H is well conditioned
//! (condition ≈ (λ − λ₁ + 2μ)/(λ − λ₁)) however large N is: Garber et al.'s point.
//!
//! Organisation. In Garber et al. machine 1 is the master, so an inner iteration is one round.
//! Here the server holds no data and cannot apply C⁻¹, so machine 1 solves with C locally and the
//! server relays: an inner iteration is two network rounds,
//!   R (relay): the server broadcasts the residual r = w_s − Hz and λ (D + 1 numbers); machine 1
//!     alone replies p = C⁻¹r (D numbers); the other machines reply nothing;
//!   P (product): the server broadcasts the search direction d (D); every machine replies A_k d.
//! The server keeps z and r by linearity (r ← r − αHd, Hd = λd − Âd), so it never needs Âz.
//! Each outer iteration opens with one P round on w_s itself: it gives ρ_s = w_sᵀÂw_s (the
//! objective F(w_s) = −ρ_s/2, reported) and the inner warm start z_0 = w_s/(λ − ρ_s), exact when
//! w_s is an eigenvector, so r_0 = (Âw_s − ρ_s w_s)/(λ − ρ_s) shrinks as w_s converges.
//! Bytes per outer iteration with T inner iterations, K machines, dimension D:
//!   down 8·(D + T(2D + 1)),  up 8·(K·D + T(D + K·D)),  plus one scalar up (the margin) once.
//!
//! Step size. CHOICE: exact line search, α = rᵀC⁻¹r / dᵀHd (`solver = "gd"`: preconditioned
//! steepest descent, d = C⁻¹r). It costs nothing extra (the P round returns Hd) and converges for
//! any μ with C ≻ 0, whereas a fixed unit step can diverge once μ falls below ‖A_1 − Â‖, a norm
//! no party can compute. `solver = "cg"`: preconditioned conjugate gradients (same rounds,
//! d = C⁻¹r + βd_prev), the accelerated rate √κ that Garber et al.'s communication bound assumes.
//!
//! Shift. CHOICE: λ = ρ̂ + δ̂ at every outer iteration, where
//!  - ρ̂ is the largest Rayleigh quotient xᵀÂx/xᵀx of any vector x broadcast in a P round so far
//!    (free: the server has Âx), a lower bound on λ₁ that rises to λ₁ as w_s converges;
//!  - δ̂ = `gap_factor`·(λ₁(A_1) − λ₂(A_1)), a fraction of machine 1's local eigengap (an
//!    estimate of the eigengap δ), which machine 1 sends once (one scalar, in its first reply).
//!
//! So λ − λ₁ → δ̂ and the rate per outer iteration tends to δ̂/(δ̂ + δ). Garber et al. keep
//! λ − λ₁ = Θ(δ): closer shifts shrink more per outer iteration but make H worse conditioned
//! and risk λ < λ₁. `gap_factor` = 0.25 (rate ≈ ⅕). On the unit test's problem it needs 9 outer
//! iterations (35 rounds) to 1 − (wᵀv)² ≤ 1e-10, against 12 (38) at 0.5 and 18 (54) at 1. At the
//! paper's scale (experiments/cedre/dsi_study: K = 100, all of MNIST and Fashion-MNIST, to log
//! error −32) it needs 39 and 24 network exchanges, against 39 and 36 at 0.5 (the default
//! until 2026-11-25) and 57 and 54 at 1; no inner_tol or solver did better on both sets.
//! λ > λ₁ holds when λ₁ − ρ̂ < δ̂, true unless the start is far off and the local gap
//! underestimates δ. Guard: a P round whose direction has dᵀHd ≤ 0 proves λ ≤ λ₁ (its Rayleigh
//! quotient ≥ λ); the outer iteration then ends with w_(s+1) = d/‖d‖ (a larger Rayleigh quotient
//! than w_s's), and the next one shifts from the raised ρ̂ (a unit test recovers from a coordinate
//! vector start this way). A shift below λ₁ that no direction reveals is not detected: the
//! iteration may then settle on another eigenvector.
//!
//! μ. CHOICE: unset, μ = √(b₁ λ₁(A_1) ln D / n₁), b₁ = max ‖x‖² over machine 1's samples: the
//! matrix-Bernstein size of ‖A_1 − Â‖ (Garber et al. take μ of order b/√n up to logs), computable
//! by machine 1 alone. Machine 1 also keeps C ⪰ δ̂I (c = λ + μ raised to λ₁(A_1) + δ̂ if needed),
//! so C is positive definite whatever μ. C⁻¹ is exact: machine 1 holds the thin SVD of X_1,
//! A_1 = U diag(σ) Uᵀ, and C⁻¹r = r/c + U((1/(c − σ) − 1/c) ∘ Uᵀr).
//!
//! Inner stop. CHOICE: ‖r_t‖ ≤ `inner_tol`·‖r_0‖ or `max_inner` iterations. Relative to r_0,
//! which shrinks with the eigen-residual, so the absolute accuracy tightens as w_s converges, as
//! inexact shift-and-invert needs. `inner_tol` = 0.3, of the order of the outer rate, so that the
//! solve's error is of the order of what the power step removes anyway: on the unit test's
//! problem (at gap_factor 0.5) 0.3 needs 38 rounds to 1e-10, 0.1 needs 61, at the same 11–12
//! outer iterations; dsi_study finds 0.3 and 0.5 alike and 0.1 slower at scale. The number of
//! outer iterations is the runner's budget (`stop.max_rounds`), not a parameter.
//!
//! μ measured the same way (at gap_factor 0.5): 0.02–0.04 (≈ ‖A_1 − Â‖ = 0.04 there) needs 33 rounds, the default
//! (0.137, three times the true norm) 38, 0 needs 36: with the line search μ only tunes speed.

use super::common::{
    a_times, a_times_vec, check_rows, local_samples, sample_weights, start_vector, unit, w_message,
    weighted_vector,
};
use crate::data::matrix::Block;
use crate::fed::{Client, Message, Network};
use crate::linalg::svd::thin_svd;
use crate::methods::{ClientSetup, Method, Server, ServerSetup, StepInfo};
use crate::spec::Kind;
use anyhow::{bail, Context, Result};
use ndarray::{Array1, Array2, ArrayView1, Axis};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub struct Dsi;

/// How each inner iteration picks its direction from p = C⁻¹r.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Solver {
    /// Preconditioned steepest descent: d = p, exact line search.
    Gd,
    /// Preconditioned conjugate gradients: d = p + βd_prev.
    Cg,
}

/// DSI parameters; every one can be set in a manifest's `params`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// shift margin δ̂ = gap_factor·machine 1's local eigengap; shift λ = ρ̂ + δ̂
    pub gap_factor: f64,
    /// preconditioner regularisation μ; unset: √(b₁λ₁(A_1) ln D / n₁)
    pub mu: Option<f64>,
    /// inner solver: "gd" (preconditioned steepest descent) or "cg" (conjugate gradients)
    pub solver: Solver,
    /// the inner solve stops at ‖r_t‖ ≤ inner_tol·‖r_0‖
    pub inner_tol: f64,
    /// inner iterations (two rounds each) per outer iteration, at most
    pub max_inner: usize,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            gap_factor: 0.25,
            mu: None,
            solver: Solver::Gd,
            inner_tol: 0.3,
            max_inner: 100,
        }
    }
}

impl crate::methods::Params for Params {
    // `!(x > 0.0)` on purpose: it rejects NaN too.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        if !(self.gap_factor > 0.0 && self.gap_factor.is_finite()) {
            return Err(("gap_factor", "must be a finite number > 0".into()));
        }
        if let Some(mu) = self.mu {
            if !(mu >= 0.0 && mu.is_finite()) {
                return Err(("mu", "must be a finite number >= 0".into()));
            }
        }
        if !(self.inner_tol >= 0.0 && self.inner_tol < 1.0) {
            return Err(("inner_tol", "must lie in [0, 1)".into()));
        }
        if self.max_inner == 0 {
            return Err(("max_inner", "must be at least 1".into()));
        }
        Ok(())
    }
}

impl Method for Dsi {
    const NAME: &'static str = "dsi";
    const PAPER: &'static str =
        "Garber, Shamir, Srebro (ICML 2017), distributed shift-and-invert; CEDRE paper's baseline";
    const FAMILY: Kind = Kind::Eigvec;
    const ABOUT: &'static str = "DSI: shift-and-invert power method, each solve by GD preconditioned on machine 1 (server relays)";
    type Params = Params;

    fn server(p: &Params, setup: ServerSetup) -> Result<Box<dyn Server>> {
        let w = start_vector(setup.start, "DSI", "starts from the family's `w`")?;
        Ok(Box::new(Master {
            w: unit(w).context("DSI: the start `w` is zero or not finite")?,
            weights: sample_weights(setup.sizes),
            rho_hat: f64::NEG_INFINITY,
            margin: None,
            p: p.clone(),
        }))
    }

    fn client<'a>(p: &Params, setup: ClientSetup<'a, '_>) -> Result<Box<dyn Client + 'a>> {
        // Machine 1's preconditioner needs dense data.
        let x = local_samples(&setup, "DSI")?;
        let pre = if setup.index == 0 {
            Some(Precond::new(x, p)?)
        } else {
            None
        };
        Ok(Box::new(Machine { x, pre }))
    }
}

/// Machine 1's C = (λ + μ)I − A_1: from the thin SVD of X_1 (dense data), or by conjugate
/// gradients on the operator (sparse data, where X_1 is D×n₁ with D = 47,236 on rcv1).
struct Precond<'a> {
    solver: Inverse<'a>,
    /// λ₁(A_1).
    top: f64,
    mu: f64,
    /// δ̂ = gap_factor·(λ₁(A_1) − λ₂(A_1)).
    margin: f64,
    margin_sent: bool,
}

enum Inverse<'a> {
    /// Eigenvectors of A_1 with nonzero eigenvalue (D×r) and their eigenvalues σ_i = s_i²/n₁,
    /// descending.
    Exact { u: Array2<f64>, sigma: Array1<f64> },
    /// C⁻¹r by conjugate gradients on v ↦ cv − A_1v (C ⪰ δ̂I: condition ≤ c/δ̂), to a relative
    /// residual of [`CG_TOL`].
    Operator(Block<'a>),
}

/// Relative residual of the operator form's solves: C⁻¹r to about 1e-13·cond, well below what
/// the outer line search can tell from the exact inverse.
const CG_TOL: f64 = 1e-14;
const CG_MAX_ITERS: usize = 2000;

impl<'a> Precond<'a> {
    // `!(x > 0.0)` on purpose: it rejects NaN too.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    fn new(x: Block<'a>, p: &Params) -> Result<Self> {
        let (d, n) = (x.n(), x.samples());
        let (solver, top, second) = match x {
            Block::Dense(x) => {
                let svd = thin_svd(x)?;
                let sigma = svd.s.mapv(|s| s * s / n as f64);
                let top = sigma[0];
                if !(top > 0.0) {
                    bail!("DSI: machine 1's data is zero");
                }
                // Drop numerically null directions: there A_1 acts as 0, as on the complement
                // of U.
                let keep = sigma.iter().take_while(|&&s| s > 1e-14 * top).count();
                let second = sigma.get(1).copied().filter(|_| keep > 1).unwrap_or(0.0);
                let u = svd.u.slice(ndarray::s![.., ..keep]).to_owned();
                let sigma = sigma.slice(ndarray::s![..keep]).to_owned();
                (Inverse::Exact { u, sigma }, top, second)
            }
            other => {
                // λ₁, λ₂ of A_1 by block Krylov (residuals ≤ 1e-12·λ₁).
                let eig = if d >= 4 {
                    other.top_gram_eigs(2)?.values / n as f64
                } else {
                    let g = other.gram() / n as f64;
                    crate::linalg::sym_eig_desc(g.view())?.values
                };
                let top = eig[0];
                if !(top > 0.0) {
                    bail!("DSI: machine 1's data is zero");
                }
                let second = eig.get(1).copied().unwrap_or(0.0).max(0.0);
                (Inverse::Operator(other), top, second)
            }
        };
        let margin = p.gap_factor * (top - second);
        if !(margin > 0.0) {
            bail!(
                "DSI: machine 1's top eigenvalue is repeated: its local eigengap, the shift \
                 margin, is 0"
            );
        }
        let mu = p.mu.unwrap_or_else(|| {
            let b = x.sample_norms2().into_iter().fold(0.0, f64::max);
            (b * top * (d.max(2) as f64).ln() / n as f64).sqrt()
        });
        Ok(Self {
            solver,
            top,
            mu,
            margin,
            margin_sent: false,
        })
    }

    /// c of C = cI − A_1 for the shift λ; kept ≥ λ₁(A_1) + δ̂ so that C ⪰ δ̂I.
    fn c(&self, lambda: f64) -> f64 {
        (lambda + self.mu).max(self.top + self.margin)
    }

    /// C⁻¹r for the shift λ.
    fn solve(&self, r: ArrayView1<f64>, lambda: f64) -> Array1<f64> {
        let c = self.c(lambda);
        match &self.solver {
            Inverse::Exact { u, sigma } => {
                let coef = u.t().dot(&r) * &sigma.mapv(|s| 1.0 / (c - s) - 1.0 / c);
                &r / c + &u.dot(&coef)
            }
            Inverse::Operator(x) => {
                let apply = |v: &Array1<f64>| v * c - &a_times_vec(*x, v.view());
                let mut z = Array1::zeros(r.len());
                let mut res = r.to_owned();
                let mut dir = res.clone();
                let mut rr = res.dot(&res);
                let stop = CG_TOL * CG_TOL * rr;
                for _ in 0..CG_MAX_ITERS {
                    if rr <= stop || rr == 0.0 {
                        break;
                    }
                    let q = apply(&dir);
                    let alpha = rr / dir.dot(&q);
                    z.scaled_add(alpha, &dir);
                    res.scaled_add(-alpha, &q);
                    let next = res.dot(&res);
                    dir = &res + &(dir * (next / rr));
                    rr = next;
                }
                z
            }
        }
    }
}

struct Machine<'a> {
    x: Block<'a>,
    /// Machine 1 only.
    pre: Option<Precond<'a>>,
}

impl Client for Machine<'_> {
    fn respond(&mut self, msg: &Message) -> Result<Message> {
        if msg.has("z") {
            // P round: A_k d = X_k(X_kᵀd)/n_k.
            let z = msg.get("z")?;
            check_rows("DSI", "z", z, self.x.n())?;
            let mut reply = Message::new().with("az", a_times(self.x, z.view()));
            if let Some(pre) = &mut self.pre {
                if !pre.margin_sent {
                    reply = reply.with_scalar("margin", pre.margin);
                    pre.margin_sent = true;
                }
            }
            return Ok(reply);
        }
        // R round: only machine 1 answers.
        let Some(pre) = &self.pre else {
            return Ok(Message::new());
        };
        let r = msg.get("r")?;
        check_rows("DSI", "r", r, self.x.n())?;
        let p = pre.solve(r.column(0), msg.scalar("shift")?);
        Ok(Message::new().with("p", p.insert_axis(Axis(1))))
    }
}

struct Master {
    /// w_s, unit.
    w: Array1<f64>,
    /// n_k / N: Â = Σ_k (n_k/N) A_k.
    weights: Vec<f64>,
    /// The largest Rayleigh quotient seen: a lower bound on λ₁(Â).
    rho_hat: f64,
    /// δ̂, from machine 1's first reply.
    margin: Option<f64>,
    p: Params,
}

impl Master {
    /// P round: Âd; also raises ρ̂ by d's Rayleigh quotient.
    fn product(&mut self, net: &mut dyn Network, d: &Array1<f64>) -> Result<Array1<f64>> {
        let replies = net.round(&Message::new().with("z", d.clone().insert_axis(Axis(1))))?;
        if self.margin.is_none() {
            let first = replies.first().context("DSI: no machines")?;
            self.margin = Some(
                first
                    .scalar("margin")
                    .context("DSI: machine 1's shift margin")?,
            );
        }
        let ad = weighted_vector(&replies, &self.weights, "az", d.len(), "DSI")?;
        let rho = d.dot(&ad) / d.dot(d);
        if rho > self.rho_hat {
            self.rho_hat = rho;
        }
        Ok(ad)
    }

    /// R round: machine 1's C⁻¹r.
    fn relay(&self, net: &mut dyn Network, r: &Array1<f64>, lambda: f64) -> Result<Array1<f64>> {
        let msg = Message::new()
            .with("r", r.clone().insert_axis(Axis(1)))
            .with_scalar("shift", lambda);
        let replies = net.round(&msg)?;
        let first = replies.first().context("DSI: no machines")?;
        Ok(first.get("p")?.column(0).to_owned())
    }
}

fn norm(v: &Array1<f64>) -> f64 {
    v.dot(v).sqrt()
}

impl Server for Master {
    /// The shift margin δ̂ machine 1 sent and the last shift λ = ρ̂ + δ̂.
    fn chosen(&self) -> Vec<(&'static str, f64)> {
        match self.margin {
            Some(m) => vec![("margin", m), ("shift", self.rho_hat + m)],
            None => Vec::new(),
        }
    }

    // `!(x > 0.0)` on purpose: NaN takes the safe branch.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    fn step(&mut self, net: &mut dyn Network) -> Result<StepInfo> {
        let w = self.w.clone();
        let aw = self.product(net, &w)?;
        let rho = w.dot(&aw);
        let info = StepInfo {
            objective: Some(-0.5 * rho),
            ..Default::default()
        };
        let lambda = self.rho_hat + self.margin.context("DSI: no shift margin")?;
        // λ − ρ ≥ δ̂ > 0, since ρ ≤ ρ̂.
        let scale = 1.0 / (lambda - rho);
        let mut z = &w * scale;
        let mut r = (&aw - &(&w * rho)) * scale;
        let r0 = norm(&r);
        // (d, rᵀp) of the previous inner iteration, for CG.
        let mut prev: Option<(Array1<f64>, f64)> = None;
        for _ in 0..self.p.max_inner {
            let rn = norm(&r);
            if rn <= self.p.inner_tol * r0 || rn == 0.0 {
                break;
            }
            let p = self.relay(net, &r, lambda)?;
            let rp = r.dot(&p);
            if !(rp > 0.0) {
                break; // C ≻ 0, so only rounding gets here: r is at the noise floor.
            }
            let d = match (self.p.solver, prev.take()) {
                (Solver::Cg, Some((d_prev, rp_prev))) => p + &(d_prev * (rp / rp_prev)),
                _ => p,
            };
            let ad = self.product(net, &d)?;
            let hd = &d * lambda - &ad;
            let curv = d.dot(&hd);
            if !(curv > 0.0) {
                // d's Rayleigh quotient ≥ λ > ρ_s: the shift is below λ₁. ρ̂ has risen past λ,
                // so the next outer iteration shifts higher; d is the better start.
                self.w = &d / norm(&d);
                return Ok(info);
            }
            let alpha = rp / curv;
            z.scaled_add(alpha, &d);
            r.scaled_add(-alpha, &hd);
            prev = Some((d, rp));
        }
        self.w = unit(z).context("DSI: the inner solve returned z = 0 or not finite")?;
        Ok(info)
    }

    fn estimate(&self) -> Message {
        w_message(&self.w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::eigvec::common::testing::{self, estimate, problem, sin2_after};
    use crate::methods::registry::Running;

    /// 1 − (vᵀw)² after `steps` outer iterations on the cedre test's problem (data halved): D =
    /// 20, 4 machines of 200, from the warm start.
    fn run(params: &str, steps: usize) -> (f64, Running<'static>) {
        sin2_after("dsi", 2.0, params, steps)
    }

    #[test]
    fn both_solvers_converge_to_the_leading_eigenvector() {
        for solver in ["gd", "cg"] {
            let (err, _) = run(&format!("solver = \"{solver}\""), 20);
            assert!(err <= 1e-10, "{solver}: 1 − cos² = {err:e}");
        }
    }

    /// Margins from far below to above the gap converge.
    #[test]
    fn other_margins_converge_too() {
        for gf in [0.1, 0.5, 1.0] {
            let (err, _) = run(&format!("gap_factor = {gf}"), 30);
            assert!(err <= 1e-10, "gap_factor {gf}: 1 − cos² = {err:e}");
        }
    }

    /// From a coordinate vector with a tiny margin the first shift lies below λ₁; the guard
    /// raises it (measured: it fires) and the run still converges to v₁.
    #[test]
    fn a_shift_below_the_top_eigenvalue_is_recovered() {
        let p = problem(2.0);
        let mut w0 = Array1::zeros(20);
        w0[0] = 1.0;
        let r = testing::run("dsi", "gap_factor = 0.05", p.x, &w_message(&w0), 30);
        let c = estimate(&r).dot(&p.v);
        assert!(1.0 - c * c <= 1e-10, "1 − cos² = {:e}", 1.0 - c * c);
    }

    /// With T inner iterations per outer one: 1 + 2T rounds; down D + T(2D + 1); up K·D +
    /// T(D + K·D), plus machine 1's margin once.
    #[test]
    fn rounds_and_bytes_follow_the_count() {
        let (steps, t) = (3u64, 3u64);
        let (_, r) = run("inner_tol = 0.0\nmax_inner = 3", steps as usize);
        let c = r.net.counters();
        let (d, k) = (20u64, 4u64);
        assert_eq!(c.rounds, steps * (1 + 2 * t));
        assert_eq!(c.bytes_down, 8 * steps * (d + t * (2 * d + 1)));
        assert_eq!(c.bytes_up, 8 * (steps * (k * d + t * (d + k * d)) + 1));
        assert_eq!(c.bytes_up_per_client[0], 8 * (steps * (d + t * 2 * d) + 1));
        assert_eq!(c.bytes_up_per_client[1], 8 * steps * (d + t * d));
    }

    /// The relay solves (λ + μ)I − A_1 exactly, for D > n₁ (thin SVD) as for D ≤ n₁.
    #[test]
    fn the_preconditioner_solves_with_c() {
        let x = problem(2.0).x;
        for n in [200, 12] {
            let x1 = x.slice(ndarray::s![.., ..n]);
            let pre = Precond::new(Block::Dense(x1), &Params::default()).unwrap();
            let lambda = pre.top + 0.05;
            let c = pre.c(lambda);
            let r = Array1::from_shape_fn(20, |i| (i as f64).sin());
            let p = pre.solve(r.view(), lambda);
            let a1p = a_times_vec(Block::Dense(x1), p.view());
            let back = &p * c - &a1p;
            assert!(norm(&(&back - &r)) <= 1e-12 * norm(&r), "n = {n}");
        }
    }
}
