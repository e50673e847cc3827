//! The synthetic test matrices of FAPS: (23)–(24) and §5.6, A = U Σ Vᵀ; and fig. 1's "randomly
//! generated" matrix, read as iid N(0, 1) entries ([`gaussian_matrix`]).
//!
//! U (n×n) and V (m×n) are the orthonormalisations (Q factors, diag R ≥ 0) of matrices with iid
//! U[-1, 1] entries. Forming V by a thin QR of the m×n matrix X costs 40–90 s at 128000×2000, and
//! V itself is as large as A. Instead we use V = X R⁻¹ with R the Cholesky factor of XᵀX — the
//! same Q in exact arithmetic; X is so well conditioned (κ ≈ (1+√(n/m))/(1−√(n/m))) that the
//! error is at rounding level — and never store X: A = (U Σ R⁻ᵀ) Xᵀ, with X regenerated block by
//! block from its seed. Block work runs in parallel; sums are taken in a fixed order, so the
//! result does not depend on the number of threads. [`svd_columns`] and [`gaussian_columns`]
//! form only some columns, with the same bits (what a rank of the MPI backend holds).

use crate::linalg::{cholesky_upper, orth};
use crate::seed;
use crate::seed::uniform_matrix;
use anyhow::{bail, Result};
use ndarray::{Array1, Array2, ArrayViewMut2, Axis, ShapeBuilder};
use ndarray_linalg::{Diag, SolveTriangular, UPLO};
use rand::Rng;
use rand_distr::StandardNormal;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Rows of X generated per block (fixed: it defines the random stream).
const BLOCK: usize = 2048;
/// Partial Gram sums kept at once; fixed so the summation order never depends on threads.
const GROUPS: usize = 8;

/// Diagonal Σ of the generator.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "spectrum", rename_all = "lowercase")]
pub enum Spectrum {
    /// Σ_ii = ξ^(1−i), FAPS (24).
    Geometric { xi: f64 },
    /// Σ_ii = 1 − (i−1)/(n−1)·(1 − 1/κ), FAPS §5.6.
    Arithmetic { kappa: f64 },
}

impl Spectrum {
    pub fn values(&self, n: usize) -> Array1<f64> {
        match *self {
            Spectrum::Geometric { xi } => Array1::from_iter((0..n).map(|i| xi.powi(-(i as i32)))),
            Spectrum::Arithmetic { kappa } => {
                let denom = (n.max(2) - 1) as f64;
                Array1::from_iter((0..n).map(|i| 1.0 - (i as f64) / denom * (1.0 - 1.0 / kappa)))
            }
        }
    }
}

/// A = U Σ Vᵀ, n×m, column-major, reproducible from `seed`.
pub fn svd_matrix(n: usize, m: usize, spectrum: Spectrum, seed: u64) -> Result<Array2<f64>> {
    let f = SvdFactor::new(n, m, spectrum, seed)?;
    let mut a = Array2::<f64>::zeros((n, m).f());
    a.axis_chunks_iter_mut(Axis(1), BLOCK)
        .into_par_iter()
        .enumerate()
        .for_each(|(b, mut cols)| f.fill_block(b, &mut cols));
    Ok(a)
}

/// Columns `wanted` of [`svd_matrix`]`(n, m, spectrum, seed)`, in that order, equal to its
/// columns bit for bit, without forming the others: the n×n factor M needs every block of X
/// (streamed, as the full matrix does), but only the column blocks holding a wanted column
/// are multiplied out.
pub fn svd_columns(
    n: usize,
    m: usize,
    spectrum: Spectrum,
    seed: u64,
    wanted: &[usize],
) -> Result<Array2<f64>> {
    let f = SvdFactor::new(n, m, spectrum, seed)?;
    columns_of_blocks(n, m, wanted, |b, cols| f.fill_block(b, cols))
}

/// The generator's A = M Xᵀ with M = U Σ R⁻ᵀ (n×n): what is left to form any column block.
struct SvdFactor {
    m_mat: Array2<f64>,
    m: usize,
    seed: u64,
}

impl SvdFactor {
    fn new(n: usize, m: usize, spectrum: Spectrum, seed: u64) -> Result<Self> {
        if n == 0 || m < n {
            bail!("the SVD generator needs 1 <= n <= m, got n = {n}, m = {m}");
        }
        let u = orth(uniform_matrix(n, n, &mut seed::rng(seed, &["U"])).view());
        let blocks = m.div_ceil(BLOCK);

        // XᵀX = Σ_b X_bᵀX_b, summed in GROUPS fixed contiguous ranges, then in group order.
        let per_group = blocks.div_ceil(GROUPS);
        let gram = crate::linalg::sum_in_order(
            GROUPS,
            || Array2::<f64>::zeros((n, n).f()),
            |g| {
                let mut acc = Array2::<f64>::zeros((n, n).f());
                for b in g * per_group..((g + 1) * per_group).min(blocks) {
                    let x = x_block(n, m, seed, b);
                    ndarray::linalg::general_mat_mul(1.0, &x.t(), &x, 1.0, &mut acc);
                }
                acc
            },
        );
        let r = cholesky_upper(gram.view())?;

        // M = U Σ R⁻ᵀ, i.e. Mᵀ solves R Mᵀ = (U Σ)ᵀ.
        let sigma = spectrum.values(n);
        let us = &u * &sigma.view().insert_axis(Axis(0));
        let mt = r.solve_triangular(
            UPLO::Upper,
            Diag::NonUnit,
            &crate::linalg::to_f_order(us.t()),
        )?;
        Ok(Self {
            m_mat: crate::linalg::to_f_order(mt.t()),
            m,
            seed,
        })
    }

