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

use super::common::{
    a_times, check_rows, local_samples, sample_weights, start_vector, w_message, weighted_vector,
};
use crate::data::matrix::Block;
use crate::fed::{Client, Message, Network};
use crate::linalg::manifold::{sphere_exp, sphere_log, sphere_project, sphere_retract};
use crate::methods::{ClientSetup, Method, Server, ServerSetup, StepInfo};
use crate::spec::Kind;
use anyhow::Result;
use ndarray::{Array1, Axis};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub struct Rgd;

/// RGD parameters; every one can be set in a manifest's `params`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    // η = step/λ̂ (λ̂: the start's Rayleigh quotient). 0.5: the spec's 1/L, L = 2λ₁.
    /// step η = step/λ̂ (λ̂: the start's Rayleigh quotient)
    pub step: f64,
    /// Nesterov momentum on the sphere; false: plain Riemannian gradient descent
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

impl crate::methods::Params for Params {
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        if !(self.step > 0.0 && self.step <= 10.0) {
            return Err(("step", "must lie in (0, 10]".into()));
        }
        Ok(())
    }
}

impl Method for Rgd {
    const NAME: &'static str = "rgd";
    const PAPER: &'static str = "Huang, Pan (CEDRE paper) §6.1 baseline, after Zhang & Sra 2018";
    const FAMILY: Kind = Kind::Eigvec;
    const ABOUT: &'static str =
        "distributed accelerated Riemannian gradient descent, one product A_k y per round";
    type Params = Params;

    fn server(p: &Params, setup: ServerSetup) -> Result<Box<dyn Server>> {
        let y = start_vector(setup.start, "RGD", "starts from the family's `w`")?;
        Ok(Box::new(Master {
            x: y.clone(),
            y,
            t: 1,
            eta: None,
            last_f: f64::INFINITY,
            weights: sample_weights(setup.sizes),
            p: p.clone(),
        }))
    }

    fn client<'a>(_: &Params, setup: ClientSetup<'a, '_>) -> Result<Box<dyn Client + 'a>> {
        Ok(Box::new(Machine {
            x: local_samples(&setup, "RGD")?,
        }))
    }
}

struct Machine<'a> {
    x: Block<'a>,
}

impl Client for Machine<'_> {
    fn respond(&mut self, msg: &Message) -> Result<Message> {
        let y = msg.get("y")?;
        check_rows("RGD", "y", y, self.x.n())?;
        Ok(Message::new().with("ay", a_times(self.x, y.view())))
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
    /// η = step / ρ(y₀), set in round 1 from the first Rayleigh quotient.
    fn chosen(&self) -> Vec<(&'static str, f64)> {
        self.eta.map(|e| vec![("eta", e)]).unwrap_or_default()
    }

    fn step(&mut self, net: &mut dyn Network) -> Result<StepInfo> {
        let replies = net.round(&Message::new().with("y", self.y.clone().insert_axis(Axis(1))))?;
        // Ây = Σ_k (n_k/N) A_k y.
        let ay = weighted_vector(&replies, &self.weights, "ay", self.y.len(), "RGD")?;
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
        w_message(&self.y)
    }
}

#[cfg(test)]
mod tests {
    use crate::fed::Network;
    use crate::methods::eigvec::common::testing::sin2_after;

    /// 1 − (vᵀw)² after `rounds` rounds, and the bytes counted, on 4 machines of 200 samples
    /// (the data as generated, not halved).
    fn run(params: &str, rounds: usize) -> (f64, u64, u64) {
        let (err, r) = sin2_after("rgd", 1.0, params, rounds);
        let counters = r.net.counters();
        (err, counters.bytes_up, counters.bytes_down)
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
