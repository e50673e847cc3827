//! FSSPCA: federated smoothing sparse PCA (Ciou, Chen, Tseng, Lee, "Federated Learning for
//! Sparse Principal Component Analysis", §III.A–C, Algorithms 1–5): consensus ADMM for
//!
//!   min Σ_i (‖A^i − A^i w_i w_iᵀ‖²_F + λ1 r(w_i)) + λ2‖z‖₁  s.t. w_i ∈ St(n, r), w_i = z,   (6)
//!
//! with r(w) = Σ ψ_μ(w_jk) the smoothed ℓ1 norm (7) ([`smooth_l1`]).
//!
//! Orientation: the paper stores samples as rows (A^i ∈ R^{N_i×D}); the harness stores them as
//! columns, so client i holds X_i = (A^i)ᵀ (n×m_i). The paper's (A^i)ᵀA^i is C_i = X_iX_iᵀ (n×n)
//! and ‖A^i − A^i w wᵀ‖²_F = ‖X_i‖²_F − tr(wᵀC_i w) on the manifold. Each client forms C_i once
//! (n is at most ~1000 in this family): every objective and gradient evaluation of its inner
//! solver is then one n×n by n×r product, independent of m_i. The constant ‖X_i‖²_F is dropped
//! from the local objective: it changes no step and would only cost digits in the Armijo test.
//!
//! One [`Server::step`] is one ADMM iteration and one network round:
//! 1. the server broadcasts z (n×r; z⁰ = 0);
//! 2. client i first applies the dual update of the previous iteration with that z,
//!    u_i ← u_i + ρ(w_i − z) (Algorithm 1 line 10), then runs Riemannian gradient descent
//!    (Algorithm 3) on its local problem (11), warm-started at its previous w_i,
//!    f_i(w) = −tr(wᵀC_iw) + λ1 r(w) + ⟨u_i, w⟩ + ρ/2‖w − z‖²_F, and replies w_i (n×r);
//! 3. the server sets z ← S_{λ2/(Kρ)}(w̄ + ū/ρ) (Algorithm 2, (9)–(10)).
//!
//! Communication: only w_i goes up and only z comes down. The server mirrors ū = mean_i u_i
//! itself: the dual updates are deterministic given the w_i it received and the z it sent, so
//! ū ← ū + ρ(w̄ − z) reproduces the clients' mean without their sending u_i.
//!
//! Deflation (Algorithm 4, `stage_size` > 0): loadings are found in stages of `stage_size`
//! columns. Stage j runs ADMM on the generalized Stiefel manifold {wᵀGw = I}, G = I − FFᵀ with
//! F the earlier stages' loadings (projection (18), Cholesky-QR retraction, Algorithm 5; G is
//! applied as x − F(Fᵀx), never formed). When the stage ends (criterion or round cap) the server
//! sets z_j ← qf(G z_j) (lines 4 and 9), appends it to F, and sends it as part "deflate" with the
//! next broadcast; each client deflates with P = I − z_jz_jᵀ (line 6): the paper's
//! A^i ← A^i(I − z_jz_jᵀ), i.e. X_i ← P X_i, or C_i ← P C_i P when C_i is formed, and restarts with u_i = 0, z = 0 and a fresh random w_i. A stage's
//! criterion is not the run's: `converged` and `done` are reported for the last stage only.
//!
//! CHOICES (the paper is silent):
//! - the worker's RGD stops after `inner_max` iterations or when ‖grad‖_F falls below
//!   `inner_tol` × its value at the round's first iterate;
//! - Armijo backtracking (15) (the paper allows it instead of strong Wolfe), first trial = 2×
//!   the last accepted step (1.0 the first time, then carried across rounds), at most
//!   [`MAX_BACKTRACKS`] reductions. Backtracking also stops, and with it the round's RGD, once
//!   the predicted decrease is below f's rounding error ([`ROUNDING`]): a step accepted on
//!   rounding noise is tiny, and since each first trial is only twice the last step, the step
//!   size never recovered from one (observed: θ collapsed to 1e-15 and the ADMM stalled at
//!   ‖sin Θ‖ = 3e-5). This leaves a floor: the local gradient cannot be driven below about
//!   √(ROUNDING·ε·|f|/θ): ‖sin Θ‖ ≈ 5e-8 on the first test's problem;
//! - under deflation the iterates stay in range(G) = span(F)^⊥: the gradient is G∇f before
//!   (18), and the rounding-level F-part of each retraction is removed. With G singular,
//!   {wᵀGw = I} leaves w's F-components free, where f's only curvature is ρ: a step sized for
//!   C_i's curvature made them grow geometrically (θρ > 2; observed ‖Fᵀw‖ 1e-15 → 3 within 15
//!   iterations), and (18) on ∇f, only a G-orthogonal projection, then gave ascent directions.
//!   In range(G), (18) is the orthogonal projection and the loadings are orthogonal to F, which
//!   is what the paper's restriction to {wᵀGw = I} is for;
//! - the Armijo slope is ⟨∇f, ζ⟩ (= −‖grad f‖², the paper's ⟨grad f, ζ⟩, up to rounding);
//! - the own stopping criterion (the paper gives none): primal residual
//!   √((1/K)Σ_i‖w_i − z‖²_F) ≤ `tol` and dual residual ‖z − z_prev‖_F ≤ `tol`;
//! - a finished stage is deflated with its orthonormalised z_j, so that I − z_jz_jᵀ is a
//!   projector (the paper's line order deflates with G z_j before qf);
//! - start points: w_i⁰ = orth(U[−1,1]^{n×r}) from the client's own seed stream; in a deflation
//!   stage G·U[−1,1]^{n×r_j}, Cholesky-normalised. The family's start `z` gives only r.
//!
//! The output (Algorithm 1 line 14) is [F, qf(G z)] (G = I in the first stage); a current z that
//! is rank deficient (all zero in round 0, or columns thresholded away) is reported as G z,
//! unnormalised, since qf would invent directions. Sparsity is that of z: qf mixes the supports
//! of later columns with earlier ones, as in the paper.
//!
//! Scale: ρ must be large against the local curvature 2‖C_i‖ (nonconvex consensus ADMM). With
//! the paper's ρ = 1000 on the paper's synthetic Σ (eigenvalues 400, 300, 1, …), 10 clients of
//! 100 raw samples (‖C_i‖ ≈ 4e4) do not converge even with λ1 = λ2 = 0 (‖sin Θ‖ oscillates near
//! 0.07 after 1000 rounds; ρ = 1e5 converges in 18), while the same data scaled to C_i ≈ Σ
//! converge in ~300 rounds to the planted support.

