//! Federated methods, one file per method, built by name through [`registry`].
//!
//! A method owns a [`Federation`](crate::fed::Federation) of its clients' private states and
//! talks to them only through it. One [`Method::step`] is one outer iteration.

pub mod faps;
pub mod localpower;
pub mod registry;
pub mod ssi;

use crate::data::matrix::Block;
use crate::fed::{Counters, Network, Transcript};
use anyhow::Result;
use ndarray::Array2;

/// What one outer iteration reports besides its messages (which the network counts).
#[derive(Clone, Debug, Default)]
pub struct StepInfo {
    /// f = Σ_i ‖A_iᵀZ‖²_F at the iterate broadcast this step, as the server learned it
    /// through the protocol (the stopping rule (27) uses it). None if the method cannot know it.
    pub objective: Option<f64>,
    /// Inner iterations per client this step (0 for methods without an inner solver).
    pub inner_iters: Vec<u32>,
}

/// A federated subspace method.
pub trait Method: Send {
    fn step(&mut self) -> Result<StepInfo>;
    /// The server's current estimate Z (n×p, orthonormal columns) and its network.
    fn server(&self) -> (&Array2<f64>, &dyn Network);

    fn estimate(&self) -> &Array2<f64> {
        self.server().0
    }
    fn counters(&self) -> &Counters {
        self.server().1.counters()
    }
    fn transcript(&self) -> Option<&Transcript> {
        self.server().1.transcript()
    }
}

/// Everything a method needs to start: the clients' data blocks, p, the common start Z⁽⁰⁾.
pub struct Setup<'a> {
    pub blocks: Vec<Block<'a>>,
    pub p: usize,
    pub z0: Array2<f64>,
    /// Seed for the method's own randomness (derived from the run and the method's name).
    pub seed: u64,
    /// Record the server's view of these clients' uploads.
    pub watch: Option<Vec<usize>>,
}

impl Setup<'_> {
    pub fn n(&self) -> usize {
        self.z0.nrows()
    }
}
