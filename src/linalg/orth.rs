//! Orthonormalisation: thin QR, sign-normalised so that diag(R) ≥ 0 (deterministic Q).

use anyhow::{Context, Result};
use ndarray::{Array2, ArrayView2, Axis};
use ndarray_linalg::{Cholesky, QRInto, UPLO};

/// Q factor of the thin QR of `y` (n×p, n ≥ p) with diag(R) ≥ 0.
pub fn orth(y: ArrayView2<f64>) -> Array2<f64> {
    orth_with_r(y).0
}

/// Thin QR `y = Q R` with diag(R) ≥ 0. A rank-deficient `y` still yields an orthonormal Q
/// (LAPACK's Householder QR never fails), so this never errors on finite input.
pub fn orth_with_r(y: ArrayView2<f64>) -> (Array2<f64>, Array2<f64>) {
    let (mut q, mut r) = super::to_f_order(y)
        .qr_into()
        .expect("Householder QR of a finite matrix cannot fail");
    for (j, mut col) in q.axis_iter_mut(Axis(1)).enumerate() {
        if r[[j, j]] < 0.0 {
            col.mapv_inplace(|v| -v);
            r.row_mut(j).mapv_inplace(|v| -v);
        }
    }
    (q, r)
}

/// Upper Cholesky factor R of a symmetric positive definite `c` (c = RᵀR).
pub fn cholesky_upper(c: ArrayView2<f64>) -> Result<Array2<f64>> {
    super::to_f_order(c)
        .cholesky(UPLO::Upper)
        .context("Cholesky factorisation failed: matrix not positive definite")
}