use crate::data::matrix::Block;
use crate::fed::{sum_part, Client, Message, Network, Shape};
use crate::linalg::gram_product::gram_times_dense;
use crate::linalg::manifold::{
    gen_stiefel_normalize, gen_stiefel_project, gen_stiefel_retract_cholqr, stiefel_project,
    stiefel_retract_qr, Metric,
};
use crate::linalg::prox::{smooth_l1, smooth_l1_grad, soft_threshold};
use crate::linalg::{fro2, orth, orth_with_r, to_f_order};
use crate::methods::{ClientSetup, Method, Server, ServerSetup, StepInfo};
use crate::seed;
use crate::spec::Kind;
use anyhow::{bail, Result};
use ndarray::{concatenate, s, Array2, ArrayView2, Axis};
use rand_chacha::ChaCha8Rng;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Step reductions tried per RGD iteration before giving up (0.5⁶⁰ ≈ 1e-18 of the first trial).
pub const MAX_BACKTRACKS: u32 = 60;

/// The line search stops once θ|⟨∇f, ζ⟩| ≤ ROUNDING·ε·Σ|terms of f|: below, a decrease is
/// rounding noise.
const ROUNDING: f64 = 100.0;

pub struct Fsspca;

/// FSSPCA parameters; every one can be set in a manifest's `params`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    // λ1, weight of the smoothed ℓ1 r(w_i) at the workers. Paper: 10 (WDBC*, figs. 4–5,
    // table 1); 10–50 on synthetic data.
    /// weight λ1 of the smoothed ℓ1 at the workers (paper: 10; 10–50 synthetic)
    pub lambda1: f64,
    // λ2, weight of ‖z‖₁ at the master. Paper: 30 (WDBC*, figs. 4–5); 100–300 synthetic.
    /// weight λ2 of ‖z‖₁ at the master (paper: 30; 100–300 synthetic)
    pub lambda2: f64,
    // ρ, the ADMM penalty. Paper: 1000 in every experiment. Needs ρ ≳ 2‖C_i‖ to converge (see
    // the header on scale).
    /// ADMM penalty ρ (paper: 1000); needs ρ ≳ 2‖C_i‖ to converge
    pub rho: f64,
    // μ, the smoothing width of ψ_μ (7). Paper: 1e-3.
    /// smoothing width μ of ψ_μ (paper: 1e-3)
    pub mu: f64,
    // Maximum RGD iterations per worker and round. CHOICE (paper silent).
    /// Riemannian gradient steps per worker and round, at most
    pub inner_max: u32,
    // RGD stops when ‖grad‖_F ≤ inner_tol·‖grad‖_F at the round's first iterate. CHOICE.
    /// a worker stops when ‖grad‖_F fell by inner_tol within the round
    pub inner_tol: f64,
    // c1 of the Armijo condition (15). CHOICE (a textbook value).
    /// constant c1 of the Armijo condition (15)
    pub armijo_c1: f64,
    // Step reduction factor of the backtracking. CHOICE.
    /// step reduction factor of the backtracking
    pub backtrack: f64,
    // Own criterion: √((1/K)Σ‖w_i − z‖²_F) ≤ tol and ‖z − z_prev‖_F ≤ tol. CHOICE (the paper
    // gives no stopping rule).
    /// own criterion: consensus error and change of z both ≤ tol
    pub tol: f64,
    // Rounds after which a deflation stage ends even if its criterion does not hold, to move
    // on to the next loadings. CHOICE. The last (or only) stage runs until the run's stop rule.
    /// rounds after which a deflation stage (not the last) ends regardless
    pub max_rounds_per_stage: u32,
    // Loadings per deflation stage (Algorithm 4): 0 = all r at once (the paper's default use).
    /// loadings per deflation stage; 0: all at once
    pub stage_size: usize,
    // λ2 of each stage (Algorithm 4's λ_2j), one per stage; empty = `lambda2` for every stage.
    /// λ2 of each deflation stage; empty: lambda2 for every stage
    pub lambda2_per_stage: Vec<f64>,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            lambda1: 10.0,
            lambda2: 30.0,
            rho: 1000.0,
            mu: 1e-3,
            inner_max: 100,
            inner_tol: 1e-3,
            armijo_c1: 1e-4,
            backtrack: 0.5,
            tol: 1e-4,
            max_rounds_per_stage: 1000,
            stage_size: 0,
            lambda2_per_stage: Vec::new(),
        }
    }
}

