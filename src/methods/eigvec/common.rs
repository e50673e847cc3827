//! What the leading-eigenvector methods ([`crate::problem::eigvec`]: CEDRE, RGD, DSI, ILEA,
//! DisPCA-L, DisPCA-B) share: the family's start and estimate (part `w`, one column), the
//! sample weights n_k/N of Â = Σ_k (n_k/N) A_k and the weighted sums of the machines' replies,
//! and on a machine its block and the product A_k W = X_k(X_kᵀW)/n_k. The block is dense (the
//! family centred it when it built the problem) or sparse and centred implicitly (rcv1:
//! [`Block::Centred`]); the products take either, dense ones by the BLAS calls every committed
//! result was computed with.
//!
//! Every helper performs the floating-point operations of the per-method code it replaced, in
//! the same order, so the methods' numbers are unchanged to the bit.

use crate::data::matrix::Block;
use crate::fed::Message;
use crate::methods::ClientSetup;
use anyhow::{bail, Context, Result};
use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis};

/// The family's start `w` as a vector. `why` completes the error when the part is missing
/// (e.g. "starts from the family's `w`"); a start of more than one column is an error too.
pub fn start_vector(start: &Message, method: &str, why: &str) -> Result<Array1<f64>> {
    let w = start.get("w").with_context(|| format!("{method} {why}"))?;
    if w.ncols() != 1 {
        bail!(
            "{method} seeks one vector; the start has {} columns",
            w.ncols()
        );
    }
    Ok(w.column(0).to_owned())
}

/// v/‖v‖; None when ‖v‖ is 0 or not finite.
pub fn unit(v: Array1<f64>) -> Option<Array1<f64>> {
    let norm = v.dot(&v).sqrt();
    if norm > 0.0 && norm.is_finite() {
        Some(v / norm)
    } else {
        None
    }
}

/// The estimate the family reads (and the start it hands out): `w` as one column.
pub fn w_message(w: &Array1<f64>) -> Message {
    Message::new().with("w", w.clone().insert_axis(Axis(1)))
}

/// n_k/N per machine, from the public client sizes: Â = Σ_k (n_k/N) A_k.
pub fn sample_weights(sizes: &[usize]) -> Vec<f64> {
    let total: usize = sizes.iter().sum();
    sizes.iter().map(|&n| n as f64 / total as f64).collect()
}

/// One reply per machine, and at least one machine.
fn check_replies(replies: &[Message], weights: &[f64], method: &str) -> Result<()> {
    if replies.len() != weights.len() || replies.is_empty() {
        bail!(
            "{method}: {} replies for {} machines",
            replies.len(),
            weights.len()
        );
    }
    Ok(())
}

/// Σ_k (n_k/N)·part_k, `weights` = n_k/N, in client order and starting from the first term:
/// (w_1p_1 + w_2p_2) + w_3p_3 + …. Every reply's part must have the first one's shape.
pub fn weighted_sum(
    replies: &[Message],
    weights: &[f64],
    part: &str,
    method: &str,
) -> Result<Array2<f64>> {
    check_replies(replies, weights, method)?;
    let mut acc = replies[0].get(part)? * weights[0];
    for (r, &wk) in replies.iter().zip(weights).skip(1) {
        let p = r.get(part)?;
        if p.dim() != acc.dim() {
            bail!(
                "{method}: part `{part}` is {:?}, expected {:?}",
                p.dim(),
                acc.dim()
            );
        }
        acc.scaled_add(wk, p);
    }
    Ok(acc)
}

/// [`weighted_sum`] of parts that are one column of `d` rows, as a vector, accumulated onto
/// zeros: 0 + w_1p_1 + w_2p_2 + …, in client order. (To the bit the two differ only in the sign
/// of a zero, 0 + (−0) = +0, so each method keeps the start it was written with.)
pub fn weighted_vector(
    replies: &[Message],
    weights: &[f64],
    part: &str,
    d: usize,
    method: &str,
) -> Result<Array1<f64>> {
    check_replies(replies, weights, method)?;
    let mut acc = Array1::zeros(d);
    for (r, &wk) in replies.iter().zip(weights) {
        let p = r.get(part)?;
        if p.dim() != (d, 1) {
            bail!(
                "{method}: part `{part}` is {:?}, expected ({d}, 1)",
                p.dim()
            );
        }
        acc.scaled_add(wk, &p.column(0));
    }
    Ok(acc)
}

/// A machine's samples (columns): dense, or sparse and centred implicitly.
pub fn data_block<'a>(setup: &ClientSetup<'a, '_>) -> Block<'a> {
    setup.block
}

/// [`data_block`] holding at least one sample (A_k = X_kX_kᵀ/n_k needs n_k ≥ 1).
pub fn local_samples<'a>(setup: &ClientSetup<'a, '_>, method: &str) -> Result<Block<'a>> {
    let x = data_block(setup);
    if x.samples() == 0 {
        bail!("{method}: machine {} holds no samples", setup.index + 1);
    }
    Ok(x)
}

/// A received part (`what`, as the error names it) has one row per feature of the machine.
pub fn check_rows(method: &str, what: &str, part: &Array2<f64>, features: usize) -> Result<()> {
    if part.nrows() != features {
        bail!(
            "{method}: {what} has {} rows, the data {features} features",
            part.nrows()
        );
    }
    Ok(())
}

