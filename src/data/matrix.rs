//! The data matrix A (features × samples) as methods and metrics see it: dense and column-major,
//! or sparse samples ([`Csr`]) that are never densified. A client holds a [`Block`] of
//! consecutive samples, a view into the one matrix.
//!
//! Sparse data that must be centred (the eigvec family centres by the global mean μ) is kept as
//! [`DataMatrix::Centred`]: the CSR samples and μ, applied as X_c = X − μ1ᵀ without filling in
//! the zeros: X_cᵀZ = XᵀZ − 1(μᵀZ) and X_cY = XY − μ(1ᵀY).
//!
//! Products over the whole matrix (the Gram matrix, A(AᵀX) for metrics and the Krylov
//! reference) run in parallel over a fixed number of sample groups summed in a fixed order, so
//! their bits do not depend on the thread count.

use crate::data::loaders::{Csr, CsrView};
use crate::linalg::gram_product::{gram_times_dense, t_times_dense};
use crate::linalg::krylov::{top_eigs, KrylovOptions, TopEig, KRYLOV_TOL};
use crate::linalg::{fro2, spectral_norm2, sym_eig_desc};
use crate::seed;
use crate::seed::uniform_matrix;
use ndarray::{s, Array1, Array2, ArrayView1, ArrayView2, Axis, ShapeBuilder};
use rayon::prelude::*;

/// Columns per block of the dense Gram sum, and groups summed in order (fixed: they define the
/// summation order, and cached Gram matrices were computed with them).
const GRAM_BLOCK: usize = 4096;
const GRAM_GROUPS: usize = 8;
/// Groups of a sparse Gram sum: each holds an n×n partial, so fewer than the dense ones.
const SPARSE_GRAM_GROUPS: usize = 4;
/// Sample groups of a whole-matrix product A(AᵀX).
const PRODUCT_GROUPS: usize = 16;

/// The data of one instance.
#[derive(Clone, Debug, PartialEq)]
pub enum DataMatrix {
    /// n × m, column-major: every block of consecutive samples is one contiguous slice.
    Dense(Array2<f64>),
    /// m sparse samples of n features.
    Sparse(Csr),
    /// m sparse samples of n features less the n-vector `mean` each (implicit centring).
    Centred { x: Csr, mean: Array1<f64> },
}

impl DataMatrix {
    /// Features.
    pub fn n(&self) -> usize {
        self.view().n()
    }

    /// Samples.
    pub fn m(&self) -> usize {
        self.view().samples()
    }

    pub fn view(&self) -> Block<'_> {
        match self {
            Self::Dense(a) => Block::Dense(a.view()),
            Self::Sparse(a) => Block::Sparse(a.view()),
            Self::Centred { x, mean } => Block::Centred(x.view(), mean.view()),
        }
    }

    /// The samples in `order`, as a new matrix of the same kind.
    pub fn select(&self, order: &[usize]) -> Self {
        match self {
            Self::Dense(a) => {
                Self::Dense(crate::linalg::to_f_order(a.select(Axis(1), order).view()))
            }
            Self::Sparse(a) => Self::Sparse(a.select(order)),
            Self::Centred { x, mean } => Self::Centred {
                x: x.select(order),
                mean: mean.clone(),
            },
        }
    }

    /// Multiply every entry by `factor`.
    pub fn scale(&mut self, factor: f64) {
        match self {
            Self::Dense(a) => a.mapv_inplace(|v| v * factor),
            Self::Sparse(a) => a.scale(factor),
            Self::Centred { x, mean } => {
                x.scale(factor);
                mean.mapv_inplace(|v| v * factor);
            }
        }
    }

    pub fn is_sparse(&self) -> bool {
        matches!(self, Self::Sparse(_) | Self::Centred { .. })
    }
}