impl crate::methods::Params for Params {
    // `!(x > 0.0)` on purpose: it rejects NaN too.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        let bad = |k, m: &str| Err((k, m.to_string()));
        let nonneg = |x: f64| x >= 0.0 && x.is_finite();
        if !nonneg(self.lambda1) {
            return bad("lambda1", "must be a finite number >= 0");
        }
        if !nonneg(self.lambda2) {
            return bad("lambda2", "must be a finite number >= 0");
        }
        if !(self.rho > 0.0 && self.rho.is_finite()) {
            return bad("rho", "must be a finite number > 0");
        }
        if !(self.mu > 0.0 && self.mu.is_finite()) {
            return bad("mu", "must be a finite number > 0 (the paper's is 1e-3)");
        }
        if self.inner_max == 0 {
            return bad("inner_max", "must be >= 1");
        }
        if !(self.inner_tol >= 0.0 && self.inner_tol < 1.0) {
            return bad("inner_tol", "must lie in [0, 1)");
        }
        if !(self.armijo_c1 > 0.0 && self.armijo_c1 < 1.0) {
            return bad("armijo_c1", "must lie in (0, 1)");
        }
        if !(self.backtrack > 0.0 && self.backtrack < 1.0) {
            return bad("backtrack", "must lie in (0, 1)");
        }
        if !(self.tol >= 0.0) {
            return bad("tol", "must be >= 0");
        }
        if self.max_rounds_per_stage == 0 {
            return bad("max_rounds_per_stage", "must be >= 1");
        }
        if !self.lambda2_per_stage.iter().all(|&x| nonneg(x)) {
            return bad(
                "lambda2_per_stage",
                "every entry must be a finite number >= 0",
            );
        }
        Ok(())
    }
}

impl Params {
    /// Loadings per stage: all r at once, or Algorithm 4's stages of `stage_size`.
    fn stages(&self, r: usize) -> Vec<usize> {
        if self.stage_size == 0 || self.stage_size >= r {
            return vec![r];
        }
        (0..r)
            .step_by(self.stage_size)
            .map(|s| self.stage_size.min(r - s))
            .collect()
    }
}

impl Method for Fsspca {
    const NAME: &'static str = "fsspca";
    const PAPER: &'static str =
        "Ciou, Chen, Tseng, Lee, Federated Learning for Sparse PCA, Algorithms 1–5";
    const FAMILY: Kind = Kind::Sparse;
    const ABOUT: &'static str = "FSSPCA: consensus ADMM on the Stiefel manifold, smoothed ℓ1 at workers, soft-threshold at the master";
    const TRANSCRIPT: Shape = Shape::AdmmFsspca;
    type Params = Params;

    fn server(p: &Params, setup: ServerSetup) -> Result<Box<dyn Server>> {
        Ok(Box::new(Master::new(p, &setup)?))
    }

    fn client<'a>(p: &Params, setup: ClientSetup<'a, '_>) -> Result<Box<dyn Client + 'a>> {
        Ok(Box::new(Worker::new(p, &setup)?))
    }
}

/// C_i = X_iX_iᵀ as the inner solver applies it: through the factor X_i (n×m_i) when m_i < n/2,
/// else formed once. The factor is kept column-major and applied as X_i(X_iᵀw) by the process's
/// product kernel ([`gram_times_dense`]: the fused AVX-512 kernel, which reads X_i in place;
/// BLAS spent a third of Table I's FSSPCA time packing X_i for two-column products).
enum Curvature {
    Factor(Array2<f64>),
    Formed(Array2<f64>),
}

impl Curvature {
    fn new(block: Block) -> Self {
        match block.as_dense() {
            Some(x) if 2 * x.ncols() < x.nrows() => Self::Factor(to_f_order(x)),
            _ => Self::Formed(block.gram()),
        }
    }

    fn n(&self) -> usize {
        match self {
            Self::Factor(x) | Self::Formed(x) => x.nrows(),
        }
    }

    /// C_i w.
    fn times(&self, w: &Array2<f64>) -> Array2<f64> {
        match self {
            Self::Factor(x) => gram_times_dense(x.view(), w.view()),
            Self::Formed(c) => c.dot(w),
        }
    }

