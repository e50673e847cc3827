//! FASPCA (Ciou, Chen, Tseng, Lee, Federated Learning for Sparse PCA, Algorithms 6–7, deflation
//! §III.E): consensus ADMM on one loading at a time, with the projection approximation
//! y_i = A^i w_i (previous iterate) that gives the worker a closed-form step.
//!
//! Orientation: the paper's A^i (N_i×D, samples as rows) is X_iᵀ here (X_i is client i's n×m_i
//! block, samples as columns), so y_i = X_iᵀ w_i and (A^i)ᵀ y_i = X_i y_i.
//!
//! Round t of loading j: the server broadcasts z (n×1; z⁰ = 0). Each client applies its dual
//! update u_i ← u_i + ρ(w_i − z) for its previous w_i, then the worker step (Algorithm 7)
//! w_i ← (2X_i y_i − u_i + ρz)/(2y_iᵀy_i + ρ), y_i = X_iᵀw_i, normalised by ‖G w_i‖ ((26), (29)),
//! and replies w_i. The server sets z ← S_{λ/(Kρ)}(w̄ + ū/ρ) (Algorithm 2). Only w_i goes up:
//! the dual updates are determined by what the server sent and received, so it keeps ū itself.
//!
//! Deflation: when loading j stops, the server projects it off the earlier loadings
//! (z_j ← G z_j, G = I − Z Zᵀ over the earlier loadings), normalises it (27), and sends it with
//! the next round (part `deflate`); each client then deflates its data, A^i ← A^i(I − z_j z_jᵀ)
//! (kept as the projector, never as a copy of the data), and starts loading j + 1 afresh.
//!
//! CHOICES (the paper gives none): a loading stops when the primal residual
//! √((1/K)Σ‖w_i − z‖²) and the change ‖z − z_prev‖ are both ≤ `tol`, or, unless it is the last
//! loading (which runs until the run's stop rule), after `max_rounds_per_loading` rounds; each client starts every loading from its own random unit
//! vector (the paper: "a random normalized vector").

use crate::fed::{sum_part, Client, Message, Network, Shape};
use crate::linalg::{fro2, prox::soft_threshold_inplace};
use crate::methods::{ClientSetup, Method, Server, ServerSetup, StepInfo};
use crate::spec::Kind;
use anyhow::{anyhow, bail, Context, Result};
use ndarray::{concatenate, Array2, ArrayView2, Axis};
use rand::Rng;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug)]
pub struct Faspca;

/// Parameters; the paper's experiments set λ per figure (50 in fig. 2, 60 in fig. 5, 170 in
/// Table 1) and ρ = 1000 throughout.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// weight λ of ‖z‖₁ (the master's soft threshold is λ/(Kρ))
    pub lambda: f64,
    // Per-loading λ overriding `lambda` (fig. 7: 60 for the first loading, 600 for the second).
    /// one λ per loading, overriding lambda; empty: lambda for all
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lambda_per_loading: Vec<f64>,
    /// ADMM penalty ρ
    pub rho: f64,
    // Stop a loading when the primal residual and the change of z are both ≤ tol (CHOICE).
    /// a loading stops when the primal residual and the change of z are both ≤ tol
    pub tol: f64,
    // Rounds after which a loading other than the last stops regardless (CHOICE).
    /// rounds after which a loading other than the last stops regardless
    pub max_rounds_per_loading: u32,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            lambda: 50.0,
            lambda_per_loading: Vec::new(),
            rho: 1000.0,
            tol: 1e-4,
            max_rounds_per_loading: 1000,
        }
    }
}

impl crate::methods::Params for Params {
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        let bad = |k, m: &str| Err((k, m.to_string()));
        if !(self.lambda >= 0.0 && self.lambda.is_finite()) {
            return bad("lambda", "must be a finite number >= 0");
        }
        if self
            .lambda_per_loading
            .iter()
            .any(|l| !(*l >= 0.0 && l.is_finite()))
        {
            return bad(
                "lambda_per_loading",
                "every value must be a finite number >= 0",
            );
        }
        if !(self.rho > 0.0 && self.rho.is_finite()) {
            return bad("rho", "must be a finite number > 0");
        }
        if !(self.tol >= 0.0) {
            return bad("tol", "must be >= 0");
        }
        if self.max_rounds_per_loading == 0 {
            return bad("max_rounds_per_loading", "must be >= 1");
        }
        Ok(())
    }
}

