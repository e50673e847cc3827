//! DCF-PCA (Chu, Distributed Robust PCA, Algorithm 1) and CF-PCA, its one-client case: robust
//! PCA M = L + S by consensus factorisation L = U Vᵀ, following the authors'
//! rpca_distributed.py (numerics checked in the scratch crate rpca/src/dcfpca.rs).
//!
//! Client i holds the column block M_i (n×m_i) and private V_i (m_i×p), S_i (n×m_i), and
//! minimises the local objective (11)
//! ½‖U V_iᵀ + S_i − M_i‖²_F + ρ/2 (‖V_i‖²_F + (m_i/m)‖U‖²_F) + λ‖S_i‖₁.
//! Round t: the server broadcasts U; each client runs K local steps, each one sweep of (7)
//! (V_i ← ridge solve, S_i ← soft threshold; `inner_sweeps` of them) then one gradient step
//! U_i ← U_i − η_t[(U V_iᵀ + S_i − M_i)V_i + ρ(m_i/m)U_i], and replies U_i. The server sets
//! U ← Σ_i (m_i/m) U_i, summed in client order. η_t = η₀/√(t+1) is a public schedule: each
//! client counts its own rounds, nothing but U crosses the network.

use crate::fed::{Client, Message, Network};
use crate::linalg::fro2;
use crate::linalg::gram_product::{add_a_times, t_times_dense, threshold_sum};
use crate::methods::{ClientSetup, Method, Server, ServerSetup, StepInfo};
use crate::spec::Kind;
use anyhow::{anyhow, bail, Context, Result};
use ndarray::linalg::general_mat_mul;
use ndarray::{Array2, ArrayView2, ShapeBuilder, Zip};
use ndarray_linalg::InverseC;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::marker::PhantomData;

/// DCF-PCA: the consensus algorithm over the clients' column blocks.
#[derive(Debug)]
pub struct DcfPca;

/// CF-PCA: the same code on one client holding all of M (registered as centralised).
#[derive(Debug)]
pub struct CfPca;

/// The defaults that distinguish the two registered names (everything else is shared).
pub trait Defaults {
    const LOCAL_STEPS: u32;
    const ETA0: f64;
    const LAMBDA: f64;
    const MAX_ROUNDS: u32;
}

/// The authors' run.sh, "Exact rank", DCF at M = N = 500: `--tau 5 --num_clients 5 --lr 0.2
/// --epoch 100 --mu0 0.1` (the script's λ is `--mu0`).
impl Defaults for DcfPca {
    const LOCAL_STEPS: u32 = 5;
    const ETA0: f64 = 0.2;
    const LAMBDA: f64 = 0.1;
    const MAX_ROUNDS: u32 = 100;
}

/// The authors' run.sh, "Exact rank", CF at M = N = 500: `--tau 1 --num_clients 1 --lr 0.06
/// --epoch 100 --mu0 0.3` (the CF branch forces tau = 1). At n = 200 λ = 0.3 stalls at err ≈ 3e-6
/// (tests/lib/robust_pca.rs passes 0.1).
impl Defaults for CfPca {
    const LOCAL_STEPS: u32 = 1;
    const ETA0: f64 = 0.06;
    const LAMBDA: f64 = 0.3;
    const MAX_ROUNDS: u32 = 100;
}

/// Parameters of DCF-PCA and CF-PCA (defaults from `D`).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(
    deny_unknown_fields,
    default,
    bound(serialize = "", deserialize = "D: Defaults")
)]
#[schemars(bound = "D: Defaults")]
pub struct Params<D> {
    // Local steps K per round (the script's `--tau`).
    /// local steps K per round
    pub local_steps: u32,
    // η₀ of η_t = η₀/√(t+1) (the script's `--lr`, decayed as lr0/np.sqrt(epoch+1)).
    /// step size η_t = eta0/√(t+1)
    pub eta0: f64,
    // Weight λ of ‖S‖₁ (the script's `--mu0`, its rho2).
    /// weight λ of ‖S‖₁
    pub lambda: f64,
    // Weight ρ of the factor penalty, as a multiple of the script's 1/√min(n, m) (its rho1):
    // ρ = rho_scale/√min(n, m), so a setting means the same at every size.
    /// factor penalty ρ = rho_scale/√min(n, m)
    pub rho_scale: f64,
    // Own criterion: ‖U_t − U_{t−1}‖_F / ‖U_{t−1}‖_F < tol (the script's 1e-5).
    /// own criterion: ‖U_t − U_{t−1}‖_F/‖U_{t−1}‖_F < tol
    pub tol: f64,
    // Rounds before `done` (the script's epochs).
    /// rounds before the method stops by itself
    pub max_rounds: u32,
    // Alternating (V, S) sweeps per local step: the script does one.
    /// alternating (V, S) sweeps per local step
    pub inner_sweeps: u32,
    #[serde(skip)]
    method: PhantomData<fn() -> D>,
}

