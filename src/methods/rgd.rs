//! Distributed accelerated Riemannian gradient descent for the leading eigenvector: the CEDRE
//! paper's "RGD" baseline (Huang, Pan, ICML 2020, §6.1; after Zhang & Sra's accelerated
//! first-order methods on manifolds, with the restart of O'Donoghue & Candès).
//!
//! One [`Server::step`] is one round: the server broadcasts y; each machine replies A_k y; the
//! server forms Ây = Σ_k (n_k/N) A_k y, the Riemannian gradient g = −P_y(Ây) of
//! F(w) = −½wᵀÂw, and
//!   x⁺ = R_y(−ηg),   y⁺ = Exp_(x⁺)(β·(−Log_(x⁺)(x))),   β = (t − 1)/(t + 2),
//! Nesterov's momentum carried along the geodesic from the previous x through x⁺. Two of the
//! paper's vectors per round (one broadcast, one vector from every machine).
//!
//! CHOICES (the paper gives only "accelerated RGD"): η = `step`/λ̂ with λ̂ = the Rayleigh
//! quotient yᵀÂy of the start (the server's only estimate of λ₁ without an extra exchange;
//! `step` = 0.5 is the 1/L with L = 2λ₁ of the spec); the momentum counter t restarts at 1
//! whenever F(y) rose from the previous round (function restart; F(y) = −½yᵀÂy is known from
//! the replies, no extra exchange); the estimate is y, the point whose products the server holds.

use super::{ClientSetup, Method, Server, ServerSetup, StepInfo};
use crate::fed::{Client, Message, Network};
use crate::linalg::manifold::{sphere_exp, sphere_log, sphere_project, sphere_retract};
use anyhow::{bail, Context, Result};
use ndarray::{Array1, Array2, ArrayView2, Axis};
use serde::{Deserialize, Serialize};

pub struct Rgd;

/// RGD parameters; every one can be set in a manifest's `params`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// η = step/λ̂ (λ̂: the start's Rayleigh quotient). 0.5: the spec's 1/L, L = 2λ₁.
    pub step: f64,
    /// Nesterov momentum on the sphere; off: plain Riemannian gradient descent.
    pub momentum: bool,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            step: 0.5,
            momentum: true,
        }
    }
}

impl super::Params for Params {
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        if !(self.step > 0.0 && self.step <= 10.0) {
            return Err(("step", "must lie in (0, 10]".into()));
        }
        Ok(())
    }
}

impl Method for Rgd {
    type Params = Params;

    fn server(p: &Params, setup: ServerSetup) -> Result<Box<dyn Server>> {
        let w = setup
            .start
            .get("w")
            .context("RGD starts from the family's `w`")?;
        if w.ncols() != 1 {
            bail!("RGD seeks one vector; the start has {} columns", w.ncols());
        }
        let y = w.column(0).to_owned();
        let total: usize = setup.sizes.iter().sum();
        Ok(Box::new(Master {
            x: y.clone(),
            y,
            t: 1,
            eta: None,
            last_f: f64::INFINITY,
            weights: setup
                .sizes
                .iter()
                .map(|&n| n as f64 / total as f64)
                .collect(),
            p: p.clone(),
        }))
    }

    fn client<'a>(_: &Params, setup: ClientSetup<'a, '_>) -> Result<Box<dyn Client + 'a>> {
        let Some(x) = setup.block.as_dense() else {
            bail!("RGD: dense data only");
        };
        if x.ncols() == 0 {
            bail!("RGD: machine {} holds no samples", setup.index + 1);
        }
        Ok(Box::new(Machine { x }))
    }
}

struct Machine<'a> {
    x: ArrayView2<'a, f64>,
}

impl Client for Machine<'_> {
    fn respond(&mut self, msg: &Message) -> Result<Message> {
        let y = msg.get("y")?;
        if y.nrows() != self.x.nrows() {
            bail!(
                "RGD: y has {} rows, the data {} features",
                y.nrows(),
                self.x.nrows()
            );
        }
        let ay = self.x.dot(&self.x.t().dot(y)) / self.x.ncols() as f64;
        Ok(Message::new().with("ay", ay))
    }

    fn reveal(&self) -> Message {
        Message::new()
    }
}

