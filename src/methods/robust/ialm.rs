//! Inexact augmented Lagrange multipliers for robust PCA (Lin, Chen, Ma 2010), as lrslibrary
//! algorithms/rpca/IALM/inexact_alm_rpca.m (numerics checked in the scratch crate
//! rpca/src/ialm.rs): min ‖L‖_* + λ‖S‖₁ s.t. L + S = M, one S update and one SVT per iteration.
//!
//! Centralised: one client holds all of M. Each round the server broadcasts nothing and the
//! client runs one iteration and replies with its stopping value ‖M − L − S‖_F/‖M‖_F (8
//! bytes). The helpers below the client are shared with APGM ([`super::apgm`]).

use crate::fed::{Client, Message, Network};
use crate::linalg::fro2;
use crate::linalg::krylov::{top_eigs, KrylovOptions};
use crate::linalg::prox::soft_threshold_inplace;
use crate::linalg::svd::{svt_factors, thin_svd, Svd};
use crate::methods::{ClientSetup, Method, Server, ServerSetup, StepInfo};
use crate::seed;
use crate::spec::Kind;
use anyhow::{anyhow, bail, Context, Result};
use ndarray::{Array1, Array2, ArrayView2, Axis};
use rand::Rng;
use rand_distr::StandardNormal;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub struct Ialm;

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    // Weight of ‖S‖₁; None = 1/√max(n, m) (Candès et al.; the .m file's 1/√(rows) is the
    // same on square problems).
    /// weight λ of ‖S‖₁; unset: 1/√max(n, m)
    pub lambda: Option<f64>,
    // μ₀ = mu0_factor/‖M‖₂ (.m file: 1.25).
    /// start μ₀ = mu0_factor/‖M‖₂
    pub mu0_factor: f64,
    // μ_{k+1} = min(ρμ_k, μ̄) (.m file: 1.5).
    /// growth μ_{k+1} = min(ρμ_k, μ̄)
    pub rho: f64,
    // μ̄ = mu_bar_factor·μ₀ (.m file: 1e7).
    /// ceiling μ̄ = mu_bar_factor·μ₀
    pub mu_bar_factor: f64,
    // Own criterion ‖M − L − S‖_F/‖M‖_F < tol (.m file: 1e-7).
    /// own criterion ‖M − L − S‖_F/‖M‖_F < tol
    pub tol: f64,
    // Iterations before `done` (.m file: maxIter 1000).
    /// iterations before the method stops by itself
    pub max_iters: u32,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            lambda: None,
            mu0_factor: 1.25,
            rho: 1.5,
            mu_bar_factor: 1e7,
            tol: 1e-7,
            max_iters: 1000,
        }
    }
}

impl crate::methods::Params for Params {
    // `!(x > 0.0)` on purpose: it rejects NaN too.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        let bad = |k, m: &str| Err((k, m.to_string()));
        check_common(self.lambda, self.mu0_factor, self.tol, self.max_iters)?;
        if !(self.rho >= 1.0 && self.rho.is_finite()) {
            return bad("rho", "must be a finite number >= 1");
        }
        if !(self.mu_bar_factor >= 1.0) {
            return bad("mu_bar_factor", "must be >= 1");
        }
        Ok(())
    }
}

impl Method for Ialm {
    const NAME: &'static str = "ialm";
    const PAPER: &'static str = "Lin, Chen, Ma 2010";
    const FAMILY: Kind = Kind::Robust;
    const ABOUT: &'static str = "inexact augmented Lagrange multipliers (lrslibrary IALM)";
    const CENTRALISED: bool = true;
    type Params = Params;
    fn server(p: &Params, _: ServerSetup) -> Result<Box<dyn Server>> {
        Ok(Box::new(ResidualServer::new(p.tol, p.max_iters)))
    }
    fn client<'a>(p: &Params, setup: ClientSetup<'a, '_>) -> Result<Box<dyn Client + 'a>> {
        let d = whole_matrix(&setup, "IALM")?;
        Ok(Box::new(IalmClient::new(p, d, setup.seed)?))
    }
}

/// The one client of IALM: all of M and the iterates. Public so that the robust bench can run
/// its iterations with the SVT done its own way ([`IalmClient::iterate`]).
pub struct IalmClient<'a> {
    d: ArrayView2<'a, f64>,
    d_norm: f64,
    lambda: f64,
    mu: f64,
    mu_bar: f64,
    rho: f64,
    y: Array2<f64>,
    /// L dense (the S update needs it) and as the SVT's factors (for the reveal).
    l: Array2<f64>,
    factors: Svd,
    s: Array2<f64>,
    /// Predicted rank of the next SVT (the .m file's `sv`).
    hint: usize,
}

