//! AVX-512 kernels for the skinny products every subspace method is made of, AᵀX and A·T,
//! with A n × c column-major (a chunk of samples) and X, T, Y holding p ≪ n columns.
//!
//! Why not BLAS: with p ≈ 20 columns a BLAS dgemm spends a third of its time packing A into
//! its panel layout (perf: dgemm_oncopy/otcopy 34 %), and each sample is used for only 2p
//! flops after that copy. These kernels read A where it lies. Measured at FAPS Table 1's
//! client blocks (n = 2000, 1000 samples, p = 20, one core): the fused A(AᵀX) 93–96 GFLOP/s
//! with [`at_x_wide`], against 29 for Debian OpenBLAS's two calls (its Haswell kernels, which
//! it runs on this CPU), 50 with OPENBLAS_CORETYPE=SkylakeX, 35 for NumPy's OpenBLAS, 31–35
//! for the `gemm` crate (benches/suite/rounds.rs measures it again, against the machine's dgemm).
//!
//! The bits of each entry are fixed by n, p and the sample order alone, never by the chunking
//! or the register tiling: in [`at_x_wide`] (p ≥ 4) T[j, q] is one FMA chain over the rows in
//! order; in [`at_x`] (p < 4) it is the sum over rows in 8 lanes (lane r mod 8, rows in order,
//! one FMA each) reduced by `_mm512_reduce_add_pd`; Y[r, q] adds A[r, j]·T[j, q] for j in
//! sample order, one FMA each.
//!
//! Safety: callers pass pointers valid for the stated shapes and leading dimensions (checked in
//! [`super::gram_product`], the only caller), and have checked `avx512f` and `fma` at run time.

// Register tiles read best as acc[k][q] with index loops (constant bounds, fully unrolled).
#![allow(clippy::needless_range_loop)]

use super::product_ends::{AddTo, ThresholdSum};
use std::arch::x86_64::*;

/// Samples per register tile of [`at_x`] and columns of X per tile.
const AT_J: usize = 4;
const AT_Q: usize = 5;
/// Row vectors (8 rows each) per register tile of [`a_t`] and its widest column group.
const AY_R: usize = 3;
const AY_Q: usize = 8;

/// The mask of the first `rem` of 8 lanes (rem in 1..=8).
#[inline(always)]
fn lanes(rem: usize) -> __mmask8 {
    ((1u16 << rem.min(8)) - 1) as u8
}

/// One step of [`at_x_tile`]: rows r..r+8 (lanes in `mask`) into the accumulators.
#[inline(always)]
unsafe fn at_x_step<const J: usize, const Q: usize>(
    acc: &mut [[__m512d; Q]; J],
    (r, mask): (usize, __mmask8),
    (a, lda): (*const f64, usize),
    (x, ldx): (*const f64, usize),
) {
    unsafe {
        let mut av = [_mm512_setzero_pd(); J];
        for (k, v) in av.iter_mut().enumerate() {
            *v = _mm512_maskz_loadu_pd(mask, a.add(r + k * lda));
        }
        for q in 0..Q {
            let xv = _mm512_maskz_loadu_pd(mask, x.add(r + q * ldx));
            for k in 0..J {
                acc[k][q] = _mm512_fmadd_pd(av[k], xv, acc[k][q]);
            }
        }
    }
}

/// T[0..J, 0..Q] = A[:, 0..J]ᵀ X[:, 0..Q] over n rows.
#[inline(always)]
unsafe fn at_x_tile<const J: usize, const Q: usize>(
    n: usize,
    (a, lda): (*const f64, usize),
    (x, ldx): (*const f64, usize),
    (t, ldt): (*mut f64, usize),
) {
    unsafe {
        let mut acc = [[_mm512_setzero_pd(); Q]; J];
        let full = n / 8 * 8;
        for r in (0..full).step_by(8) {
            at_x_step(&mut acc, (r, 0xff), (a, lda), (x, ldx));
        }
        if full < n {
            at_x_step(&mut acc, (full, lanes(n - full)), (a, lda), (x, ldx));
        }
        for (k, row) in acc.iter().enumerate() {
            for (q, v) in row.iter().enumerate() {
                *t.add(k + q * ldt) = _mm512_reduce_add_pd(*v);
            }
        }
    }
}

