//! ManPG: the manifold proximal gradient method (Chen, Ma, So, Zhang, SIOPT 2020) for
//! min over Z ∈ St(n, p) of f(Z) + μ‖Z‖₁, here DSSAL1's model with f(Z) = −½tr(ZᵀAAᵀZ).
//!
//! Iteration: D = the proximal step of [`stiefel_prox`] at Z for ∇f(Z) with step t; then
//! Armijo backtracking on α (α ← γα until F(R(Z + αD)) ≤ F(Z) − δ·α‖D‖²_F/t, R the polar
//! retraction); stop when ‖D‖_F ≤ tol·√(np) (ManPG's public code: tol = 1e-8·√(np) scaled
//! the same way).
//!
//! Two uses, one iteration ([`iterate`]):
//! - [`centralised`]: the sparse family's reference solution, on the Gram matrix G = AAᵀ with
//!   t = 1/λ₁(G).
//! - Federated ManPG (the DSSAL1 paper's natural peer): the server holds Z and takes the ManPG
//!   step; each round it broadcasts a trial point Z and every client answers A_iA_iᵀZ (part
//!   `y`) and ‖A_iᵀZ‖²_F (scalar `f`), so the server has ∇f and F at every trial. An accepted
//!   trial's products are the next iteration's gradient, so an iteration costs one round unless
//!   the line search backtracks (one more round per halving). The first round also carries
//!   each client's ‖A_i‖₂² (power iterations on its own data): t = t_scale/Σ_i‖A_i‖₂², which
//!   is λ₁(AAᵀ)'s size on evenly split data (CHOICE: a server cannot know λ₁ itself). Its
//!   replies are A_iA_iᵀZ, exactly federated SSI's, so they reveal A_iA_iᵀ (the leakage
//!   attack reads part `y` against the broadcast `z`).

use crate::data::matrix::Block;
use crate::fed::{sum_part, sum_scalar, Client, Message, Network, Shape};
use crate::linalg::fro2;
use crate::linalg::manifold::stiefel_retract_polar;
use crate::linalg::stiefel_prox::stiefel_prox;
use crate::methods::{ClientSetup, Method, Server, ServerSetup, StepInfo};
use crate::seed;
use crate::spec::Kind;
use anyhow::{bail, Context, Result};
use ndarray::{Array1, Array2, ArrayView2};
use rand::Rng;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Accuracy of the proximal subproblem (its dual residual ‖E(Λ)‖_F).
pub const PROX_TOL: f64 = 1e-12;

/// The line search of one ManPG iteration.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LineSearch {
    /// sufficient-decrease constant δ of F(R(Z + αD)) ≤ F(Z) − δα‖D‖²_F/t
    pub armijo: f64,
    /// backtracking factor γ: α ← γα
    pub shrink: f64,
    // Halvings before the step is taken anyway (ManPG's code caps them too).
    /// backtracks before the step is taken anyway
    pub max_backtracks: u32,
}

impl Default for LineSearch {
    fn default() -> Self {
        Self {
            armijo: 0.5,
            shrink: 0.5,
            max_backtracks: 10,
        }
    }
}

/// ‖Z‖₁.
pub fn l1(z: ArrayView2<f64>) -> f64 {
    z.iter().map(|v| v.abs()).sum()
}

/// One ManPG iteration's proximal step at `z` for gradient `grad` and step `t`, warm-started
/// from the previous multiplier: (D, ‖D‖_F).
pub fn prox_step(
    z: ArrayView2<f64>,
    grad: ArrayView2<f64>,
    t: f64,
    mu: f64,
    warm: &mut Option<Array2<f64>>,
) -> Result<(Array2<f64>, f64)> {
    let step = stiefel_prox(z, grad, t, mu, warm.as_ref().map(|w| w.view()), PROX_TOL)
        .context("ManPG's proximal subproblem")?;
    *warm = Some(step.lambda);
    let norm = fro2(step.d.view()).sqrt();
    Ok((step.d, norm))
}

