//! Aligning one orthonormal basis to another (LocalPower's eqs. (4) and (5)).
//!
//! Both functions repeat, call for call, what `methods::subspace::localpower::alignment` computed, so that
//! runs stay bit-identical when it switches to them.

use anyhow::{bail, Context, Result};
use ndarray::{Array2, ArrayView2};
use ndarray_linalg::SVD;

/// The orthogonal O minimising ‖Z_i O − Z_b‖_F: O = W₁W₂ᵀ from W₁ΣW₂ᵀ = svd(Z_iᵀZ_b).
pub fn procrustes(zi: ArrayView2<f64>, zb: ArrayView2<f64>) -> Result<Array2<f64>> {
    same_shape(zi, zb)?;
    let c = zi.t().dot(&zb);
    let (u, _, vt) = c
        .svd(true, true)
        .context("SVD for the Procrustes rotation")?;
    Ok(u.expect("requested").dot(&vt.expect("requested")))
}

/// The ±1 diagonal O minimising ‖Z_i O − Z_b‖_F: column j flipped when z_iⱼᵀz_bⱼ < 0.
pub fn sign_align(zi: ArrayView2<f64>, zb: ArrayView2<f64>) -> Result<Array2<f64>> {
    same_shape(zi, zb)?;
    let c = zi.t().dot(&zb);
    Ok(Array2::from_diag(&c.diag().mapv(|v| {
        if v < 0.0 {
            -1.0
        } else {
            1.0
        }
    })))
}

/// Both bases must be d×p: otherwise O is not square and W₁W₂ᵀ is undefined.
fn same_shape(zi: ArrayView2<f64>, zb: ArrayView2<f64>) -> Result<()> {
    if zi.dim() != zb.dim() {
        bail!(
            "alignment needs bases of one shape, got {:?} and {:?}",
            zi.dim(),
            zb.dim()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::orth;
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn uniform(rng: &mut ChaCha8Rng, m: usize, n: usize) -> Array2<f64> {
        Array2::from_shape_simple_fn((m, n), || rng.random_range(-1.0..1.0))
    }

    fn max_abs(a: &Array2<f64>) -> f64 {
        a.iter().fold(0.0, |m, v| m.max(v.abs()))
    }

    /// The body of `localpower::alignment` before this module existed, for the bit-identity test.
    fn old_alignment(procrustes: bool, zi: ArrayView2<f64>, zb: ArrayView2<f64>) -> Array2<f64> {
        let c = zi.t().dot(&zb);
        if procrustes {
            let (u, _, vt) = c.svd(true, true).unwrap();
            u.unwrap().dot(&vt.unwrap())
        } else {
            Array2::from_diag(&c.diag().mapv(|v| if v < 0.0 { -1.0 } else { 1.0 }))
        }
    }

    #[test]
    fn orthogonal_and_recovers_a_rotation() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for (d, p) in [(50, 5), (300, 20), (40, 40)] {
            let zi = orth(uniform(&mut rng, d, p).view());
            let q = orth(uniform(&mut rng, p, p).view());
            let zb = zi.dot(&q);
            let o = procrustes(zi.view(), zb.view()).unwrap();
            assert!(max_abs(&(o.t().dot(&o) - Array2::<f64>::eye(p))) <= 1e-12);
            assert!(max_abs(&(&o - &q)) <= 1e-10, "d = {d}, p = {p}");
        }
    }

    #[test]
    fn minimises_the_distance() {
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let (d, p) = (60, 6);
        let zi = orth(uniform(&mut rng, d, p).view());
        let zb = orth(uniform(&mut rng, d, p).view());
        let o = procrustes(zi.view(), zb.view()).unwrap();
        assert!(max_abs(&(o.t().dot(&o) - Array2::<f64>::eye(p))) <= 1e-12);
        let dist = |o: &Array2<f64>| (zi.dot(o) - &zb).mapv(|v| v * v).sum();
        let best = dist(&o);
        for _ in 0..200 {
            let q = orth(uniform(&mut rng, p, p).view());
            assert!(best <= dist(&q) + 1e-12);
        }
        // and the sign alignment, over all 2^p sign patterns
        let s = sign_align(zi.view(), zb.view()).unwrap();
        let best = dist(&s);
        for mask in 0..1u32 << p {
            let diag =
                ndarray::Array1::from_shape_fn(p, |j| if mask >> j & 1 == 1 { -1.0 } else { 1.0 });
            assert!(best <= dist(&Array2::from_diag(&diag)) + 1e-12);
        }
    }

    #[test]
    fn sign_recovers_flips() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let zi = orth(uniform(&mut rng, 30, 4).view());
        let flips = Array2::from_diag(&ndarray::arr1(&[1.0, -1.0, -1.0, 1.0]));
        let zb = zi.dot(&flips);
        assert_eq!(sign_align(zi.view(), zb.view()).unwrap(), flips);
    }

    #[test]
    fn bit_identical_to_localpower() {
        let mut rng = ChaCha8Rng::seed_from_u64(10);
        let zi = orth(uniform(&mut rng, 500, 12).view());
        let zb = orth(uniform(&mut rng, 500, 12).view());
        let (zi, zb) = (zi.view(), zb.view());
        let o = procrustes(zi, zb).unwrap();
        let old = old_alignment(true, zi, zb);
        assert!(o
            .iter()
            .zip(old.iter())
            .all(|(a, b)| a.to_bits() == b.to_bits()));
        assert_eq!(sign_align(zi, zb).unwrap(), old_alignment(false, zi, zb));
    }

    #[test]
    fn rejects_mismatched_shapes() {
        let a = Array2::<f64>::zeros((5, 2));
        let b = Array2::<f64>::zeros((5, 3));
        assert!(procrustes(a.view(), b.view()).is_err());
        assert!(sign_align(a.view(), b.view()).is_err());
    }
}
