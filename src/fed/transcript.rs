//! The server's view of a run: every broadcast and the uploads of watched clients.

use super::Upload;
use ndarray::{Array2, ArrayView2};

/// One round as the server saw it.
pub struct TranscriptRound {
    pub broadcast: Array2<f64>,
    /// (client index, what it sent), for the watched clients only.
    pub uploads: Vec<(usize, Upload)>,
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
    pub(super) fn record(&mut self, msg: ArrayView2<f64>, uploads: &[Upload]) {
        let uploads = self
            .watch
            .iter()
            .filter(|&&i| i < uploads.len())
            .map(|&i| (i, uploads[i].clone()))
            .collect();
        self.rounds.push(TranscriptRound {
            broadcast: msg.to_owned(),
            uploads,
        });
    }
    /// (broadcast, upload) pairs of one client, in round order.
    pub fn pairs(&self, client: usize) -> impl Iterator<Item = (&Array2<f64>, &Upload)> {
        self.rounds.iter().filter_map(move |r| {
            r.uploads
                .iter()
                .find(|(i, _)| *i == client)
                .map(|(_, u)| (&r.broadcast, u))
        })
    }
}
