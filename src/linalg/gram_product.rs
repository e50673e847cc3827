//! A(AᵀX) and AᵀX for a dense column-major block A (n × samples): the products every subspace
//! method's round is made of.
//!
//! Three kernels, chosen once per process ([`Kernel`], run.json's `product_kernel`):
//! - `avx512` (default where the CPU has AVX-512F and FMA): the kernels of [`super::avx512`],
//!   which read A where it lies instead of packing it. A(AᵀX) is fused over chunks of
//!   consecutive samples: T_c = A_cᵀX, then Y += A_c T_c while A_c is still in the core's L2,
//!   so each sample is read from memory once.
//! - `avx2` (default where the CPU has AVX2 and FMA but not AVX-512): the same products, fused
//!   the same way, by [`super::avx2`], which gives the AVX-512 kernels' bits (tested): results
//!   made on either kind of machine are the same numbers.
//! - `blas` (a CPU without FMA, or DPCA_PRODUCT_KERNEL=blas): two BLAS calls, A·(AᵀX), whose
//!   bits are BLAS's (pinned by [`super::blas_pin`]); not the same bits as the other two.
//!
//! Either way the bits are fixed by the data, n, p and the sample order, never by the thread
//! count or the chunk length (see [`super::avx512`]). (CSR blocks are fused sample by sample in
//! the data module's `CsrView::a_at_z`.)

use anyhow::Result;
use ndarray::{s, Array2, ArrayView2, ShapeBuilder};
use std::sync::OnceLock;

use super::product_ends::{AddTo, ThresholdSum};

/// Which code computes the dense products.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    Avx512,
    Avx2,
    Blas,
}

impl Kernel {
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Avx512 => "avx512",
            Kernel::Avx2 => "avx2",
            Kernel::Blas => "blas",
        }
    }

    /// Whether the project's own kernels run (avx512 and avx2 give the same bits).
    pub fn own(self) -> bool {
        self != Kernel::Blas
    }
}

/// The environment variable that overrides the choice.
pub const KERNEL_ENV: &str = "DPCA_PRODUCT_KERNEL";

static KERNEL: OnceLock<Kernel> = OnceLock::new();

fn cpu_has_avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The kernel for `DPCA_PRODUCT_KERNEL`'s value (None: unset): the CPU's best unless told.
pub fn choose(requested: Option<&str>) -> Result<Kernel> {
    match requested.map(str::trim) {
        None | Some("") if cpu_has_avx512() => Ok(Kernel::Avx512),
        None | Some("") if crate::linalg::cpu_has_avx2_fma() => Ok(Kernel::Avx2),
        None | Some("") | Some("blas") => Ok(Kernel::Blas),
        Some("avx512") if cpu_has_avx512() => Ok(Kernel::Avx512),
        Some("avx2") if crate::linalg::cpu_has_avx2_fma() => Ok(Kernel::Avx2),
        Some(k @ ("avx512" | "avx2")) => anyhow::bail!(
            "{KERNEL_ENV}={k}: this CPU lacks {} or FMA; use blas (or leave it unset)",
            if k == "avx2" { "AVX2" } else { "AVX-512F" }
        ),
        Some(other) => anyhow::bail!("{KERNEL_ENV}={other:?}: expected avx512, avx2 or blas"),
    }
}

/// Read DPCA_PRODUCT_KERNEL and fix the kernel for this process; an unknown value is an error.
/// `dpca` calls it before any work; later calls return the kernel already fixed.
pub fn select_kernel() -> Result<Kernel> {
    if let Some(k) = KERNEL.get() {
        return Ok(*k);
    }
    let k = choose(std::env::var(KERNEL_ENV).ok().as_deref())?;
    Ok(*KERNEL.get_or_init(|| k))
}

/// The kernel in use (fixed on first use; library users without `dpca` get the CPU's best, and
/// a bad DPCA_PRODUCT_KERNEL panics here with the same message `dpca` would exit with).
pub fn kernel() -> Kernel {
    select_kernel().unwrap_or_else(|e| panic!("{e:#}"))
}

/// Bytes of A per chunk: a quarter of a 1 MiB L2, leaving room for the next chunk (prefetched
/// while this one finishes), X, T_c and Y. At table1's n = 2000, 16 samples measured 2–5 %
/// faster than 32 and 8 % faster than 128 (`make bench BENCH=rounds`).
const CHUNK_BYTES: usize = 256 * 1024;
/// Bounds on samples per chunk: below MIN the per-chunk overhead shows; above MAX (small n)
/// the chunk is L2-resident anyway.
const MIN_CHUNK: usize = 16;
const MAX_CHUNK: usize = 1024;

