//! Exact communication accounting.

use serde::Serialize;

/// Totals since the start of a run. A broadcast is counted once (downlink); every client's
/// reply is counted separately (uplink). Numbers are f64 values (8 bytes each).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Counters {
    pub rounds: u64,
    pub bytes_up: u64,
    pub bytes_down: u64,
    pub bytes_up_per_client: Vec<u64>,
    /// The length of the vectors the problem exchanges (n for a subspace of ℝⁿ, m for robust
    /// PCA's m×r factor): n-vectors = numbers / dim, never rounded.
    pub dim: usize,
}

impl Counters {
    pub fn new(clients: usize, dim: usize) -> Self {
        Self {
            bytes_up_per_client: vec![0; clients],
            dim,
            ..Default::default()
        }
    }
    pub(super) fn broadcast(&mut self, numbers: u64) {
        self.bytes_down += 8 * numbers;
    }
    pub(super) fn upload(&mut self, client: usize, numbers: u64) {
        self.bytes_up += 8 * numbers;
        self.bytes_up_per_client[client] += 8 * numbers;
    }
    pub(super) fn end_round(&mut self) {
        self.rounds += 1;
    }
    /// dim-vectors sent in both directions: every number counts, scalars included.
    pub fn vectors(&self) -> f64 {
        vectors(self.bytes_up + self.bytes_down, self.dim)
    }
}

/// dim-vectors in `bytes` of f64 numbers.
pub fn vectors(bytes: u64, dim: usize) -> f64 {
    bytes as f64 / (8.0 * dim.max(1) as f64)
}