/// T (c × p, leading dimension ldt) = Aᵀ X for A n × c (lda) and X n × p (ldx).
///
/// # Safety
/// As the module says; CPU with avx512f and fma.
#[target_feature(enable = "avx512f,fma")]
pub unsafe fn at_x(
    (n, c, p): (usize, usize, usize),
    (a, lda): (*const f64, usize),
    (x, ldx): (*const f64, usize),
    (t, ldt): (*mut f64, usize),
) {
    macro_rules! tile {
        ($j:literal, $qb:expr, $args:expr) => {{
            let (ap, xp, tp) = $args;
            let (ap, xp, tp) = ((ap, lda), (xp, ldx), (tp, ldt));
            match $qb {
                5 => at_x_tile::<$j, 5>(n, ap, xp, tp),
                4 => at_x_tile::<$j, 4>(n, ap, xp, tp),
                3 => at_x_tile::<$j, 3>(n, ap, xp, tp),
                2 => at_x_tile::<$j, 2>(n, ap, xp, tp),
                _ => at_x_tile::<$j, 1>(n, ap, xp, tp),
            }
        }};
    }
    unsafe {
        for j in (0..c).step_by(AT_J) {
            for q in (0..p).step_by(AT_Q) {
                let args = (a.add(j * lda), x.add(q * ldx), t.add(j + q * ldt));
                let qb = (p - q).min(AT_Q);
                match (c - j).min(AT_J) {
                    4 => tile!(4, qb, args),
                    3 => tile!(3, qb, args),
                    2 => tile!(2, qb, args),
                    _ => tile!(1, qb, args),
                }
            }
        }
    }
}

/// Samples per register tile of [`at_x_wide`], and its widest column group in vectors of 8.
const WIDE_J: usize = 8;
const WIDE_V: usize = 3;

/// T[0..J, q0..q0+w] = A[:, 0..J]ᵀ X[:, q0..q0+w], w ≤ 8V, from Xᵀ stored row by row (xt, row
/// stride ldxt): acc[k][v] += A[r, k] · Xᵀ[r, 8v..8v+8] for r in order. With `resume` the
/// chains start from T's values (the sums over earlier rows) instead of zero.
#[inline(always)]
unsafe fn at_x_wide_tile<const J: usize, const V: usize>(
    n: usize,
    (a, lda): (*const f64, usize),
    (xt, ldxt): (*const f64, usize),
    (t, ldt): (*mut f64, usize),
    (w, resume): (usize, bool),
) {
    unsafe {
        let last = lanes(w - 8 * (V - 1));
        let mask = |v: usize| if v + 1 == V { last } else { 0xff };
        let mut acc = [[_mm512_setzero_pd(); V]; J];
        let mut row = [0.0f64; 8 * WIDE_V];
        if resume {
            for (k, vs) in acc.iter_mut().enumerate() {
                for (q, value) in row.iter_mut().take(w).enumerate() {
                    *value = *t.add(k + q * ldt);
                }
                for (v, x) in vs.iter_mut().enumerate() {
                    *x = _mm512_loadu_pd(row.as_ptr().add(8 * v));
                }
            }
        }
        for r in 0..n {
            let mut xv = [_mm512_setzero_pd(); V];
            for (v, x) in xv.iter_mut().enumerate() {
                *x = _mm512_maskz_loadu_pd(mask(v), xt.add(r * ldxt + 8 * v));
            }
            for k in 0..J {
                let b = _mm512_set1_pd(*a.add(r + k * lda));
                for v in 0..V {
                    acc[k][v] = _mm512_fmadd_pd(b, xv[v], acc[k][v]);
                }
            }
        }
        for (k, vs) in acc.iter().enumerate() {
            for (v, x) in vs.iter().enumerate() {
                _mm512_storeu_pd(row.as_mut_ptr().add(8 * v), *x);
            }
            for (q, value) in row.iter().take(w).enumerate() {
                *t.add(k + q * ldt) = *value;
            }
        }
    }
}

