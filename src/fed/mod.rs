//! The network: the only way anything leaves a client.
//!
//! The runner builds the network from the clients (each built from its own data block and seed
//! only) and hands the method's server a `&mut dyn Network`. A round is a broadcast from the
//! server (counted once, whatever the number of clients) and one reply per client, computed by
//! [`Client::respond`] from the client's own state and the message alone. The network, not the
//! method, counts rounds, numbers and bytes, and records transcripts, so no method can
//! under-report. Replies come back in client order and are summed in that order
//! ([`sum_part`]), so results never depend on the thread count or the backend.
//!
//! The runner alone reads client-held parts of an estimate (robust PCA's L_i, S_i), through
//! [`RunNetwork::reveal`]: not counted, not part of [`Network`], so invisible to methods.
//!
//! Two backends: [`LocalNetwork`] (every client in this process) and, with the `mpi` feature,
//! [`mpi::MpiNetwork`] (rank 0 the server, the clients on the other ranks).

pub mod clock;
mod counters;
mod message;
#[cfg(feature = "mpi")]
pub mod mpi;
mod transcript;

pub use counters::{vectors, Counters};
pub use message::{sum_part, sum_scalar, Message};
pub use transcript::{Shape, Transcript, TranscriptRound};

use anyhow::Result;
use rayon::prelude::*;

/// A client of a federated method: private state, answering the server's messages.
pub trait Client: Send {
    /// The reply to this round's broadcast.
    fn respond(&mut self, msg: &Message) -> Result<Message>;
    /// Client-held parts of the estimate, for the runner's evaluation channel (never counted).
    fn reveal(&self) -> Message {
        Message::new()
    }
    /// Inner iterations spent in the last reply (for the report; 0 without an inner solver).
    fn inner_iters(&self) -> u32 {
        0
    }
}

/// What a method's server sees of the network.
pub trait Network {
    fn num_clients(&self) -> usize;
    /// Samples held by each client, in client order: public, as the partition is.
    fn client_sizes(&self) -> &[usize];
    /// One communication round: broadcast `msg`, return every client's reply in client order.
    fn round(&mut self, msg: &Message) -> Result<Vec<Message>>;
    fn counters(&self) -> &Counters;
    /// The server's recorded view, if the runner asked for one.
    fn transcript(&self) -> Option<&Transcript>;
}

/// What the runner drives: a method's network plus the runner's own channels, which methods
/// never see (they get a `&mut dyn Network`).
pub trait RunNetwork: Network {
    /// Record the server's view (broadcasts and the replies of `clients`) for attacks, in the
    /// first `rounds` rounds (None: all).
    fn record_transcript(&mut self, clients: Vec<usize>, rounds: Option<usize>);
    /// The evaluation channel: each client's share of the estimate, in client order (not
    /// counted).
    fn reveal(&mut self) -> Result<Vec<Message>>;
    /// Inner iterations of each client's last reply, in client order.
    fn inner_iters(&mut self) -> Result<Vec<u32>>;
    /// A failure of the network itself (a rank lost or out of step), as opposed to a method's
    /// error: the experiment cannot go on. The runner checks it whenever a step fails.
    fn broken(&self) -> Option<String> {
        None
    }
}

/// All clients in this process, computing in parallel (rayon).
pub struct LocalNetwork<'a> {
    clients: Vec<Box<dyn Client + 'a>>,
    sizes: Vec<usize>,
    counters: Counters,
    transcript: Option<Transcript>,
}

impl<'a> LocalNetwork<'a> {
    /// `dim` is the length of the vectors exchanged (what an "n-vector" is for this problem).
    pub fn new(clients: Vec<Box<dyn Client + 'a>>, sizes: Vec<usize>, dim: usize) -> Self {
        assert_eq!(clients.len(), sizes.len(), "one size per client");
        Self {
            counters: Counters::new(clients.len(), dim),
            clients,
            sizes,
            transcript: None,
        }
    }

    /// Record the server's view (broadcasts and the replies of `clients`) for attacks, in the
    /// first `rounds` rounds (None: all).
    pub fn record_transcript(&mut self, clients: Vec<usize>, rounds: Option<usize>) {
        self.transcript = Some(Transcript::new(clients, rounds));
    }

    /// The evaluation channel: each client's share of the estimate, in client order.
    pub fn reveal(&self) -> Vec<Message> {
        self.clients.iter().map(|c| c.reveal()).collect()
    }

    /// Inner iterations of each client's last reply.
    pub fn inner_iters(&self) -> Vec<u32> {
        self.clients.iter().map(|c| c.inner_iters()).collect()
    }
}

impl Network for LocalNetwork<'_> {
    fn num_clients(&self) -> usize {
        self.clients.len()
    }

    fn client_sizes(&self) -> &[usize] {
        &self.sizes
    }

    fn round(&mut self, msg: &Message) -> Result<Vec<Message>> {
        self.counters.broadcast(msg.numbers());
        let replies = self
            .clients
            .par_iter_mut()
            .map(|c| c.respond(msg))
            .collect::<Result<Vec<Message>>>()?;
        for (i, r) in replies.iter().enumerate() {
            self.counters.upload(i, r.numbers());
        }
        self.counters.end_round();
        if let Some(t) = &mut self.transcript {
            t.record(msg, &replies);
        }
        Ok(replies)
    }

    fn counters(&self) -> &Counters {
        &self.counters
    }

    fn transcript(&self) -> Option<&Transcript> {
        self.transcript.as_ref()
    }
}

impl RunNetwork for LocalNetwork<'_> {
    fn record_transcript(&mut self, clients: Vec<usize>, rounds: Option<usize>) {
        LocalNetwork::record_transcript(self, clients, rounds)
    }
    fn reveal(&mut self) -> Result<Vec<Message>> {
        Ok(LocalNetwork::reveal(self))
    }
    fn inner_iters(&mut self) -> Result<Vec<u32>> {
        Ok(LocalNetwork::inner_iters(self))
    }
}