impl Params {
    fn lambda_for(&self, loading: usize) -> f64 {
        self.lambda_per_loading
            .get(loading)
            .copied()
            .unwrap_or(self.lambda)
    }
}

impl Method for Faspca {
    const NAME: &'static str = "faspca";
    const PAPER: &'static str =
        "Ciou, Chen, Tseng, Lee, Federated Learning for Sparse PCA, Algorithms 6–7";
    const FAMILY: Kind = Kind::Sparse;
    const ABOUT: &'static str =
        "FASPCA: consensus ADMM, closed-form projection-approximation worker step, deflation";
    const TRANSCRIPT: Shape = Shape::AdmmFaspca;
    type Params = Params;

    fn server(p: &Params, setup: ServerSetup) -> Result<Box<dyn Server>> {
        let (n, r) = setup.start.get("z")?.dim();
        if p.lambda_per_loading.len() > r {
            bail!(
                "FASPCA: lambda_per_loading has {} values for {r} loadings",
                p.lambda_per_loading.len()
            );
        }
        Ok(Box::new(FaspcaServer {
            p: p.clone(),
            r,
            clients: setup.sizes.len(),
            done: Array2::zeros((n, 0)),
            deflate: None,
            z: Array2::zeros((n, 1)),
            ubar: Array2::zeros((n, 1)),
            wbar: None,
            rounds: 0,
            capped: false,
        }))
    }

    fn client<'a>(p: &Params, setup: ClientSetup<'a, '_>) -> Result<Box<dyn Client + 'a>> {
        let x = setup
            .block
            .as_dense()
            .ok_or_else(|| anyhow!("FASPCA needs dense data"))?;
        let n = x.nrows();
        let mut client = FaspcaClient {
            x,
            rho: p.rho,
            done: Array2::zeros((n, 0)),
            w: Array2::zeros((n, 1)),
            u: Array2::zeros((n, 1)),
            fresh: true,
            rng: crate::seed::rng(setup.seed, &["faspca-w0", &setup.index.to_string()]),
        };
        client.restart();
        Ok(Box::new(client))
    }
}

struct FaspcaClient<'a> {
    x: ArrayView2<'a, f64>,
    rho: f64,
    /// Loadings already found (orthonormal columns): the data is deflated by I − ZZᵀ.
    done: Array2<f64>,
    w: Array2<f64>,
    u: Array2<f64>,
    /// No w-step yet in this loading: no dual update to apply.
    fresh: bool,
    rng: rand_chacha::ChaCha8Rng,
}

impl FaspcaClient<'_> {
    /// G v = v − Z(Zᵀv): the projector off the earlier loadings.
    fn project(&self, v: &Array2<f64>) -> Array2<f64> {
        if self.done.ncols() == 0 {
            return v.clone();
        }
        v - &self.done.dot(&self.done.t().dot(v))
    }

    /// A random unit start for a new loading, G-normalised; the dual variable starts at 0.
    fn restart(&mut self) {
        let n = self.x.nrows();
        let v = Array2::from_shape_fn((n, 1), |_| self.rng.random_range(-1.0..=1.0));
        let norm = fro2(self.project(&v).view()).sqrt();
        self.w = v / norm;
        self.u = Array2::zeros((n, 1));
        self.fresh = true;
    }
}

