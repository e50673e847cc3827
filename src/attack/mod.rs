//! Attacks on what the server saw (transcripts).
//!
//! Data leakage (FAPS §3.5, Proposition 2, fig. 1): from the pairs (Z⁽ʲ⁾, Y_1⁽ʲ⁾) the server
//! received from client 1, take the minimum-Frobenius-norm Φ⁽ᵏ⁾ with
//! Φ⁽ᵏ⁾[Z⁽¹⁾ … Z⁽ᵏ⁾] = [Y_1⁽¹⁾ … Y_1⁽ᵏ⁾] and measure ‖Φ⁽ᵏ⁾ − A_1A_1ᵀ‖_F / ‖A_1A_1ᵀ‖_F. For SSI,
//! Y_1 = A_1A_1ᵀZ, so Φ⁽ᵏ⁾ = A_1A_1ᵀ as soon as the Z's span ℝⁿ (kp ≥ n); FAPS's Y_i = Q_iZ with a
//! mask Q_i that changes every round, so no such Φ exists.
//!
//! Parts read by name: a reply's `y` answers the broadcast `z`, or, when the reply also carries
//! its own basis `z` (LocalPower's aligned rounds), that basis. The consensus-ADMM sparse PCA
//! methods send no such product; [`admm`] rebuilds it from what their server knows.

pub mod admm;

use crate::fed::{Shape, Transcript};
use crate::linalg::fro2;
use anyhow::{bail, Context, Result};
use ndarray::{concatenate, s, Array2, ArrayView2, Axis};
use ndarray_linalg::JobSvd;
use ndarray_linalg::SVDDC;
use rayon::prelude::*;

/// The products the server rebuilt from one client's transcript: (round, X, A_1A_1ᵀX), in round
/// order. The round is the one in which the pair became known.
#[derive(Default)]
pub struct Leak {
    pub pairs: Vec<(usize, Array2<f64>, Array2<f64>)>,
    /// The products are A_1A_1ᵀX only up to a shift αX (see [`leakage_errors`]).
    pub up_to_shift: bool,
}

impl Leak {
    /// [`leakage_errors`] of these pairs, one per pair.
    pub fn errors(&self, a1: ArrayView2<f64>, max_rounds: usize) -> Result<Vec<f64>> {
        leakage_errors(a1, &self.products(), max_rounds, self.up_to_shift)
    }

    /// [`leakage_norms`] of these pairs, one per pair.
    pub fn norms(&self, a1: ArrayView2<f64>, max_rounds: usize) -> Result<Vec<LeakNorm>> {
        leakage_norms(a1, &self.products(), max_rounds, self.up_to_shift)
    }

    /// The (X, A_1A_1ᵀX) pairs without their rounds.
    pub fn products(&self) -> Vec<(Array2<f64>, Array2<f64>)> {
        self.pairs
            .iter()
            .map(|(_, x, y)| (x.clone(), y.clone()))
            .collect()
    }
}

/// Whether [`leak`] can read a transcript of `shape`: every shape but [`Shape::Opaque`] (the
/// family decides whether its data is what the attack rebuilds: `Family::attackable`).
pub fn reads(shape: Shape) -> bool {
    shape != Shape::Opaque
}

/// What the server learns from `client` through a transcript of `shape` (with the method's
/// resolved parameters) in the first `max_rounds` rounds.
pub fn leak(
    shape: Shape,
    params: &serde_json::Value,
    t: &Transcript,
    client: usize,
    max_rounds: usize,
) -> Result<Leak> {
    fn parse<P: serde::de::DeserializeOwned>(v: &serde_json::Value) -> Result<P> {
        serde_json::from_value(v.clone()).context("attack: the method's parameters")
    }
    match shape {
        Shape::AdmmFaspca => admm::faspca(t, client, &parse(params)?, max_rounds),
        Shape::AdmmFsspca => admm::fsspca(t, client, &parse(params)?, max_rounds),
        Shape::Opaque => bail!("the attack reads no opaque transcript"),
        Shape::Answers => Ok(Leak {
            pairs: pairs(t, client)?
                .into_iter()
                .take(max_rounds)
                .enumerate()
                .map(|(i, (x, y))| (i + 1, x, y))
                .collect(),
            up_to_shift: false,
        }),
    }
}

/// The (input, output) pairs the server saw from `client`, in round order.
pub fn pairs(t: &Transcript, client: usize) -> Result<Vec<(Array2<f64>, Array2<f64>)>> {
    t.pairs(client)
        .map(|(msg, reply)| {
            let input = if reply.has("z") { reply } else { msg };
            Ok((input.get("z")?.clone(), reply.get("y")?.clone()))
        })
        .collect()
}