impl<D: Defaults> Default for Params<D> {
    fn default() -> Self {
        Self {
            local_steps: D::LOCAL_STEPS,
            eta0: D::ETA0,
            lambda: D::LAMBDA,
            rho_scale: 1.0,
            tol: 1e-5,
            max_rounds: D::MAX_ROUNDS,
            inner_sweeps: 1,
            method: PhantomData,
        }
    }
}

impl<D: Defaults> crate::methods::Params for Params<D> {
    // `!(x > 0.0)` on purpose: it rejects NaN too.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        let bad = |k, m: &str| Err((k, m.to_string()));
        if !(self.eta0 > 0.0 && self.eta0.is_finite()) {
            return bad("eta0", "must be a finite number > 0");
        }
        if !(self.lambda > 0.0 && self.lambda.is_finite()) {
            return bad("lambda", "must be a finite number > 0");
        }
        if !(self.rho_scale > 0.0 && self.rho_scale.is_finite()) {
            return bad(
                "rho_scale",
                "must be a finite number > 0 (1 is the authors' ρ)",
            );
        }
        if !(self.tol >= 0.0) {
            return bad("tol", "must be >= 0");
        }
        if self.local_steps == 0 {
            return bad("local_steps", "must be >= 1");
        }
        if self.max_rounds == 0 {
            return bad("max_rounds", "must be >= 1");
        }
        if self.inner_sweeps == 0 {
            return bad("inner_sweeps", "must be >= 1");
        }
        Ok(())
    }
}

/// The resolved settings, free of the defaults marker: the one code path of both names.
#[derive(Clone, Copy, Debug)]
struct Settings {
    local_steps: u32,
    eta0: f64,
    lambda: f64,
    rho_scale: f64,
    tol: f64,
    max_rounds: u32,
    inner_sweeps: u32,
}

impl<D> From<&Params<D>> for Settings {
    fn from(p: &Params<D>) -> Self {
        Self {
            local_steps: p.local_steps,
            eta0: p.eta0,
            lambda: p.lambda,
            rho_scale: p.rho_scale,
            tol: p.tol,
            max_rounds: p.max_rounds,
            inner_sweeps: p.inner_sweeps,
        }
    }
}

impl Method for DcfPca {
    const NAME: &'static str = "dcfpca";
    const PAPER: &'static str = "Chu, Distributed Robust PCA, Algorithm 1";
    const FAMILY: Kind = Kind::Robust;
    const ABOUT: &'static str =
        "DCF-PCA: consensus factorisation U V_iᵀ + S_i, K local steps per round";
    type Params = Params<DcfPca>;
    fn server(p: &Self::Params, setup: ServerSetup) -> Result<Box<dyn Server>> {
        server(p.into(), setup)
    }
    fn client<'a>(p: &Self::Params, setup: ClientSetup<'a, '_>) -> Result<Box<dyn Client + 'a>> {
        client(p.into(), setup)
    }
}

impl Method for CfPca {
    const NAME: &'static str = "cfpca";
    const PAPER: &'static str = "Chu, Distributed Robust PCA, Algorithm 1 on one client";
    const FAMILY: Kind = Kind::Robust;
    const ABOUT: &'static str = "CF-PCA: DCF-PCA's factorisation, centralised";
    const CENTRALISED: bool = true;
    type Params = Params<CfPca>;
    fn server(p: &Self::Params, setup: ServerSetup) -> Result<Box<dyn Server>> {
        server(p.into(), setup)
    }
    fn client<'a>(p: &Self::Params, setup: ClientSetup<'a, '_>) -> Result<Box<dyn Client + 'a>> {
        client(p.into(), setup)
    }
}

fn server(p: Settings, setup: ServerSetup) -> Result<Box<dyn Server>> {
    Ok(Box::new(DcfServer {
        u: setup.start.get("u")?.clone(),
        p,
        rounds: 0,
    }))
}

fn client<'a>(p: Settings, setup: ClientSetup<'a, '_>) -> Result<Box<dyn Client + 'a>> {
    let m_i = setup
        .block
        .as_dense()
        .ok_or_else(|| anyhow!("DCF-PCA needs dense data"))?;
    let (n, cols) = m_i.dim();
    let p_cols = setup.start.get("u")?.ncols();
    let m: usize = setup.sizes.iter().sum();
    let rho = p.rho_scale / (n.min(m) as f64).sqrt();
    Ok(Box::new(DcfClient {
        m_i,
        // V_i = 0, S_i = 0 as the authors' setup(): V is solved from U first, so only S's start
        // matters, and 0 is the neutral one.
        v: Array2::zeros((cols, p_cols)),
        s: Array2::zeros((n, cols).f()),
        work: Array2::zeros((n, cols).f()),
        rho,
        weight: rho * cols as f64 / m as f64,
        p,
        rounds: 0,
    }))
}