impl<'a> IalmClient<'a> {
    /// The start on M = `d`: ‖M‖₂ by [`spectral_norm`] from `seed`, L = S = 0.
    pub fn new(p: &Params, d: ArrayView2<'a, f64>, seed: u64) -> Result<Self> {
        let (n, m) = d.dim();
        let lambda = p.lambda.unwrap_or(1.0 / (n.max(m) as f64).sqrt());
        let norm_two = spectral_norm(d, seed)?;
        let norm_inf = d.iter().fold(0.0f64, |a, &x| a.max(x.abs())) / lambda;
        let mu = p.mu0_factor / norm_two;
        Ok(IalmClient {
            d,
            d_norm: fro2(d).sqrt(),
            lambda,
            mu,
            mu_bar: mu * p.mu_bar_factor,
            rho: p.rho,
            // Y₀ = M/J(M), J(M) = max(‖M‖₂, ‖M‖_∞/λ): dual feasible (the .m file).
            y: &d / norm_two.max(norm_inf),
            l: Array2::zeros((n, m)),
            factors: empty_factors(n, m),
            s: Array2::zeros((n, m)),
            hint: FIRST_RANK_HINT,
        })
    }

    /// One iteration, its SVT done by `svt(argument, threshold τ, rank hint)`: the method
    /// passes [`svt_factors`]. Returns the stopping value ‖M − L − S‖_F/‖M‖_F.
    pub fn iterate(
        &mut self,
        svt: impl FnOnce(ArrayView2<f64>, f64, usize) -> Result<Svd>,
    ) -> Result<f64> {
        let inv_mu = 1.0 / self.mu;
        // S = soft(M − L + Y/μ, λ/μ)
        let mut s = &self.d - &self.l + &(&self.y * inv_mu);
        soft_threshold_inplace(&mut s, self.lambda * inv_mu);
        self.s = s;
        // L = SVT(M − S + Y/μ, 1/μ): the one SVT of the iteration.
        let arg = &self.d - &self.s + &(&self.y * inv_mu);
        self.factors = svt(arg.view(), inv_mu, self.hint)?;
        self.l = self.factors.dense();
        self.hint = next_rank_hint(self.factors.s.len(), self.hint, self.d.ncols());
        let z = &self.d - &self.l - &self.s;
        self.y.scaled_add(self.mu, &z);
        self.mu = (self.mu * self.rho).min(self.mu_bar);
        Ok(fro2(z.view()).sqrt() / self.d_norm)
    }

    /// Rank of the last SVT's L.
    pub fn rank(&self) -> usize {
        self.factors.s.len()
    }
}

impl Client for IalmClient<'_> {
    fn respond(&mut self, _: &Message) -> Result<Message> {
        let residual = self.iterate(svt_factors)?;
        Ok(Message::new().with_scalar("residual", residual))
    }

    fn reveal(&self) -> Message {
        reveal_factored(&self.factors, &self.s)
    }
}

// ---- Shared with APGM ----

/// The .m file's first rank prediction (`sv = 10`).
pub(super) const FIRST_RANK_HINT: usize = 10;

/// The .m file's rank prediction for the next SVT from this one's rank `svp`: svp + 1 if the
/// rank fell below the hint, else svp + round(0.05·cols), at most cols.
/// The checks APGM and IALM share: λ (None = 1/√max(n, m)), the factor of μ₀, the tolerance
/// and the iteration cap.
// `!(x > 0.0)` on purpose: it rejects NaN too.
#[allow(clippy::neg_cmp_op_on_partial_ord)]
pub(super) fn check_common(
    lambda: Option<f64>,
    mu0_factor: f64,
    tol: f64,
    max_iters: u32,
) -> std::result::Result<(), (&'static str, String)> {
    if lambda.is_some_and(|l| !(l > 0.0 && l.is_finite())) {
        return Err((
            "lambda",
            "must be a finite number > 0 (omit it for 1/√max(n, m))".into(),
        ));
    }
    if !(mu0_factor > 0.0 && mu0_factor.is_finite()) {
        return Err(("mu0_factor", "must be a finite number > 0".into()));
    }
    if !(tol >= 0.0) {
        return Err(("tol", "must be >= 0".into()));
    }
    if max_iters == 0 {
        return Err(("max_iters", "must be >= 1".into()));
    }
    Ok(())
}

