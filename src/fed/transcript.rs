//! The server's view of a run: every broadcast and the replies of watched clients.

use super::Message;

/// One round as the server saw it.
pub struct TranscriptRound {
    pub broadcast: Message,
    /// (client index, what it sent), for the watched clients only.
    pub replies: Vec<(usize, Message)>,
}

pub struct Transcript {
    watch: Vec<usize>,
    pub rounds: Vec<TranscriptRound>,
}

impl Transcript {
    pub(super) fn new(watch: Vec<usize>) -> Self {
        Self {
            watch,
            rounds: Vec::new(),
        }
    }
    pub(super) fn record(&mut self, msg: &Message, replies: &[Message]) {
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
