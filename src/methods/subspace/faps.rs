//! FAPS: federated ADMM-like algorithm with projection splitting (the paper's Algorithm 1).
//!
//! Client i keeps X_i ∈ S_{n,p}, the low-rank multiplier factor W_i (Λ_i = X_iW_iᵀ + W_iX_iᵀ,
//! (15)–(16)) and its penalty β_i. Iteration k, on receiving Z⁽ᵏ⁾:
//! 1. penalty rule (25) from the projection distances d_i⁽ᵏ⁾ = ‖X_iX_iᵀ − ZZᵀ‖_F;
//! 2. X_i ← approximate top-p eigenspace of H_i = A_iA_iᵀ + Λ_i + β_i ZZᵀ, by SSI warm-started
//!    at X_i (the inexactness of this step is what makes FAPS fast, see [`InnerRule`]);
//! 3. W_i ← −(I − X_iX_iᵀ)A_iA_iᵀX_i (16);
//! 4. send Y_i = (β_iX_iX_iᵀ − Λ_i)Z (18)–(19), plus the scalar ‖A_iᵀZ‖²_F for the stop rule.
//!
//! The server sets Z ← orth(Σ_i Y_i). Nothing n×n is ever formed.

use crate::data::matrix::Block;
use crate::fed::{sum_part, sum_scalar, Client, Message, Network, Shape};
use crate::linalg::{fro2, orth};
use crate::methods::{ClientSetup, Method, Server, ServerSetup, StepInfo};
use crate::seed;
use crate::spec::Kind;
use anyhow::Result;
use ndarray::{Array1, Array2, ArrayView2};
use rand::Rng;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How the local eigenproblem is solved inexactly.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum InnerRule {
    /// The paper's rule (26): stop when ‖X(j) − X(j−1)‖_F ≤ eps_x ‖X(j)‖_F.
    Rule,
    /// Exactly `inner_steps` SSI steps.
    Fixed,
    /// Stop when the local KKT residual fell by `delta`: condition (14) of the theory.
    Kkt,
}

/// FAPS parameters; every one can be set in a manifest's `params`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// local eigensolver's stopping rule: "rule" (26), "fixed" steps or "kkt" (14)
    pub inner: InnerRule,
    /// tolerance ε_x of rule (26): stop at ‖X(j) − X(j−1)‖_F ≤ ε_x‖X(j)‖_F
    pub eps_x: f64,
    /// local steps per round when inner = "fixed"
    pub inner_steps: u32,
    /// residual reduction δ of condition (14) when inner = "kkt"
    pub delta: f64,
    /// cap on local steps per round for the adaptive rules
    pub max_inner: u32,
    /// initial penalty β_i = beta0·‖A_i‖₂²
    pub beta0: f64,
    // Penalty rule (25): every `period` iterations, β ← (1+θ)β unless d fell by a factor (1+μ).
    /// penalty rule (25): every `period` rounds β ← (1+θ)β unless d fell enough
    pub theta: f64,
    /// penalty rule: β is kept when d fell by a factor (1 + mu)
    pub mu: f64,
    /// rounds between checks of the penalty rule
    pub period: usize,
    // Power steps to estimate ‖A_i‖₂ for β⁽⁰⁾.
    /// power steps each client spends estimating ‖A_i‖₂
    pub power_iters: usize,
    // Cap of rule (25): β_i ≤ beta_max·‖A_i‖₂². Unset (the default, the paper's rule): no cap.
    // Left out of the resolved parameters when unset, so runs without it keep their
    // fingerprints. Why a cap can matter: once d_i stops falling by (1+μ) per period (a slow
    // tail, or clients whose data differ), β grows ×(1+θ) every period without end, X_i is
    // pinned to Z and FAPS freezes (fig1a/fig1b on Gaussian data, fig4 at the paper's size).
    /// cap of the penalty rule: β_i ≤ beta_max·‖A_i‖₂² (FAPS: unset, no cap, the paper's rule)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub beta_max: Option<f64>,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            inner: InnerRule::Fixed,
            eps_x: 1e-2,
            inner_steps: 5,
            delta: 0.1,
            max_inner: 100,
            beta0: 0.15,
            theta: 0.1,
            mu: 0.01,
            period: 5,
            power_iters: 30,
            beta_max: None,
        }
    }
}