/// T (c × p, ldt) = Aᵀ X for A n × c (lda), from Xᵀ (n rows of p, row stride ldxt ≥ p): the
/// columns of X along the vector lanes, A[r, j] broadcast. Each T[j, q] is one FMA chain over
/// r in order. For wide X it runs at the A·T kernel's rate (110 against 64 GFLOP/s
/// for [`at_x`] with a chunk hot in L2, one core, p = 20): it streams n × 8 samples of A and
/// the rows of Xᵀ, where [`at_x`] re-reads X from L2 for every 4 samples.
///
/// Long A is taken in blocks of [`BLOCK_ROWS`] rows (the chains resume from T block after
/// block, so the bits do not change).
///
/// # Safety
/// As the module says; CPU with avx512f and fma.
#[target_feature(enable = "avx512f,fma")]
pub unsafe fn at_x_wide(
    (n, c, p): (usize, usize, usize),
    (a, lda): (*const f64, usize),
    (xt, ldxt): (*const f64, usize),
    (t, ldt): (*mut f64, usize),
) {
    let rows = block_rows(n);
    macro_rules! tile {
        ($j:literal, $v:expr, $args:expr, $wr:expr) => {{
            let (nb, ap, xp, tp) = $args;
            let (ap, xp, tp) = ((ap, lda), (xp, ldxt), (tp, ldt));
            match $v {
                3 => at_x_wide_tile::<$j, 3>(nb, ap, xp, tp, $wr),
                2 => at_x_wide_tile::<$j, 2>(nb, ap, xp, tp, $wr),
                _ => at_x_wide_tile::<$j, 1>(nb, ap, xp, tp, $wr),
            }
        }};
    }
    unsafe {
        for r0 in (0..n.max(1)).step_by(rows) {
            let nb = (n - r0.min(n)).min(rows);
            let (a, xt) = (a.wrapping_add(r0), xt.wrapping_add(r0 * ldxt));
            for q in (0..p).step_by(8 * WIDE_V) {
                let w = (p - q).min(8 * WIDE_V);
                let v = w.div_ceil(8);
                for j in (0..c).step_by(WIDE_J) {
                    let args = (nb, a.add(j * lda), xt.add(q), t.add(j + q * ldt));
                    let wr = (w, r0 > 0);
                    match (c - j).min(WIDE_J) {
                        8 => tile!(8, v, args, wr),
                        7 => tile!(7, v, args, wr),
                        6 => tile!(6, v, args, wr),
                        5 => tile!(5, v, args, wr),
                        4 => tile!(4, v, args, wr),
                        3 => tile!(3, v, args, wr),
                        2 => tile!(2, v, args, wr),
                        _ => tile!(1, v, args, wr),
                    }
                }
            }
        }
    }
}

/// Rows per block of [`at_x_wide`]: the 24 columns of Xᵀ a tile reads over a block (2048 × 192
/// B = 384 KiB) stay in L2 while all of A's samples pass. Measured at n = 5000, 500 samples,
/// p = 500 (one core): 66 GFLOP/s unblocked, 105 in blocks of 2048 rows (and of 512 or 1024
/// rows, within noise); FAPS's n = 2000 is one block, as before.
const BLOCK_ROWS: usize = 2048;

/// Rows per block for n rows. Speed only: the chains resume from T, so the bits do not depend
/// on it.
fn block_rows(n: usize) -> usize {
    BLOCK_ROWS.min(n.max(1))
}

/// Where an A·T tile starts and where its sums go, for the rows r..r+8 (lanes in `mask`) of
/// column q. Each entry's sum is one FMA chain over the samples in order from `start`.
pub trait Ends {
    /// The values the sums start from.
    ///
    /// # Safety
    /// Rows r.. (the lanes in `mask`) of column q are within the implementor's buffers.
    unsafe fn start(&self, r: usize, q: usize, mask: __mmask8) -> __m512d;
    /// Takes the finished sums.
    ///
    /// # Safety
    /// As [`Ends::start`].
    unsafe fn finish(&self, r: usize, q: usize, mask: __mmask8, sums: __m512d);
}

impl Ends for AddTo {
    #[inline(always)]
    unsafe fn start(&self, r: usize, q: usize, mask: __mmask8) -> __m512d {
        unsafe { _mm512_maskz_loadu_pd(mask, self.y.add(r + q * self.ld)) }
    }
    #[inline(always)]
    unsafe fn finish(&self, r: usize, q: usize, mask: __mmask8, sums: __m512d) {
        unsafe { _mm512_mask_storeu_pd(self.y.add(r + q * self.ld), mask, sums) }
    }
}

impl Ends for ThresholdSum {
    #[inline(always)]
    unsafe fn start(&self, r: usize, q: usize, mask: __mmask8) -> __m512d {
        unsafe { _mm512_maskz_loadu_pd(mask, self.m.0.add(r + q * self.m.1)) }
    }
    #[inline(always)]
    unsafe fn finish(&self, r: usize, q: usize, mask: __mmask8, sums: __m512d) {
        unsafe {
            let lambda = _mm512_set1_pd(self.lambda);
            let zero = _mm512_setzero_pd();
            let clamp = _mm512_min_pd(_mm512_max_pd(sums, _mm512_sub_pd(zero, lambda)), lambda);
            let at = r + q * self.ld;
            _mm512_mask_storeu_pd(self.s.add(at), mask, _mm512_sub_pd(sums, clamp));
            _mm512_mask_storeu_pd(self.w.add(at), mask, _mm512_sub_pd(zero, clamp));
        }
    }
}

