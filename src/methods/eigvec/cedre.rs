//! CEDRE: communication-efficient distributed Riemannian eigensolver (Huang, Pan, ICML 2020,
//! Algorithm 1), for the leading eigenvector of Â = mean_k A_k on the unit sphere.
//!
//! One [`Server::step`] is one of the paper's communication rounds (4 vectors) and two network
//! exchanges:
//! A. the server broadcasts w̃_s; each machine replies A_k w̃_s (Steps 4–5: from it the server
//!    forms the Riemannian gradients, and the loss it needs for the step-size search below);
//! B. the server broadcasts ∇̃F(w̃_s) = −P_w̃(Σ_k (n_k/N) A_k w̃_s) (Step 6; the weights are 1/K
//!    under the paper's even split); each machine runs m local steps from w̃_s (Steps 8–12),
//!      g_t = ∇̃f_k(w_t) − P_(w_t)(∇̃f_k(w̃_s) − ∇̃F(w̃_s)),  w_(t+1) = R_(w_t)(−η g_t),
//!    and replies w_m; the server combines them (Steps 14–17): option I picks one at random,
//!    II is the sign-fixed average (4), III the geodesic average (5).
//!
//! `stochastic` (the paper's runs): the first two terms of g_t use one sample x_i drawn
//! uniformly from the machine's own (mini-batch (3) with B = 1), f_(k,i)(w) = −½(x_iᵀw)².
//! Otherwise they use the full A_k (Algorithm 1 as written; n·D work per step).
//!
//! Step size: the paper "chooses η based on the best training loss with one communication
//! round". With `eta` unset, round 1 runs its local steps once per η of `eta_grid` (the machines
//! upload one w_m per candidate) and the server combines each; exchange A of round 2 broadcasts
//! the candidates, the machines reply A_k w̃ for each, the server keeps the one of least F and
//! its η for the rest of the run. This search is paid in vectors (the grid's size in rounds 1
//! and 2), not in rounds; the paper does not say whether it counted it. CHOICE: the grid
//! {0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5}/λ̂, λ̂ = the largest eigenvalue of Â (1 after the
//! family's rescaling).
//!
//! The output is the latest w̃ (the paper's practical choice, §3), not a random iterate.
//!
//! RST-CEDRE (Algorithm 2, `restart_rounds` = S): every S rounds CEDRE restarts from Algorithm
//! 1's own output, an iterate w_t^(s,k) drawn uniformly from the epoch's local iterates. The
//! server draws (s, k, t) when the epoch starts (machine k uniformly, t uniformly in 0..m_k) and,
//! in round s, asks machine k (part "keep" = [k, t], two numbers) to return w_t beside its w_m:
//! one extra vector from one machine per epoch. Epochs start once η is fixed (after the search).
//! CHOICES (the paper is silent): m = `steps_per_sample`·n_k rounded (the paper: m = 5n); each
//! machine draws its samples from its own seed stream; w⁰ is the family's warm start.

use super::common::{
    a_times, check_rows, local_samples, sample_weights, start_vector, w_message, weighted_sum,
};
use crate::data::loaders::CsrView;
use crate::data::matrix::Block;
use crate::fed::{Client, Message, Network};
use crate::linalg::manifold::{sphere_exp, sphere_log, sphere_project};
use crate::linalg::sphere_step;
use crate::methods::{ClientSetup, Method, Server, ServerSetup, StepInfo};
use crate::seed;
use crate::spec::Kind;
use anyhow::{bail, Context, Result};
use ndarray::{Array1, Array2, ArrayView1, Axis};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub struct Cedre;

/// How the server combines the machines' w_m (Algorithm 1, Steps 15–17).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Combine {
    /// Option I: one machine's w_m, chosen at random.
    Random,
    /// Option II: Σ_k sign(w_kᵀw_1) w_k, normalised (4). The paper's experiments.
    SignAverage,
    /// Option III: the running geodesic average (5).
    GeodesicAverage,
}

