//! Consensus ADMM on DSSAL1's model, the classic variable-splitting peer the DSSAL1 spec asks
//! for (Hajinezhad & Hong's nonconvex ADMM for distributed sparse PCA, GlobalSIP 2015, is of
//! this kind; FSSPCA is another): local copies X_i = Z, with the orthogonality constraint and
//! the ℓ1 term kept by the server's Z:
//!
//!   min Σ_i −½tr(X_iᵀA_iA_iᵀX_i) + μ‖Z‖₁  s.t.  X_i = Z, Z ∈ St(n, p),
//!   L = Σ_i [−½tr(X_iᵀC_iX_i) + ⟨Λ_i, X_i − Z⟩ + β_i/2‖X_i − Z‖²_F] + μ‖Z‖₁, C_i = A_iA_iᵀ.
//!
//! Round k, on receiving Z⁽ᵏ⁾, client i: X_i ← (β_iI − C_i)⁻¹(β_iZ⁽ᵏ⁾ − Λ_i) (the unconstrained
//! X-step, strongly convex for β_i > ‖A_i‖₂²; one Cholesky factor, n×n or by Woodbury m_i×m_i,
//! whichever is smaller); Λ_i ← Λ_i + β_i(X_i − Z⁽ᵏ⁾); send v_i = β_iX_i + Λ_i. Server:
//! Z⁽ᵏ⁺¹⁾ = argmin over St(n, p) of μ‖Z‖₁ − ⟨Σ_i v_i, Z⟩ (on the manifold ‖Z‖²_F = p, so the
//! quadratic terms are constant), by ManPG iterations warm-started at Z⁽ᵏ⁾ (no communication;
//! for μ = 0 they converge to the polar factor of Σ_i v_i). The order Z, then X_i, then Λ_i is
//! Hong, Luo & Razaviyayn's (SIOPT 2016) for nonconvex consensus: the X-step's optimality then
//! gives Λ_i = C_iX_i after every round, which their convergence proof rests on. (Measured:
//! the order X, Z, Λ diverges on FAPS's synthetic data at beta0 = 2.)
//!
//! CHOICES (the spec names the method only): X_i unconstrained (the orthogonality stays with
//! Z, as in the splitting of orthogonality constraints); β_i = beta0·‖A_i‖₂² with beta0 = 4:
//! with Z fixed, a perturbation of X_i evolves as δX ← −(β_iI − C_i)⁻¹C_i δX, whose largest
//! factor c/(β_i − c), c = ‖C_i‖₂, is below 1 only for β_i > 2c (at beta0 = 2, with ‖A_i‖₂²
//! estimated by power steps from below, the run diverged); beta0 = 4 makes it 1/3; the
//! Z-step runs to ‖D‖_F ≤ z_tol·√(np) or z_iters iterations. No own stopping criterion: the
//! runner stops it on the family's stationarity like its peers.

use super::manpg::{iterate, local_norm2, mu_of, LineSearch};
use crate::data::matrix::Block;
use crate::fed::{sum_part, Client, Message, Network};
use crate::linalg::{cholesky_upper, sym_eig_desc};
use crate::methods::{ClientSetup, Method, Server, ServerSetup, StepInfo};
use crate::spec::Kind;
use anyhow::{Context, Result};
use ndarray::{Array2, ArrayView2};
use ndarray_linalg::{Diag, SolveTriangular, UPLO};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    // β_i = beta0·‖A_i‖₂² (> 2: the local recursion contracts only for β_i > 2‖A_i‖₂²).
    /// penalty β_i = beta0·‖A_i‖₂²; > 2, else the local recursion does not contract
    pub beta0: f64,
    /// ManPG iterations of the server's Z-step per round
    pub z_iters: usize,
    /// tolerance of the Z-step (per √(np))
    pub z_tol: f64,
    /// the Armijo backtracking of the ManPG step: a table, all three keys required
    pub line_search: LineSearch,
    /// power steps each client spends estimating ‖A_i‖₂
    pub power_iters: usize,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            beta0: 4.0,
            z_iters: 100,
            z_tol: 1e-10,
            line_search: LineSearch::default(),
            power_iters: 30,
        }
    }
}

