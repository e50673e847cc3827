//! U Vᵀ for thin factors, entry by entry in a fixed order: the planted low-rank matrices of
//! the robust PCA generator, whose column ranges (what a client or an MPI rank draws alone)
//! must equal the whole matrix's columns bit for bit on every CPU. A BLAS GEMM does not promise
//! that: its kernels (chosen by the CPU) and its blocking (chosen by the shape) decide the
//! order of the r-term sums — measured: OpenBLAS's SkylakeX kernels gave a column range other
//! bits than the whole matrix, its Haswell kernels did not.
//!
//! Each entry is Σ_k U[i, k]·V[j, k], added for k = 0, 1, …, r−1 to +0.0, one rounding per
//! multiply and per add (no FMA): IEEE arithmetic gives the same bits on every CPU. The
//! compiler may vectorise across rows i (independent sums), never within a sum.

use ndarray::{Array2, ArrayView2, Axis, ShapeBuilder};
use rayon::prelude::*;

/// Columns of L = U Vᵀ for U n × r and V (its rows the columns of L) c × r: n × c,
/// column-major. Any column's bits depend only on U and its row of V.
pub fn low_rank_product(u: ArrayView2<f64>, v: ArrayView2<f64>) -> Array2<f64> {
    let (n, r) = u.dim();
    assert_eq!(v.ncols(), r, "U Vᵀ: U is {:?}, V {:?}", u.dim(), v.dim());
    // U's columns contiguous, so each step below streams one.
    let u = crate::linalg::to_f_order(u);
    let u = u.as_slice_memory_order().expect("column-major copy");
    let mut l = Array2::<f64>::zeros((n, v.nrows()).f());
    l.axis_iter_mut(Axis(1))
        .into_par_iter()
        .zip(v.axis_iter(Axis(0)))
        .for_each(|(mut col, vj)| {
            let col = col.as_slice_mut().expect("column of a column-major array");
            let vj: Vec<f64> = vj.to_vec();
            column(col, u, &vj);
        });
    l
}

/// col = Σ_k u[:, k]·vj[k] in k order (col starts at zeros).
fn column(col: &mut [f64], u: &[f64], vj: &[f64]) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked); the body is the same safe code.
        return unsafe { column_avx2(col, u, vj) };
    }
    column_body(col, u, vj)
}

/// Wider vectors for the same operations (no FMA is enabled: the bits are the portable ones).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn column_avx2(col: &mut [f64], u: &[f64], vj: &[f64]) {
    column_body(col, u, vj)
}

#[inline(always)]
fn column_body(col: &mut [f64], u: &[f64], vj: &[f64]) {
    let n = col.len();
    for (k, &b) in vj.iter().enumerate() {
        let uk = &u[k * n..(k + 1) * n];
        for (c, &a) in col.iter_mut().zip(uk) {
            *c += a * b;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed::uniform_matrix;
    use ndarray::s;

    /// Equals BLAS's U Vᵀ to 1e-14 relative; every entry equals the plain loop's sum in k order
    /// bit for bit (so the AVX2 path, which this CPU may take, is the portable one); any range
    /// of V's rows gives those columns' bits; threads do not change them.
    #[test]
    fn low_rank_product_sums_in_k_order() {
        let mut rng = crate::seed::rng(3, &["low_rank"]);
        let (n, m, r) = (203, 150, 9);
        let u = uniform_matrix(n, r, &mut rng);
        let v = uniform_matrix(m, r, &mut rng);
        let l = low_rank_product(u.view(), v.view());
        assert_eq!(l.dim(), (n, m));
        let blas = u.dot(&v.t());
        assert!(crate::linalg::max_rel_diff(&l, &blas) < 1e-14);
        for i in 0..n {
            for j in 0..m {
                let sum = (0..r).fold(0.0f64, |s, k| s + u[[i, k]] * v[[j, k]]);
                assert_eq!(l[[i, j]].to_bits(), sum.to_bits(), "entry {i},{j}");
            }
        }
        for cols in [0..1, 17..18, 5..77, 149..150, 0..150] {
            let part = low_rank_product(u.view(), v.slice(s![cols.clone(), ..]));
            assert_eq!(part, l.slice(s![.., cols.clone()]), "columns {cols:?}");
        }
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(|| low_rank_product(u.view(), v.view()));
        assert_eq!(one, l);
        let empty = low_rank_product(u.view(), v.slice(s![0..0, ..]));
        assert_eq!(empty.dim(), (n, 0));
    }
}
