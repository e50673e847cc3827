//! Exact communication accounting.

use serde::Serialize;

/// Totals since the start of a run. A broadcast is counted once (downlink); every client's
/// upload is counted separately (uplink).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Counters {
    pub rounds: u64,
    pub bytes_up: u64,
    pub bytes_down: u64,
    pub vectors_up: u64,
    pub vectors_down: u64,
    pub bytes_up_per_client: Vec<u64>,
}

impl Counters {
    pub fn new(clients: usize) -> Self {
        Self {
            bytes_up_per_client: vec![0; clients],
            ..Default::default()
        }
    }
    pub(super) fn broadcast(&mut self, bytes: u64, vectors: u64) {
        self.bytes_down += bytes;
        self.vectors_down += vectors;
    }
    pub(super) fn upload(&mut self, client: usize, bytes: u64, vectors: u64) {
        self.bytes_up += bytes;
        self.vectors_up += vectors;
        self.bytes_up_per_client[client] += bytes;
    }
    pub(super) fn end_round(&mut self) {
        self.rounds += 1;
    }
    /// n-vectors sent in both directions.
    pub fn vectors(&self) -> u64 {
        self.vectors_up + self.vectors_down
    }
}