    /// C_i ← P C_i P with P = I − DDᵀ (D orthonormal): X_i ← P X_i, or, when C_i is formed,
    /// PCP = C − D(DᵀC) − (CD)Dᵀ + D(DᵀCD)Dᵀ, without forming P.
    fn deflate(&mut self, d: ArrayView2<f64>) {
        match self {
            Self::Factor(x) => *x -= &d.dot(&d.t().dot(&*x)),
            Self::Formed(c) => {
                let cd = c.dot(&d);
                let dcd = d.t().dot(&cd);
                let mut pcp = &*c - &cd.dot(&d.t()) - &d.dot(&cd.t());
                pcp += &d.dot(&dcd).dot(&d.t());
                *c = pcp;
            }
        }
    }
}

struct Worker {
    /// C_i, deflated in place by each finished stage.
    c: Curvature,
    /// F: the finished stages' loadings (n×k, orthonormal); G = I − FFᵀ.
    found: Array2<f64>,
    w: Array2<f64>,
    u: Array2<f64>,
    /// w is this stage's previous iterate, so the next z completes its dual update.
    dual_pending: bool,
    /// Last accepted RGD step, carried across rounds (the next first trial is twice it).
    theta: f64,
    /// RGD iterations of the last round.
    iters: u32,
    rng: ChaCha8Rng,
    p: Params,
}

impl Worker {
    fn new(p: &Params, setup: &ClientSetup) -> Result<Self> {
        let (n, r) = setup.start.get("z")?.dim();
        if setup.block.n() != n {
            bail!(
                "FSSPCA: start has {n} rows, the data {} features",
                setup.block.n()
            );
        }
        let c = Curvature::new(setup.block);
        let mut rng = seed::rng(setup.seed, &["fsspca-w0", &setup.index.to_string()]);
        let w = orth(crate::seed::uniform_matrix(n, p.stages(r)[0], &mut rng).view());
        Ok(Worker {
            u: Array2::zeros(w.dim()),
            w,
            c,
            found: Array2::zeros((n, 0)),
            dual_pending: false,
            theta: 0.5,
            iters: 0,
            rng,
            p: p.clone(),
        })
    }

    fn metric(&self) -> Metric<'_> {
        if self.found.ncols() == 0 {
            Metric::Identity
        } else {
            Metric::Complement(self.found.view())
        }
    }

    /// Finish a stage: C_i ← P C_i P with P = I − DDᵀ, then restart on {wᵀGw = I}.
    fn deflate(&mut self, d: ArrayView2<f64>, r: usize) -> Result<()> {
        let n = self.c.n();
        if d.nrows() != n || self.found.ncols() + d.ncols() + r > n {
            bail!("FSSPCA: cannot deflate by {:?} (n = {n})", d.dim());
        }
        self.c.deflate(d);
        self.found = concatenate![Axis(1), self.found, d];
        let start = crate::seed::uniform_matrix(n, r, &mut self.rng);
        let g = self.metric();
        self.w = gen_stiefel_normalize(g.apply(start.view()).view(), &g)?;
        self.u = Array2::zeros((n, r));
        self.dual_pending = false;
        Ok(())
    }

    /// f_i(w) given C_i w (the constant ‖X_i‖²_F left out), and the size of its rounding error
    /// in units of ε: the sum of its terms' magnitudes.
    fn value(&self, w: &Array2<f64>, cw: &Array2<f64>, z: ArrayView2<f64>) -> (f64, f64) {
        let terms = [
            -(w * cw).sum(),
            self.p.lambda1 * smooth_l1(w.view(), self.p.mu),
            (&self.u * w).sum(),
            0.5 * self.p.rho * fro2((w - &z).view()),
        ];
        (terms.iter().sum(), terms.iter().map(|t| t.abs()).sum())
    }

    /// ∇f_i(w) = −2C_iw + λ1∇r(w) + u_i + ρ(w − z).
    fn egrad(&self, w: &Array2<f64>, cw: &Array2<f64>, z: ArrayView2<f64>) -> Array2<f64> {
        let mut g = cw * -2.0;
        g.scaled_add(self.p.lambda1, &smooth_l1_grad(w.view(), self.p.mu));
        g += &self.u;
        g.scaled_add(self.p.rho, &(w - &z));
        g
    }

    /// Algorithm 3: Riemannian gradient descent with Armijo backtracking, from the current w.
    ///
    /// Under deflation the iterates are kept in range(G) = span(F)^⊥ (see the header): the
    /// gradient is G∇f before (18), and each retraction's rounding-level F-part is removed.
    // `!(slope < 0.0)` on purpose: it stops on NaN too.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    fn rgd(&mut self, z: ArrayView2<f64>) {
        let g = self.metric();
        let stiefel = self.found.ncols() == 0;
        let mut w = self.w.clone();
        let mut cw = self.c.times(&w);
        let (mut fw, mut fmag) = self.value(&w, &cw, z);
        let mut first = None;
        let mut iters = 0;
        let mut last_theta = self.theta;
        while iters < self.p.inner_max {
            let eg = self.egrad(&w, &cw, z);
            let grad = if stiefel {
                stiefel_project(w.view(), eg.view())
            } else {
                gen_stiefel_project(w.view(), &g, g.apply(eg.view()).view())
            };
            let norm = fro2(grad.view()).sqrt();
            let g0 = *first.get_or_insert(norm);
            if norm <= self.p.inner_tol * g0 || !norm.is_finite() {
                break;
            }
            let zeta = -grad;
            // ⟨∇f, ζ⟩ = −‖grad‖² up to rounding, as ζ is tangent and in range(G).
            let slope = (&eg * &zeta).sum();
            if !(slope < 0.0) {
                break;
            }
            let mut theta = 2.0 * last_theta;
            let mut accepted = None;
            for _ in 0..=MAX_BACKTRACKS {
                // A predicted decrease below f's rounding error cannot be told from noise, and
                // a step accepted on noise would shrink every later first trial: stop instead.
                if theta * -slope <= ROUNDING * f64::EPSILON * fmag {
                    break;
                }
                let step = &zeta * theta;
                let trial = if stiefel {
                    Ok(stiefel_retract_qr(w.view(), step.view()))
                } else {
                    gen_stiefel_retract_cholqr(w.view(), &g, step.view())
                        .map(|wt| g.apply(wt.view()))
                };
                if let Ok(wt) = trial {
                    let cwt = self.c.times(&wt);
                    let (ft, fmag_t) = self.value(&wt, &cwt, z);
                    if ft <= fw + self.p.armijo_c1 * theta * slope {
                        accepted = Some((wt, cwt, ft, fmag_t));
                        break;
                    }
                }
                theta *= self.p.backtrack;
            }
            let Some((wt, cwt, ft, fmag_t)) = accepted else {
                break; // no decrease f64 can resolve: w is as good as f can tell
            };
            (w, cw, fw, fmag) = (wt, cwt, ft, fmag_t);
            last_theta = theta;
            iters += 1;
        }
        self.theta = last_theta;
        self.w = w;
        self.iters = iters;
    }
}

