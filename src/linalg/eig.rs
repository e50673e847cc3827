//! Symmetric eigendecomposition through LAPACK's divide-and-conquer `dsyevd`.
//!
//! ndarray-linalg's `eigh` calls `dsyev`, measured 7–12× slower here (9.7 s vs 0.8 s at
//! 2000×2000), so we call `dsyevd` directly.

use anyhow::{bail, Result};
use ndarray::{s, Array1, Array2, ArrayView2};
use std::os::raw::{c_char, c_int};

/// Eigenvalues in descending order and the matching eigenvectors as columns.
pub struct SymEig {
    pub values: Array1<f64>,
    pub vectors: Array2<f64>,
}

/// All eigenpairs of the symmetric matrix `a` (only its lower triangle is read), descending.
pub fn sym_eig_desc(a: ArrayView2<f64>) -> Result<SymEig> {
    let n = a.nrows();
    if n != a.ncols() {
        bail!(
            "eigendecomposition needs a square matrix, got {}×{}",
            n,
            a.ncols()
        );
    }
    if n == 0 {
        return Ok(SymEig {
            values: Array1::zeros(0),
            vectors: Array2::zeros((0, 0)),
        });
    }
    let mut m = super::to_f_order(a); // column-major, overwritten by eigenvectors
    let mut w = vec![0.0f64; n];
    let (jobz, uplo) = (b'V' as c_char, b'L' as c_char);
    let nn = n as c_int;
    let mut info: c_int = 0;
    // Workspace query first, then the real call.
    let mut work_q = 0.0f64;
    let mut iwork_q: c_int = 0;
    let minus1: c_int = -1;
    let data = m
        .as_slice_memory_order_mut()
        .expect("freshly allocated, contiguous");
    // SAFETY: buffers sized as LAPACK documents; the query writes only work_q / iwork_q.
    unsafe {
        lapack_sys::dsyevd_(
            &jobz,
            &uplo,
            &nn,
            data.as_mut_ptr(),
            &nn,
            w.as_mut_ptr(),
            &mut work_q,
            &minus1,
            &mut iwork_q,
            &minus1,
            &mut info,
        );
    }
    if info != 0 {
        bail!("dsyevd workspace query failed (info = {info})");
    }
    let lwork = work_q as c_int;
    let liwork = iwork_q;
    let mut work = vec![0.0f64; lwork.max(1) as usize];
    let mut iwork = vec![0 as c_int; liwork.max(1) as usize];
    unsafe {
        lapack_sys::dsyevd_(
            &jobz,
            &uplo,
            &nn,
            data.as_mut_ptr(),
            &nn,
            w.as_mut_ptr(),
            work.as_mut_ptr(),
            &lwork,
            iwork.as_mut_ptr(),
            &liwork,
            &mut info,
        );
    }
    if info != 0 {
        bail!("dsyevd did not converge (info = {info})");
    }
    // LAPACK returns ascending order; flip to descending.
    let values = Array1::from_iter(w.iter().rev().copied());
    let vectors = m.slice(s![.., ..;-1]).to_owned();
    Ok(SymEig { values, vectors })
}