/// Samples per chunk for n features: a multiple of 8. Speed only: the bits do not depend on it.
pub fn chunk_len(n: usize) -> usize {
    let fit = CHUNK_BYTES / (8 * n.max(1));
    (fit / 8 * 8).clamp(MIN_CHUNK, MAX_CHUNK)
}

/// A(AᵀX) (n × p) for A n × samples and X n × p, by the process's [`kernel`].
/// Panics unless X has n rows (an invariant of every caller, like ndarray's `dot`).
pub fn gram_times_dense(a: ArrayView2<f64>, x: ArrayView2<f64>) -> Array2<f64> {
    match kernel() {
        Kernel::Blas => a.dot(&a.t().dot(&x)),
        k => gram_times_chunked(k, a, x, chunk_len(a.nrows())),
    }
}

/// AᵀX (samples × p) for A n × samples and X n × p, by the process's [`kernel`].
pub fn t_times_dense(a: ArrayView2<f64>, x: ArrayView2<f64>) -> Array2<f64> {
    match kernel() {
        Kernel::Blas => a.t().dot(&x),
        k => t_times_own(k, a, x),
    }
}

/// A·T into `ends` by the process's own kernel (avx512 or avx2); `next` is the AVX-512
/// kernel's prefetch hint.
///
/// # Safety
/// A valid for n rows (unit stride) × c samples (stride lda ≥ n), T for c × p (ldt ≥ c), `ends`
/// for n × p; [`kernel`] is one of the own kernels (checked by the caller through [`leading_dim`]).
#[cfg(target_arch = "x86_64")]
unsafe fn a_t_into<E: super::avx512::Ends + super::avx2::Ends>(
    k: Kernel,
    (n, c, p): (usize, usize, usize),
    a: (*const f64, usize),
    t: (*const f64, usize),
    ends: &E,
    next: Option<(*const f64, usize)>,
) {
    // SAFETY: as the caller promises; kernel() is only Avx512/Avx2 where the CPU has them.
    unsafe {
        match k {
            Kernel::Avx512 => super::avx512::a_t((n, c, p), a, t, ends, next),
            _ => super::avx2::a_t((n, c, p), a, t, ends),
        }
    }
}

/// Y += A·T for A n × c, T c × p and Y n × p column-major, by the process's [`kernel`] (the
/// AVX-512 A·T kernel, or BLAS where A's or Y's layout does not suit it). Each Y[r, q] adds
/// A[r, j]·T[j, q] for j in order to its value, one FMA each. Panics on mismatched shapes.
pub fn add_a_times(a: ArrayView2<f64>, t: ArrayView2<f64>, y: &mut Array2<f64>) {
    add_a_times_with(kernel(), a, t, y)
}

fn add_a_times_with(k: Kernel, a: ArrayView2<f64>, t: ArrayView2<f64>, y: &mut Array2<f64>) {
    let ((n, c), p) = (a.dim(), t.ncols());
    assert!(
        t.nrows() == c && y.dim() == (n, p),
        "Y += A·T: A {:?}, T {:?}, Y {:?}",
        a.dim(),
        t.dim(),
        y.dim()
    );
    let y_cols = y.t().is_standard_layout();
    let (Some(lda), true) = (leading_dim(a, k), y_cols) else {
        ndarray::linalg::general_mat_mul(1.0, &a, &t, 1.0, y);
        return;
    };
    if n == 0 || c == 0 || p == 0 {
        return;
    }
    let tf = col_major(t);
    let out = y.as_slice_memory_order_mut().expect("column-major Y");
    // SAFETY: A is valid for n rows (unit stride) × c columns (stride lda ≥ n), T for c × p
    // (ldt = c), Y for n × p (ldy = n); an own kernel runs (leading_dim checked).
    #[cfg(target_arch = "x86_64")]
    unsafe {
        let ends = AddTo {
            y: out.as_mut_ptr(),
            ld: n,
        };
        a_t_into(
            k,
            (n, c, p),
            (a.as_ptr(), lda),
            (tf.as_ptr(), c),
            &ends,
            None,
        );
    }
}