/// CEDRE parameters; every one can be set in a manifest's `params`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    // Fixed step size η; unset: the one-round search over `eta_grid` (see the header).
    /// fixed step size η; unset: searched over eta_grid in the first round
    pub eta: Option<f64>,
    /// candidate step sizes of that search, in units of 1/λ̂
    pub eta_grid: Vec<f64>,
    /// local steps per round m = steps_per_sample·n_k (paper: 5)
    pub steps_per_sample: f64,
    /// single-sample local gradients (the paper's runs); false: the full local A_k
    pub stochastic: bool,
    /// how iterates are combined: option I "random", II "sign_average" (the paper's), III "geodesic_average"
    pub combine: Combine,
    /// RST-CEDRE: restart from a random local iterate every S rounds; unset: CEDRE
    pub restart_rounds: Option<u32>,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            eta: None,
            eta_grid: vec![0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5],
            steps_per_sample: 5.0,
            stochastic: true,
            combine: Combine::SignAverage,
            restart_rounds: None,
        }
    }
}

impl crate::methods::Params for Params {
    // `!(x > 0.0)` on purpose: it rejects NaN too.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        let positive = |x: f64| x > 0.0 && x.is_finite();
        if let Some(e) = self.eta {
            if !positive(e) {
                return Err(("eta", "must be a finite number > 0".into()));
            }
        }
        if self.eta.is_none()
            && (self.eta_grid.is_empty() || !self.eta_grid.iter().all(|&e| positive(e)))
        {
            return Err((
                "eta_grid",
                "needs at least one step size, each a finite number > 0".into(),
            ));
        }
        if self.restart_rounds == Some(0) {
            return Err((
                "restart_rounds",
                "must be >= 1 (omit it for plain CEDRE)".into(),
            ));
        }
        if !(self.steps_per_sample > 0.0 && self.steps_per_sample <= 1000.0) {
            return Err(("steps_per_sample", "must lie in (0, 1000]".into()));
        }
        Ok(())
    }
}

impl Method for Cedre {
    const NAME: &'static str = "cedre";
    const PAPER: &'static str = "Huang, Pan, Communication-Efficient Distributed PCA by Riemannian Optimization, Algorithm 1";
    const FAMILY: Kind = Kind::Eigvec;
    const ABOUT: &'static str = "CEDRE: variance-reduced local Riemannian steps between rounds, combined by sign-fixed average";
    type Params = Params;

    fn server(p: &Params, setup: ServerSetup) -> Result<Box<dyn Server>> {
        Ok(Box::new(Master {
            w: start_vector(setup.start, "CEDRE", "starts from the family's `w`")?,
            candidates: None,
            eta: p.eta,
            epoch: None,
            kept: None,
            steps: setup
                .sizes
                .iter()
                .map(|&n| local_steps(p.steps_per_sample, n))
                .collect(),
            weights: sample_weights(setup.sizes),
            rng: seed::rng(setup.seed, &["cedre-server"]),
            p: p.clone(),
        }))
    }

    fn client<'a>(p: &Params, setup: ClientSetup<'a, '_>) -> Result<Box<dyn Client + 'a>> {
        let x = local_samples(&setup, "CEDRE")?;
        Ok(Box::new(Machine {
            x,
            index: setup.index,
            steps: local_steps(p.steps_per_sample, x.samples()),
            received: Array2::zeros((x.n(), 0)),
            rng: seed::rng(setup.seed, &["cedre", &setup.index.to_string()]),
            p: p.clone(),
        }))
    }
}

/// m_k = steps_per_sample · n_k, rounded, at least 1.
fn local_steps(per_sample: f64, n: usize) -> usize {
    (per_sample * n as f64).round().max(1.0) as usize
}

struct Machine<'a> {
    x: Block<'a>,
    index: usize,
    steps: usize,
    /// The w̃ candidates of the last exchange A.
    received: Array2<f64>,
    rng: ChaCha8Rng,
    p: Params,
}