impl crate::methods::Params for Params {
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        super::manpg::check_line_search(&self.line_search)?;
        if !(self.beta0 > 2.0 && self.beta0.is_finite()) {
            return Err((
                "beta0",
                "must be a finite number > 2 (the X-step recursion contracts only for β_i > 2‖A_i‖₂²)"
                    .into(),
            ));
        }
        if self.z_iters == 0 {
            return Err(("z_iters", "must be >= 1".into()));
        }
        if !(self.z_tol > 0.0) {
            return Err(("z_tol", "must be > 0".into()));
        }
        if self.power_iters == 0 {
            return Err(("power_iters", "must be >= 1".into()));
        }
        Ok(())
    }
}

/// (β I − A Aᵀ)⁻¹ applied through one Cholesky factor.
enum Solver<'a> {
    /// R upper with RᵀR = βI − AAᵀ (n×n).
    Features(Array2<f64>),
    /// Woodbury, when the client holds fewer samples than features:
    /// (βI − AAᵀ)⁻¹ = (I + A(βI − AᵀA)⁻¹Aᵀ)/β, with RᵀR = βI − AᵀA (m_i×m_i).
    Samples(ArrayView2<'a, f64>, Array2<f64>),
}

/// R⁻¹R⁻ᵀ b.
fn cholesky_solve(r: &Array2<f64>, b: &Array2<f64>) -> Result<Array2<f64>> {
    let y = r.t().solve_triangular(UPLO::Lower, Diag::NonUnit, b)?;
    Ok(r.solve_triangular(UPLO::Upper, Diag::NonUnit, &y)?)
}

impl<'a> Solver<'a> {
    fn new(a: Block<'a>, beta: f64) -> Result<Self> {
        let why = "β_i I − A_iA_iᵀ is not positive definite: raise beta0";
        match a.as_dense() {
            Some(d) if d.ncols() < d.nrows() => {
                let mut m = -d.t().dot(&d);
                m.diag_mut().mapv_inplace(|v| v + beta);
                Ok(Self::Samples(d, cholesky_upper(m.view()).context(why)?))
            }
            _ => {
                let mut m = -a.gram();
                m.diag_mut().mapv_inplace(|v| v + beta);
                Ok(Self::Features(cholesky_upper(m.view()).context(why)?))
            }
        }
    }

    fn solve(&self, beta: f64, rhs: &Array2<f64>) -> Result<Array2<f64>> {
        match self {
            Self::Features(r) => cholesky_solve(r, rhs),
            Self::Samples(a, r) => {
                let inner = cholesky_solve(r, &a.t().dot(rhs))?;
                Ok((rhs + &a.dot(&inner)) / beta)
            }
        }
    }
}

struct AdmmClient<'a> {
    solver: Solver<'a>,
    beta: f64,
    x: Array2<f64>,
    lambda: Array2<f64>,
}

impl Client for AdmmClient<'_> {
    fn respond(&mut self, msg: &Message) -> Result<Message> {
        let z = msg.get("z")?;
        self.x = self
            .solver
            .solve(self.beta, &(z * self.beta - &self.lambda))?;
        self.lambda = &self.lambda + &((&self.x - z) * self.beta);
        Ok(Message::new().with("v", &self.x * self.beta + &self.lambda))
    }
    fn reveal(&self) -> Message {
        Message::new().with("x", self.x.clone())
    }
}

struct AdmmServer {
    z: Array2<f64>,
    mu: f64,
    params: Params,
}

impl Server for AdmmServer {
    fn step(&mut self, net: &mut dyn Network) -> Result<StepInfo> {
        let replies = net.round(&Message::new().with("z", self.z.clone()))?;
        let s = sum_part(&replies, "v")?;
        // A linear objective: the manifold's curvature sets the step, t = 1/‖S‖₂.
        let top = sym_eig_desc(s.t().dot(&s).view())?.values[0]
            .max(0.0)
            .sqrt();
        let t = if top > 0.0 { 1.0 / top } else { 1.0 };
        let oracle = |z: ArrayView2<f64>| (-(&s * &z).sum(), -s.clone());
        let prm = &self.params;
        (self.z, _) = iterate(
            self.z.clone(),
            oracle,
            self.mu,
            t,
            prm.line_search,
            prm.z_tol,
            prm.z_iters,
        )
        .context("consensus ADMM's Z-step")?;
        Ok(StepInfo::default())
    }