impl Client for Worker {
    fn respond(&mut self, msg: &Message) -> Result<Message> {
        let z = msg.get("z")?;
        if z.nrows() != self.c.n() {
            bail!(
                "FSSPCA: z has {} rows, the data {} features",
                z.nrows(),
                self.c.n()
            );
        }
        if msg.has("deflate") {
            self.deflate(msg.get("deflate")?.view(), z.ncols())?;
        } else if self.dual_pending {
            // Algorithm 1 line 10 for the previous iteration, now that its z is known.
            self.u.scaled_add(self.p.rho, &(&self.w - z));
        }
        if z.ncols() != self.w.ncols() {
            bail!(
                "FSSPCA: z has {} columns, this stage {}",
                z.ncols(),
                self.w.ncols()
            );
        }
        self.rgd(z.view());
        self.dual_pending = true;
        Ok(Message::new().with("w", self.w.clone()))
    }

    fn reveal(&self) -> Message {
        Message::new().with("w", self.w.clone())
    }

    fn inner_iters(&self) -> u32 {
        self.iters
    }
}

struct Master {
    /// The current stage's consensus z (n×r_j).
    z: Array2<f64>,
    /// ū = mean_i u_i, mirrored from the w_i received and the z sent.
    ubar: Array2<f64>,
    /// w̄ of the previous round of this stage: its dual update completes with the next z sent.
    wbar_prev: Option<Array2<f64>>,
    /// F: the finished stages' loadings (orthonormal).
    found: Array2<f64>,
    /// The loadings of the stage just finished, to send with the next broadcast.
    deflate: Option<Array2<f64>>,
    stage: usize,
    stage_rounds: u32,
    stages: Vec<usize>,
    lambda2: Vec<f64>,
    p: Params,
}

impl Master {
    fn new(p: &Params, setup: &ServerSetup) -> Result<Self> {
        let (n, r) = setup.start.get("z")?.dim();
        if r == 0 || r > n {
            bail!("FSSPCA: {r} loadings of {n} features");
        }
        let stages = p.stages(r);
        let lambda2 = if p.lambda2_per_stage.is_empty() {
            vec![p.lambda2; stages.len()]
        } else if p.lambda2_per_stage.len() == stages.len() {
            p.lambda2_per_stage.clone()
        } else {
            bail!(
                "FSSPCA: lambda2_per_stage has {} entries for {} stages ({r} loadings, stage_size {})",
                p.lambda2_per_stage.len(),
                stages.len(),
                p.stage_size
            );
        };
        Ok(Master {
            z: Array2::zeros((n, stages[0])),
            ubar: Array2::zeros((n, stages[0])),
            wbar_prev: None,
            found: Array2::zeros((n, 0)),
            deflate: None,
            stage: 0,
            stage_rounds: 0,
            stages,
            lambda2,
            p: p.clone(),
        })
    }