impl Machine<'_> {
    /// Steps 8–12 from w̃ with step size η; `g_full` = ∇̃F(w̃). Also returns w_t for t = `keep`.
    fn local(
        &mut self,
        wt: ArrayView1<f64>,
        g_full: ArrayView1<f64>,
        eta: f64,
        keep: Option<usize>,
    ) -> (Array1<f64>, Option<Array1<f64>>) {
        let mut w = wt.to_owned();
        let mut kept = None;
        if !self.p.stochastic {
            // ∇̃f_k(w̃) − ∇̃F(w̃), fixed over the round.
            let at = a_times(self.x, wt.insert_axis(Axis(1))).remove_axis(Axis(1));
            let d = -sphere_project(wt, at.view()) - g_full;
            for t in 0..self.steps {
                if keep == Some(t) {
                    kept = Some(w.clone());
                }
                let aw = a_times(self.x, w.view().insert_axis(Axis(1))).remove_axis(Axis(1));
                let g = -sphere_project(w.view(), aw.view()) - sphere_project(w.view(), d.view());
                w.scaled_add(-eta, &g);
                let norm = w.dot(&w).sqrt();
                w /= norm;
            }
            return (w, kept);
        }
        match self.x {
            Block::Sparse(c) => return self.local_sparse(c, None, wt, g_full, eta, keep),
            Block::Centred(c, mean) => {
                return self.local_sparse(c, Some(mean), wt, g_full, eta, keep)
            }
            Block::Dense(_) => {}
        }
        let n = self.x.samples();
        let wt = wt.as_slice().expect("contiguous");
        let gf = g_full.to_owned();
        let gf = gf.as_slice().expect("contiguous");
        let w_s = w.as_slice_mut().expect("contiguous");
        let mut next = vec![0.0; w_s.len()];
        let Block::Dense(data) = self.x else {
            unreachable!("sparse blocks take local_sparse")
        };
        for t in 0..self.steps {
            if keep == Some(t) {
                kept = Some(Array1::from(w_s.to_vec()));
            }
            let i = self.rng.random_range(0..n);
            let col = data.column(i);
            let x = col
                .as_slice()
                .expect("column-major data: contiguous samples");
            sphere_step::step(x, w_s, wt, gf, &mut next, eta);
        }
        (w, kept)
    }
}

/// Materialise the lazy iterate every this many sparse steps (see [`Machine::local_sparse`]),
/// or sooner once a coefficient of w̃, G or μ exceeds LAZY_MAX_COEF (w is a unit vector: at
/// most ~2 of 16 digits cancel between σu and them).
const LAZY_RESET: usize = 1024;
const LAZY_MAX_COEF: f64 = 64.0;

/// The stochastic local iterate on sparse samples, kept lazily as w = σu + p w̃ + q G + r μ:
/// u is the only D-vector written, at the sample's non-zeros.
struct Lazy<'v> {
    u: Vec<f64>,
    sigma: f64,
    p: f64,
    q: f64,
    r: f64,
    /// uᵀu, uᵀw̃, uᵀG, uᵀμ, kept up to date as u changes.
    uu: f64,
    ut: f64,
    ug: f64,
    um: f64,
    wt: &'v [f64],
    g: &'v [f64],
    mean: Option<&'v [f64]>,
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

impl Lazy<'_> {
    /// w as a dense vector.
    fn dense(&self) -> Vec<f64> {
        let mut w: Vec<f64> = (0..self.u.len())
            .map(|j| self.sigma * self.u[j] + self.p * self.wt[j] + self.q * self.g[j])
            .collect();
        if let Some(m) = self.mean {
            for (wj, mj) in w.iter_mut().zip(m) {
                *wj += self.r * mj;
            }
        }
        w
    }

    /// u ← w, σ = 1, p = q = r = 0, and the inner products recomputed (O(D)).
    fn reset(&mut self) {
        self.u = self.dense();
        (self.sigma, self.p, self.q, self.r) = (1.0, 0.0, 0.0, 0.0);
        self.uu = dot(&self.u, &self.u);
        self.ut = dot(&self.u, self.wt);
        self.ug = dot(&self.u, self.g);
        self.um = self.mean.map_or(0.0, |m| dot(&self.u, m));
    }
}