/// [`Block::gram`] of a dense n×m matrix given block by block, `block(range)` returning those
/// columns (n × len, column-major) or the error that ends the sum: the same products summed in
/// the same order, so the same bits, holding one block and two n×n matrices at a time (groups
/// one after the other; their sum is in group order either way, as in [`sum_in_order`]).
///
/// [`sum_in_order`]: crate::linalg::sum_in_order
pub fn dense_gram_by_blocks(
    n: usize,
    m: usize,
    mut block: impl FnMut(std::ops::Range<usize>) -> anyhow::Result<Array2<f64>>,
) -> anyhow::Result<Array2<f64>> {
    let chunks: Vec<usize> = (0..m.div_ceil(GRAM_BLOCK)).collect();
    let per_group = chunks.len().div_ceil(GRAM_GROUPS).max(1);
    let mut g = Array2::<f64>::zeros((n, n).f());
    for group in chunks.chunks(per_group) {
        let mut acc = Array2::<f64>::zeros((n, n).f());
        for &c in group {
            let b = block(c * GRAM_BLOCK..((c + 1) * GRAM_BLOCK).min(m))?;
            ndarray::linalg::general_mat_mul(1.0, &b, &b.t(), 1.0, &mut acc);
        }
        g += &acc;
    }
    Ok(g)
}

