//! Federated subspace iteration (SSI), the baseline of FAPS (its eq. (2)).
//!
//! Each round the server broadcasts Z; client i sends Y_i = A_iA_iᵀZ; the server sets
//! Z ← orth(Σ_i Y_i). The objective f(Z) = tr(Zᵀ Σ_i Y_i) comes for free at the server.

use super::{Method, Setup, StepInfo};
use crate::data::matrix::Block;
use crate::fed::{Federation, Network, Upload};
use crate::linalg::orth;
use anyhow::Result;
use ndarray::Array2;

struct Client<'a> {
    a: Block<'a>,
}

pub struct Ssi<'a> {
    fed: Federation<Client<'a>>,
    z: Array2<f64>,
}

impl<'a> Ssi<'a> {
    pub fn new(setup: Setup<'a>) -> Self {
        let n = setup.n();
        let mut fed = Federation::new(setup.blocks.into_iter().map(|a| Client { a }).collect(), n);
        if let Some(w) = setup.watch {
            fed.record_transcript(w);
        }
        Self { fed, z: setup.z0 }
    }
}

impl Method for Ssi<'_> {
    fn step(&mut self) -> Result<StepInfo> {
        let y = self
            .fed
            .round(self.z.view(), |c, z| Upload::matrix(c.a.gram_times(z)))
            .sum;
        let objective = (&self.z * &y).sum();
        self.z = orth(y.view());
        Ok(StepInfo {
            objective: Some(objective),
            inner_iters: vec![0; self.fed.num_clients()],
        })
    }
    fn server(&self) -> (&Array2<f64>, &dyn Network) {
        (&self.z, &self.fed)
    }
}
