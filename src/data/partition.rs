//! Sample partitions of A over clients.
//!
//! Every client's samples are one block of consecutive samples, a view into the one matrix
//! ([`Block::split`](crate::data::matrix::Block::split)). The shuffled schemes (IID, Dirichlet
//! by label) permute the samples once, when the instance is built, so that this holds again.

use super::matrix::DataMatrix;
use crate::spec::{PartitionSpec, Scheme};
use anyhow::{bail, Result};
use rand::seq::SliceRandom;
use rand::Rng;
use rand_distr::{Distribution, Gamma};

/// Order the samples of `a` for `spec` and return the client sizes. Even and uneven splits keep
/// the order; IID shuffles; Dirichlet groups each client's label-drawn samples together.
pub fn arrange(
    a: DataMatrix,
    labels: Option<&[u32]>,
    spec: &PartitionSpec,
    rng: &mut impl Rng,
) -> Result<(DataMatrix, Vec<usize>)> {
    let (order, sizes) = order(a.m(), labels, spec, rng)?;
    Ok(match order {
        Some(order) => (a.select(&order), sizes),
        None => (a, sizes),
    })
}

/// The sample order [`arrange`] gives `m` samples, without the samples: None when it keeps
/// the order; and the client sizes. Draws from `rng` exactly as [`arrange`] does, so a rank
/// can find which original samples its clients hold before it builds any of them.
pub fn order(
    m: usize,
    labels: Option<&[u32]>,
    spec: &PartitionSpec,
    rng: &mut impl Rng,
) -> Result<(Option<Vec<usize>>, Vec<usize>)> {
    match spec.scheme {
        Scheme::Even | Scheme::Uneven => Ok((None, spec.client_sizes(m))),
        Scheme::Iid => {
            let mut idx: Vec<usize> = (0..m).collect();
            idx.shuffle(rng);
            Ok((Some(idx), spec.client_sizes(m)))
        }
        Scheme::Dirichlet => {
            let Some(labels) = labels else {
                bail!("scheme = \"dirichlet\" needs labelled data")
            };
            let alpha = spec.alpha.expect("validated: dirichlet has alpha");
            let groups = dirichlet_groups(&labels[..m], spec.clients, alpha, rng)?;
            let sizes = groups.iter().map(Vec::len).collect();
            Ok((Some(groups.into_iter().flatten().collect()), sizes))
        }
    }
}

/// Sample indices per client: every class is shuffled and cut in proportions ~ Dirichlet(α).
/// Redrawn (up to 100 times) until every client has at least one sample.
fn dirichlet_groups(
    labels: &[u32],
    clients: usize,
    alpha: f64,
    rng: &mut impl Rng,
) -> Result<Vec<Vec<usize>>> {
    let gamma =
        Gamma::new(alpha, 1.0).map_err(|e| anyhow::anyhow!("Dirichlet(alpha = {alpha}): {e}"))?;
    let classes = labels.iter().max().map_or(0, |&c| c as usize + 1);
    for _ in 0..100 {
        let mut groups = vec![Vec::new(); clients];
        for c in 0..classes {
            let mut members: Vec<usize> = (0..labels.len())
                .filter(|&j| labels[j] as usize == c)
                .collect();
            members.shuffle(rng);
            let w: Vec<f64> = (0..clients).map(|_| gamma.sample(rng)).collect();
            let total: f64 = w.iter().sum();
            let mut start = 0;
            let mut acc = 0.0;
            for (i, wi) in w.iter().enumerate() {
                acc += wi / total;
                let end = if i + 1 == clients {
                    members.len()
                } else {
                    ((acc * members.len() as f64).round() as usize).min(members.len())
                };
                groups[i].extend_from_slice(&members[start..end.max(start)]);
                start = end.max(start);
            }
        }
        if groups.iter().all(|g| !g.is_empty()) {
            return Ok(groups);
        }
    }
    bail!("Dirichlet(alpha = {alpha}) left a client without samples in 100 draws: use a larger alpha or fewer clients")
}