/// Consecutive samples of a [`DataMatrix`]: a client's A_i, or all of A.
#[derive(Clone, Copy, Debug)]
pub enum Block<'a> {
    Dense(ArrayView2<'a, f64>),
    Sparse(CsrView<'a>),
    /// Sparse samples less the global mean μ (the n-vector), each: X_c = X − μ1ᵀ.
    Centred(CsrView<'a>, ArrayView1<'a, f64>),
}

impl<'a> Block<'a> {
    pub fn n(&self) -> usize {
        match self {
            Self::Dense(a) => a.nrows(),
            Self::Sparse(a) | Self::Centred(a, _) => a.n_features(),
        }
    }

    pub fn samples(&self) -> usize {
        match self {
            Self::Dense(a) => a.ncols(),
            Self::Sparse(a) | Self::Centred(a, _) => a.n_samples(),
        }
    }

    /// The dense view, if the block is dense.
    pub fn as_dense(&self) -> Option<ArrayView2<'a, f64>> {
        match self {
            Self::Dense(a) => Some(*a),
            Self::Sparse(_) | Self::Centred(..) => None,
        }
    }

    /// The dense view for one pass over the samples, counted as one ([`super::reads`]): what a
    /// method's client uses each time it reads its data element by element. [`Self::as_dense`]
    /// is for shapes and setup only.
    pub fn read_dense(&self) -> Option<ArrayView2<'a, f64>> {
        let view = self.as_dense()?;
        super::reads::count(self.samples());
        Some(view)
    }

    /// Samples `start..end` of the block.
    pub fn range(&self, start: usize, end: usize) -> Block<'a> {
        match self {
            Self::Dense(a) => Self::Dense(a.slice_move(s![.., start..end])),
            Self::Sparse(a) => Self::Sparse(a.samples(start..end)),
            Self::Centred(a, mean) => Self::Centred(a.samples(start..end), *mean),
        }
    }

    /// Consecutive sub-blocks with the given numbers of samples (views, no copies).
    pub fn split(&self, sizes: &[usize]) -> Vec<Block<'a>> {
        let mut start = 0;
        sizes
            .iter()
            .map(|&len| {
                let b = self.range(start, start + len);
                start += len;
                b
            })
            .collect()
    }

    /// `A (Aᵀ X)`: the product with the block's Gram matrix, without forming it.
    /// `x` must have n rows (an invariant of every caller, not user input).
    ///
    /// Dense: [`gram_times_dense`] (the AVX-512 kernel fused over chunks of samples, or two BLAS
    /// calls). CSR: fused, one sample at a time ([`CsrView::a_at_z`]).
    pub fn gram_times(&self, x: ArrayView2<f64>) -> Array2<f64> {
        match self {
            Self::Dense(a) => gram_times_dense(*a, x),
            Self::Sparse(a) => a.a_at_z(x).expect("X has one row per feature"),
            Self::Centred(a, mean) => a
                .centred_a_at_z(x, *mean)
                .expect("X has one row per feature"),
        }
    }

    /// AᵀZ (samples × p), for Z with one row per feature (an invariant of every caller).
    pub fn t_dot(&self, z: ArrayView2<f64>) -> Array2<f64> {
        match self {
            Self::Dense(a) => t_times_dense(*a, z),
            Self::Sparse(a) => a.at_z(z).expect("Z has one row per feature"),
            Self::Centred(a, mean) => {
                let mut t = a.at_z(z).expect("Z has one row per feature");
                t -= &mean.dot(&z).insert_axis(Axis(0));
                t
            }
        }
    }

    /// ‖x_j‖² of every sample; centred samples as ‖μ‖² + Σ_(i: x_ji ≠ 0) ((x_ji − μ_i)² − μ_i²),
    /// which keeps the digits the expansion ‖x‖² − 2xᵀμ + ‖μ‖² would cancel.
    pub fn sample_norms2(&self) -> Vec<f64> {
        match self {
            Self::Dense(a) => a.columns().into_iter().map(|c| c.dot(&c)).collect(),
            Self::Sparse(a) => (0..a.n_samples())
                .map(|j| a.sample(j).1.iter().map(|v| v * v).sum())
                .collect(),
            Self::Centred(a, mean) => {
                let mm = mean.dot(mean);
                (0..a.n_samples())
                    .map(|j| {
                        let (idx, val) = a.sample(j);
                        let fill: f64 = idx
                            .iter()
                            .zip(val)
                            .map(|(&i, &v)| {
                                let m = mean[i as usize];
                                (v - m) * (v - m) - m * m
                            })
                            .sum();
                        mm + fill
                    })
                    .collect()
            }
        }
    }

    /// Sample j as a dense n-vector, written into `out` (centred samples less μ): tests build
    /// dense copies of sparse blocks with it.
    #[cfg(test)]
    pub(crate) fn sample_into(&self, j: usize, out: &mut [f64]) {
        match self {
            Self::Dense(a) => {
                for (o, v) in out.iter_mut().zip(a.column(j)) {
                    *o = *v;
                }
            }
            Self::Sparse(a) => {
                out.fill(0.0);
                let (idx, val) = a.sample(j);
                for (&i, &v) in idx.iter().zip(val) {
                    out[i as usize] = v;
                }
            }
            Self::Centred(a, mean) => {
                for (o, m) in out.iter_mut().zip(mean.iter()) {
                    *o = -m;
                }
                let (idx, val) = a.sample(j);
                for (&i, &v) in idx.iter().zip(val) {
                    out[i as usize] += v;
                }
            }
        }
    }

    /// ‖AᵀZ‖²_F.
    pub fn fro2_at(&self, z: ArrayView2<f64>) -> f64 {
        fro2(self.t_dot(z).view())
    }

    /// ‖A‖²_F.
    pub fn fro2(&self) -> f64 {
        match self {
            Self::Dense(a) => fro2(*a),
            Self::Sparse(a) => a.fro2(),
            // Σ_j ‖x_j − μ‖², sample by sample.
            Self::Centred(..) => self.sample_norms2().iter().sum(),
        }
    }

    /// Estimate ‖A‖₂² by `iters` power steps from `start` (see [`spectral_norm2`]).
    pub fn spectral_norm2(&self, start: Array1<f64>, iters: usize) -> f64 {
        match self {
            Self::Dense(a) => spectral_norm2(|v| a.dot(&a.t().dot(v)), start, iters),
            Self::Sparse(_) | Self::Centred(..) => spectral_norm2(
                |v| {
                    let col = v.view().insert_axis(Axis(1));
                    self.gram_times(col).remove_axis(Axis(1))
                },
                start,
                iters,
            ),
        }
    }

    /// The sample groups of a whole-matrix sum: `groups` consecutive ranges, fixed by m alone.
    fn groups(&self, chunk: usize, groups: usize) -> Vec<Vec<Block<'a>>> {
        let m = self.samples();
        let chunks: Vec<Block<'a>> = (0..m.div_ceil(chunk))
            .map(|c| self.range(c * chunk, ((c + 1) * chunk).min(m)))
            .collect();
        let per_group = chunks.len().div_ceil(groups).max(1);
        chunks.chunks(per_group).map(<[_]>::to_vec).collect()
    }

    /// G = AAᵀ (n × n), deterministic whatever the thread count.
    pub fn gram(&self) -> Array2<f64> {
        let n = self.n();
        let groups = match self {
            Self::Dense(_) => self.groups(GRAM_BLOCK, GRAM_GROUPS),
            Self::Sparse(_) | Self::Centred(..) => self.groups(
                self.samples().div_ceil(SPARSE_GRAM_GROUPS).max(1),
                SPARSE_GRAM_GROUPS,
            ),
        };
        crate::linalg::sum_in_order(
            groups.len(),
            || Array2::<f64>::zeros((n, n).f()),
            |g| {
                let mut acc = Array2::<f64>::zeros((n, n).f());
                for b in &groups[g] {
                    match b {
                        Self::Dense(b) => {
                            ndarray::linalg::general_mat_mul(1.0, b, &b.t(), 1.0, &mut acc)
                        }
                        Self::Sparse(b) => b.add_gram_to(&mut acc),
                        // (X − μ1ᵀ)(X − μ1ᵀ)ᵀ = XXᵀ − sμᵀ − μsᵀ + m μμᵀ, s = X1.
                        Self::Centred(b, mean) => {
                            b.add_gram_to(&mut acc);
                            let s = b.sum();
                            let m = b.n_samples() as f64;
                            let (s, mu) =
                                (s.view().insert_axis(Axis(1)), mean.insert_axis(Axis(1)));
                            let smu = s.dot(&mu.t());
                            acc -= &smu;
                            acc -= &smu.t();
                            acc.scaled_add(m, &mu.dot(&mu.t()));
                        }
                    }
                }
                acc
            },
        )
    }

    /// The top p eigenpairs of AAᵀ by block Krylov on [`Self::gram_times_par`], from a start
    /// fixed by (n, p), to residuals ≤ [`KRYLOV_TOL`]·σ₁²: the reference of large problems and
    /// the local solves of methods on sparse blocks alike.
    pub fn top_gram_eigs(&self, p: usize) -> anyhow::Result<TopEig> {
        use anyhow::Context;
        let n = self.n();
        let block = krylov_block(n, p);
        let start = uniform_matrix(
            n,
            block,
            &mut seed::rng(0, &["krylov-start", &n.to_string(), &p.to_string()]),
        );
        let opts = KrylovOptions {
            steps: KRYLOV_STEPS,
            tol: KRYLOV_TOL,
            max_restarts: 500,
        };
        top_eigs(p, |x| self.gram_times_par(x), start.view(), opts)
            .context("top eigenpairs of AAᵀ by block Krylov")
    }

    /// A(AᵀX) over the whole block in parallel sample groups, summed in a fixed order.
    pub fn gram_times_par(&self, x: ArrayView2<f64>) -> Array2<f64> {
        let chunk = self.samples().div_ceil(PRODUCT_GROUPS).max(1);
        let partials: Vec<Array2<f64>> = self
            .groups(chunk, PRODUCT_GROUPS)
            .par_iter()
            .map(|group| {
                let mut acc = Array2::<f64>::zeros((self.n(), x.ncols()));
                for b in group {
                    acc += &b.gram_times(x);
                }
                acc
            })
            .collect();
        let mut out = Array2::<f64>::zeros((self.n(), x.ncols()));
        for p in &partials {
            out += p;
        }
        out
    }
}