impl crate::methods::Params for Params {
    /// Reject values no run could use; the error names the parameter.
    // `!(x > 0.0)` on purpose: it rejects NaN too.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        let bad = |k, m: &str| Err((k, m.to_string()));
        if !(self.eps_x > 0.0) {
            return bad("eps_x", "must be > 0");
        }
        if self.inner_steps == 0 {
            return bad("inner_steps", "must be >= 1");
        }
        if !(self.delta > 0.0 && self.delta < 1.0) {
            return bad("delta", "must lie in (0, 1)");
        }
        if self.max_inner == 0 {
            return bad("max_inner", "must be >= 1");
        }
        if !(self.beta0 > 0.0) {
            return bad("beta0", "must be > 0");
        }
        if !(self.theta >= 0.0) || !(self.mu >= 0.0) {
            return bad("theta", "theta and mu must be >= 0");
        }
        if self.period == 0 {
            return bad("period", "must be >= 1");
        }
        if let Some(b) = self.beta_max {
            if !(b >= self.beta0) {
                return bad("beta_max", "must be >= beta0");
            }
        }
        Ok(())
    }
}

/// A FAPS client; DSSAL1's clients are the same (its [`dssal1`](crate::methods::sparse::dssal1) server differs).
pub(crate) struct FapsClient<'a> {
    a: Block<'a>,
    /// Also send ‖Λ_i‖₂ + β_i (scalar `c`), from which DSSAL1's server bounds its step size.
    pub(crate) curvature: bool,
    /// ‖A_i‖₂², by power iterations.
    a_norm2: f64,
    params: Params,
    /// Rounds answered so far: the iteration counter k of the penalty rule.
    k: usize,
    x: Array2<f64>,
    w: Array2<f64>,
    beta: f64,
    /// d_i⁽ᵏ⁾ for k = 0, 1, …
    dists: Vec<f64>,
    inner_last: u32,
    /// A_iA_iᵀX_i at the current X_i: computed for W_i (16) at the end of a round, it is also
    /// the first product of the next round's local solve, which starts at X_i.
    ax: Array2<f64>,
    /// Reuse `ax` (always, outside the test that checks reuse changes no bit).
    reuse: bool,
}