struct Master {
    x: Array1<f64>,
    y: Array1<f64>,
    /// Nesterov's counter since the last restart.
    t: u32,
    eta: Option<f64>,
    /// F(y) of the previous round.
    last_f: f64,
    weights: Vec<f64>,
    p: Params,
}

impl Server for Master {
    fn step(&mut self, net: &mut dyn Network) -> Result<StepInfo> {
        let replies = net.round(&Message::new().with("y", self.y.clone().insert_axis(Axis(1))))?;
        let mut ay = Array2::<f64>::zeros((self.y.len(), 1));
        for (r, &wk) in replies.iter().zip(&self.weights) {
            ay.scaled_add(wk, r.get("ay")?);
        }
        let ay = ay.remove_axis(Axis(1));
        let rq = self.y.dot(&ay);
        let f = -0.5 * rq;
        let eta = *self
            .eta
            .get_or_insert(self.p.step / rq.max(f64::MIN_POSITIVE));
        if f > self.last_f {
            self.t = 1; // function restart: the momentum overshot
        }
        self.last_f = f;
        let g = -sphere_project(self.y.view(), ay.view());
        let x_new = sphere_retract(self.y.view(), (&g * -eta).view());
        self.y = if self.p.momentum {
            let beta = (self.t as f64 - 1.0) / (self.t as f64 + 2.0);
            let away = -sphere_log(x_new.view(), self.x.view());
            sphere_exp(x_new.view(), (&away * beta).view())
        } else {
            x_new.clone()
        };
        self.x = x_new;
        self.t += 1;
        Ok(StepInfo {
            objective: Some(f),
            ..Default::default()
        })
    }

    fn estimate(&self) -> Message {
        Message::new().with("w", self.y.clone().insert_axis(Axis(1)))
    }
}

#[cfg(test)]
mod tests {
    use crate::data::eigengap;
    use crate::data::matrix::Block;
    use crate::fed::{Message, Network};
    use crate::linalg::sym_eig_desc;
    use crate::methods::registry::Running;
    use ndarray::{s, Array2, Axis};

    /// 1 − (vᵀw)² after `rounds` rounds, and the bytes counted, on 4 machines of 200 samples.
    fn run(params: &str, rounds: usize) -> (f64, u64, u64) {
        let e = eigengap::eigengap(20, 800, 0.3, 0.8, 3).unwrap();
        let x: Array2<f64> = e.x;
        let v = sym_eig_desc((x.dot(&x.t()) / 800.0).view())
            .unwrap()
            .vectors
            .column(0)
            .to_owned();
        let x1 = x.slice(s![.., ..200]);
        let w0 = sym_eig_desc((x1.dot(&x1.t()) / 200.0).view())
            .unwrap()
            .vectors
            .column(0)
            .to_owned();
        let start = Message::new().with("w", w0.insert_axis(Axis(1)));
        let params: toml::Table = toml::from_str(params).unwrap();
        let blocks = Block::Dense(x.view()).split(&[200; 4]);
        let mut r = Running::named("rgd", &params, &start, 5, blocks, 20).unwrap();
        for _ in 0..rounds {
            r.step().unwrap();
        }
        let w = r.server.estimate().get("w").unwrap().column(0).to_owned();
        let c = w.dot(&v) / w.dot(&w).sqrt();
        let counters = r.net.counters();
        (1.0 - c * c, counters.bytes_up, counters.bytes_down)
    }

    #[test]
    fn converges_to_the_leading_eigenvector_with_and_without_momentum() {
        for p in ["", "momentum = false"] {
            let (err, ..) = run(p, 300);
            assert!(err <= 1e-10, "{p:?}: 1 − cos² = {err:e}");
        }
    }

    #[test]
    fn momentum_is_faster() {
        let (fast, ..) = run("", 40);
        let (slow, ..) = run("momentum = false", 40);
        assert!(fast < slow, "accelerated {fast:e} vs plain {slow:e}");
    }

    /// One vector down, one up per machine, per round.
    #[test]
    fn one_vector_each_way_per_round() {
        let (_, up, down) = run("", 7);
        assert_eq!(down, 7 * 8 * 20);
        assert_eq!(up, 7 * 4 * 8 * 20);
    }
}