/// ManPG on F = f + μ‖·‖₁ from `z`, with `oracle(Z)` = (f(Z), ∇f(Z)) computed locally, until
/// ‖D‖_F ≤ tol·√(np) or `max_iter` iterations: (Z, whether the tolerance was reached).
pub fn iterate(
    mut z: Array2<f64>,
    oracle: impl Fn(ArrayView2<f64>) -> (f64, Array2<f64>),
    mu: f64,
    t: f64,
    ls: LineSearch,
    tol: f64,
    max_iter: usize,
) -> Result<(Array2<f64>, bool)> {
    let scale = (z.len() as f64).sqrt();
    let (mut f, mut grad) = oracle(z.view());
    let mut warm = None;
    for _ in 0..max_iter {
        let (d, norm) = prox_step(z.view(), grad.view(), t, mu, &mut warm)?;
        if norm <= tol * scale {
            return Ok((z, true));
        }
        let big_f = f + mu * l1(z.view());
        let mut alpha = 1.0;
        for b in 0..=ls.max_backtracks {
            let trial = stiefel_retract_polar(z.view(), (&d * alpha).view())?;
            let (ft, gt) = oracle(trial.view());
            let accept = ft + mu * l1(trial.view()) <= big_f - ls.armijo * alpha * norm * norm / t;
            if accept || b == ls.max_backtracks {
                (z, f, grad) = (trial, ft, gt);
                break;
            }
            alpha *= ls.shrink;
        }
    }
    Ok((z, false))
}

/// Centralised ManPG on DSSAL1's model with Gram matrix `gram`: f(Z) = −½tr(ZᵀGZ); an error
/// if it does not reach its tolerance (a reference must be reliable).
pub fn centralised(
    gram: ArrayView2<f64>,
    z0: ArrayView2<f64>,
    mu: f64,
    t: f64,
    tol: f64,
    max_iter: usize,
) -> Result<Array2<f64>> {
    let oracle = |z: ArrayView2<f64>| {
        let gz = gram.dot(&z);
        (-0.5 * (&z * &gz).sum(), -gz)
    };
    let (z, converged) = iterate(
        z0.to_owned(),
        oracle,
        mu,
        t,
        LineSearch::default(),
        tol,
        max_iter,
    )
    .context("centralised ManPG (the sparse family's reference)")?;
    if !converged {
        bail!(
            "centralised ManPG (the sparse family's reference) did not reach ‖D‖_F <= \
             {tol:e}·√(np) in {max_iter} iterations (n = {}, p = {}, μ = {mu})",
            z.nrows(),
            z.ncols()
        );
    }
    Ok(z)
}

/// Federated ManPG parameters.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// step t = t_scale / Σ_i ‖A_i‖₂²
    pub t_scale: f64,
    /// the Armijo backtracking of the ManPG step: a table, all three keys required
    pub line_search: LineSearch,
    // Own stopping criterion: ‖D‖_F ≤ tol·√(np) with the server's D.
    /// own criterion ‖D‖_F ≤ tol·√(np)
    pub tol: f64,
    /// power steps each client spends estimating ‖A_i‖₂² (first round)
    pub power_iters: usize,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            t_scale: 1.0,
            line_search: LineSearch::default(),
            tol: 1e-8,
            power_iters: 30,
        }
    }
}

impl crate::methods::Params for Params {
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        check_line_search(&self.line_search)?;
        if !(self.t_scale > 0.0 && self.t_scale.is_finite()) {
            return Err(("t_scale", "must be a finite number > 0".into()));
        }
        if !(self.tol > 0.0) {
            return Err(("tol", "must be > 0".into()));
        }
        if self.power_iters == 0 {
            return Err(("power_iters", "must be >= 1".into()));
        }
        Ok(())
    }
}

/// The line-search constants a run can use.
#[allow(clippy::neg_cmp_op_on_partial_ord)]
pub fn check_line_search(ls: &LineSearch) -> std::result::Result<(), (&'static str, String)> {
    if !(ls.armijo > 0.0 && ls.armijo < 1.0) {
        return Err(("line_search.armijo", "must lie in (0, 1)".into()));
    }
    if !(ls.shrink > 0.0 && ls.shrink < 1.0) {
        return Err(("line_search.shrink", "must lie in (0, 1)".into()));
    }
    if ls.max_backtracks > 60 {
        return Err(("line_search.max_backtracks", "must be <= 60".into()));
    }
    Ok(())
}