/// Rows r..r+8R, columns q0..q0+Q of A T (A's first c samples) into `ends`; the last row
/// vector is masked by `last`.
#[inline(always)]
unsafe fn a_t_tile<const R: usize, const Q: usize, E: Ends>(
    c: usize,
    (a, lda): (*const f64, usize),
    (t, ldt): (*const f64, usize),
    (ends, r, q0): (&E, usize, usize),
    last: __mmask8,
) {
    unsafe {
        // Plain integer work: no intrinsic runs in a closure (closures may lose the features).
        let mask = |i: usize| if i + 1 == R { last } else { 0xff };
        let mut acc = [[_mm512_setzero_pd(); Q]; R];
        for (i, row) in acc.iter_mut().enumerate() {
            for (q, v) in row.iter_mut().enumerate() {
                *v = ends.start(r + 8 * i, q0 + q, mask(i));
            }
        }
        let (a, t) = (a.add(r), t.add(q0 * ldt));
        for j in 0..c {
            let mut av = [_mm512_setzero_pd(); R];
            for (i, v) in av.iter_mut().enumerate() {
                *v = _mm512_maskz_loadu_pd(mask(i), a.add(8 * i + j * lda));
            }
            for q in 0..Q {
                let b = _mm512_set1_pd(*t.add(j + q * ldt));
                for i in 0..R {
                    acc[i][q] = _mm512_fmadd_pd(av[i], b, acc[i][q]);
                }
            }
        }
        for (i, row) in acc.iter().enumerate() {
            for (q, v) in row.iter().enumerate() {
                ends.finish(r + 8 * i, q0 + q, mask(i), *v);
            }
        }
    }
}