impl FapsClient<'_> {
    /// H_i V = A_iA_iᵀV + X_i(W_iᵀV) + W_i(X_iᵀV) + β_i Z(ZᵀV), at the current X_i, W_i, given
    /// `av` = A_iA_iᵀV.
    fn h_from(&self, z: ArrayView2<f64>, v: ArrayView2<f64>, av: Array2<f64>) -> Array2<f64> {
        let mut hv = av;
        hv += &self.x.dot(&self.w.t().dot(&v));
        hv += &self.w.dot(&self.x.t().dot(&v));
        hv += &(z.dot(&z.t().dot(&v)) * self.beta);
        hv
    }

    /// H_i V, with its product A_iA_iᵀV.
    fn h_times(&self, z: ArrayView2<f64>, v: ArrayView2<f64>) -> (Array2<f64>, Array2<f64>) {
        let av = self.a.gram_times(v);
        (self.h_from(z, v, av.clone()), av)
    }

    /// H_i X_i at the round's start, from the A_iA_iᵀX_i kept since the last W_i.
    fn h_at_x(&self, z: ArrayView2<f64>) -> Array2<f64> {
        let ax = if self.reuse {
            self.ax.clone()
        } else {
            self.a.gram_times(self.x.view())
        };
        self.h_from(z, self.x.view(), ax)
    }

    /// W = −(I − XXᵀ)A AᵀX, eq. (16), from `ax` = A AᵀX.
    fn multiplier_factor(x: &Array2<f64>, ax: &Array2<f64>) -> Array2<f64> {
        x.dot(&x.t().dot(ax)) - ax
    }

    /// Approximately maximise tr(XᵀH_iX) over S_{n,p}, warm-started at X_i: the new X, its
    /// inner steps, and A_iA_iᵀX when the solve computed it (the KKT rule's last product).
    fn inner_solve(
        &self,
        z: ArrayView2<f64>,
        prm: &Params,
    ) -> (Array2<f64>, u32, Option<Array2<f64>>) {
        let p = self.x.ncols() as f64;
        let hx0 = self.h_at_x(z);
        let mut x = orth(hx0.view());
        match prm.inner {
            InnerRule::Fixed => {
                for _ in 1..prm.inner_steps {
                    x = orth(self.h_times(z, x.view()).0.view());
                }
                (x, prm.inner_steps, None)
            }
            InnerRule::Rule => {
                let mut prev = self.x.clone();
                for j in 1..=prm.max_inner {
                    if j > 1 {
                        prev = x;
                        x = orth(self.h_times(z, prev.view()).0.view());
                    }
                    let change = fro2((&x - &prev).view()).sqrt();
                    if change <= prm.eps_x * p.sqrt() {
                        return (x, j, None);
                    }
                }
                (x, prm.max_inner, None)
            }
            InnerRule::Kkt => {
                let residual = |x: &Array2<f64>, hx: &Array2<f64>| {
                    fro2((hx - &x.dot(&x.t().dot(hx))).view()).sqrt()
                };
                let r0 = residual(&self.x, &hx0);
                for j in 1..=prm.max_inner {
                    let (hx, ax) = self.h_times(z, x.view());
                    if j == prm.max_inner || residual(&x, &hx) <= prm.delta * r0 {
                        return (x, j, Some(ax));
                    }
                    x = orth(hx.view());
                }
                unreachable!("the loop returns at j = max_inner")
            }
        }
    }
}

impl Client for FapsClient<'_> {
    fn respond(&mut self, msg: &Message) -> Result<Message> {
        let z = msg.get("z")?.view();
        let (k, prm) = (self.k, &self.params);
        // Penalty rule (25), from d_i⁽ᵏ⁾ = ‖X_iX_iᵀ − ZZᵀ‖_F = √2‖(I − ZZᵀ)X_i‖_F (the
        // paper's √(2p − 2‖X_iᵀZ‖²_F) cancels badly once d < 1e-7).
        let d = (2.0 * fro2((&self.x - &z.dot(&z.t().dot(&self.x))).view())).sqrt();
        self.dists.push(d);
        if k > 0 && k % prm.period == 0 && self.dists[k - prm.period] <= (1.0 + prm.mu) * d {
            let cap = prm.beta_max.unwrap_or(f64::INFINITY) * self.a_norm2;
            self.beta = (self.beta * (1.0 + prm.theta)).min(cap);
        }
        let (x, iters, ax) = self.inner_solve(z, prm);
        self.ax = ax.unwrap_or_else(|| self.a.gram_times(x.view()));
        self.w = FapsClient::multiplier_factor(&x, &self.ax);
        self.x = x;
        self.inner_last = iters;
        self.k += 1;
        // Y_i = (β X Xᵀ − X Wᵀ − W Xᵀ) Z, in O(np²).
        let xz = self.x.t().dot(&z);
        let y = self.x.dot(&(&xz * self.beta - self.w.t().dot(&z))) - self.w.dot(&xz);
        // ‖A_iᵀZ‖²_F: the client's share of the objective, for the stop rule (27).
        let reply = Message::new()
            .with("y", y)
            .with_scalar("f", self.a.fro2_at(z));
        if !self.curvature {
            return Ok(reply);
        }
        // Λ_i = X_iW_iᵀ + W_iX_iᵀ with X_iᵀW_i = 0 has eigenvalues ±σ(W_i): ‖Λ_i‖₂ = ‖W_i‖₂.
        let w2 = crate::linalg::sym_eig_desc(self.w.t().dot(&self.w).view())?.values[0];
        Ok(reply.with_scalar("c", w2.max(0.0).sqrt() + self.beta))
    }
    fn inner_iters(&self) -> u32 {
        self.inner_last
    }
    /// X_i, for the sparse family's feasibility metric.
    fn reveal(&self) -> Message {
        Message::new().with("x", self.x.clone())
    }
}