/// R = M + A·T for M n × p, A n × c, T c × p, not kept: S = shrink_λ(R) (entrywise soft
/// threshold, [`crate::linalg::prox::shrink`]'s bits) and W = S − R, written as −clamp(R, ±λ)
/// (exact: (R − λ) − R can round). By the process's [`kernel`]: the AVX-512 A·T kernel with
/// this as its epilogue (or its AVX2 twin), so R never goes to memory (DCF-PCA's local step:
/// R = M_i − U V_iᵀ), or BLAS and one pass. S and W column-major n × p; panics on mismatched
/// shapes.
pub fn threshold_sum(
    terms: (ArrayView2<f64>, ArrayView2<f64>, ArrayView2<f64>),
    lambda: f64,
    s: &mut Array2<f64>,
    w: &mut Array2<f64>,
) {
    threshold_sum_with(kernel(), terms, lambda, s, w)
}

fn threshold_sum_with(
    k: Kernel,
    (m, a, t): (ArrayView2<f64>, ArrayView2<f64>, ArrayView2<f64>),
    lambda: f64,
    s: &mut Array2<f64>,
    w: &mut Array2<f64>,
) {
    let ((n, c), p) = (a.dim(), t.ncols());
    assert!(
        t.nrows() == c && m.dim() == (n, p) && s.dim() == (n, p) && w.dim() == (n, p),
        "M + A·T: M {:?}, A {:?}, T {:?}, S {:?}, W {:?}",
        m.dim(),
        a.dim(),
        t.dim(),
        s.dim(),
        w.dim()
    );
    let cols = |x: &Array2<f64>| x.t().is_standard_layout();
    let lds = (leading_dim(a, k), leading_dim(m, k));
    let ((Some(lda), Some(ldm)), true, true) = (lds, cols(s), cols(w)) else {
        let mut r = m.to_owned();
        ndarray::linalg::general_mat_mul(1.0, &a, &t, 1.0, &mut r);
        ndarray::Zip::from(s).and(w).and(&r).for_each(|s, w, &r| {
            let clamp = r.clamp(-lambda, lambda);
            *s = r - clamp;
            *w = -clamp;
        });
        return;
    };
    if n == 0 || p == 0 {
        return;
    }
    let tf = col_major(t);
    let ends = ThresholdSum {
        m: (m.as_ptr(), ldm),
        s: s.as_slice_memory_order_mut()
            .expect("column-major S")
            .as_mut_ptr(),
        w: w.as_slice_memory_order_mut()
            .expect("column-major W")
            .as_mut_ptr(),
        ld: n,
        lambda,
    };
    // SAFETY: A is valid for n rows (unit stride) × c columns (stride lda ≥ n), T for c × p
    // (ldt = c), M for n × p (stride ldm ≥ n), S and W for n × p (ld = n); an own kernel
    // runs (leading_dim checked).
    #[cfg(target_arch = "x86_64")]
    unsafe {
        a_t_into(
            k,
            (n, c, p),
            (a.as_ptr(), lda),
            (tf.as_ptr(), c.max(1)),
            &ends,
            None,
        )
    };
}

/// T's entries in column-major order (leading dimension its rows): borrowed when T already is
/// (the transpose of a C-order matrix), else copied.
fn col_major<'a>(t: ArrayView2<'a, f64>) -> std::borrow::Cow<'a, [f64]> {
    match t.t().is_standard_layout() {
        true => t
            .reversed_axes()
            .to_slice()
            .expect("standard layout")
            .into(),
        false => crate::linalg::to_f_order(t)
            .into_raw_vec_and_offset()
            .0
            .into(),
    }
}

/// A's leading dimension when its samples are contiguous columns (what the kernels read) and an
/// own kernel runs, or None (BLAS chosen, or a row-major or strided view: the BLAS path takes
/// it, whichever kernel was chosen).
fn leading_dim(a: ArrayView2<f64>, k: Kernel) -> Option<usize> {
    let (n, m) = a.dim();
    let [rs, cs] = [a.strides()[0], a.strides()[1]];
    let rows_ok = n <= 1 || rs == 1;
    let lda = if m <= 1 {
        n.max(1)
    } else {
        usize::try_from(cs).ok()?
    };
    (rows_ok && lda >= n && k.own()).then_some(lda)
}

