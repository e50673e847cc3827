//! The server's view of a run: every broadcast and the replies of watched clients.

use super::Message;

/// What a method's transcript reveals of a client's data to the server: the shape the leakage
/// attack reads, declared by each method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Nothing the attack reads.
    Opaque,
    /// Each reply's `y` = A_iA_iᵀz answers the `z` broadcast (or sent beside it): the subspace
    /// methods, DSSAL1, federated ManPG.
    Answers,
    /// Consensus ADMM replying the normalised closed-form step `w` (FASPCA, Algorithm 7).
    AdmmFaspca,
    /// Consensus ADMM replying a stationary point `w` of its local problem (FSSPCA).
    AdmmFsspca,
}

/// One round as the server saw it.
pub struct TranscriptRound {
    pub broadcast: Message,
    /// (client index, what it sent), for the watched clients only.
    pub replies: Vec<(usize, Message)>,
}

pub struct Transcript {
    watch: Vec<usize>,
    /// Rounds kept: the attack reads only its first `max_rounds`, and a run of 3000 rounds
    /// of 5000×100 broadcasts would otherwise hold 12 GB (FAPS fig. 1(b) at n = 5000).
    limit: usize,
    pub rounds: Vec<TranscriptRound>,
}

impl Transcript {
    /// Watch `watch`'s replies in the first `limit` rounds (None: every round).
    pub(super) fn new(watch: Vec<usize>, limit: Option<usize>) -> Self {
        Self {
            watch,
            limit: limit.unwrap_or(usize::MAX),
            rounds: Vec::new(),
        }
    }
    pub(super) fn record(&mut self, msg: &Message, replies: &[Message]) {
        if self.rounds.len() >= self.limit {
            return;
        }
        let replies = self
            .watch
            .iter()
            .filter(|&&i| i < replies.len())
            .map(|&i| (i, replies[i].clone()))
            .collect();
        self.rounds.push(TranscriptRound {
            broadcast: msg.clone(),
            replies,
        });
    }
    /// (broadcast, reply) pairs of one client, in round order.
    pub fn pairs(&self, client: usize) -> impl Iterator<Item = (&Message, &Message)> {
        self.rounds.iter().filter_map(move |r| {
            r.replies
                .iter()
                .find(|(i, _)| *i == client)
                .map(|(_, u)| (&r.broadcast, u))
        })
    }
}