    /// Algorithm 4 lines 4 and 9: qf(G z) as the last columns of the QR of [F, z], which equal
    /// qf((I − FFᵀ)z) when G z has full rank and stay orthonormal to F when it does not.
    fn finish(&self) -> Array2<f64> {
        let k = self.found.ncols();
        let gz = &self.z - &self.found.dot(&self.found.t().dot(&self.z));
        let q = orth(concatenate![Axis(1), self.found, gz].view());
        q.slice(s![.., k..]).to_owned()
    }
}

impl Server for Master {
    fn step(&mut self, net: &mut dyn Network) -> Result<StepInfo> {
        let mut msg = Message::new().with("z", self.z.clone());
        if let Some(d) = self.deflate.take() {
            msg = msg.with("deflate", d);
        }
        let replies = net.round(&msg)?;
        let k = replies.len() as f64;
        let rho = self.p.rho;
        let wbar = sum_part(&replies, "w")? / k;
        if let Some(prev) = self.wbar_prev.take() {
            // The clients' dual step with the z just sent: ū ← ū + ρ(w̄_prev − z).
            self.ubar.scaled_add(rho, &(&prev - &self.z));
        }
        let v = &wbar + &(&self.ubar / rho);
        let z = soft_threshold(v.view(), self.lambda2[self.stage] / (k * rho));
        let mut primal = 0.0;
        for r in &replies {
            primal += fro2((r.get("w")? - &z).view());
        }
        let primal = (primal / k).sqrt();
        let dual = fro2((&z - &self.z).view()).sqrt();
        self.z = z;
        self.wbar_prev = Some(wbar);
        self.stage_rounds += 1;
        let criterion = primal <= self.p.tol && dual <= self.p.tol;
        let last = self.stage + 1 == self.stages.len();
        let capped = self.stage_rounds >= self.p.max_rounds_per_stage;
        if !last && (criterion || capped) {
            let zj = self.finish();
            self.found = concatenate![Axis(1), self.found, zj];
            self.deflate = Some(zj);
            self.stage += 1;
            let rj = self.stages[self.stage];
            let n = self.z.nrows();
            self.z = Array2::zeros((n, rj));
            self.ubar = Array2::zeros((n, rj));
            self.wbar_prev = None;
            self.stage_rounds = 0;
        }
        Ok(StepInfo {
            objective: None,
            // Only the last stage's criterion is the run's: an earlier stage converging would
            // otherwise stop the runner (own_criterion) before the remaining loadings.
            converged: criterion && last,
            done: criterion && last,
        })
    }

