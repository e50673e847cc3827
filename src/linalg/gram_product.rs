//! A(AᵀX) for a dense column-major block A (n × samples), fused over cache-sized chunks of
//! samples.
//!
//! Two BLAS calls, T = AᵀX then A·T, stream A from memory twice. Here each chunk A_c of
//! consecutive samples is read from memory once: T_c = A_cᵀX, then Y += A_c T_c while A_c is
//! still in the core's L2 cache. Where memory traffic binds the two calls this saves up to half
//! the time; on the AMD EPYC (Zen 5, 1 MiB L2) this project is measured on it ran at 0.98–1.07×
//! the two calls at FAPS table1's client blocks (benches/rounds.rs, "product" rows), so
//! [`Block::gram_times`](crate::data::matrix::Block::gram_times) keeps the two calls; the
//! bench tells where switching pays.
//!
//! The chunk length depends on n alone (never on threads), and chunks are added to Y in sample
//! order, so the bits of the result are fixed by the data and the BLAS kernels. (CSR blocks are
//! fused sample by sample in [`CsrView::a_at_z`](crate::data::loaders::CsrView::a_at_z).)

use ndarray::{linalg::general_mat_mul, s, Array2, ArrayView2, ShapeBuilder};

/// Bytes of A per chunk: half of a 1 MiB L2, leaving room for X, T_c and Y.
const CHUNK_BYTES: usize = 512 * 1024;
/// Bounds on samples per chunk: below MIN the BLAS calls are too thin to run at speed; above MAX
/// (small n) the chunk is L2-resident anyway.
const MIN_CHUNK: usize = 16;
const MAX_CHUNK: usize = 1024;

/// Samples per chunk for n features: a multiple of 8 (whole AVX-512 vectors of T_c's columns).
pub fn chunk_len(n: usize) -> usize {
    let fit = CHUNK_BYTES / (8 * n.max(1));
    (fit / 8 * 8).clamp(MIN_CHUNK, MAX_CHUNK)
}

/// A(AᵀX) (n × p) for A n × samples and X n × p, in chunks of [`chunk_len`] samples.
/// Panics unless X has n rows (an invariant of every caller, like ndarray's `dot`).
pub fn gram_times_dense(a: ArrayView2<f64>, x: ArrayView2<f64>) -> Array2<f64> {
    gram_times_chunked(a, x, chunk_len(a.nrows()))
}

/// [`gram_times_dense`] with an explicit chunk length (tests use short ones to get tails).
pub fn gram_times_chunked(a: ArrayView2<f64>, x: ArrayView2<f64>, chunk: usize) -> Array2<f64> {
    let (n, m) = a.dim();
    assert_eq!(x.nrows(), n, "A(AᵀX): X needs one row per row of A");
    let p = x.ncols();
    let chunk = chunk.max(1);
    let mut y = Array2::<f64>::zeros((n, p).f());
    let mut t = Array2::<f64>::zeros((chunk.min(m), p).f());
    for start in (0..m).step_by(chunk) {
        let end = (start + chunk).min(m);
        let ac = a.slice(s![.., start..end]);
        let mut tc = t.slice_mut(s![..end - start, ..]);
        general_mat_mul(1.0, &ac.t(), &x, 0.0, &mut tc);
        general_mat_mul(1.0, &ac, &tc, 1.0, &mut y);
    }
    y
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::uniform_matrix;
    use crate::linalg::max_rel_diff as rel;
    use crate::seed;

    #[test]
    fn chunk_len_is_a_bounded_multiple_of_eight() {
        assert_eq!(chunk_len(2000), 32);
        assert_eq!(chunk_len(1), MAX_CHUNK);
        assert_eq!(chunk_len(1_000_000), MIN_CHUNK);
        for n in [1, 7, 100, 784, 2000, 3072, 5000, 100_000] {
            assert_eq!(chunk_len(n) % 8, 0);
        }
    }

    /// Equal to the two-call product A·(AᵀX) to 1e-13 relative, for shapes with and without a
    /// tail chunk, a single short chunk, an empty block, and X in either memory order.
    #[test]
    fn fused_equals_two_calls() {
        let mut rng = seed::rng(7, &["gram_product"]);
        for &(n, m, p, chunk) in &[
            (50, 1000, 5, 64),   // 15 full chunks + a tail of 40
            (50, 1024, 5, 64),   // no tail
            (200, 37, 20, 64),   // one chunk shorter than the chunk length
            (2000, 300, 20, 32), // FAPS's n, tail of 12
            (13, 1, 3, 16),      // a single sample
            (30, 0, 4, 16),      // no samples: zero
        ] {
            let a = uniform_matrix(n, m, &mut rng);
            let x = uniform_matrix(n, p, &mut rng);
            let want = a.dot(&a.t().dot(&x));
            let got = gram_times_chunked(a.view(), x.view(), chunk);
            assert_eq!(got.dim(), (n, p));
            if m == 0 {
                assert!(got.iter().all(|&v| v == 0.0));
                continue;
            }
            let e = rel(&got, &want);
            assert!(e < 1e-13, "n={n} m={m} p={p} chunk={chunk}: {e:e}");
            let xc = x.as_standard_layout().to_owned();
            assert!(rel(&gram_times_chunked(a.view(), xc.view(), chunk), &want) < 1e-13);
            assert!(rel(&gram_times_dense(a.view(), x.view()), &want) < 1e-13);
        }
    }

    /// The CSR block's fused product (one sample at a time) equals its two-call product AᵀX
    /// then A·T to 1e-13 relative, for several shapes and densities, on whole matrices and on
    /// blocks of consecutive samples.
    #[test]
    fn csr_fused_equals_two_calls() {
        use crate::data::loaders::Csr;
        use rand::Rng;
        let mut rng = seed::rng(9, &["gram_product-csr"]);
        for &(n, m, p, density) in &[(40, 300, 5, 0.1), (500, 64, 20, 0.02), (7, 1000, 3, 0.6)] {
            let (mut indptr, mut indices, mut values) = (vec![0], Vec::new(), Vec::new());
            for _ in 0..m {
                for i in 0..n {
                    if rng.random::<f64>() < density {
                        indices.push(i as u32);
                        values.push(rng.random_range(-1.0..=1.0));
                    }
                }
                indptr.push(indices.len());
            }
            let csr = Csr::new(n, indptr, indices, values).unwrap();
            let x = uniform_matrix(n, p, &mut rng);
            for block in [csr.view(), csr.samples(m / 3..m - m / 5)] {
                let two = block.a_y(block.at_z(x.view()).unwrap().view()).unwrap();
                let fused = block.a_at_z(x.view()).unwrap();
                let e = rel(&fused, &two);
                assert!(e < 1e-13, "n={n} m={m} p={p}: {e:e}");
            }
        }
    }

    /// A block that is a column range of a larger matrix (a client's view) gives the same bits
    /// as its own copy: the kernel reads through the view's strides.
    #[test]
    fn views_and_copies_agree_bitwise() {
        let mut rng = seed::rng(8, &["gram_product"]);
        let a = uniform_matrix(40, 500, &mut rng);
        let x = uniform_matrix(40, 6, &mut rng);
        let view = a.slice(s![.., 100..333]);
        let copy = crate::linalg::to_f_order(view);
        assert_eq!(
            gram_times_chunked(view, x.view(), 16),
            gram_times_chunked(copy.view(), x.view(), 16)
        );
    }
}