impl Machine<'_> {
    /// The stochastic Steps 8–12 on sparse samples x = s − μ (s sparse; μ the global mean of
    /// implicitly centred data, or none), in O(nnz(s)) per step instead of O(D): the same update
    /// as the dense loop, v = αw + η(a − b)x + ηb²w̃ − ηG with α = 1 − ηa² − η·wᵀd, applied to the
    /// lazy form w = σu + p w̃ + q G + r μ (only u's entries at s's non-zeros change), with the
    /// inner products a = xᵀw, b = xᵀw̃, wᵀw̃, wᵀG and ‖v‖ from kept ones. The same samples are
    /// drawn as on dense data. The lazy form is made dense and its products recomputed every
    /// [`LAZY_RESET`] steps (sooner if a coefficient grows past [`LAZY_MAX_COEF`]: q grows by η
    /// per step, and σu then holds the offsetting part), so rounding cannot build up.
    fn local_sparse(
        &mut self,
        c: CsrView,
        mean: Option<ArrayView1<f64>>,
        wt: ArrayView1<f64>,
        g_full: ArrayView1<f64>,
        eta: f64,
        keep: Option<usize>,
    ) -> (Array1<f64>, Option<Array1<f64>>) {
        let n = c.n_samples();
        let wt = wt.to_vec();
        let g = g_full.to_vec();
        let mean = mean.map(|m| m.to_vec());
        let mean = mean.as_deref();
        let (tt, tg, gg) = (dot(&wt, &wt), dot(&wt, &g), dot(&g, &g));
        let (mt, mg, mm) = mean.map_or((0.0, 0.0, 0.0), |m| (dot(m, &wt), dot(m, &g), dot(m, m)));
        let mut z = Lazy {
            u: wt.clone(),
            sigma: 1.0,
            p: 0.0,
            q: 0.0,
            r: 0.0,
            uu: 0.0,
            ut: 0.0,
            ug: 0.0,
            um: 0.0,
            wt: &wt,
            g: &g,
            mean,
        };
        z.reset();
        let mut kept = None;
        for t in 0..self.steps {
            if keep == Some(t) {
                kept = Some(Array1::from(z.dense()));
            }
            // Reset on schedule, and early when σ drifts far from 1 (u would over- or
            // underflow) or the other coefficients grow (σu would cancel them).
            let big = z.p.abs().max(z.q.abs()).max(z.r.abs());
            if (t > 0 && t % LAZY_RESET == 0)
                || !(1e-30..1e30).contains(&z.sigma.abs())
                || big > LAZY_MAX_COEF
            {
                z.reset();
            }
            let i = self.rng.random_range(0..n);
            let (idx, val) = c.sample(i);
            let (mut su, mut st, mut sg, mut sm, mut ss) = (0.0, 0.0, 0.0, 0.0, 0.0);
            for (&j, &v) in idx.iter().zip(val) {
                let j = j as usize;
                su += v * z.u[j];
                st += v * wt[j];
                sg += v * g[j];
                ss += v * v;
                if let Some(m) = mean {
                    sm += v * m[j];
                }
            }
            let Lazy { sigma, p, q, r, .. } = z;
            // μᵀw, then a = xᵀw, b = xᵀw̃, wᵀw̃, wᵀG.
            let mw = sigma * z.um + p * mt + q * mg + r * mm;
            let a = sigma * su + p * st + q * sg + r * sm - mw;
            let b = st - mt;
            let wwt = sigma * z.ut + p * tt + q * tg + r * mt;
            let wg = sigma * z.ug + p * tg + q * gg + r * mg;
            // As the dense loop: wᵀd = −b(a − b·wᵀw̃) − wᵀG.
            let wd = -b * (a - b * wwt) - wg;
            let alpha = 1.0 - eta * a * a - eta * wd;
            let cx = eta * (a - b);
            if (alpha * sigma).abs() < 1e-200 {
                // u cannot absorb c·s through σ (α ≈ 0): take this step densely.
                let mut w = z.dense();
                for (wj, (tj, gj)) in w.iter_mut().zip(wt.iter().zip(&g)) {
                    *wj = alpha * *wj + eta * b * b * tj - eta * gj;
                }
                if let Some(m) = mean {
                    for (wj, mj) in w.iter_mut().zip(m) {
                        *wj -= cx * mj;
                    }
                }
                for (&j, &v) in idx.iter().zip(val) {
                    w[j as usize] += cx * v;
                }
                let inv = 1.0 / dot(&w, &w).sqrt();
                z.u = w.iter().map(|v| v * inv).collect();
                (z.sigma, z.p, z.q, z.r) = (1.0, 0.0, 0.0, 0.0);
                z.reset();
                continue;
            }
            let k = cx / (alpha * z.sigma);
            z.uu += 2.0 * k * su + k * k * ss;
            z.ut += k * st;
            z.ug += k * sg;
            z.um += k * sm;
            for (&j, &v) in idx.iter().zip(val) {
                z.u[j as usize] += k * v;
            }
            let (s2, p2, q2, r2) = (
                alpha * z.sigma,
                alpha * z.p + eta * b * b,
                alpha * z.q - eta,
                alpha * z.r - cx,
            );
            let norm2 = s2 * s2 * z.uu
                + p2 * p2 * tt
                + q2 * q2 * gg
                + r2 * r2 * mm
                + 2.0 * s2 * (p2 * z.ut + q2 * z.ug + r2 * z.um)
                + 2.0 * (p2 * q2 * tg + p2 * r2 * mt + q2 * r2 * mg);
            let inv = 1.0 / norm2.sqrt();
            (z.sigma, z.p, z.q, z.r) = (s2 * inv, p2 * inv, q2 * inv, r2 * inv);
        }
        let w = Array1::from(z.dense());
        let norm = w.dot(&w).sqrt();
        (w / norm, kept)
    }
}