struct FapsServer {
    z: Array2<f64>,
}

impl Server for FapsServer {
    fn step(&mut self, net: &mut dyn Network) -> Result<StepInfo> {
        let replies = net.round(&Message::new().with("z", self.z.clone()))?;
        self.z = orth(sum_part(&replies, "y")?.view());
        Ok(StepInfo {
            objective: Some(sum_scalar(&replies, "f")?),
            ..Default::default()
        })
    }
    fn estimate(&self) -> Message {
        Message::new().with("z", self.z.clone())
    }
}

pub struct Faps;

impl Method for Faps {
    const NAME: &'static str = "faps";
    const PAPER: &'static str = "FAPS paper, Algorithm 1";
    const FAMILY: Kind = Kind::Subspace;
    const ABOUT: &'static str = "FAPS (Wang, Liu, Zhang): ADMM-like, projection splitting";
    const TRANSCRIPT: Shape = Shape::Answers;
    type Params = Params;
    fn server(_: &Params, setup: ServerSetup) -> Result<Box<dyn Server>> {
        Ok(Box::new(FapsServer {
            z: setup.start.get("z")?.clone(),
        }))
    }
    fn client<'a>(params: &Params, setup: ClientSetup<'a, '_>) -> Result<Box<dyn Client + 'a>> {
        Ok(Box::new(FapsClient::new(params, setup)?))
    }
}