/// A T (n × p) for A n × c (lda) and T c × p (ldt), into `ends` ([`AddTo`]: Y += A T).
/// `next` (the next chunk's first sample and its sample count, same lda) is prefetched into L2
/// row tile by row tile, so that the memory reads of the next [`at_x`] overlap this one's
/// arithmetic (+5 % measured).
///
/// # Safety
/// As the module says, `ends` valid for n × p; CPU with avx512f and fma. `next` only feeds
/// prefetch hints, which never fault.
#[target_feature(enable = "avx512f,fma")]
pub unsafe fn a_t<E: Ends>(
    (n, c, p): (usize, usize, usize),
    (a, lda): (*const f64, usize),
    (t, ldt): (*const f64, usize),
    ends: &E,
    next: Option<(*const f64, usize)>,
) {
    // Column groups of equal width (p = 20: 7, 7, 6), so no group runs a thin tile.
    let groups = p.div_ceil(AY_Q).max(1);
    let width = p.div_ceil(groups);
    macro_rules! tile {
        ($r:literal, $qb:expr, $at:expr, $last:expr) => {{
            let (ap, tp) = ((a, lda), (t, ldt));
            match $qb {
                8 => a_t_tile::<$r, 8, E>(c, ap, tp, $at, $last),
                7 => a_t_tile::<$r, 7, E>(c, ap, tp, $at, $last),
                6 => a_t_tile::<$r, 6, E>(c, ap, tp, $at, $last),
                5 => a_t_tile::<$r, 5, E>(c, ap, tp, $at, $last),
                4 => a_t_tile::<$r, 4, E>(c, ap, tp, $at, $last),
                3 => a_t_tile::<$r, 3, E>(c, ap, tp, $at, $last),
                2 => a_t_tile::<$r, 2, E>(c, ap, tp, $at, $last),
                _ => a_t_tile::<$r, 1, E>(c, ap, tp, $at, $last),
            }
        }};
    }
    unsafe {
        for r in (0..n).step_by(8 * AY_R) {
            let rows = (n - r).min(8 * AY_R);
            let vectors = rows.div_ceil(8);
            let last = lanes(rows - 8 * (vectors - 1));
            if let Some((b, cn)) = next {
                for j in 0..cn {
                    let line = b.wrapping_add(r + j * lda) as *const i8;
                    for k in 0..AY_R {
                        _mm_prefetch::<_MM_HINT_T1>(line.wrapping_add(64 * k));
                    }
                }
            }
            for q in (0..p).step_by(width) {
                let qb = (p - q).min(width);
                match vectors {
                    3 => tile!(3, qb, (ends, r, q), last),
                    2 => tile!(2, qb, (ends, r, q), last),
                    _ => tile!(1, qb, (ends, r, q), last),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{a_t, at_x, at_x_wide, AddTo, ThresholdSum};
    use crate::linalg::prox::shrink;

    fn value(i: usize, j: usize) -> f64 {
        ((i * 7 + j * 13) % 17) as f64 / 17.0 - 0.5
    }

    /// With leading dimensions above the rows, the kernels read only the stated rows (the
    /// inputs' padding is NaN, which would spread into any sum that touched it) and write only
    /// the stated entries (the outputs' padding keeps its sentinel), and their values equal a
    /// plain loop to 1e-13, for every row tail of the 8-row vectors and 24-row tiles and every
    /// column tail of the 4 × 5, 8 × 24 and 24 × 8 register tiles (the wide AᵀX against the
    /// narrow one, itself checked against the loop).
    #[test]
    fn kernels_read_and_write_only_their_entries() {
        if !(is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("fma")) {
            eprintln!("no AVX-512 on this CPU: nothing to test");
            return;
        }
        let shapes = [
            (1, 1, 1),
            (7, 3, 2),
            (8, 4, 5),
            (9, 5, 6),
            (23, 9, 7),
            (24, 8, 8),
        ];
        let more = [
            (25, 13, 9),
            (50, 17, 20),
            (49, 6, 16),
            (3, 40, 11),
            (33, 11, 30),
        ];
        for (n, c, p) in shapes.into_iter().chain(more) {
            let (lda, ldx, ldt, ldy) = (n + 3, n + 5, c + 2, n + 1);
            let mut a = vec![f64::NAN; lda * c];
            let mut x = vec![f64::NAN; ldx * p];
            for j in 0..c {
                for r in 0..n {
                    a[r + j * lda] = value(r, j);
                }
            }
            for q in 0..p {
                for r in 0..n {
                    x[r + q * ldx] = value(r + 5, q + 1);
                }
            }
            const SENTINEL: f64 = 777.0;
            let mut t = vec![SENTINEL; ldt * p];
            let mut y = vec![SENTINEL; ldy * p];
            for q in 0..p {
                for r in 0..n {
                    y[r + q * ldy] = value(q, r);
                }
            }
            let y0 = y.clone();
            // SAFETY: every buffer holds its shape at its leading dimension; AVX-512 checked.
            unsafe {
                at_x(
                    (n, c, p),
                    (a.as_ptr(), lda),
                    (x.as_ptr(), ldx),
                    (t.as_mut_ptr(), ldt),
                );
                // Prefetch hints (here of A itself) change no value.
                let next = Some((a.as_ptr(), c));
                let (ap, tp) = ((a.as_ptr(), lda), (t.as_ptr(), ldt));
                a_t(
                    (n, c, p),
                    ap,
                    tp,
                    &AddTo {
                        y: y.as_mut_ptr(),
                        ld: ldy,
                    },
                    next,
                );
            }
            // The wide AᵀX from Xᵀ row by row (row stride p + 3, NaN between rows).
            let ldxt = p + 3;
            let mut xt = vec![f64::NAN; ldxt * n];
            for q in 0..p {
                for r in 0..n {
                    xt[r * ldxt + q] = x[r + q * ldx];
                }
            }
            let mut t_wide = vec![SENTINEL; ldt * p];
            // SAFETY: as above.
            unsafe {
                let (ap, xp, tp) = (
                    (a.as_ptr(), lda),
                    (xt.as_ptr(), ldxt),
                    (t_wide.as_mut_ptr(), ldt),
                );
                at_x_wide((n, c, p), ap, xp, tp);
            }
            let close = |got: f64, want: f64, scale: f64| (got - want).abs() <= 1e-13 * scale;
            for q in 0..p {
                for j in 0..c {
                    let want = t[j + q * ldt];
                    assert!(
                        close(t_wide[j + q * ldt], want, n as f64),
                        "wide T {n}×{c}×{p} at {j},{q}"
                    );
                }
                assert!(t_wide[q * ldt + c..q * ldt + ldt]
                    .iter()
                    .all(|&v| v == SENTINEL));
            }
            for q in 0..p {
                for j in 0..c {
                    let want: f64 = (0..n).map(|r| a[r + j * lda] * x[r + q * ldx]).sum();
                    assert!(
                        close(t[j + q * ldt], want, n as f64),
                        "T {n}×{c}×{p} at {j},{q}"
                    );
                }
                assert!(t[c..ldt]
                    .iter()
                    .chain(&t[q * ldt + c..q * ldt + ldt])
                    .all(|&v| v == SENTINEL));
                for r in 0..n {
                    let add: f64 = (0..c).map(|j| a[r + j * lda] * t[j + q * ldt]).sum();
                    let want = y0[r + q * ldy] + add;
                    assert!(
                        close(y[r + q * ldy], want, (n * c) as f64),
                        "Y {n}×{c}×{p} at {r},{q}"
                    );
                }
                assert_eq!(y[q * ldy + n], SENTINEL, "Y's padding row, column {q}");
            }
        }
    }

    /// The bits the module promises: each T[j, q] of [`at_x_wide`] is one FMA chain over the
    /// rows in order — also across its blocks of rows (4200 rows: two full blocks and a tail) —
    /// and each Y[r, q] of [`a_t`] one FMA chain over the samples in order, from Y's value;
    /// [`ThresholdSum`] thresholds that chain with [`shrink`]'s bits.
    #[test]
    fn every_entry_is_one_fma_chain() {
        if !(is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("fma")) {
            eprintln!("no AVX-512 on this CPU: nothing to test");
            return;
        }
        let (n, c, p) = (2 * super::BLOCK_ROWS + 104, 9, 30);
        let a: Vec<f64> = (0..n * c)
            .map(|i| value(i % n, i / n) + 1e-3 * i as f64)
            .collect();
        let xt: Vec<f64> = (0..n * p).map(|i| value(i / p, i % p + 3)).collect();
        let mut t = vec![0.0; c * p];
        // SAFETY: A n × c (lda n), Xᵀ n × p (row stride p), T c × p (ldt c); AVX-512 checked.
        unsafe {
            at_x_wide(
                (n, c, p),
                (a.as_ptr(), n),
                (xt.as_ptr(), p),
                (t.as_mut_ptr(), c),
            )
        };
        for q in 0..p {
            for j in 0..c {
                let chain = (0..n).fold(0.0f64, |s, r| a[r + j * n].mul_add(xt[r * p + q], s));
                assert_eq!(t[j + q * c].to_bits(), chain.to_bits(), "T at {j},{q}");
            }
        }
        let y0: Vec<f64> = (0..n * p).map(|i| value(i, 2)).collect();
        let mut y = y0.clone();
        // SAFETY: A n × c (lda n), T c × p (ldt c), Y n × p (ldy n); AVX-512 checked.
        let ends = AddTo {
            y: y.as_mut_ptr(),
            ld: n,
        };
        unsafe { a_t((n, c, p), (a.as_ptr(), n), (t.as_ptr(), c), &ends, None) };
        // The threshold epilogue from the same start: S = shrink(R) and W = −clamp(R), where R
        // is the same chain; λ the median |R|, so that both branches of the threshold run.
        let mut sizes: Vec<f64> = y.iter().map(|v| v.abs()).collect();
        sizes.sort_by(f64::total_cmp);
        let lambda = sizes[sizes.len() / 2];
        let (mut s, mut w) = (vec![f64::NAN; n * p], vec![f64::NAN; n * p]);
        let ends = ThresholdSum {
            m: (y0.as_ptr(), n),
            s: s.as_mut_ptr(),
            w: w.as_mut_ptr(),
            ld: n,
            lambda,
        };
        // SAFETY: as above; M, S and W n × p (ld n).
        unsafe { a_t((n, c, p), (a.as_ptr(), n), (t.as_ptr(), c), &ends, None) };
        let mut thresholded = 0;
        for q in 0..p {
            for r in 0..n {
                let chain =
                    (0..c).fold(y0[r + q * n], |s, j| a[r + j * n].mul_add(t[j + q * c], s));
                let at = r + q * n;
                assert_eq!(y[at].to_bits(), chain.to_bits(), "Y at {r},{q}");
                let (want_s, want_w) = (shrink(chain, lambda), -chain.clamp(-lambda, lambda));
                assert_eq!(s[at].to_bits(), want_s.to_bits(), "S at {r},{q}");
                assert_eq!(w[at].to_bits(), want_w.to_bits(), "W at {r},{q}");
                thresholded += usize::from(want_s != 0.0);
            }
        }
        assert!(
            thresholded > 0 && thresholded < n * p,
            "{thresholded} of {}",
            n * p
        );
    }
}