pub(super) fn next_rank_hint(svp: usize, hint: usize, cols: usize) -> usize {
    if svp < hint {
        (svp + 1).min(cols)
    } else {
        (svp + (0.05 * cols as f64).round() as usize).min(cols)
    }
}

/// ‖M‖₂ = σ₁(M), by block Krylov ([`top_eigs`]) on X ↦ M(MᵀX) with 8 columns from a seeded
/// Gaussian start, to a relative residual r = 1e-8: σ₁² then errs by ≲ r²/gap, below 1e-10
/// relative for relative gaps ≥ 1e-6 (the 8 columns also absorb close clusters). MATLAB's
/// norm(D) is a full SVD: 15.3 s at 3000×3000 on one thread here, this 2.0 s (61 products,
/// memory-bound; relative error 2e-15 on the planted M). Fewer than 16 rows: [`thin_svd`].
pub fn spectral_norm(m: ArrayView2<f64>, seed: u64) -> Result<f64> {
    const BLOCK: usize = 8;
    let n = m.nrows();
    if n < 2 * BLOCK {
        return Ok(thin_svd(m)?.s.first().copied().unwrap_or(0.0));
    }
    let mut rng = seed::rng(seed, &["spectral-norm"]);
    let start = Array2::from_shape_simple_fn((n, BLOCK), || rng.sample(StandardNormal));
    let opts = KrylovOptions {
        steps: 10,
        tol: 1e-8,
        max_restarts: 100,
    };
    let top = top_eigs(1, |x| m.dot(&m.t().dot(&x)), start.view(), opts).context("‖M‖₂")?;
    Ok(top.values[0].max(0.0).sqrt())
}

/// The client's data: one client holds all of M, dense.
pub(super) fn whole_matrix<'a>(
    setup: &ClientSetup<'a, '_>,
    name: &str,
) -> Result<ArrayView2<'a, f64>> {
    if setup.sizes.len() != 1 {
        bail!(
            "{name} is centralised: it runs on one client, not {}",
            setup.sizes.len()
        );
    }
    setup
        .block
        .as_dense()
        .ok_or_else(|| anyhow!("{name} needs dense data"))
}

/// The factors of L = 0 before the first SVT.
pub(super) fn empty_factors(n: usize, m: usize) -> Svd {
    Svd {
        u: Array2::zeros((n, 0)),
        s: Array1::zeros(0),
        vt: Array2::zeros((0, m)),
    }
}

/// L = U diag(σ) Vᵀ from the last SVT as `u` = U diag(σ) (n×k), `v` = V (m×k), and `s` = S.
/// L = 0 (k = 0) is revealed as one zero column, so the evaluation never sees an empty factor.
pub(super) fn reveal_factored(f: &Svd, s: &Array2<f64>) -> Message {
    let (u, v) = if f.s.is_empty() {
        (
            Array2::zeros((f.u.nrows(), 1)),
            Array2::zeros((f.vt.ncols(), 1)),
        )
    } else {
        (&f.u * &f.s.view().insert_axis(Axis(0)), f.vt.t().to_owned())
    };
    Message::new()
        .with("u", u)
        .with("v", v)
        .with("s", s.clone())
}

/// The server of a centralised iterative method: it broadcasts nothing, reads the client's
/// stopping value and compares it with the tolerance; `done` after `max_iters` iterations.
pub(super) struct ResidualServer {
    tol: f64,
    max_iters: u32,
    iters: u32,
}

impl ResidualServer {
    pub(super) fn new(tol: f64, max_iters: u32) -> Self {
        Self {
            tol,
            max_iters,
            iters: 0,
        }
    }
}

impl Server for ResidualServer {
    fn step(&mut self, net: &mut dyn Network) -> Result<StepInfo> {
        let replies = net.round(&Message::new())?;
        let [only] = replies.as_slice() else {
            bail!("a centralised method has one client, not {}", replies.len())
        };
        let residual = only.scalar("residual")?;
        self.iters += 1;
        Ok(StepInfo {
            objective: None,
            converged: residual < self.tol,
            done: self.iters >= self.max_iters,
        })
    }

    fn estimate(&self) -> Message {
        Message::new()
    }
}