/// The reconstruction error after one round: ‖Φ − A_1A_1ᵀ‖_F, and relative to ‖A_1A_1ᵀ‖_F.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LeakNorm {
    pub relative: f64,
    /// As FAPS fig. 1 prints it (with `up_to_shift`, the shifted error min_α ‖Φ − M − αI‖_F).
    pub absolute: f64,
}

/// Relative reconstruction error of A_1A_1ᵀ after each of the first `max_rounds` pairs
/// ([`leakage_norms`]' relative part).
pub fn leakage_errors(
    a1: ArrayView2<f64>,
    pairs: &[(Array2<f64>, Array2<f64>)],
    max_rounds: usize,
    up_to_shift: bool,
) -> Result<Vec<f64>> {
    Ok(leakage_norms(a1, pairs, max_rounds, up_to_shift)?
        .into_iter()
        .map(|e| e.relative)
        .collect())
}

/// Reconstruction error of A_1A_1ᵀ after each of the first `max_rounds` pairs.
///
/// Never forms anything larger than n×kp: with the thin SVD X = [Z⁽¹⁾…Z⁽ᵏ⁾] = USVᵀ (rank r),
/// Φ = BUᵀ with B = [Y…]VS⁻¹, and, M = A_1A_1ᵀ,
/// ‖Φ − M‖²_F = ‖B − MU‖²_F + ‖M(I − UUᵀ)‖²_F, the second term exactly 0 once r = n.
///
/// `up_to_shift`: the transcript determines M only up to M + αI (FSSPCA: its local problem
/// does not change under that shift), so the error is min_α ‖Φ − (M + αI)‖_F (the part outside
/// span(U) counted as unrecovered) relative to ‖M − (tr M/n)I‖_F. Both are quadratics in α with
/// closed-form minimum, still without n×n matrices.
pub fn leakage_norms(
    a1: ArrayView2<f64>,
    pairs: &[(Array2<f64>, Array2<f64>)],
    max_rounds: usize,
    up_to_shift: bool,
) -> Result<Vec<LeakNorm>> {
    let n = a1.nrows();
    // ‖M‖²_F = ‖A_1ᵀA_1‖²_F, the smaller Gram of the two.
    let m_fro2 = if a1.ncols() <= n {
        fro2(a1.t().dot(&a1).view())
    } else {
        fro2(a1.dot(&a1.t()).view())
    };
    let trace = fro2(a1);
    let denominator = if up_to_shift {
        m_fro2 - trace * trace / n as f64
    } else {
        m_fro2
    };
    // Each k is its own SVD of n×kp, independent of the others: they run in parallel (one
    // LAPACK call per thread), which changes no bit. The largest take O(n·(kp)²) each and
    // dominate fig. 1's paper profile.
    (1..=pairs.len().min(max_rounds))
        .into_par_iter()
        .map(|k| {
            let zs: Vec<ArrayView2<f64>> = pairs[..k].iter().map(|(z, _)| z.view()).collect();
            let ys: Vec<ArrayView2<f64>> = pairs[..k].iter().map(|(_, y)| y.view()).collect();
            let x = concatenate(Axis(1), &zs)?;
            let y = concatenate(Axis(1), &ys)?;
            let (u, sv, vt) = x
                .svddc(JobSvd::Some)
                .context("SVD of the stacked broadcasts")?;
            let (u, vt) = (u.expect("requested"), vt.expect("requested"));
            // Numerical rank with LAPACK's threshold ε·max(n, kp)·s_max. Measured: any larger
            // cut-off only loses directions that carry mass of A_1A_1ᵀ (n = 200, p = 20: error
            // 8.9e-7 at ε-rank, 3.0e-2 at 1e-10, 9.5e-2 at 1e-8). What remains is the limit of
            // double precision: SSI's iterates form a block-Krylov basis whose weak directions
            // fall below ε.
            let tol = sv[0] * f64::EPSILON * x.nrows().max(x.ncols()) as f64;
            let r = sv.iter().take_while(|&&v| v > tol).count();
            let u = u.slice(s![.., ..r]);
            let b = y.dot(&vt.slice(s![..r, ..]).t()) / sv.slice(s![..r]).insert_axis(Axis(0));
            let mu = a1.dot(&a1.t().dot(&u));
            let inside = fro2((&b - &mu).view());
            let outside = if r == n {
                0.0
            } else {
                (m_fro2 - fro2(mu.view())).max(0.0)
            };
            let mut err2 = inside + outside;
            if up_to_shift {
                // ‖B − MU − αU‖² + ‖(M + αI)(I − UUᵀ)‖² = err2 − 2αc + α²n, minimal at α = c/n.
                let utmu = fro2(a1.t().dot(&u).view());
                let c = (&u * &(&b - &mu)).sum() - (trace - utmu);
                err2 = (err2 - c * c / n as f64).max(0.0);
            }
            Ok(LeakNorm {
                relative: (err2 / denominator).sqrt(),
                absolute: err2.sqrt(),
            })
        })
        .collect()
}