/// The model's weight μ, which the sparse family puts in the common start.
pub fn mu_of(start: &Message) -> Result<f64> {
    start
        .scalar("mu")
        .context("this method solves DSSAL1's model: [problem] mu must be set")
}

/// ‖A_i‖₂² by power iterations from a start drawn from the method's seed.
pub fn local_norm2(block: Block, seed: u64, index: usize, iters: usize, tag: &str) -> f64 {
    let mut rng = seed::rng(seed, &[tag, &index.to_string()]);
    let start = Array1::from_iter((0..block.n()).map(|_| rng.random_range(-1.0..=1.0)));
    block.spectral_norm2(start, iters)
}

struct ManpgClient<'a> {
    a: Block<'a>,
    norm2: f64,
    first: bool,
}

impl Client for ManpgClient<'_> {
    fn respond(&mut self, msg: &Message) -> Result<Message> {
        let z = msg.get("z")?.view();
        let mut reply = Message::new()
            .with("y", self.a.gram_times(z))
            .with_scalar("f", self.a.fro2_at(z));
        if self.first {
            reply = reply.with_scalar("norm2", self.norm2);
            self.first = false;
        }
        Ok(reply)
    }
}

struct ManpgServer {
    z: Array2<f64>,
    mu: f64,
    params: Params,
    /// t, f(Z) and ∇f(Z) at the current Z, once the first round has answered.
    state: Option<(f64, f64, Array2<f64>)>,
    warm: Option<Array2<f64>>,
}

impl ManpgServer {
    /// Broadcast `z`; (f(z), ∇f(z)) from the replies, and Σ‖A_i‖₂² when the replies carry it.
    fn ask(net: &mut dyn Network, z: &Array2<f64>) -> Result<(f64, Array2<f64>, Vec<Message>)> {
        let replies = net.round(&Message::new().with("z", z.clone()))?;
        let f = -0.5 * sum_scalar(&replies, "f")?;
        let grad = -sum_part(&replies, "y")?;
        Ok((f, grad, replies))
    }
}

impl Server for ManpgServer {
    #[allow(clippy::neg_cmp_op_on_partial_ord)] // `!(l > 0.0)` rejects NaN too
    fn step(&mut self, net: &mut dyn Network) -> Result<StepInfo> {
        let (t, f, grad) = match self.state.take() {
            Some(s) => s,
            None => {
                let (f, grad, replies) = Self::ask(net, &self.z)?;
                let l = sum_scalar(&replies, "norm2")?;
                if !(l > 0.0) {
                    bail!("federated ManPG: Σ‖A_i‖₂² = {l}: the data are zero");
                }
                (self.params.t_scale / l, f, grad)
            }
        };
        let (mu, ls) = (self.mu, self.params.line_search);
        let (d, norm) = prox_step(self.z.view(), grad.view(), t, mu, &mut self.warm)?;
        let converged = norm <= self.params.tol * (self.z.len() as f64).sqrt();
        let big_f = f + mu * l1(self.z.view());
        let mut alpha = 1.0;
        for b in 0..=ls.max_backtracks {
            let trial = stiefel_retract_polar(self.z.view(), (&d * alpha).view())?;
            let (ft, gt, _) = Self::ask(net, &trial)?;
            if ft + mu * l1(trial.view()) <= big_f - ls.armijo * alpha * norm * norm / t
                || b == ls.max_backtracks
            {
                self.z = trial;
                self.state = Some((t, ft, gt));
                break;
            }
            alpha *= ls.shrink;
        }
        Ok(StepInfo {
            objective: None,
            converged,
            done: false,
        })
    }

    fn estimate(&self) -> Message {
        Message::new().with("z", self.z.clone())
    }
}

pub struct Manpg;