impl Client for Machine<'_> {
    fn respond(&mut self, msg: &Message) -> Result<Message> {
        if msg.has("w") {
            // Exchange A: store the candidates, reply A_k w̃ for each.
            let w = msg.get("w")?;
            check_rows("CEDRE", "w", w, self.x.n())?;
            self.received = w.clone();
            return Ok(Message::new().with("aw", a_times(self.x, w.view())));
        }
        // Exchange B: local steps from the chosen w̃, once per step size.
        let g = msg.get("g")?;
        let etas = msg.get("eta")?.row(0).to_owned();
        let pick = msg.get("pick")?[[0, 0]];
        let j = pick as usize;
        if pick < 0.0 || pick.fract() != 0.0 || j >= self.received.ncols() {
            bail!("CEDRE: pick {pick} of {} candidates", self.received.ncols());
        }
        let wt = self.received.column(j).to_owned();
        // RST-CEDRE: the server's draw of this epoch's output, if it is this machine's.
        let keep = if msg.has("keep") {
            let k = msg.get("keep")?;
            (k[[0, 0]] as usize == self.index).then_some(k[[0, 1]] as usize)
        } else {
            None
        };
        let mut out = Array2::zeros((wt.len(), etas.len()));
        let mut reply = Message::new();
        for (c, &eta) in etas.iter().enumerate() {
            let (w, kept) = self.local(wt.view(), g.column(0), eta, keep);
            out.column_mut(c).assign(&w);
            if let Some(v) = kept {
                reply = reply.with("kept", v.insert_axis(Axis(1)));
            }
        }
        Ok(reply.with("w", out))
    }

    fn reveal(&self) -> Message {
        Message::new()
    }

    fn inner_iters(&self) -> u32 {
        self.steps as u32
    }
}