impl Client for FaspcaClient<'_> {
    fn respond(&mut self, msg: &Message) -> Result<Message> {
        if msg.has("deflate") {
            let d = msg.get("deflate")?;
            self.done = concatenate(Axis(1), &[self.done.view(), d.view()])?;
            self.restart();
        }
        let z = msg.get("z")?;
        if z.dim() != self.w.dim() {
            bail!("FASPCA: z is {:?}, expected {:?}", z.dim(), self.w.dim());
        }
        if !self.fresh {
            self.u.scaled_add(self.rho, &(&self.w - z));
        }
        // The deflated data is P X_i with P = I − ZZᵀ: y = X_iᵀ P w, (A^i)ᵀ y = P X_i y.
        let y = self.x.t().dot(&self.project(&self.w));
        let xy = self.project(&self.x.dot(&y));
        let mut w =
            (xy * 2.0 - &self.u + &(z * self.rho)) / (2.0 * y.t().dot(&y)[[0, 0]] + self.rho);
        let norm = fro2(self.project(&w).view()).sqrt();
        if !(norm > 0.0 && norm.is_finite()) {
            bail!("FASPCA: the worker step gave ‖Gw‖ = {norm}");
        }
        w /= norm;
        self.w = w;
        self.fresh = false;
        Ok(Message::new().with("w", self.w.clone()))
    }

    fn reveal(&self) -> Message {
        Message::new().with("w", self.w.clone())
    }

    fn inner_iters(&self) -> u32 {
        1
    }
}

struct FaspcaServer {
    p: Params,
    r: usize,
    clients: usize,
    /// Finished loadings (orthonormal columns).
    done: Array2<f64>,
    /// The loading finished last, sent with the next round.
    deflate: Option<Array2<f64>>,
    z: Array2<f64>,
    /// Mean of the clients' dual variables, mirrored from what was sent and received.
    ubar: Array2<f64>,
    /// Mean of the clients' last replies in this loading.
    wbar: Option<Array2<f64>>,
    /// Rounds in the current loading.
    rounds: u32,
    /// Some loading stopped at its round cap rather than by the criterion.
    capped: bool,
}

impl FaspcaServer {
    fn project(&self, v: &Array2<f64>) -> Array2<f64> {
        if self.done.ncols() == 0 {
            return v.clone();
        }
        v - &self.done.dot(&self.done.t().dot(v))
    }

    /// The current loading as it would be output now: G z normalised (z itself if zero).
    fn current(&self) -> Array2<f64> {
        let g = self.project(&self.z);
        let norm = fro2(g.view()).sqrt();
        if norm > 0.0 {
            g / norm
        } else {
            self.z.clone()
        }
    }
}

impl Server for FaspcaServer {
    fn step(&mut self, net: &mut dyn Network) -> Result<StepInfo> {
        if let Some(w) = self.wbar.take() {
            // The clients' dual step with the z about to be sent.
            self.ubar.scaled_add(self.p.rho, &(&w - &self.z));
        }
        let mut msg = Message::new().with("z", self.z.clone());
        if let Some(d) = self.deflate.take() {
            msg = msg.with("deflate", d);
        }
        let replies = net.round(&msg)?;
        let k = self.clients as f64;
        let wbar = sum_part(&replies, "w")? / k;
        let mut z = &wbar + &(&self.ubar / self.p.rho);
        let loading = self.done.ncols();
        soft_threshold_inplace(&mut z, self.p.lambda_for(loading) / (k * self.p.rho));
        let primal = replies
            .iter()
            .map(|r| r.get("w").map(|w| fro2((w - &z).view())))
            .sum::<Result<f64>>()?
            / k;
        let change = fro2((&z - &self.z).view()).sqrt();
        self.z = z;
        self.wbar = Some(wbar);
        self.rounds += 1;
        let converged = primal.sqrt() <= self.p.tol && change <= self.p.tol;
        // The cap moves on to the next loading; the last one runs until the run's stop rule.
        let last = loading + 1 == self.r;
        let capped = !last && self.rounds >= self.p.max_rounds_per_loading;
        if !(converged || capped) {
            return Ok(StepInfo::default());
        }
        self.capped |= !converged;
        // Loading finished: (27) and the deflation of Algorithm 4.
        let zj = self.current();
        self.done =
            concatenate(Axis(1), &[self.done.view(), zj.view()]).context("appending a loading")?;
        if !last {
            self.deflate = Some(zj);
            self.z.fill(0.0);
            self.ubar.fill(0.0);
            self.wbar = None;
            self.rounds = 0;
        }
        Ok(StepInfo {
            objective: None,
            converged: last && !self.capped,
            done: last,
        })
    }

    fn estimate(&self) -> Message {
        let z = if self.done.ncols() == self.r {
            self.done.clone()
        } else {
            concatenate(Axis(1), &[self.done.view(), self.current().view()])
                .expect("same row count")
        };
        Message::new().with("z", z)
    }
}
