//! The simulated network: the only way data leaves a client.
//!
//! A method's server code talks to its clients through [`Federation::round`] only: a broadcast
//! from the server (counted once, whatever the number of clients) followed by one upload per
//! client. The network, not the method, counts rounds, n-vectors and bytes, so no method can
//! under-report. Clients compute in parallel (rayon); the server receives their uploads in
//! client order and sums them in that order, so results never depend on the thread count.

mod counters;
mod transcript;

pub use counters::Counters;
pub use transcript::{Transcript, TranscriptRound};

use ndarray::{Array2, ArrayView2};
use rayon::prelude::*;

/// What one client sends in one round: an n×k matrix and a few scalars (e.g. its share of
/// the objective, piggy-backed on the round for the stopping rule).
#[derive(Clone, Debug)]
pub struct Upload {
    pub matrix: Array2<f64>,
    pub scalars: Vec<f64>,
}

impl Upload {
    pub fn matrix(matrix: Array2<f64>) -> Self {
        Self {
            matrix,
            scalars: Vec::new(),
        }
    }
    fn bytes(&self) -> u64 {
        8 * (self.matrix.len() + self.scalars.len()) as u64
    }
}

/// What the server receives in one round, summed in client order.
pub struct Reduced {
    pub sum: Array2<f64>,
    pub scalar_sums: Vec<f64>,
}

/// What the harness reads from a network, whatever its clients hold.
pub trait Network {
    fn counters(&self) -> &Counters;
    /// The server's recorded view, if [`Federation::record_transcript`] asked for one.
    fn transcript(&self) -> Option<&Transcript>;
}

impl<C> Network for Federation<C> {
    fn counters(&self) -> &Counters {
        &self.counters
    }

    fn transcript(&self) -> Option<&Transcript> {
        self.transcript.as_ref()
    }
}

/// Clients holding private state `C`, and the counters of everything that crossed the network.
pub struct Federation<C> {
    clients: Vec<C>,
    n: usize,
    counters: Counters,
    transcript: Option<Transcript>,
}

impl<C: Send> Federation<C> {
    /// `n` is the dimension of the vectors exchanged (the number of features).
    pub fn new(clients: Vec<C>, n: usize) -> Self {
        let d = clients.len();
        Self {
            clients,
            n,
            counters: Counters::new(d),
            transcript: None,
        }
    }

    /// Record the server's view (broadcasts and the uploads of `clients`) for attacks.
    pub fn record_transcript(&mut self, clients: Vec<usize>) {
        self.transcript = Some(Transcript::new(clients));
    }

    pub fn num_clients(&self) -> usize {
        self.clients.len()
    }

    /// One communication round: broadcast `msg` to every client, each client answers with an
    /// [`Upload`] computed from its own state and the message; the server gets the sums.
    pub fn round(
        &mut self,
        msg: ArrayView2<f64>,
        f: impl Fn(&mut C, ArrayView2<f64>) -> Upload + Sync + Send,
    ) -> Reduced {
        let uploads = self.gather(msg, f);
        let mut sum = uploads[0].matrix.clone();
        for u in &uploads[1..] {
            sum += &u.matrix;
        }
        let k = uploads[0].scalars.len();
        let scalar_sums = (0..k)
            .map(|j| uploads.iter().map(|u| u.scalars[j]).sum())
            .collect();
        Reduced { sum, scalar_sums }
    }

    /// One communication round in which the server receives every client's upload separately
    /// (in client order), for methods that treat clients' messages differently before summing.
    pub fn gather(
        &mut self,
        msg: ArrayView2<f64>,
        f: impl Fn(&mut C, ArrayView2<f64>) -> Upload + Sync + Send,
    ) -> Vec<Upload> {
        self.counters
            .broadcast(msg.len() as u64 * 8, self.vectors(msg.len()));
        let uploads: Vec<Upload> = self.clients.par_iter_mut().map(|c| f(c, msg)).collect();
        for (i, u) in uploads.iter().enumerate() {
            self.counters
                .upload(i, u.bytes(), self.vectors(u.matrix.len()));
        }
        self.counters.end_round();
        if let Some(t) = &mut self.transcript {
            t.record(msg, &uploads);
        }
        uploads
    }

    /// Number of n-dimensional vectors in a message of `len` numbers.
    fn vectors(&self, len: usize) -> u64 {
        (len / self.n.max(1)) as u64
    }

    /// For the harness's measurements only (e.g. inner iteration counts): read client state.
    /// Nothing read here may flow back into the algorithm.
    pub fn observe<R>(&self, f: impl Fn(&C) -> R) -> Vec<R> {
        self.clients.iter().map(f).collect()
    }
}