impl Method for Manpg {
    const NAME: &'static str = "manpg";
    const PAPER: &'static str = "Chen, Ma, So, Zhang, Proximal gradient method for nonsmooth optimization over the Stiefel manifold (SIOPT 2020)";
    const FAMILY: Kind = Kind::Sparse;
    const ABOUT: &'static str = "federated ManPG: clients send A_iA_iᵀZ, the server takes the ManPG step (Armijo, a round per trial)";
    const NEEDS_MU: bool = true;
    const TRANSCRIPT: Shape = Shape::Answers;
    type Params = Params;
    fn server(params: &Params, setup: ServerSetup) -> Result<Box<dyn Server>> {
        Ok(Box::new(ManpgServer {
            z: setup.start.get("z")?.clone(),
            mu: mu_of(setup.start)?,
            params: params.clone(),
            state: None,
            warm: None,
        }))
    }
    fn client<'a>(params: &Params, setup: ClientSetup<'a, '_>) -> Result<Box<dyn Client + 'a>> {
        let a = setup.block;
        Ok(Box::new(ManpgClient {
            a,
            norm2: local_norm2(a, setup.seed, setup.index, params.power_iters, "norm2"),
            first: true,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::{orth, sym_eig_desc};
    use crate::methods::registry::Running;
    use crate::seed::uniform_matrix;
    use ndarray::s;

    /// A small Gram matrix with a clear gap after p = 2, and a random start.
    fn instance(n: usize, m: usize) -> (Array2<f64>, Array2<f64>, Array2<f64>) {
        let mut rng = seed::rng(7, &["manpg-test"]);
        let mut a = uniform_matrix(n, m, &mut rng);
        for (i, mut row) in a.rows_mut().into_iter().enumerate() {
            row *= 1.0 / (1.0 + i as f64);
        }
        let g = a.dot(&a.t());
        let z0 = orth(uniform_matrix(n, 2, &mut rng).view());
        (a, g, z0)
    }

    #[test]
    fn centralised_reaches_its_tolerance_and_is_stationary() {
        let (_, g, z0) = instance(30, 200);
        let t = 1.0 / sym_eig_desc(g.view()).unwrap().values[0];
        let mu = 0.05 * g[[0, 0]].sqrt();
        let z = centralised(g.view(), z0.view(), mu, t, 1e-8, 100_000).unwrap();
        let grad = -g.dot(&z);
        let step = stiefel_prox(z.view(), grad.view(), t, mu, None, 1e-14).unwrap();
        assert!(fro2(step.d.view()).sqrt() <= 1e-8 * (z.len() as f64).sqrt());
        let gap = z.t().dot(&z) - Array2::<f64>::eye(2);
        assert!(fro2(gap.view()).sqrt() < 1e-12);
        // The ℓ1 term makes some weights exactly zero.
        assert!(z.iter().any(|v| *v == 0.0));
    }

    #[test]
    fn with_mu_zero_federated_manpg_finds_the_pca_subspace() {
        let (a, g, z0) = instance(20, 120);
        let start = Message::new().with("z", z0).with_scalar("mu", 0.0);
        let blocks = Block::Dense(a.view()).split(&[40, 40, 40]);
        let mut run = Running::named("manpg", &toml::Table::new(), &start, 1, blocks, 20).unwrap();
        for _ in 0..3000 {
            run.step().unwrap();
        }
        let z = run.server.estimate().get("z").unwrap().clone();
        let u = sym_eig_desc(g.view()).unwrap().vectors;
        let u2 = u.slice(s![.., ..2]);
        let sin = fro2((&z - &u2.dot(&u2.t().dot(&z))).view()).sqrt();
        assert!(sin < 1e-8, "sin Θ = {sin:e}");
    }

    #[test]
    fn a_federated_round_costs_one_broadcast_and_one_n_by_p_reply_per_client() {
        let (a, _, z0) = instance(20, 120);
        let start = Message::new().with("z", z0).with_scalar("mu", 0.01);
        let blocks = Block::Dense(a.view()).split(&[60, 60]);
        let mut run = Running::named("manpg", &toml::Table::new(), &start, 1, blocks, 20).unwrap();
        run.step().unwrap();
        let c = run.net.counters();
        // First step: the round at Z⁽⁰⁾ plus at least one trial.
        assert!(c.rounds >= 2);
        let rounds = c.rounds;
        // Down: Z (20×2) per round; up: y (20×2) + f per client per round, + norm2 once.
        assert_eq!(c.bytes_down, 8 * rounds * 40);
        assert_eq!(c.bytes_up, 8 * 2 * (rounds * 41 + 1));
        assert_eq!(c.bytes_up_per_client, vec![8 * (rounds * 41 + 1); 2]);
    }
}
