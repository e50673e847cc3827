//! Accelerated proximal gradient with continuation for robust PCA (Lin, Ganesh, Wright, Wu,
//! Chen, Ma 2009), as lrslibrary algorithms/rpca/APG/proximal_gradient_rpca.m without line
//! search (numerics checked in the scratch crate rpca/src/apgm.rs):
//! min μ‖L‖_* + λμ‖S‖₁ + ½‖M − L − S‖²_F with μ_k → μ̄ geometrically.
//!
//! Centralised, with the protocol of IALM ([`super::ialm`]): an empty broadcast, one iteration
//! per round, the stopping value (8 bytes) in reply.

use super::ialm::{
    check_common, empty_factors, next_rank_hint, reveal_factored, spectral_norm, whole_matrix,
    ResidualServer, FIRST_RANK_HINT,
};
use crate::fed::{Client, Message};
use crate::linalg::fro2;
use crate::linalg::prox::soft_threshold_inplace;
use crate::linalg::svd::{svt_factors, Svd};
use crate::methods::{ClientSetup, Method, Server, ServerSetup};
use crate::spec::Kind;
use anyhow::Result;
use ndarray::{Array2, ArrayView2, Zip};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub struct Apgm;

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    // Weight of ‖S‖₁; None = 1/√max(n, m) (lrslibrary APG/run_alg.m).
    /// weight λ of ‖S‖₁; unset: 1/√max(n, m)
    pub lambda: Option<f64>,
    // μ₀ = mu0_factor·‖M‖₂ (.m file: mu_k = 0.99*norm(D)).
    /// start of the continuation μ₀ = mu0_factor·‖M‖₂
    pub mu0_factor: f64,
    // μ̄ = mu_bar_factor·‖M‖₂ (.m file: mu_bar = 1e-9*mu_0, mu_0 = norm(D)).
    /// floor of the continuation μ̄ = mu_bar_factor·‖M‖₂
    pub mu_bar_factor: f64,
    // Continuation μ_{k+1} = max(eta·μ_k, μ̄) (.m file: 0.9).
    /// continuation μ_{k+1} = max(eta·μ_k, μ̄)
    pub eta: f64,
    // Lipschitz constant τ of the smooth part's gradient in (L, S) (.m file: tau_0 = 2).
    /// Lipschitz constant τ of the smooth part's gradient in (L, S)
    pub lipschitz: f64,
    // Own criterion on the subgradient residual (.m file header: 1e-7).
    /// own criterion: the subgradient residual falls below tol
    pub tol: f64,
    // Iterations before `done` (.m file: maxIter 1000).
    /// iterations before the method stops by itself
    pub max_iters: u32,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            lambda: None,
            mu0_factor: 0.99,
            mu_bar_factor: 1e-9,
            eta: 0.9,
            lipschitz: 2.0,
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
        if !(self.mu_bar_factor > 0.0) {
            return bad("mu_bar_factor", "must be > 0");
        }
        if !(self.eta > 0.0 && self.eta <= 1.0) {
            return bad("eta", "must lie in (0, 1]");
        }
        if !(self.lipschitz > 0.0 && self.lipschitz.is_finite()) {
            return bad(
                "lipschitz",
                "must be a finite number > 0 (2 is the true constant)",
            );
        }
        Ok(())
    }
}

impl Method for Apgm {
    const NAME: &'static str = "apgm";
    const PAPER: &'static str = "Lin, Ganesh, Wright, Wu, Chen, Ma 2009";
    const FAMILY: Kind = Kind::Robust;
    const ABOUT: &'static str = "accelerated proximal gradient with continuation (lrslibrary APG)";
    const CENTRALISED: bool = true;
    type Params = Params;
    fn server(p: &Params, _: ServerSetup) -> Result<Box<dyn Server>> {
        Ok(Box::new(ResidualServer::new(p.tol, p.max_iters)))
    }
    fn client<'a>(p: &Params, setup: ClientSetup<'a, '_>) -> Result<Box<dyn Client + 'a>> {
        let d = whole_matrix(&setup, "APGM")?;
        Ok(Box::new(ApgmClient::new(p, d, setup.seed)?))
    }
}