struct Master {
    /// w̃_s.
    w: Array1<f64>,
    /// Round 1 of the step-size search: the combined w̃_1 per candidate η (columns).
    candidates: Option<(Array2<f64>, Vec<f64>)>,
    eta: Option<f64>,
    /// RST-CEDRE: (round within the epoch, the drawn (s, k, t)).
    epoch: Option<(u32, (u32, usize, usize))>,
    /// RST-CEDRE: the drawn iterate, once received.
    kept: Option<Array1<f64>>,
    /// m_k per machine.
    steps: Vec<usize>,
    /// n_k / N: Â = Σ_k (n_k/N) A_k.
    weights: Vec<f64>,
    rng: ChaCha8Rng,
    p: Params,
}

impl Master {
    /// Steps 15–17 on column `c` of every machine's reply.
    fn combine(&mut self, replies: &[Message], c: usize) -> Result<Array1<f64>> {
        let ws: Vec<Array1<f64>> = replies
            .iter()
            .map(|r| r.get("w").map(|w| w.column(c).to_owned()))
            .collect::<Result<_>>()?;
        Ok(match self.p.combine {
            Combine::Random => ws[self.rng.random_range(0..ws.len())].clone(),
            Combine::SignAverage => {
                let mut s = Array1::zeros(ws[0].len());
                for w in &ws {
                    let sign = if w.dot(&ws[0]) < 0.0 { -1.0 } else { 1.0 };
                    s.scaled_add(sign, w);
                }
                let norm = s.dot(&s).sqrt();
                s / norm
            }
            Combine::GeodesicAverage => {
                let mut bar = ws[0].clone();
                for (k, w) in ws.iter().enumerate().skip(1) {
                    let step = sphere_log(bar.view(), w.view()) / (k + 1) as f64;
                    bar = sphere_exp(bar.view(), step.view());
                }
                bar
            }
        })
    }
}

impl Server for Master {
    /// η, when the search chose it (a fixed η is already in the run's parameters).
    fn chosen(&self) -> Vec<(&'static str, f64)> {
        match (self.p.eta, self.eta) {
            (None, Some(e)) => vec![("eta", e)],
            _ => Vec::new(),
        }
    }

    fn step(&mut self, net: &mut dyn Network) -> Result<StepInfo> {
        // Exchange A.
        let sent = match &self.candidates {
            Some((c, _)) => c.clone(),
            None => self.w.clone().insert_axis(Axis(1)),
        };
        let replies = net.round(&Message::new().with("w", sent.clone()))?;
        // Σ_k (n_k/N) A_k w̃ for each candidate.
        let aw = weighted_sum(&replies, &self.weights, "aw", "CEDRE")?;
        let mut pick = 0;
        if let Some((_, etas)) = self.candidates.take() {
            // The search's verdict: the candidate of least F = −½ wᵀÂw.
            let losses: Vec<f64> = (0..etas.len())
                .map(|j| -0.5 * sent.column(j).dot(&aw.column(j)))
                .collect();
            pick = (0..etas.len())
                .min_by(|&a, &b| losses[a].total_cmp(&losses[b]))
                .expect("a non-empty grid");
            self.w = sent.column(pick).to_owned();
            self.eta = Some(etas[pick]);
        }
        let g = -sphere_project(self.w.view(), aw.column(pick));
        // Exchange B.
        let etas = match self.eta {
            Some(e) => vec![e],
            None => self.p.eta_grid.clone(),
        };
        let mut msg = Message::new()
            .with("g", g.insert_axis(Axis(1)))
            .with(
                "eta",
                Array2::from_shape_vec((1, etas.len()), etas.clone())?,
            )
            .with("pick", Array2::from_elem((1, 1), pick as f64));
        if let (Some(s), true) = (self.p.restart_rounds, self.eta.is_some()) {
            let steps = &self.steps;
            let rng = &mut self.rng;
            let (round, (s_star, k, t)) = *self.epoch.get_or_insert_with(|| {
                let k = rng.random_range(0..steps.len());
                let t = rng.random_range(0..steps[k]);
                (0, (rng.random_range(0..s), k, t))
            });
            if round == s_star {
                let draw = Array2::from_shape_vec((1, 2), vec![k as f64, t as f64])?;
                msg = msg.with("keep", draw);
            }
        }
        let replies = net.round(&msg)?;
        if let Some(kept) = replies.iter().find(|r| r.has("kept")) {
            self.kept = Some(kept.get("kept")?.column(0).to_owned());
        }
        let combined: Vec<Array1<f64>> = (0..etas.len())
            .map(|c| self.combine(&replies, c))
            .collect::<Result<_>>()?;
        if combined.len() == 1 {
            self.w = combined.into_iter().next().expect("one");
            if let (Some(s), Some((round, draw))) = (self.p.restart_rounds, self.epoch) {
                if round + 1 == s {
                    // Algorithm 2: the next epoch starts from Algorithm 1's output.
                    self.w = self
                        .kept
                        .take()
                        .context("RST-CEDRE: the drawn iterate never came")?;
                    self.epoch = None;
                } else {
                    self.epoch = Some((round + 1, draw));
                }
            }
        } else {
            let mut c = Array2::zeros((self.w.len(), combined.len()));
            for (j, w) in combined.iter().enumerate() {
                c.column_mut(j).assign(w);
            }
            self.candidates = Some((c, etas));
        }
        Ok(StepInfo::default())
    }