    fn estimate(&self) -> Message {
        let gz = &self.z - &self.found.dot(&self.found.t().dot(&self.z));
        // qf(Gz) only when Gz has full numerical rank (see the header).
        let (_, r) = orth_with_r(gz.view());
        let scale = r.diag().iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let full = scale > 0.0 && r.diag().iter().all(|v| v.abs() > 1e-10 * scale);
        let current = if full { self.finish() } else { gz };
        let z = concatenate![Axis(1), self.found, current];
        Message::new().with("z", z)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fed::Counters;
    use crate::linalg::{sym_eig_desc, to_f_order};
    use crate::methods::registry::Running;
    use crate::methods::Params as _;
    use crate::seed::uniform_matrix;

    /// n×m samples (columns) with covariance ∝ V diag(10, 5, 1, 0.99, 0.98, …) Vᵀ, V random.
    fn data(n: usize, m: usize, s: u64) -> Array2<f64> {
        let mut rng = seed::rng(s, &["fsspca-test"]);
        let v = orth(uniform_matrix(n, n, &mut rng).view());
        let scales = ndarray::Array1::from_iter((0..n).map(|i| {
            let e = [10.0, 5.0].get(i).copied().unwrap_or(1.0 - 0.01 * i as f64);
            f64::sqrt(e)
        }));
        let y = uniform_matrix(n, m, &mut rng) * &scales.insert_axis(Axis(1));
        to_f_order(v.dot(&y).view())
    }

    fn start(n: usize, r: usize) -> Message {
        Message::new().with(
            "z",
            orth(uniform_matrix(n, r, &mut seed::rng(3, &["z0"])).view()),
        )
    }

    fn running<'a>(x: &'a Array2<f64>, sizes: &[usize], r: usize, p: &str) -> Running<'a> {
        let params: toml::Table = toml::from_str(p).unwrap();
        let blocks = Block::Dense(x.view()).split(sizes);
        Running::named(
            "fsspca",
            &params,
            &start(x.nrows(), r),
            11,
            blocks,
            x.nrows(),
        )
        .unwrap()
    }

    fn z(r: &Running) -> Array2<f64> {
        r.server.estimate().get("z").unwrap().clone()
    }

    /// ‖sin Θ‖_F between span(z) and the top-k eigenvectors of XXᵀ (k = columns of z).
    fn sin_theta(x: &Array2<f64>, z: &Array2<f64>) -> f64 {
        let eig = sym_eig_desc(x.dot(&x.t()).view()).unwrap();
        let v = eig.vectors.slice(s![.., ..z.ncols()]).to_owned();
        let q = orth(z.view());
        fro2((&q - &v.dot(&v.t().dot(&q))).view()).sqrt()
    }

    /// Step until `done` or `converged` (at most `max` rounds): (rounds, converged).
    fn run_to_end(run: &mut Running, max: usize) -> (usize, bool) {
        for round in 1..=max {
            let info = run.step().unwrap();
            if info.done || info.converged {
                return (round, info.converged);
            }
        }
        (max, false)
    }

    /// The factored and the formed C_i apply the same operator, before and after a deflation.
    #[test]
    fn curvature_factor_and_formed_agree() {
        let x = data(30, 12, 4);
        let factor = Curvature::new(Block::Dense(x.view()));
        assert!(matches!(factor, Curvature::Factor(_)), "12 < 30/2 samples");
        let mut pair = [factor, Curvature::Formed(Block::Dense(x.view()).gram())];
        let w = orth(uniform_matrix(30, 3, &mut seed::rng(5, &["w"])).view());
        let d = orth(uniform_matrix(30, 2, &mut seed::rng(6, &["d"])).view());
        let close = |a: &Array2<f64>, b: &Array2<f64>| {
            fro2((a - b).view()).sqrt() <= 1e-12 * fro2(a.view()).sqrt()
        };
        assert!(close(&pair[0].times(&w), &pair[1].times(&w)));
        for c in &mut pair {
            c.deflate(d.view());
        }
        let (a, b) = (pair[0].times(&w), pair[1].times(&w));
        assert!(close(&a, &b));
        // deflated: (I − DDᵀ)C(I − DDᵀ) annihilates span(D) and maps into its complement
        assert!(fro2(pair[0].times(&d).view()).sqrt() <= 1e-12 * fro2(x.view()));
        assert!(fro2(d.t().dot(&a).view()).sqrt() <= 1e-12 * fro2(x.view()));
        assert!(matches!(
            Curvature::new(Block::Dense(data(10, 12, 4).view())),
            Curvature::Formed(_)
        ));
    }

    #[test]
    fn without_sparsity_it_finds_pcas_subspace() {
        let x = data(20, 200, 1);
        let sizes = [70, 60, 70];
        // The residual criterion at 1e-7 leaves ‖sin Θ‖ ≈ 5e-7; the Armijo test's rounding floor
        // (ROUNDING) stops progress near 5e-8, so tol much below 1e-7 is never met here.
        let mut run = running(&x, &sizes, 2, "lambda1 = 0\nlambda2 = 0\ntol = 1e-7");
        let (rounds, converged) = run_to_end(&mut run, 500);
        assert!(converged, "not converged in {rounds} rounds");
        let err = sin_theta(&x, &z(&run));
        assert!(err <= 1e-6, "‖sin Θ‖_F = {err:e} after {rounds} rounds");
        // Every client agrees with z (the consensus the runner measures through reveal()).
        let zz = z(&run);
        for w in run.net.reveal() {
            let w = w.get("w").unwrap();
            assert!(fro2((w - &orth(zz.view())).view()).sqrt() <= 1e-6);
        }
        // The same through two deflation stages of one loading each.
        let mut run = running(
            &x,
            &sizes,
            2,
            "lambda1 = 0\nlambda2 = 0\ntol = 1e-7\nstage_size = 1",
        );
        let (rounds, converged) = run_to_end(&mut run, 1000);
        assert!(converged, "deflation: not converged in {rounds} rounds");
        let err = sin_theta(&x, &z(&run));
        assert!(
            err <= 1e-6,
            "deflation: ‖sin Θ‖_F = {err:e} after {rounds} rounds"
        );
    }

    #[test]
    fn only_w_goes_up_and_z_down() {
        let x = data(20, 200, 2);
        let (n, k, t) = (20u64, 3u64, 7u64);
        let mut run = running(&x, &[70, 60, 70], 2, "");
        for _ in 0..t {
            run.step().unwrap();
        }
        let c = run.net.counters();
        assert_eq!(c.rounds, t);
        assert_eq!(c.bytes_up, 8 * t * k * n * 2);
        // A broadcast is counted once, whatever the number of clients.
        assert_eq!(c.bytes_down, 8 * t * n * 2);
        // Stages of one loading, 4 rounds each: z is n×1, and round 5 also carries "deflate".
        let p = "stage_size = 1\nmax_rounds_per_stage = 4\ntol = 0";
        let mut run = running(&x, &[70, 60, 70], 2, p);
        for _ in 0..t {
            run.step().unwrap();
        }
        let c = run.net.counters();
        assert_eq!(c.bytes_up, 8 * t * k * n);
        assert_eq!(c.bytes_down, 8 * t * n + 8 * n);
    }

    /// The clients of one run, driven directly so that their duals can be read.
    struct Direct {
        workers: Vec<Worker>,
        sizes: Vec<usize>,
        counters: Counters,
    }

    impl Network for Direct {
        fn num_clients(&self) -> usize {
            self.workers.len()
        }
        fn client_sizes(&self) -> &[usize] {
            &self.sizes
        }
        fn round(&mut self, msg: &Message) -> Result<Vec<Message>> {
            self.workers.iter_mut().map(|w| w.respond(msg)).collect()
        }
        fn counters(&self) -> &Counters {
            &self.counters
        }
        fn transcript(&self) -> Option<&crate::fed::Transcript> {
            None
        }
    }

    #[test]
    fn the_master_mirrors_the_mean_dual() {
        let x = data(20, 200, 3);
        let sizes = vec![70, 60, 70];
        let p = Params {
            stage_size: 1,
            max_rounds_per_stage: 6,
            ..Params::default()
        };
        let start = start(20, 2);
        let blocks = Block::Dense(x.view()).split(&sizes);
        let workers = blocks
            .into_iter()
            .enumerate()
            .map(|(index, block)| {
                let setup = ClientSetup {
                    index,
                    block,
                    sizes: &sizes,
                    start: &start,
                    seed: 5,
                };
                Worker::new(&p, &setup).unwrap()
            })
            .collect();
        let setup = ServerSetup {
            start: &start,
            seed: 5,
            sizes: &sizes,
        };
        let mut master = Master::new(&p, &setup).unwrap();
        let mut net = Direct {
            workers,
            sizes: sizes.clone(),
            counters: Counters::new(3, 20),
        };
        let mut compared = 0;
        for _ in 0..12 {
            master.step(&mut net).unwrap();
            // Right after a stage ends the master has reset ū; the clients reset with "deflate".
            if master.deflate.is_some() {
                continue;
            }
            let mut mean = Array2::<f64>::zeros(master.ubar.dim());
            for w in &net.workers {
                mean += &(&w.u / 3.0);
            }
            // Rounding relative to the clients' duals, which are far larger than their mean.
            let scale = net
                .workers
                .iter()
                .map(|w| fro2(w.u.view()).sqrt())
                .fold(1.0, f64::max);
            let diff = fro2((&mean - &master.ubar).view()).sqrt();
            assert!(diff <= 1e-12 * scale, "{diff:e} vs {scale:e}");
            compared += 1;
        }
        assert_eq!(compared, 11);
        // Both stages ran: the second loading is found and orthogonal to the first.
        let z = master.estimate().get("z").unwrap().clone();
        assert_eq!(z.dim(), (20, 2));
    }

    #[test]
    fn deflated_loadings_are_orthonormal() {
        let x = data(20, 200, 4);
        let p = "stage_size = 1\nmax_rounds_per_stage = 200";
        let mut run = running(&x, &[70, 60, 70], 2, p);
        let (rounds, _) = run_to_end(&mut run, 400);
        let z = z(&run);
        assert_eq!(z.dim(), (20, 2), "after {rounds} rounds");
        let off = fro2((z.t().dot(&z) - Array2::<f64>::eye(2)).view()).sqrt();
        assert!(off <= 1e-10, "‖zᵀz − I‖ = {off:e}");
        assert!(z.column(0).dot(&z.column(1)).abs() <= 1e-10);
        // The master's soft threshold made some weights exactly zero.
        assert!(z.iter().any(|v| *v == 0.0));
    }

    #[test]
    fn the_estimate_before_the_first_round_is_the_zero_z() {
        let x = data(20, 200, 5);
        let run = running(&x, &[100, 100], 2, "");
        let z = z(&run);
        assert_eq!(z.dim(), (20, 2));
        assert!(z.iter().all(|v| *v == 0.0));
    }

    #[test]
    fn check_rejects_nonsense() {
        let ok = Params::default();
        assert!(ok.check().is_ok());
        let cases: [(&str, Params); 8] = [
            (
                "rho",
                Params {
                    rho: 0.0,
                    ..Params::default()
                },
            ),
            (
                "rho",
                Params {
                    rho: -1.0,
                    ..Params::default()
                },
            ),
            (
                "mu",
                Params {
                    mu: 0.0,
                    ..Params::default()
                },
            ),
            (
                "mu",
                Params {
                    mu: f64::NAN,
                    ..Params::default()
                },
            ),
            (
                "lambda1",
                Params {
                    lambda1: -1.0,
                    ..Params::default()
                },
            ),
            (
                "lambda2",
                Params {
                    lambda2: -0.5,
                    ..Params::default()
                },
            ),
            (
                "inner_max",
                Params {
                    inner_max: 0,
                    ..Params::default()
                },
            ),
            (
                "lambda2_per_stage",
                Params {
                    lambda2_per_stage: vec![1.0, -1.0],
                    ..Params::default()
                },
            ),
        ];
        for (key, p) in cases {
            assert_eq!(p.check().unwrap_err().0, key);
        }
        // A per-stage list must match the stages the loadings make.
        let p = Params {
            stage_size: 1,
            lambda2_per_stage: vec![1.0],
            ..Params::default()
        };
        let start = start(20, 2);
        let setup = ServerSetup {
            start: &start,
            seed: 1,
            sizes: &[10],
        };
        assert!(Master::new(&p, &setup).is_err());
        assert_eq!(p.stages(2), vec![1, 1]);
        assert_eq!(Params { stage_size: 2, ..p }.stages(5), vec![2, 2, 1]);
    }
}