    /// Column block `b` of A into `cols` (n × its width, column-major): one GEMM whose shape
    /// and layouts do not depend on which columns a caller keeps, so neither do its bits.
    fn fill_block(&self, b: usize, cols: &mut ArrayViewMut2<f64>) {
        let x = x_block(self.m_mat.nrows(), self.m, self.seed, b);
        ndarray::linalg::general_mat_mul(1.0, &self.m_mat, &x.t(), 0.0, cols);
    }
}

/// Block `b` of X (BLOCK rows of m, n columns), from its own stream.
fn x_block(n: usize, m: usize, seed: u64, b: usize) -> Array2<f64> {
    let rows = BLOCK.min(m - b * BLOCK);
    uniform_matrix(rows, n, &mut seed::rng(seed, &["X", &b.to_string()]))
}

/// Columns `wanted` (in that order) of an n×m matrix made of column blocks of BLOCK columns,
/// `fill(b, cols)` writing block b. Only blocks holding a wanted column are formed, a few at a
/// time (as many as threads), so memory stays the result plus a few blocks.
fn columns_of_blocks(
    n: usize,
    m: usize,
    wanted: &[usize],
    fill: impl Fn(usize, &mut ArrayViewMut2<f64>) + Sync,
) -> Result<Array2<f64>> {
    if let Some(&j) = wanted.iter().find(|&&j| j >= m) {
        bail!("column {j} of a matrix with {m} columns");
    }
    let mut out = Array2::<f64>::zeros((n, wanted.len()).f());
    // Wanted positions by block, blocks in increasing order.
    let mut by_block: std::collections::BTreeMap<usize, Vec<(usize, usize)>> = Default::default();
    for (at, &j) in wanted.iter().enumerate() {
        by_block.entry(j / BLOCK).or_default().push((at, j % BLOCK));
    }
    let blocks: Vec<_> = by_block.into_iter().collect();
    for group in blocks.chunks(rayon::current_num_threads().max(1)) {
        let formed: Vec<Array2<f64>> = group
            .par_iter()
            .map(|(b, _)| {
                let mut cols = Array2::<f64>::zeros((n, BLOCK.min(m - b * BLOCK)).f());
                fill(*b, &mut cols.view_mut());
                cols
            })
            .collect();
        for ((_, picks), cols) in group.iter().zip(&formed) {
            for &(at, k) in picks {
                out.column_mut(at).assign(&cols.column(k));
            }
        }
    }
    Ok(out)
}

/// A with iid N(0, 1) entries, n×m, column-major, reproducible from `seed`: column block b
/// (BLOCK columns) is drawn column by column from its own stream, so blocks fill in parallel
/// and the matrix does not depend on the number of threads.
pub fn gaussian_matrix(n: usize, m: usize, seed: u64) -> Result<Array2<f64>> {
    if n == 0 || m == 0 {
        bail!("the gaussian generator needs n, m >= 1, got n = {n}, m = {m}");
    }
    let mut a = Array2::<f64>::zeros((n, m).f());
    a.axis_chunks_iter_mut(Axis(1), BLOCK)
        .into_par_iter()
        .enumerate()
        .for_each(|(b, mut cols)| gaussian_block(seed, b, &mut cols));
    Ok(a)
}

/// Columns `wanted` (in that order) of [`gaussian_matrix`]`(n, m, seed)`, drawing only the
/// column blocks that hold one.
pub fn gaussian_columns(n: usize, m: usize, seed: u64, wanted: &[usize]) -> Result<Array2<f64>> {
    if n == 0 || m == 0 {
        bail!("the gaussian generator needs n, m >= 1, got n = {n}, m = {m}");
    }
    columns_of_blocks(n, m, wanted, |b, cols| gaussian_block(seed, b, cols))
}

/// Column block `b` of the gaussian matrix, column by column from the block's stream.
fn gaussian_block(seed: u64, b: usize, cols: &mut ArrayViewMut2<f64>) {
    let mut rng = seed::rng(seed, &["G", &b.to_string()]);
    for mut col in cols.axis_iter_mut(Axis(1)) {
        col.iter_mut()
            .for_each(|v| *v = rng.sample::<f64, _>(StandardNormal));
    }
}