    fn estimate(&self) -> Message {
        w_message(&self.w)
    }
}

#[cfg(test)]
mod tests {
    use crate::fed::Network;
    use crate::methods::eigvec::common::testing::sin2_after;
    use crate::methods::registry::Running;

    /// 1 − (vᵀw)² after `rounds` rounds on a small eigengap problem (data halved) over 4
    /// machines.
    fn run(params: &str, rounds: usize) -> (f64, Running<'static>) {
        sin2_after("cedre", 2.0, params, rounds)
    }

    #[test]
    fn every_option_converges_to_the_leading_eigenvector() {
        for combine in ["random", "sign_average", "geodesic_average"] {
            for stochastic in [true, false] {
                let p = format!("combine = \"{combine}\"\nstochastic = {stochastic}\neta = 0.1");
                let (err, _) = run(&p, 30);
                assert!(
                    err <= 1e-10,
                    "{combine}, stochastic {stochastic}: 1 − cos² = {err:e}"
                );
            }
        }
    }

    /// Four vectors per round (two broadcasts, two uploads per machine); the search adds one
    /// per extra candidate to round 1's upload and round 2's broadcast and reply, plus scalars.
    #[test]
    fn vectors_and_bytes_follow_the_count() {
        let (_, r) = run("eta = 0.1", 3);
        let c = r.net.counters();
        let (d, k) = (20u64, 4u64);
        assert_eq!(c.rounds, 6);
        // per round: down w̃ (d) + g (d) + eta (1) + pick (1); up A_k w̃ (d) + w_m (d) per machine
        assert_eq!(c.bytes_down, 3 * 8 * (2 * d + 2));
        assert_eq!(c.bytes_up, 3 * 8 * k * 2 * d);
        let grid = 7u64;
        let (_, r) = run("", 3);
        let c = r.net.counters();
        assert_eq!(
            c.bytes_down,
            8 * ((2 * d + grid + 1) + (grid * d + d + 2) + (2 * d + 2))
        );
        assert_eq!(
            c.bytes_up,
            8 * k * ((d + grid * d) + (grid * d + d) + 2 * d)
        );
    }