/// Largest n whose reference goes through the n×n Gram matrix (512 MB at 8192).
pub const GRAM_MAX_N: usize = 8192;

/// Krylov steps per restart in [`Block::top_gram_eigs`].
const KRYLOV_STEPS: usize = 10;

/// Block size of [`Block::top_gram_eigs`] for the top `p` of `n` features.
fn krylov_block(n: usize, p: usize) -> usize {
    (p + p.max(10)).min(n / 2)
}

/// Bytes the reference for the top `p` of data with `n` features works in, at the least: the
/// n×n Gram matrix and its eigenvectors up to [`GRAM_MAX_N`]; beyond, block Krylov's basis and
/// its image under AAᵀ (steps + 1 blocks of n each) and the partial products of the sample
/// groups, all held at once. Checked before a run, since n comes from a manifest or a file.
pub fn reference_bytes(n: usize, p: usize) -> u128 {
    let n128 = n as u128;
    if n <= GRAM_MAX_N {
        return 8 * 2 * n128 * n128;
    }
    let block = krylov_block(n, p) as u128;
    8 * n128 * block * (2 * (KRYLOV_STEPS as u128 + 1) + PRODUCT_GROUPS as u128)
}

/// λ₁(AAᵀ) = ‖A‖₂², exactly as the reference would compute it (for rescaling data to λ₁ = 1).
pub fn top_eigenvalue(data: Block) -> anyhow::Result<f64> {
    if data.n() <= GRAM_MAX_N {
        Ok(sym_eig_desc(data.gram().view())?.values[0])
    } else {
        Ok(data.top_gram_eigs(1)?.values[0])
    }
}
