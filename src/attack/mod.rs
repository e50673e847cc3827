//! Attacks on what the server saw (transcripts).
//!
//! Data leakage (FAPS §3.5, Proposition 2, fig. 1): from the pairs (Z⁽ʲ⁾, Y_1⁽ʲ⁾) the server
//! received from client 1, take the minimum-Frobenius-norm Φ⁽ᵏ⁾ with
//! Φ⁽ᵏ⁾[Z⁽¹⁾ … Z⁽ᵏ⁾] = [Y_1⁽¹⁾ … Y_1⁽ᵏ⁾] and measure ‖Φ⁽ᵏ⁾ − A_1A_1ᵀ‖_F / ‖A_1A_1ᵀ‖_F. For SSI,
//! Y_1 = A_1A_1ᵀZ, so Φ⁽ᵏ⁾ = A_1A_1ᵀ as soon as the Z's span ℝⁿ (kp ≥ n); FAPS's Y_i = Q_iZ with a
//! mask Q_i that changes every round, so no such Φ exists.
//!
//! Parts read by name: a reply's `y` answers the broadcast `z`, or, when the reply also carries
//! its own basis `z` (LocalPower's aligned rounds), that basis.

use crate::fed::Transcript;
use crate::linalg::fro2;
use anyhow::{Context, Result};
use ndarray::{concatenate, s, Array2, ArrayView2, Axis};
use ndarray_linalg::JobSvd;
use ndarray_linalg::SVDDC;

/// The (input, output) pairs the server saw from `client`, in round order.
pub fn pairs(t: &Transcript, client: usize) -> Result<Vec<(Array2<f64>, Array2<f64>)>> {
    t.pairs(client)
        .map(|(msg, reply)| {
            let input = if reply.has("z") { reply } else { msg };
            Ok((input.get("z")?.clone(), reply.get("y")?.clone()))
        })
        .collect()
}

/// Relative reconstruction error of A_1A_1ᵀ after each of the first `max_rounds` pairs.
///
/// Never forms anything larger than n×kp: with the thin SVD X = [Z⁽¹⁾…Z⁽ᵏ⁾] = USVᵀ (rank r),
/// Φ = BUᵀ with B = [Y…]VS⁻¹, and, M = A_1A_1ᵀ,
/// ‖Φ − M‖²_F = ‖B − MU‖²_F + ‖M(I − UUᵀ)‖²_F, the second term exactly 0 once r = n.
pub fn leakage_errors(
    a1: ArrayView2<f64>,
    pairs: &[(Array2<f64>, Array2<f64>)],
    max_rounds: usize,
) -> Result<Vec<f64>> {
    let n = a1.nrows();
    // ‖M‖²_F = ‖A_1ᵀA_1‖²_F, the smaller Gram of the two.
    let m_fro2 = if a1.ncols() <= n {
        fro2(a1.t().dot(&a1).view())
    } else {
        fro2(a1.dot(&a1.t()).view())
    };
    let mut out = Vec::new();
    for k in 1..=pairs.len().min(max_rounds) {
        let zs: Vec<ArrayView2<f64>> = pairs[..k].iter().map(|(z, _)| z.view()).collect();
        let ys: Vec<ArrayView2<f64>> = pairs[..k].iter().map(|(_, y)| y.view()).collect();
        let x = concatenate(Axis(1), &zs)?;
        let y = concatenate(Axis(1), &ys)?;
        let (u, sv, vt) = x
            .svddc(JobSvd::Some)
            .context("SVD of the stacked broadcasts")?;
        let (u, vt) = (u.expect("requested"), vt.expect("requested"));
        // Numerical rank with LAPACK's threshold ε·max(n, kp)·s_max. Measured: any larger cut-off
        // only loses directions that carry mass of A_1A_1ᵀ (n = 200, p = 20: error 8.9e-7 at
        // ε-rank, 3.0e-2 at 1e-10, 9.5e-2 at 1e-8). What remains is the limit of double
        // precision: SSI's iterates form a block-Krylov basis whose weak directions fall below ε.
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
        out.push(((inside + outside) / m_fro2).sqrt());
    }
    Ok(out)
}