    /// RST-CEDRE restarts from a drawn local iterate every S rounds and still converges; the
    /// draw costs one vector from one machine per epoch.
    #[test]
    fn rst_cedre_converges_and_pays_one_vector_per_epoch() {
        let (err, _) = run("eta = 0.1\nrestart_rounds = 3\ncombine = \"random\"", 45);
        assert!(err <= 1e-10, "1 − cos² = {err:e}");
        let (_, plain) = run("eta = 0.1", 6);
        let (_, rst) = run("eta = 0.1\nrestart_rounds = 3", 6);
        let (p, r) = (plain.net.counters(), rst.net.counters());
        assert_eq!(
            r.bytes_up - p.bytes_up,
            2 * 8 * 20,
            "two epochs: one w_t each"
        );
        assert_eq!(
            r.bytes_down - p.bytes_down,
            2 * 8 * 2,
            "two draws of (k, t)"
        );
    }

    /// The lazy O(nnz) local steps on sparse samples equal the dense loop on the same samples
    /// made dense (same draws), for implicitly centred and for plain sparse data, over more
    /// than one reset of the lazy form, and return the same drawn iterate.
    #[test]
    fn sparse_local_steps_equal_the_dense_ones() {
        use super::{Machine, Params, LAZY_RESET};
        use crate::data::loaders::Csr;
        use crate::data::matrix::{Block, DataMatrix};
        use crate::seed;
        use ndarray::{Array1, Array2, ShapeBuilder};
        use rand::Rng;
        let (d, n) = (60, 300);
        let mut rng = seed::rng(4, &["cedre-lazy-test"]);
        let (mut indptr, mut indices, mut values) = (vec![0], Vec::new(), Vec::new());
        for _ in 0..n {
            for i in 0..d {
                if rng.random::<f64>() < 0.08 || (i < 5 && rng.random::<f64>() < 0.4) {
                    indices.push(i as u32);
                    values.push(rng.random_range(0.1..1.0));
                }
            }
            indptr.push(indices.len());
        }
        let csr = Csr::new(d, indptr, indices, values).unwrap();
        let mean = csr.view().sum() / n as f64;
        let wt = Array1::from_shape_fn(d, |i| 1.0 / (1.0 + i as f64));
        let wt = &wt / wt.dot(&wt).sqrt();
        let g = Array1::from_shape_fn(d, |i| 0.01 * ((i * 3) as f64).sin());
        let g = &g - &(&wt * wt.dot(&g));
        let steps = 2 * LAZY_RESET + 77;
        for data in [
            DataMatrix::Centred {
                x: csr.clone(),
                mean,
            },
            DataMatrix::Sparse(csr.clone()),
        ] {
            let mut dense = Array2::zeros((d, n).f());
            let mut col = vec![0.0; d];
            for j in 0..n {
                data.view().sample_into(j, &mut col);
                dense.column_mut(j).assign(&Array1::from(col.clone()));
            }
            fn machine(x: Block<'_>, steps: usize) -> Machine<'_> {
                Machine {
                    x,
                    index: 0,
                    steps,
                    received: Array2::zeros((x.n(), 0)),
                    rng: seed::rng(9, &["cedre", "0"]),
                    p: Params::default(),
                }
            }
            for eta in [0.05, 0.5] {
                let keep = Some(LAZY_RESET + 5);
                let (ws, ks) = machine(data.view(), steps).local(wt.view(), g.view(), eta, keep);
                let (wd, kd) = machine(Block::Dense(dense.view()), steps).local(
                    wt.view(),
                    g.view(),
                    eta,
                    keep,
                );
                let diff = (&ws - &wd).mapv(f64::abs).fold(0.0f64, |m, &v| m.max(v));
                assert!(diff <= 1e-12, "η = {eta}: w differs by {diff:e}");
                let diff = (&ks.unwrap() - &kd.unwrap())
                    .mapv(f64::abs)
                    .fold(0.0f64, |m, &v| m.max(v));
                assert!(diff <= 1e-12, "η = {eta}: kept iterate differs by {diff:e}");
            }
        }
    }

    #[test]
    fn the_step_size_search_converges_too() {
        let (err, _) = run("", 30);
        assert!(err <= 1e-10, "1 − cos² = {err:e}");
    }
}