struct DcfClient<'a> {
    m_i: ArrayView2<'a, f64>,
    v: Array2<f64>,
    s: Array2<f64>,
    /// Scratch n×m_i: M_i − S_i for the ridge solve, then S_i − resid for the gradient.
    work: Array2<f64>,
    rho: f64,
    /// ρ m_i/m: this client's share of the penalty on U.
    weight: f64,
    p: Settings,
    /// Rounds answered: t of η_t.
    rounds: u32,
}

impl Client for DcfClient<'_> {
    fn respond(&mut self, msg: &Message) -> Result<Message> {
        let u0 = msg.get("u")?;
        if u0.dim() != (self.m_i.nrows(), self.v.ncols()) {
            bail!(
                "DCF-PCA: U is {:?}, expected {:?}",
                u0.dim(),
                (self.m_i.nrows(), self.v.ncols())
            );
        }
        // U column-major for the A·T kernel, and row by row for the AᵀX kernel (copied once per
        // step, not once per product).
        let mut u = crate::linalg::to_f_order(u0.view());
        let eta = self.p.eta0 / f64::from(self.rounds + 1).sqrt();
        // The n×m_i passes write into buffers kept between steps: fresh temporaries cost a
        // page fault per page each time (measured: 6 % of a fig1_n3000 run).
        let (lambda, work) = (self.p.lambda, &mut self.work);
        for _ in 0..self.p.local_steps {
            let u_rows = u.as_standard_layout();
            for _ in 0..self.p.inner_sweeps {
                Zip::from(&mut *work)
                    .and(&self.m_i)
                    .and(&self.s)
                    .for_each(|w, &m, &s| *w = m - s);
                self.v = ridge(u.view(), u_rows.view(), work.view(), self.rho)?;
                // resid = M_i − U V_iᵀ = M_i + U(−V_i)ᵀ (negation is exact), never stored:
                // S_i = its soft threshold, work = S_i − resid for ∇_U.
                let minus_vt = (-&self.v).reversed_axes();
                let terms = (self.m_i, u.view(), minus_vt.view());
                threshold_sum(terms, lambda, &mut self.s, work);
            }
            // ∇_U = (U V_iᵀ + S_i − M_i)V_i + ρ(m_i/m)U = (S_i − resid)V_i + weight·U.
            let mut grad = Array2::zeros(u.raw_dim().f());
            add_a_times(work.view(), self.v.view(), &mut grad);
            grad.scaled_add(self.weight, &u);
            u.scaled_add(-eta, &grad);
        }
        self.rounds += 1;
        Ok(Message::new().with("u", u))
    }

    fn reveal(&self) -> Message {
        Message::new()
            .with("v", self.v.clone())
            .with("s", self.s.clone())
    }

    fn inner_iters(&self) -> u32 {
        if self.rounds == 0 {
            0
        } else {
            self.p.local_steps
        }
    }
}

/// V = BᵀU (UᵀU + ρI)⁻¹: the ridge solve of (7) for V at fixed U and S (p×p SPD inverse), in
/// C order (so that Vᵀ is column-major for the A·T kernel). `u_rows` is U in C order, as the
/// AᵀX kernel reads X.
fn ridge(
    u: ArrayView2<f64>,
    u_rows: ArrayView2<f64>,
    b: ArrayView2<f64>,
    rho: f64,
) -> Result<Array2<f64>> {
    let mut g = t_times_dense(u, u_rows);
    g.diag_mut().mapv_inplace(|x| x + rho);
    let g_inv = g.invc().context("DCF-PCA ridge solve: UᵀU + ρI not SPD")?;
    let mut v = Array2::zeros((b.ncols(), u.ncols()));
    general_mat_mul(1.0, &t_times_dense(b, u_rows), &g_inv, 0.0, &mut v);
    Ok(v)
}

struct DcfServer {
    u: Array2<f64>,
    p: Settings,
    rounds: u32,
}