    fn estimate(&self) -> Message {
        Message::new().with("z", self.z.clone())
    }
}

pub struct ConsensusAdmm;

impl Method for ConsensusAdmm {
    const NAME: &'static str = "consensus_admm";
    const PAPER: &'static str =
        "consensus ADMM (X_i = Z splitting), the DSSAL1 spec's classic peer";
    const FAMILY: Kind = Kind::Sparse;
    const ABOUT: &'static str =
        "consensus ADMM: unconstrained local X_i, server's Z-step on the Stiefel manifold by ManPG";
    const NEEDS_MU: bool = true;
    type Params = Params;
    fn server(params: &Params, setup: ServerSetup) -> Result<Box<dyn Server>> {
        Ok(Box::new(AdmmServer {
            z: setup.start.get("z")?.clone(),
            mu: mu_of(setup.start)?,
            params: params.clone(),
        }))
    }
    fn client<'a>(params: &Params, setup: ClientSetup<'a, '_>) -> Result<Box<dyn Client + 'a>> {
        let a = setup.block;
        let beta =
            params.beta0 * local_norm2(a, setup.seed, setup.index, params.power_iters, "beta");
        let z = setup.start.get("z")?;
        Ok(Box::new(AdmmClient {
            solver: Solver::new(a, beta)?,
            beta,
            x: z.clone(),
            lambda: Array2::zeros(z.dim()),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::{fro2, orth};
    use crate::methods::registry::Running;
    use crate::seed;
    use crate::seed::uniform_matrix;
    use ndarray::s;

    #[test]
    fn both_solvers_apply_the_same_inverse() {
        let mut rng = seed::rng(5, &["admm-solver"]);
        let a = uniform_matrix(12, 7, &mut rng);
        let b = uniform_matrix(12, 3, &mut rng);
        let beta = 40.0;
        let wood = Solver::new(Block::Dense(a.view()), beta).unwrap();
        assert!(matches!(wood, Solver::Samples(..)));
        let mut m = -a.dot(&a.t());
        m.diag_mut().mapv_inplace(|v| v + beta);
        let full = Solver::Features(cholesky_upper(m.view()).unwrap());
        let (x1, x2) = (wood.solve(beta, &b).unwrap(), full.solve(beta, &b).unwrap());
        assert!(fro2((&x1 - &x2).view()).sqrt() < 1e-12 * fro2(x2.view()).sqrt());
        // And it is the inverse: (βI − AAᵀ)X = B.
        let back = &x2 * beta - &a.dot(&a.t().dot(&x2));
        assert!(fro2((&back - &b).view()).sqrt() < 1e-10);
    }

    #[test]
    fn with_mu_zero_it_converges_to_the_pca_subspace() {
        let mut rng = seed::rng(9, &["admm-test"]);
        let mut a = uniform_matrix(16, 240, &mut rng);
        for (i, mut row) in a.rows_mut().into_iter().enumerate() {
            row *= 1.0 / (1.0 + i as f64);
        }
        let z0 = orth(uniform_matrix(16, 2, &mut rng).view());
        let start = Message::new().with("z", z0).with_scalar("mu", 0.0);
        let blocks = Block::Dense(a.view()).split(&[80, 80, 80]);
        let mut run =
            Running::named("consensus_admm", &toml::Table::new(), &start, 2, blocks, 16).unwrap();
        for _ in 0..3000 {
            run.step().unwrap();
        }
        let z = run.server.estimate().get("z").unwrap().clone();
        let u = sym_eig_desc(a.dot(&a.t()).view()).unwrap().vectors;
        let u2 = u.slice(s![.., ..2]);
        let sin = fro2((&z - &u2.dot(&u2.t().dot(&z))).view()).sqrt();
        assert!(sin < 1e-6, "sin Θ = {sin:e}");
    }
}
