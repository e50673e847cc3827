//! The CEDRE paper's synthetic data (§6.3): samples x ~ N(0, UΣUᵀ) with U a random d×d
//! orthogonal matrix and Σ = diag(σ), σ_1 = 1, σ_2 = 1 − δ, σ_j = decay·σ_(j−1) for j ≥ 3
//! (decay = 0.9 in the paper). Samples are columns: X = U Σ^{1/2} G with G i.i.d. N(0, 1).

use crate::linalg::orth;
use crate::seed;
use anyhow::{bail, Result};
use ndarray::{Array1, Array2, Axis, ShapeBuilder};
use rand::Rng;
use rand_distr::StandardNormal;

/// Generated samples and their population covariance UΣUᵀ.
pub struct Eigengap {
    /// d×m, column-major.
    pub x: Array2<f64>,
    /// d×d orthogonal: the population eigenvectors, in the order of `sigma`.
    pub u: Array2<f64>,
    /// The population eigenvalues, descending.
    pub sigma: Array1<f64>,
}

/// σ_1 = 1, σ_2 = 1 − δ, σ_j = decay·σ_(j−1).
pub fn spectrum(d: usize, delta: f64, decay: f64) -> Array1<f64> {
    let mut s = Array1::zeros(d);
    for j in 0..d {
        s[j] = match j {
            0 => 1.0,
            1 => 1.0 - delta,
            _ => decay * s[j - 1],
        };
    }
    s
}

/// `m` samples in dimension `d` from `seed`.
pub fn eigengap(d: usize, m: usize, delta: f64, decay: f64, seed: u64) -> Result<Eigengap> {
    if d < 2 || m == 0 || !(delta > 0.0 && delta < 1.0) || !(decay > 0.0 && decay < 1.0) {
        bail!("eigengap data needs d >= 2, m >= 1, 0 < delta < 1, 0 < decay < 1");
    }
    let sigma = spectrum(d, delta, decay);
    let mut rng = seed::rng(seed, &["U"]);
    let g = Array2::from_shape_simple_fn((d, d).f(), || rng.sample::<f64, _>(StandardNormal));
    let u = orth(g.view());
    // U Σ^{1/2}, then times G: one dgemm.
    let scaled = &u * &sigma.mapv(f64::sqrt).insert_axis(Axis(0));
    let mut rng = seed::rng(seed, &["G"]);
    let g = Array2::from_shape_simple_fn((d, m).f(), || rng.sample::<f64, _>(StandardNormal));
    let mut x = Array2::zeros((d, m).f());
    ndarray::linalg::general_mat_mul(1.0, &scaled, &g, 0.0, &mut x);
    Ok(Eigengap { x, u, sigma })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::sym_eig_desc;

    #[test]
    fn spectrum_is_the_papers() {
        let s = spectrum(5, 0.2, 0.9);
        let want = [1.0, 0.8, 0.72, 0.648, 0.5832];
        for (a, b) in s.iter().zip(want) {
            assert!((a - b).abs() < 1e-15);
        }
    }

    /// The sample covariance converges to UΣUᵀ: its top eigenvector is U's first column and
    /// its eigenvalues are σ, to sampling error O(1/√m).
    #[test]
    fn sample_covariance_estimates_the_population() {
        let (d, m) = (20, 40_000);
        let e = eigengap(d, m, 0.5, 0.5, 7).unwrap();
        let utu = e.u.t().dot(&e.u) - Array2::<f64>::eye(d);
        assert!(utu.iter().all(|v| v.abs() < 1e-12), "U orthogonal");
        let cov = e.x.dot(&e.x.t()) / m as f64;
        let eig = sym_eig_desc(cov.view()).unwrap();
        for j in 0..3 {
            assert!(
                (eig.values[j] - e.sigma[j]).abs() < 0.05,
                "λ_{j} = {} vs σ = {}",
                eig.values[j],
                e.sigma[j]
            );
        }
        let cos = eig.vectors.column(0).dot(&e.u.column(0)).abs();
        assert!(cos > 0.99, "|cos| = {cos}");
    }
}