/// From this many columns of X on, AᵀX runs on [`at_x_wide`](super::avx512::at_x_wide)
/// (columns along the vector lanes); below it on [`at_x`](super::avx512::at_x) (rows along the
/// lanes), where a vector of 8 columns would be mostly empty. The fused A(AᵀX), one core,
/// n = 2000, 1000 samples, narrow against wide: p = 1 15 against 9.5 GFLOP/s, p = 5 43
/// against 49, p = 10 61 against 73, p = 20 70 against 96.
pub const WIDE_MIN_P: usize = 4;

/// X as the AᵀX kernel for its width reads it: rows of X (row-major, row stride p) for the
/// wide kernel, columns (column-major, stride n) for the narrow one; copied only if needed.
struct XLayout<'a> {
    data: std::borrow::Cow<'a, [f64]>,
    ld: usize,
    wide: bool,
}

fn x_layout<'a>(x: ArrayView2<'a, f64>) -> XLayout<'a> {
    let (n, p) = x.dim();
    if p >= WIDE_MIN_P {
        let data = match x.to_slice() {
            Some(sl) => sl.into(),
            None => x
                .as_standard_layout()
                .into_owned()
                .into_raw_vec_and_offset()
                .0
                .into(),
        };
        return XLayout {
            data,
            ld: p,
            wide: true,
        };
    }
    XLayout {
        data: col_major(x),
        ld: n.max(1),
        wide: false,
    }
}

/// T (c × p, ldt) = A_cᵀX by the kernel for X's width.
///
/// # Safety
/// A valid for n rows (unit stride) × c samples (stride lda ≥ n), T for c × p (ldt ≥ c); an own
/// kernel runs (the caller checked [`leading_dim`]).
#[cfg(target_arch = "x86_64")]
unsafe fn at_x_into(
    k: Kernel,
    (n, c, p): (usize, usize, usize),
    a: (*const f64, usize),
    x: &XLayout,
    t: (*mut f64, usize),
) {
    use super::{avx2, avx512};
    let xs = (x.data.as_ptr(), x.ld);
    let dims = (n, c, p);
    // SAFETY: as the caller promises; X's layout holds n × p at its stride; kernel() is only
    // Avx512/Avx2 where the CPU has them.
    unsafe {
        match (k, x.wide) {
            (Kernel::Avx512, true) => avx512::at_x_wide(dims, a, xs, t),
            (Kernel::Avx512, false) => avx512::at_x(dims, a, xs, t),
            (_, true) => avx2::at_x_wide(dims, a, xs, t),
            (_, false) => avx2::at_x(dims, a, xs, t),
        }
    }
}

/// AᵀX by the own kernels (the BLAS call where A's layout does not suit them).
fn t_times_own(k: Kernel, a: ArrayView2<f64>, x: ArrayView2<f64>) -> Array2<f64> {
    let (n, m) = a.dim();
    assert_eq!(x.nrows(), n, "AᵀX: X needs one row per row of A");
    let p = x.ncols();
    let Some(lda) = leading_dim(a, k) else {
        return a.t().dot(&x);
    };
    let xl = x_layout(x);
    let mut t = Array2::<f64>::zeros((m, p).f());
    if m > 0 && p > 0 {
        let out = t.as_slice_memory_order_mut().expect("fresh array");
        // SAFETY: A is valid for n rows (unit stride) × m samples (stride lda ≥ n), T for m × p
        // (ldt = m); an own kernel runs (leading_dim checked).
        #[cfg(target_arch = "x86_64")]
        unsafe {
            at_x_into(k, (n, m, p), (a.as_ptr(), lda), &xl, (out.as_mut_ptr(), m))
        };
    }
    t
}

