//! The few dense kernels every method and metric uses.
//!
//! All heavy lifting goes to BLAS/LAPACK through ndarray / ndarray-linalg. Matrices that
//! LAPACK factorises are kept column-major (`.f()`): ndarray-linalg's QR is 2× slower on
//! row-major input.

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
pub mod blas_pin;
mod eig;
pub mod gram_product;
pub mod krylov;
pub mod low_rank;
pub mod manifold;
mod orth;
pub mod procrustes;
mod product_ends;
pub mod prox;
pub mod sphere_step;
pub mod stiefel_prox;
pub mod svd;

pub use eig::{sym_eig_desc, SymEig};
pub use orth::{cholesky_upper, orth, orth_with_r};

use ndarray::{Array1, Array2, ArrayView2, ShapeBuilder};

/// An owned column-major copy of `a`.
pub fn to_f_order(a: ArrayView2<f64>) -> Array2<f64> {
    let mut out = Array2::zeros(a.raw_dim().f());
    out.assign(&a);
    out
}

/// Σ_g part(g) for g = 0..count, added to zeros in g order: the bits do not depend on the thread
/// count. Parts are computed in parallel a window of thread-count at a time, so at most that
/// many are held at once (8 n×n Gram partials at n = 5000 were 1.6 GB).
pub fn sum_in_order(
    count: usize,
    zeros: impl Fn() -> Array2<f64>,
    part: impl Fn(usize) -> Array2<f64> + Sync,
) -> Array2<f64> {
    use rayon::prelude::*;
    let mut total = zeros();
    let width = rayon::current_num_threads().max(1);
    for start in (0..count).step_by(width) {
        let parts: Vec<Array2<f64>> = (start..(start + width).min(count))
            .into_par_iter()
            .map(&part)
            .collect();
        for p in &parts {
            total += p;
        }
    }
    total
}

/// Squared Frobenius norm.
pub fn fro2(a: ArrayView2<f64>) -> f64 {
    a.iter().map(|v| v * v).sum()
}

/// Estimate the largest eigenvalue of the PSD operator `apply` (AAᵀ: ‖A‖₂²) by `iters` power
/// steps from `start`. Used for FAPS's β⁽⁰⁾ = 0.15‖A_i‖₂², where a few steps are accurate enough.
pub fn spectral_norm2(
    apply: impl Fn(&Array1<f64>) -> Array1<f64>,
    start: Array1<f64>,
    iters: usize,
) -> f64 {
    let mut v = start;
    let mut lambda = 0.0;
    for _ in 0..iters.max(1) {
        let w = apply(&v);
        let norm = w.dot(&w).sqrt();
        if norm == 0.0 {
            return 0.0;
        }
        lambda = v.dot(&w) / v.dot(&v);
        v = w / norm;
    }
    lambda
}

/// Whether the CPU has AVX2 and FMA: what OpenBLAS's pinned Haswell kernels and the avx2
/// product kernels need.
pub(crate) fn cpu_has_avx2_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Single-threaded BLAS: clients run in parallel under rayon, so BLAS must not spawn its own
/// threads inside client work (oversubscription, and results that depend on thread counts).
pub fn force_single_threaded_blas() {
    #[cfg(feature = "openblas")]
    {
        extern "C" {
            fn openblas_set_num_threads(n: std::os::raw::c_int);
        }
        // SAFETY: plain setter exported by libopenblas, callable at any time.
        unsafe { openblas_set_num_threads(1) };
    }
}

/// Largest entry of |a − b| over the largest |b|: how tests compare two computations of one matrix.
#[cfg(test)]
pub(crate) fn max_rel_diff(a: &ndarray::Array2<f64>, b: &ndarray::Array2<f64>) -> f64 {
    let scale = b.iter().fold(0.0f64, |s, v| s.max(v.abs()));
    (a - b).iter().fold(0.0f64, |s, v| s.max(v.abs())) / scale
}

#[cfg(test)]
mod sum_in_order_tests {
    use super::sum_in_order;
    use ndarray::Array2;

    /// The same bits as adding the parts one by one in order, on any thread count; every part
    /// is added once.
    #[test]
    fn sum_in_order_adds_every_part_in_order_on_any_thread_count() {
        // Parts of very different magnitudes, so that another order would change the bits.
        let part =
            |g: usize| Array2::from_elem((3, 2), (g as f64 + 0.1).powi(7) * 1e-3 + 1.0 / 3.0);
        let mut want = Array2::<f64>::zeros((3, 2));
        for g in 0..11 {
            want += &part(g);
        }
        for threads in [1, 2, 3, 8, 16] {
            let got = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| sum_in_order(11, || Array2::<f64>::zeros((3, 2)), part));
            assert_eq!(got, want, "{threads} threads");
        }
        assert_eq!(
            sum_in_order(0, || Array2::<f64>::zeros((1, 1)), part),
            Array2::<f64>::zeros((1, 1))
        );
    }
}