/// A_k W = X_k(X_kᵀW)/n_k, never forming A_k (matrix products; sparse blocks by
/// [`Block::gram_times`]).
pub fn a_times(x: Block, w: ArrayView2<f64>) -> Array2<f64> {
    match x {
        Block::Dense(x) => x.dot(&x.t().dot(&w)) / x.ncols() as f64,
        other => other.gram_times(w) / other.samples() as f64,
    }
}

/// A_k v = X_k(X_kᵀv)/n_k for one vector (dense: matrix–vector products, whose sums are not
/// ordered as [`a_times`]'s: the two are not interchangeable bit for bit).
pub fn a_times_vec(x: Block, v: ArrayView1<f64>) -> Array1<f64> {
    match x {
        Block::Dense(x) => x.dot(&x.t().dot(&v)) / x.ncols() as f64,
        other => {
            other
                .gram_times(v.insert_axis(Axis(1)))
                .remove_axis(Axis(1))
                / other.samples() as f64
        }
    }
}

/// What the family's unit tests share: one problem, runs on it, and the error 1 − (vᵀw)².
#[cfg(test)]
pub(crate) mod testing {
    use super::w_message;
    use crate::data::eigengap;
    use crate::data::matrix::Block;
    use crate::fed::Message;
    use crate::linalg::sym_eig_desc;
    use crate::methods::registry::Running;
    use crate::methods::StepInfo;
    use ndarray::{s, Array1, Array2};

    /// The CEDRE tests' problem: D = 20, N = 800 samples (δ = 0.3, decay 0.8, data seed 3).
    pub(crate) struct Problem {
        /// The samples, divided by the divisor `problem` was given.
        pub(crate) x: &'static Array2<f64>,
        /// v₁ of Â = XXᵀ/N.
        pub(crate) v: Array1<f64>,
        /// The family's warm start: v₁ of machine 1's A_1 (the first 200 samples), as `w`.
        pub(crate) start: Message,
    }

    /// The problem with the data divided by `divisor` (2.0 in the CEDRE-style tests; 1.0
    /// leaves it as generated, x/1 = x exactly).
    pub(crate) fn problem(divisor: f64) -> Problem {
        let e = eigengap::eigengap(20, 800, 0.3, 0.8, 3).unwrap();
        let x: &'static Array2<f64> = Box::leak(Box::new(e.x / divisor));
        let cov = x.dot(&x.t()) / 800.0;
        let v = sym_eig_desc(cov.view())
            .unwrap()
            .vectors
            .column(0)
            .to_owned();
        let x1 = x.slice(s![.., ..200]);
        let w0 = sym_eig_desc((x1.dot(&x1.t()) / 200.0).view())
            .unwrap()
            .vectors
            .column(0)
            .to_owned();
        Problem {
            x,
            v,
            start: w_message(&w0),
        }
    }

    /// `method` with `params` (TOML) from `start`, over 4 machines of 200 samples of `x`, method
    /// seed 5, after `steps` steps.
    pub(crate) fn run(
        method: &str,
        params: &str,
        x: &'static Array2<f64>,
        start: &Message,
        steps: usize,
    ) -> Running<'static> {
        let params: toml::Table = toml::from_str(params).unwrap();
        let blocks = Block::Dense(x.view()).split(&[200; 4]);
        let mut r = Running::named(method, &params, start, 5, blocks, 20).unwrap();
        for _ in 0..steps {
            r.step().unwrap();
        }
        r
    }

    /// The server's estimate `w`.
    pub(crate) fn estimate(r: &Running) -> Array1<f64> {
        r.server.estimate().get("w").unwrap().column(0).to_owned()
    }

    /// 1 − (vᵀw)²/‖w‖², the error of w (any norm) against the unit v.
    pub(crate) fn sin2(w: &Array1<f64>, v: &Array1<f64>) -> f64 {
        let c = w.dot(v) / w.dot(w).sqrt();
        1.0 - c * c
    }

    /// [`run`] on [`problem`]`(divisor)` from its warm start; [`sin2`] of the estimate against
    /// v₁, and the running method (for its counters).
    pub(crate) fn sin2_after(
        method: &str,
        divisor: f64,
        params: &str,
        steps: usize,
    ) -> (f64, Running<'static>) {
        let p = problem(divisor);
        let r = run(method, params, p.x, &p.start, steps);
        (sin2(&estimate(&r), &p.v), r)
    }

    /// One step of the one-shot `method` with `params` from the uniform start (1/√D in every
    /// entry), on [`problem`]`(1.0)` over machines of `sizes`, method seed `seed`, recording the
    /// server's view of every machine if `record`; [`sin2`] of the estimate against v₁, the
    /// step's info and the running method.
    pub(crate) fn one_shot(
        method: &str,
        params: &str,
        sizes: &[usize],
        seed: u64,
        record: bool,
    ) -> (f64, StepInfo, Running<'static>) {
        let p = problem(1.0);
        let start = Message::new().with("w", Array2::from_elem((20, 1), 1.0 / 20f64.sqrt()));
        let params: toml::Table = toml::from_str(params).unwrap();
        let blocks = Block::Dense(p.x.view()).split(sizes);
        let mut r = Running::named(method, &params, &start, seed, blocks, 20).unwrap();
        if record {
            r.net.record_transcript((0..sizes.len()).collect(), None);
        }
        let info = r.step().unwrap();
        (sin2(&estimate(&r), &p.v), info, r)
    }
}
