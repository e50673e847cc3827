//! The sparse PCA paper's synthetic data (§IV.A, after Journée et al. and Tan et al.): samples
//! x ~ N(0, Σ), Σ = V D Vᵀ, whose leading eigenvectors are sparse and known.
//!
//! V's first k columns are the planted loadings: column j is 1/√s on features j·s .. (j+1)·s
//! (s = support) and 0 elsewhere. The other columns are random — U[0, 1) for IID data, N(0, σ_i²)
//! per client with σ_i² ~ U[0, 1) for non-IID data (§IV.C) — orthonormalised against the
//! planted ones (the paper leaves this step implicit; without it Σ would not have the stated
//! eigenpairs). D = diag(spikes, 1, …, 1). Note that orthonormalising removes σ_i's scale: what
//! differs between non-IID clients is the random directions of their trailing eigenvectors.
//!
//! Orientation: samples are columns (n features × m samples), as everywhere in the harness; the
//! paper's A ∈ R^{N×D} is the transpose.

use crate::linalg::orth;
use crate::seed;
use anyhow::{bail, Result};
use ndarray::{s, Array1, Array2, ShapeBuilder};
use rand::Rng;
use rand_distr::StandardNormal;

/// Generated data and its planted truth.
pub struct Spiked {
    /// n×m, column-major; client c's samples are its contiguous block of `sizes[c]` columns.
    pub x: Array2<f64>,
    /// n×k: the planted loadings (the top-k eigenvectors of every client's Σ).
    pub loadings: Array2<f64>,
}

/// The planted loadings: column j is 1/√support on features j·support .. (j+1)·support.
pub fn planted_loadings(n: usize, k: usize, support: usize) -> Result<Array2<f64>> {
    if support == 0 || k * support > n {
        bail!(
            "{k} planted loadings of support {support} need n >= {}, got {n}",
            k * support
        );
    }
    let mut v = Array2::zeros((n, k).f());
    let w = 1.0 / (support as f64).sqrt();
    for j in 0..k {
        v.slice_mut(s![j * support..(j + 1) * support, j]).fill(w);
    }
    Ok(v)
}

/// V = [planted | orth. complement of random columns], n×n orthogonal.
fn eigenvectors(planted: &Array2<f64>, random: Array2<f64>) -> Array2<f64> {
    let k = planted.ncols();
    let mut full = Array2::zeros((planted.nrows(), planted.nrows()).f());
    full.slice_mut(s![.., ..k]).assign(planted);
    full.slice_mut(s![.., k..]).assign(&random);
    let mut v = orth(full.view());
    // QR reproduces orthonormal leading columns up to rounding: keep them exact.
    v.slice_mut(s![.., ..k]).assign(planted);
    v
}

/// Samples for clients of `sizes`, from `seed`.
pub fn spiked(
    n: usize,
    sizes: &[usize],
    spikes: &[f64],
    support: usize,
    heterogeneous: bool,
    seed: u64,
) -> Result<Spiked> {
    let x = samples(
        n,
        sizes,
        spikes,
        support,
        heterogeneous,
        seed,
        0..sizes.len(),
    )?;
    Ok(Spiked {
        x,
        loadings: planted_loadings(n, spikes.len(), support)?,
    })
}

/// The samples of clients `clients` only (of all clients' `sizes`), side by side: the same
/// numbers as their columns of [`spiked`]'s `x`, since each client's samples (and, for
/// heterogeneous data, its eigenvectors) come from its own stream.
pub fn samples(
    n: usize,
    sizes: &[usize],
    spikes: &[f64],
    support: usize,
    heterogeneous: bool,
    seed: u64,
    clients: std::ops::Range<usize>,
) -> Result<Array2<f64>> {
    let k = spikes.len();
    let loadings = planted_loadings(n, k, support)?;
    let mut d = Array1::<f64>::ones(n);
    d.slice_mut(s![..k]).assign(&Array1::from(spikes.to_vec()));
    let sqrt_d = d.mapv(f64::sqrt);
    let rest = n - k;
    let shared = (!heterogeneous).then(|| {
        let mut rng = seed::rng(seed, &["V"]);
        let r = Array2::from_shape_fn((n, rest).f(), |_| rng.random::<f64>());
        eigenvectors(&loadings, r)
    });
    let m: usize = sizes[clients.clone()].iter().sum();
    let mut x = Array2::zeros((n, m).f());
    let mut at = 0;
    for c in clients {
        let mc = sizes[c];
        let own;
        let v = match &shared {
            Some(v) => v,
            None => {
                let mut rng = seed::rng(seed, &["V", &c.to_string()]);
                let sd = rng.random::<f64>().sqrt();
                let r = Array2::from_shape_fn((n, rest).f(), |_| {
                    sd * rng.sample::<f64, _>(StandardNormal)
                });
                own = eigenvectors(&loadings, r);
                &own
            }
        };
        let mut rng = seed::rng(seed, &["samples", &c.to_string()]);
        let mut g = Array2::from_shape_fn((n, mc).f(), |_| rng.sample::<f64, _>(StandardNormal));
        g *= &sqrt_d.view().insert_axis(ndarray::Axis(1));
        x.slice_mut(s![.., at..at + mc]).assign(&v.dot(&g));
        at += mc;
    }
    Ok(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::{fro2, sym_eig_desc};

    #[test]
    fn planted_loadings_are_the_leading_eigenvectors_of_the_sample_covariance() {
        // With many samples the sample covariance's top-2 eigenvectors approach the planted ones.
        let (n, m) = (40, 20_000);
        for het in [false, true] {
            let d = spiked(n, &[m / 2, m / 2], &[40.0, 30.0], 5, het, 7).unwrap();
            let c = d.x.dot(&d.x.t()) / m as f64;
            let top = sym_eig_desc(c.view()).unwrap();
            let u = top.vectors.slice(s![.., ..2]);
            let p = u.dot(&u.t()) - d.loadings.dot(&d.loadings.t());
            assert!(fro2(p.view()) < 0.01, "het {het}: {}", fro2(p.view()));
            assert!((top.values[0] - 40.0).abs() < 2.0, "{}", top.values[0]);
            assert!((top.values[2] - 1.0).abs() < 0.2, "{}", top.values[2]);
        }
    }

    #[test]
    fn planted_loadings_are_sparse_orthonormal_and_checked() {
        let v = planted_loadings(25, 2, 10).unwrap();
        assert!((fro2((v.t().dot(&v) - Array2::<f64>::eye(2)).view())) < 1e-28);
        assert_eq!(v.iter().filter(|x| **x != 0.0).count(), 20);
        assert_eq!(v[[10, 1]], 1.0 / 10f64.sqrt());
        assert!(planted_loadings(15, 2, 10).is_err());
    }
}