/// The one client of APGM: all of M and the iterates. Public so that the robust bench can run
/// its iterations with the SVT done its own way ([`ApgmClient::iterate`]).
pub struct ApgmClient<'a> {
    d: ArrayView2<'a, f64>,
    lambda: f64,
    mu: f64,
    mu_bar: f64,
    eta: f64,
    tau: f64,
    /// Momentum sequence t_k, t_{k−1}.
    t: f64,
    t_prev: f64,
    /// L (A in the .m file) and S (E), this iterate and the last; L also as its SVT factors.
    a: Array2<f64>,
    e: Array2<f64>,
    a_prev: Array2<f64>,
    e_prev: Array2<f64>,
    factors: Svd,
    /// Predicted rank of the next SVT, tracked as IALM does.
    hint: usize,
}

impl<'a> ApgmClient<'a> {
    /// The start on M = `d`: ‖M‖₂ by [`spectral_norm`] from `seed`, L = S = 0.
    pub fn new(p: &Params, d: ArrayView2<'a, f64>, seed: u64) -> Result<Self> {
        let (n, m) = d.dim();
        let norm2 = spectral_norm(d, seed)?;
        let zeros = Array2::zeros((n, m));
        Ok(ApgmClient {
            d,
            lambda: p.lambda.unwrap_or(1.0 / (n.max(m) as f64).sqrt()),
            mu: p.mu0_factor * norm2,
            mu_bar: p.mu_bar_factor * norm2,
            eta: p.eta,
            tau: p.lipschitz,
            t: 1.0,
            t_prev: 1.0,
            a: zeros.clone(),
            e: zeros.clone(),
            a_prev: zeros.clone(),
            e_prev: zeros,
            factors: empty_factors(n, m),
            hint: FIRST_RANK_HINT,
        })
    }

    /// One iteration, its SVT done by `svt(argument, threshold τ, rank hint)`: the method
    /// passes [`svt_factors`]. Returns the .m file's stopping value ‖[S_A, S_E]‖_F / (τ max(1,
    /// ‖[A_{k+1}, E_{k+1}]‖_F)), S_X = τ(Y_X − X_{k+1}) + (A_{k+1} + E_{k+1} − Y_A − Y_E).
    pub fn iterate(
        &mut self,
        svt: impl FnOnce(ArrayView2<f64>, f64, usize) -> Result<Svd>,
    ) -> Result<f64> {
        let beta = (self.t_prev - 1.0) / self.t;
        let ya = &self.a + &((&self.a - &self.a_prev) * beta);
        let ye = &self.e + &((&self.e - &self.e_prev) * beta);
        let resid = (&ya + &ye - self.d) / self.tau;
        // The one SVT of the iteration.
        self.factors = svt((&ya - &resid).view(), self.mu / self.tau, self.hint)?;
        self.hint = next_rank_hint(self.factors.s.len(), self.hint, self.d.ncols());
        let a_next = self.factors.dense();
        let mut e_next = &ye - &resid;
        soft_threshold_inplace(&mut e_next, self.lambda * self.mu / self.tau);

        let temp = &a_next + &e_next - &ya - &ye;
        let mut num = 0.0;
        for (y, x) in [(&ya, &a_next), (&ye, &e_next)] {
            Zip::from(y)
                .and(x)
                .and(&temp)
                .for_each(|&y, &x, &t| num += (self.tau * (y - x) + t).powi(2));
        }
        let xnorm = (fro2(a_next.view()) + fro2(e_next.view())).sqrt();
        let crit = num.sqrt() / (self.tau * xnorm.max(1.0));

        self.mu = (self.eta * self.mu).max(self.mu_bar);
        self.t_prev = self.t;
        self.t = 0.5 * (1.0 + (1.0 + 4.0 * self.t * self.t).sqrt());
        self.a_prev = std::mem::replace(&mut self.a, a_next);
        self.e_prev = std::mem::replace(&mut self.e, e_next);
        Ok(crit)
    }

    /// Rank of the last SVT's L.
    pub fn rank(&self) -> usize {
        self.factors.s.len()
    }
}

impl Client for ApgmClient<'_> {
    fn respond(&mut self, _: &Message) -> Result<Message> {
        let residual = self.iterate(svt_factors)?;
        Ok(Message::new().with_scalar("residual", residual))
    }

    fn reveal(&self) -> Message {
        reveal_factored(&self.factors, &self.e)
    }
}