impl Server for DcfServer {
    fn step(&mut self, net: &mut dyn Network) -> Result<StepInfo> {
        let replies = net.round(&Message::new().with("u", self.u.clone()))?;
        let sizes = net.client_sizes();
        // U ← Σ_i (m_i/m) U_i in client order (as the scratch fedavg: Σ m_i U_i, then / m).
        let first = replies
            .first()
            .context("DCF-PCA needs at least one client")?;
        let mut avg = first.get("u")? * sizes[0] as f64;
        for (r, &m_i) in replies.iter().zip(sizes).skip(1) {
            avg.scaled_add(m_i as f64, r.get("u")?);
        }
        avg /= sizes.iter().sum::<usize>() as f64;
        let change = (fro2((&avg - &self.u).view()) / fro2(self.u.view())).sqrt();
        self.u = avg;
        self.rounds += 1;
        Ok(StepInfo {
            objective: None,
            converged: change < self.p.tol,
            done: self.rounds >= self.p.max_rounds,
        })
    }

    fn estimate(&self) -> Message {
        Message::new().with("u", self.u.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::matrix::Block;
    use crate::linalg::prox::soft_threshold_inplace;
    use crate::seed;
    use rand::Rng;

    /// The client's local steps as the textbook formulas, in BLAS with fresh temporaries.
    fn plain_steps(
        m_i: ArrayView2<f64>,
        u0: &Array2<f64>,
        s0: &Array2<f64>,
        p: &Settings,
        rho: f64,
        weight: f64,
        eta: f64,
    ) -> (Array2<f64>, Array2<f64>) {
        let (mut u, mut s) = (u0.clone(), s0.clone());
        for _ in 0..p.local_steps {
            let (mut v, mut resid) = (Array2::zeros((0, 0)), Array2::zeros((0, 0)));
            for _ in 0..p.inner_sweeps {
                let mut g = u.t().dot(&u);
                g.diag_mut().mapv_inplace(|x| x + rho);
                v = (&m_i - &s).t().dot(&u).dot(&g.invc().unwrap());
                resid = &m_i - &u.dot(&v.t());
                s = resid.clone();
                soft_threshold_inplace(&mut s, p.lambda);
            }
            let mut grad = (&s - &resid).dot(&v);
            grad.scaled_add(weight, &u);
            u.scaled_add(-eta, &grad);
        }
        (u, s)
    }

    /// The client's local steps (the process's product kernels, buffers kept between steps, fused
    /// passes) agree with the textbook formulas in BLAS to 1e-12 relative, at a size past
    /// OpenBLAS's small-matrix path and the AᵀX kernel's row blocks (2100×197 blocks, rank 40;
    /// m_i = 197 is not a multiple of the 8-sample tiles), over two rounds (the second starts from a
    /// nonzero S_i), with one and with two (V, S) sweeps per local step.
    #[test]
    fn local_steps_match_the_formulas() {
        use crate::linalg::max_rel_diff as rel;
        let (n, cols, r) = (2100, 197, 40);
        let mut rng = seed::rng(7, &["dcfpca-buffers"]);
        let m = Array2::from_shape_fn((n, 2 * cols).f(), |_| rng.random_range(-1.0..1.0));
        let u0 = Array2::from_shape_fn((n, r).f(), |_| rng.random_range(-1.0..1.0));
        let start = Message::new().with("u", u0.clone());
        let sizes = [cols, cols];
        let blocks = Block::Dense(m.view()).split(&sizes);
        for (local_steps, inner_sweeps) in [(3, 1), (2, 2)] {
            let params = Params::<DcfPca> {
                local_steps,
                inner_sweeps,
                ..Default::default()
            };
            let setup = ClientSetup {
                index: 0,
                block: blocks[0],
                sizes: &sizes,
                start: &start,
                seed: 1,
            };
            let settings = Settings::from(&params);
            let mut client = client(settings, setup).unwrap();
            let rho = settings.rho_scale / (n.min(2 * cols) as f64).sqrt();
            let weight = rho * cols as f64 / (2 * cols) as f64;
            let (mut u, mut s) = (u0.clone(), Array2::zeros((n, cols)));
            for round in 0..2u32 {
                let eta = settings.eta0 / f64::from(round + 1).sqrt();
                let (u_plain, s_plain) = plain_steps(
                    blocks[0].as_dense().unwrap(),
                    &u,
                    &s,
                    &settings,
                    rho,
                    weight,
                    eta,
                );
                let reply = client
                    .respond(&Message::new().with("u", u.clone()))
                    .unwrap();
                let e_u = rel(reply.get("u").unwrap(), &u_plain);
                let e_s = rel(client.reveal().get("s").unwrap(), &s_plain);
                assert!(
                    e_u < 1e-12 && e_s < 1e-12,
                    "K={local_steps} sweeps={inner_sweeps} round {round}: U {e_u:e}, S {e_s:e}"
                );
                (u, s) = (u_plain, s_plain);
            }
        }
    }
}