/// A(AᵀX) fused over chunks of `chunk` samples by the own kernels (two BLAS calls where A's
/// layout does not suit them, or BLAS is chosen). Public for the bench and tests, which vary the chunk.
pub fn gram_times_chunked(
    k: Kernel,
    a: ArrayView2<f64>,
    x: ArrayView2<f64>,
    chunk: usize,
) -> Array2<f64> {
    let (n, m) = a.dim();
    assert_eq!(x.nrows(), n, "A(AᵀX): X needs one row per row of A");
    let p = x.ncols();
    let Some(lda) = leading_dim(a, k) else {
        return a.dot(&a.t().dot(&x));
    };
    let xl = x_layout(x);
    let chunk = chunk.clamp(1, m.max(1));
    let mut y = Array2::<f64>::zeros((n, p).f());
    let mut t = vec![0.0; chunk * p];
    let out = y.as_slice_memory_order_mut().expect("fresh array");
    for start in (0..m).step_by(chunk) {
        let c = (m - start).min(chunk);
        let ac = a.slice(s![.., start..start + c]);
        // SAFETY: A_c is valid for n rows (unit stride) × c samples (stride lda ≥ n), T for
        // c × p (ldt = chunk ≥ c), Y for n × p (ldy = n); an own kernel runs (leading_dim
        // checked).
        #[cfg(target_arch = "x86_64")]
        unsafe {
            at_x_into(
                k,
                (n, c, p),
                (ac.as_ptr(), lda),
                &xl,
                (t.as_mut_ptr(), chunk),
            );
            let next = (start + c < m)
                .then(|| (ac.as_ptr().wrapping_add(c * lda), chunk.min(m - start - c)));
            let ends = AddTo {
                y: out.as_mut_ptr(),
                ld: n.max(1),
            };
            a_t_into(
                k,
                (n, c, p),
                (ac.as_ptr(), lda),
                (t.as_ptr(), chunk),
                &ends,
                next,
            );
        }
    }
    y
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::max_rel_diff as rel;
    use crate::seed;
    use crate::seed::uniform_matrix;

    #[test]
    fn chunk_len_is_a_bounded_multiple_of_eight() {
        assert_eq!(chunk_len(2000), 16);
        assert_eq!(chunk_len(1), MAX_CHUNK);
        assert_eq!(chunk_len(1_000_000), MIN_CHUNK);
        for n in [1, 7, 100, 784, 2000, 3072, 5000, 100_000] {
            assert_eq!(chunk_len(n) % 8, 0);
        }
    }

    /// Shapes (n, samples, p, chunk) with every kind of tail: rows not a multiple of 8 or of the
    /// 24-row tile, p not a multiple of the column tiles (5 and 8), a tail chunk, a single short
    /// chunk, one sample, no samples, one feature.
    const SHAPES: &[(usize, usize, usize, usize)] = &[
        (50, 1000, 5, 64),
        (50, 1024, 5, 64),
        (200, 37, 20, 64),
        (2000, 300, 20, 32),
        (13, 1, 3, 16),
        (30, 0, 4, 16),
        (7, 50, 11, 8),
        (24, 33, 9, 8),
        (25, 100, 1, 16),
        (1, 10, 2, 4),
        (100, 64, 13, 16),
    ];

    /// The own kernels this CPU runs (AVX-512 and AVX2 where it has AVX-512, AVX2 where it has
    /// only that).
    fn own_kernels() -> Vec<Kernel> {
        let mut ks = Vec::new();
        if cpu_has_avx512() {
            ks.push(Kernel::Avx512);
        }
        if crate::linalg::cpu_has_avx2_fma() {
            ks.push(Kernel::Avx2);
        }
        if ks.is_empty() {
            eprintln!("no AVX2 or AVX-512 with FMA on this CPU: only BLAS runs");
        }
        ks
    }

    /// The own products equal the two BLAS calls A·(AᵀX) and AᵀX to 1e-13 relative, with X
    /// in either memory order, on every own kernel the CPU runs.
    #[test]
    fn kernels_equal_blas() {
        let mut rng = seed::rng(7, &["gram_product"]);
        for &(n, m, p, chunk) in SHAPES {
            let a = crate::linalg::to_f_order(uniform_matrix(n, m, &mut rng).view());
            let x = uniform_matrix(n, p, &mut rng);
            let want = a.dot(&a.t().dot(&x));
            let want_t = a.t().dot(&x);
            let xf = crate::linalg::to_f_order(x.view());
            for (k, x) in own_kernels()
                .into_iter()
                .flat_map(|k| [(k, x.view()), (k, xf.view())])
            {
                let got = gram_times_chunked(k, a.view(), x, chunk);
                let got_t = t_times_own(k, a.view(), x);
                assert_eq!((got.dim(), got_t.dim()), ((n, p), (m, p)));
                if m == 0 {
                    assert!(got.iter().all(|&v| v == 0.0));
                    continue;
                }
                let (e, e_t) = (rel(&got, &want), rel(&got_t, &want_t));
                assert!(
                    e < 1e-13 && e_t < 1e-13,
                    "n={n} m={m} p={p} chunk={chunk}: {e:e} {e_t:e}"
                );
            }
        }
    }

    /// Y += A·T and the thresholded M + A·T equal BLAS and the scalar soft threshold to 1e-13
    /// relative, with T in either memory order, for shapes with row and column tails and A a
    /// column range of a larger matrix (a client's view).
    #[test]
    fn a_times_and_threshold_sum_equal_blas() {
        use crate::linalg::prox::shrink;
        let mut rng = seed::rng(12, &["gram_product"]);
        for &(n, c, p) in &[(50, 37, 29), (300, 8, 150), (2100, 197, 40), (7, 1, 3)] {
            let whole = crate::linalg::to_f_order(uniform_matrix(n, c + 5, &mut rng).view());
            let a = whole.slice(s![.., 2..2 + c]);
            let t = uniform_matrix(c, p, &mut rng);
            let m = crate::linalg::to_f_order(uniform_matrix(n, p, &mut rng).view());
            let r = &m + &a.dot(&t);
            let tf = crate::linalg::to_f_order(t.view());
            for (k, t) in own_kernels()
                .into_iter()
                .flat_map(|k| [(k, t.view()), (k, tf.view())])
            {
                let mut y = m.clone();
                add_a_times_with(k, a, t, &mut y);
                assert!(rel(&y, &r) < 1e-13, "Y {n}×{c}×{p}: {:e}", rel(&y, &r));
                // λ the median |R|: both branches of the threshold run.
                let mut sizes: Vec<f64> = r.iter().map(|v| v.abs()).collect();
                sizes.sort_by(f64::total_cmp);
                let lambda = sizes[sizes.len() / 2];
                let (mut got_s, mut got_w) = (m.clone(), m.clone());
                threshold_sum_with(k, (m.view(), a, t), lambda, &mut got_s, &mut got_w);
                let want_s = r.mapv(|v| shrink(v, lambda));
                let want_w = &want_s - &r;
                let scale = r.iter().fold(0.0f64, |s, v| s.max(v.abs()));
                let err = |x: &Array2<f64>, y: &Array2<f64>| {
                    (x - y).iter().fold(0.0f64, |s, v| s.max(v.abs())) / scale
                };
                let (e_s, e_w) = (err(&got_s, &want_s), err(&got_w, &want_w));
                assert!(
                    e_s < 1e-13 && e_w < 1e-13,
                    "S, W {n}×{c}×{p}: {e_s:e} {e_w:e}"
                );
                let zeros = want_s.iter().filter(|&&v| v == 0.0).count();
                assert!(
                    zeros > 0 && zeros < n * p,
                    "λ thresholds some entries, not all"
                );
            }
        }
    }

    /// The chunk length is speed only: every chunk length gives the same bits.
    #[test]
    fn chunk_length_does_not_change_the_bits() {
        let mut rng = seed::rng(11, &["gram_product"]);
        let a = crate::linalg::to_f_order(uniform_matrix(61, 203, &mut rng).view());
        let x = uniform_matrix(61, 7, &mut rng);
        for k in own_kernels() {
            let first = gram_times_chunked(k, a.view(), x.view(), 1);
            for chunk in [3, 8, 16, 64, 203, 1000] {
                assert_eq!(
                    gram_times_chunked(k, a.view(), x.view(), chunk),
                    first,
                    "{} chunk {chunk}",
                    k.name()
                );
            }
            if k == kernel() {
                assert_eq!(gram_times_dense(a.view(), x.view()), first);
            }
        }
    }

    /// What the avx2 kernels promise: the AVX-512 kernels' bits, for every product (A(AᵀX)
    /// fused, AᵀX narrow and wide, Y += A·T, the thresholded sum) on shapes with every kind of
    /// tail, X and T in either memory order, A a view of a larger matrix. Needs an AVX-512 CPU
    /// (elsewhere only one of the two runs).
    #[test]
    fn avx2_kernels_give_the_avx512_bits() {
        if !cpu_has_avx512() {
            eprintln!("no AVX-512 on this CPU: nothing to compare the AVX2 kernels with");
            return;
        }
        let mut rng = seed::rng(13, &["gram_product"]);
        let bits = |x: &Array2<f64>| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        let more = [(4200, 50, 30, 16), (2000, 40, 20, 16), (33, 70, 4, 8)];
        for &(n, m, p, chunk) in SHAPES.iter().chain(&more) {
            let whole = crate::linalg::to_f_order(uniform_matrix(n, m + 3, &mut rng).view());
            let a = whole.slice(s![.., 1..1 + m]);
            let x = uniform_matrix(n, p, &mut rng);
            let xf = crate::linalg::to_f_order(x.view());
            for x in [x.view(), xf.view()] {
                let [g5, g2] =
                    [Kernel::Avx512, Kernel::Avx2].map(|k| gram_times_chunked(k, a, x, chunk));
                assert_eq!(bits(&g5), bits(&g2), "A(AᵀX) n={n} m={m} p={p}");
                let [t5, t2] = [Kernel::Avx512, Kernel::Avx2].map(|k| t_times_own(k, a, x));
                assert_eq!(bits(&t5), bits(&t2), "AᵀX n={n} m={m} p={p}");
            }
            let t = uniform_matrix(m, p, &mut rng);
            let y0 = crate::linalg::to_f_order(uniform_matrix(n, p, &mut rng).view());
            let [y5, y2] = [Kernel::Avx512, Kernel::Avx2].map(|k| {
                let mut y = y0.clone();
                add_a_times_with(k, a, t.view(), &mut y);
                y
            });
            assert_eq!(bits(&y5), bits(&y2), "Y += A·T n={n} m={m} p={p}");
            // λ the median |Y|, and 0: both branches of the threshold, and its zeros' signs.
            let mut sizes: Vec<f64> = y5.iter().map(|v| v.abs()).collect();
            sizes.sort_by(f64::total_cmp);
            for lambda in [sizes.get(sizes.len() / 2).copied().unwrap_or(1.0), 0.0] {
                let [(s5, w5), (s2, w2)] = [Kernel::Avx512, Kernel::Avx2].map(|k| {
                    let (mut s, mut w) = (y0.clone(), y0.clone());
                    threshold_sum_with(k, (y0.view(), a, t.view()), lambda, &mut s, &mut w);
                    (s, w)
                });
                assert_eq!(bits(&s5), bits(&s2), "S n={n} m={m} p={p} λ={lambda}");
                assert_eq!(bits(&w5), bits(&w2), "W n={n} m={m} p={p} λ={lambda}");
            }
        }
    }

    /// DPCA_PRODUCT_KERNEL: unset picks the CPU's best, `blas` is always there, anything else
    /// is an error that names the variable and what it accepts.
    #[test]
    fn kernel_choice() {
        let best = own_kernels().first().copied().unwrap_or(Kernel::Blas);
        assert_eq!(choose(None).unwrap(), best);
        assert_eq!(choose(Some("")).unwrap(), best);
        assert_eq!(choose(Some("blas")).unwrap(), Kernel::Blas);
        assert_eq!(choose(Some("avx512")).is_ok(), cpu_has_avx512());
        assert_eq!(
            choose(Some("avx2")).is_ok(),
            crate::linalg::cpu_has_avx2_fma()
        );
        let e = choose(Some("sse2")).unwrap_err().to_string();
        assert!(
            e.contains(KERNEL_ENV) && e.contains("\"sse2\"") && e.contains("avx512, avx2 or blas"),
            "{e}"
        );
    }

    /// A block that is a column range of a larger matrix (a client's view), or a row range
    /// (leading dimension above its rows), gives the same bits as its own copy: the kernels
    /// read through the view's strides.
    #[test]
    fn views_and_copies_agree_bitwise() {
        let mut rng = seed::rng(8, &["gram_product"]);
        let a = crate::linalg::to_f_order(uniform_matrix(40, 500, &mut rng).view());
        let x = uniform_matrix(40, 6, &mut rng);
        let view = a.slice(s![.., 100..333]);
        let copy = crate::linalg::to_f_order(view);
        assert_eq!(
            gram_times_chunked(kernel(), view, x.view(), 16),
            gram_times_chunked(kernel(), copy.view(), x.view(), 16)
        );
        let rows = a.slice(s![3..30, 10..90]);
        let copy = crate::linalg::to_f_order(rows);
        let xr = x.slice(s![3..30, ..]);
        assert_eq!(
            gram_times_chunked(kernel(), rows, xr, 16),
            gram_times_chunked(kernel(), copy.view(), xr, 16)
        );
        assert_eq!(t_times_dense(rows, xr), t_times_dense(copy.view(), xr));
    }
}