impl<'a> FapsClient<'a> {
    /// X_i⁽⁰⁾ = Z⁽⁰⁾, W_i from (16), β_i⁽⁰⁾ = beta0·‖A_i‖₂² (power iterations).
    pub(crate) fn new(params: &Params, setup: ClientSetup<'a, '_>) -> Result<Self> {
        let a = setup.block;
        let x = setup.start.get("z")?.clone();
        let mut rng = seed::rng(setup.seed, &["beta0", &setup.index.to_string()]);
        let start = Array1::from_iter((0..x.nrows()).map(|_| rng.random_range(-1.0..=1.0)));
        let a_norm2 = a.spectral_norm2(start, params.power_iters);
        let ax = a.gram_times(x.view());
        let w = FapsClient::multiplier_factor(&x, &ax);
        Ok(FapsClient {
            a,
            curvature: false,
            a_norm2,
            params: params.clone(),
            k: 0,
            x,
            w,
            beta: params.beta0 * a_norm2,
            dists: Vec::new(),
            inner_last: 0,
            ax,
            reuse: true,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::max_rel_diff as rel;
    use crate::seed::uniform_matrix;

    /// One FAPS client per block, all from `start` (client seed 9), reusing products or not.
    fn clients<'a>(
        params: &Params,
        blocks: &[Block<'a>],
        sizes: &[usize],
        start: &Message,
        reuse: bool,
    ) -> Vec<FapsClient<'a>> {
        (0..sizes.len())
            .map(|index| {
                let setup = ClientSetup {
                    index,
                    block: blocks[index],
                    sizes,
                    start,
                    seed: 9,
                };
                FapsClient {
                    reuse,
                    ..FapsClient::new(params, setup).unwrap()
                }
            })
            .collect()
    }

    /// Replies of 3 clients over `rounds` rounds from the same data and start, with `params`.
    fn replies(params: &Params, rounds: usize) -> Vec<Array2<f64>> {
        let mut rng = seed::rng(5, &["faps-cap"]);
        let (n, sizes, p) = (24, [40, 60, 50], 3);
        let a = uniform_matrix(n, sizes.iter().sum(), &mut rng);
        let z0 = orth(uniform_matrix(n, p, &mut rng).view());
        let start = Message::new().with("z", z0.clone());
        let blocks = Block::Dense(a.view()).split(&sizes);
        let mut clients = clients(params, &blocks, &sizes, &start, true);
        let (mut z, mut out) = (z0, Vec::new());
        for _ in 0..rounds {
            let msg = Message::new().with("z", z.clone());
            let mut sum = Array2::<f64>::zeros((n, p));
            for c in clients.iter_mut() {
                let y = c.respond(&msg).unwrap().get("y").unwrap().clone();
                sum += &y;
                out.push(y);
            }
            z = orth(sum.view());
        }
        out
    }

    /// beta_max = beta0 holds β at β⁽⁰⁾: the same replies, bit for bit, as switching the rule off
    /// (θ = 0), and not those of the uncapped rule; unset, it is left out of the resolved
    /// parameters (so runs without it keep their fingerprints) and gives the uncapped rule.
    #[test]
    fn beta_max_caps_the_penalty_rule() {
        let base = Params {
            period: 1,
            mu: 0.5,
            ..Params::default()
        };
        let capped = replies(
            &Params {
                beta_max: Some(base.beta0),
                ..base.clone()
            },
            10,
        );
        let fixed = replies(
            &Params {
                theta: 0.0,
                ..base.clone()
            },
            10,
        );
        let uncapped = replies(&base, 10);
        assert_eq!(capped, fixed);
        assert_ne!(capped, uncapped);
        let high = replies(
            &Params {
                beta_max: Some(1e300),
                ..base.clone()
            },
            10,
        );
        assert_eq!(high, uncapped);
        let json = serde_json::to_value(&base).unwrap();
        assert!(json.get("beta_max").is_none(), "{json}");
        let set = serde_json::to_value(Params {
            beta_max: Some(1.0),
            ..base
        })
        .unwrap();
        assert_eq!(set["beta_max"], 1.0);
    }

    /// Reusing A_iA_iᵀX_i from W_i's computation as the next round's first product gives the
    /// same iterates (X_i, W_i, replies, inner steps) as recomputing it, for every inner rule.
    #[test]
    fn product_reuse_keeps_the_iterates() {
        let mut rng = seed::rng(3, &["faps-reuse"]);
        let (n, sizes, p) = (30, [70, 50, 90], 4);
        let mut a = uniform_matrix(n, sizes.iter().sum(), &mut rng);
        for (i, mut row) in a.rows_mut().into_iter().enumerate() {
            row *= 1.0 / (1.0 + i as f64);
        }
        let z0 = orth(uniform_matrix(n, p, &mut rng).view());
        let start = Message::new().with("z", z0.clone());
        let blocks = Block::Dense(a.view()).split(&sizes);
        for inner in [InnerRule::Fixed, InnerRule::Rule, InnerRule::Kkt] {
            let params = Params {
                inner,
                period: 2,
                ..Params::default()
            };
            let (mut with, mut without) = (
                clients(&params, &blocks, &sizes, &start, true),
                clients(&params, &blocks, &sizes, &start, false),
            );
            let mut z = z0.clone();
            for round in 0..12 {
                let msg = Message::new().with("z", z.clone());
                let mut sum = Array2::<f64>::zeros((n, p));
                for (c, r) in with.iter_mut().zip(without.iter_mut()) {
                    let (yc, yr) = (c.respond(&msg).unwrap(), r.respond(&msg).unwrap());
                    let what = format!("{inner:?} round {round}");
                    assert!(
                        rel(yc.get("y").unwrap(), yr.get("y").unwrap()) <= 1e-12,
                        "{what}"
                    );
                    assert!(rel(&c.x, &r.x) <= 1e-12, "{what}: X");
                    assert!(rel(&c.w, &r.w) <= 1e-12, "{what}: W");
                    assert_eq!(c.inner_last, r.inner_last, "{what}");
                    sum += yc.get("y").unwrap();
                }
                z = orth(sum.view());
            }
        }
    }
}
