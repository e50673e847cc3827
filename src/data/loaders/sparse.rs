//! Compressed sparse rows with one row per SAMPLE, so that a client's block of consecutive
//! samples is a contiguous slice of `indices`/`values` (a view, no copy).
//!
//! As a matrix it stores Aᵀ (m samples × n features) of the features × samples data matrix A
//! used everywhere else; the products below are written in terms of A. Nothing here ever
//! forms a dense n×m, n×n or m×m matrix.

use anyhow::{bail, Result};
use ndarray::{Array1, Array2, ArrayView1, ArrayView2};
use std::ops::Range;

/// Sparse samples: row j (sample j) holds `indices[indptr[j]..indptr[j+1]]` (feature numbers,
/// 0-based, strictly increasing) and the matching `values`.
#[derive(Debug, Clone, PartialEq)]
pub struct Csr {
    n_features: usize,
    indptr: Vec<usize>,
    indices: Vec<u32>,
    values: Vec<f64>,
}

/// A block of consecutive samples of a [`Csr`], borrowed.
#[derive(Debug, Clone, Copy)]
pub struct CsrView<'a> {
    n_features: usize,
    /// Row pointers of the block; they index the parent's arrays (offsets not rebased).
    indptr: &'a [usize],
    indices: &'a [u32],
    values: &'a [f64],
}

impl Csr {
    /// Build from raw arrays, checking the invariants.
    pub fn new(
        n_features: usize,
        indptr: Vec<usize>,
        indices: Vec<u32>,
        values: Vec<f64>,
    ) -> Result<Self> {
        if indptr.first() != Some(&0) {
            bail!("CSR row pointers must start at 0");
        }
        if indptr.windows(2).any(|w| w[0] > w[1]) {
            bail!("CSR row pointers must not decrease");
        }
        let nnz = *indptr.last().expect("non-empty");
        if indices.len() != nnz || values.len() != nnz {
            bail!(
                "CSR arrays disagree: row pointers end at {nnz}, {} indices, {} values",
                indices.len(),
                values.len()
            );
        }
        for (j, w) in indptr.windows(2).enumerate() {
            let row = &indices[w[0]..w[1]];
            if row.windows(2).any(|p| p[0] >= p[1]) {
                bail!("CSR row {j}: feature indices must be strictly increasing");
            }
            if let Some(&last) = row.last() {
                if last as usize >= n_features {
                    bail!("CSR row {j}: feature index {last} ≥ {n_features} features");
                }
            }
        }
        Ok(Self::from_parts_unchecked(
            n_features, indptr, indices, values,
        ))
    }

    /// For readers that have checked the invariants themselves.
    pub(crate) fn from_parts_unchecked(
        n_features: usize,
        indptr: Vec<usize>,
        indices: Vec<u32>,
        values: Vec<f64>,
    ) -> Self {
        Self {
            n_features,
            indptr,
            indices,
            values,
        }
    }

    /// Number of samples (rows).
    pub fn n_samples(&self) -> usize {
        self.indptr.len() - 1
    }

    /// Number of features (n, the dimension PCA reduces).
    pub fn n_features(&self) -> usize {
        self.n_features
    }

    pub fn nnz(&self) -> usize {
        self.values.len()
    }

    pub fn indptr(&self) -> &[usize] {
        &self.indptr
    }

    pub fn indices(&self) -> &[u32] {
        &self.indices
    }

    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// Heap bytes held: proportional to the non-zeros (12 per non-zero, 8 per sample).
    pub fn heap_bytes(&self) -> usize {
        self.indptr.capacity() * 8 + self.indices.capacity() * 4 + self.values.capacity() * 8
    }

    /// The samples of `a` then those of `b` (train then test), reusing `a`'s arrays.
    pub fn stack(mut a: Csr, b: Csr) -> Result<Csr> {
        if a.n_features != b.n_features {
            bail!(
                "cannot stack samples of {} and {} features",
                a.n_features,
                b.n_features
            );
        }
        let base = a.nnz();
        a.indptr.extend(b.indptr[1..].iter().map(|&k| k + base));
        a.indices.extend_from_slice(&b.indices);
        a.values.extend_from_slice(&b.values);
        Ok(a)
    }

    /// The samples in `order` (a partition's permutation, or the first m samples).
    pub fn select(&self, order: &[usize]) -> Csr {
        let nnz: usize = order
            .iter()
            .map(|&j| self.indptr[j + 1] - self.indptr[j])
            .sum();
        let mut indptr = Vec::with_capacity(order.len() + 1);
        let (mut indices, mut values) = (Vec::with_capacity(nnz), Vec::with_capacity(nnz));
        indptr.push(0);
        for &j in order {
            let r = self.indptr[j]..self.indptr[j + 1];
            indices.extend_from_slice(&self.indices[r.clone()]);
            values.extend_from_slice(&self.values[r]);
            indptr.push(indices.len());
        }
        Self::from_parts_unchecked(self.n_features, indptr, indices, values)
    }

    /// Multiply every value by `factor` (preprocessing that keeps zeros zero).
    pub fn scale(&mut self, factor: f64) {
        self.values.iter_mut().for_each(|v| *v *= factor);
    }

    /// All samples as a view.
    pub fn view(&self) -> CsrView<'_> {
        CsrView {
            n_features: self.n_features,
            indptr: &self.indptr,
            indices: &self.indices,
            values: &self.values,
        }
    }

    /// Samples `range` (a client's block) as a view; panics if out of bounds, like slicing.
    pub fn samples(&self, range: Range<usize>) -> CsrView<'_> {
        self.view().samples(range)
    }
}

impl<'a> CsrView<'a> {
    pub fn n_samples(&self) -> usize {
        self.indptr.len() - 1
    }

    pub fn n_features(&self) -> usize {
        self.n_features
    }

    pub fn nnz(&self) -> usize {
        self.indptr[self.indptr.len() - 1] - self.indptr[0]
    }

    /// Samples `range` of the block (relative to the block), as a view.
    pub fn samples(&self, range: Range<usize>) -> CsrView<'a> {
        CsrView {
            indptr: &self.indptr[range.start..=range.end],
            ..*self
        }
    }

    /// Sample j of the block: (feature indices, values).
    pub fn sample(&self, j: usize) -> (&'a [u32], &'a [f64]) {
        let r = self.indptr[j]..self.indptr[j + 1];
        (&self.indices[r.clone()], &self.values[r])
    }

    /// AᵀZ (samples × p) for Z dense n × p.
    pub fn at_z(&self, z: ArrayView2<f64>) -> Result<Array2<f64>> {
        let (zr, p) = self.row_major(z, "Z")?;
        let mut out = Array2::zeros((self.n_samples(), p));
        for (j, mut row) in out.rows_mut().into_iter().enumerate() {
            let w = row.as_slice_mut().expect("standard layout");
            let (idx, val) = self.sample(j);
            for (&i, &v) in idx.iter().zip(val) {
                axpy(v, &zr[i as usize * p..][..p], w);
            }
        }
        Ok(out)
    }

    /// A·Y (n × p) for Y dense samples × p.
    pub fn a_y(&self, y: ArrayView2<f64>) -> Result<Array2<f64>> {
        if y.nrows() != self.n_samples() {
            bail!(
                "A·Y: Y has {} rows but the block has {} samples",
                y.nrows(),
                self.n_samples()
            );
        }
        let p = y.ncols();
        let mut out = vec![0.0; self.n_features * p];
        for (j, yj) in y.rows().into_iter().enumerate() {
            let yj = yj.to_vec();
            let (idx, val) = self.sample(j);
            for (&i, &v) in idx.iter().zip(val) {
                axpy(v, &yj, &mut out[i as usize * p..][..p]);
            }
        }
        Ok(Array2::from_shape_vec((self.n_features, p), out).expect("n·p entries"))
    }

    /// A(AᵀZ) (n × p) for Z dense n × p, in one pass over the samples: for each sample a,
    /// w = aᵀZ (a p-vector), then add a·wᵀ. No samples × p temporary.
    pub fn a_at_z(&self, z: ArrayView2<f64>) -> Result<Array2<f64>> {
        let (zr, p) = self.row_major(z, "Z")?;
        let mut out = vec![0.0; self.n_features * p];
        let mut w = vec![0.0; p];
        for j in 0..self.n_samples() {
            let (idx, val) = self.sample(j);
            w.fill(0.0);
            for (&i, &v) in idx.iter().zip(val) {
                axpy(v, &zr[i as usize * p..][..p], &mut w);
            }
            for (&i, &v) in idx.iter().zip(val) {
                axpy(v, &w, &mut out[i as usize * p..][..p]);
            }
        }
        Ok(Array2::from_shape_vec((self.n_features, p), out).expect("n·p entries"))
    }

    /// (A − μ1ᵀ)((A − μ1ᵀ)ᵀZ) (n × p) for Z dense n × p and the n-vector μ, in one pass over
    /// the samples: for each sample a, w = aᵀZ − μᵀZ, add a·wᵀ and sum the w; then subtract
    /// μ·(Σw)ᵀ. Never forms a centred (dense) sample.
    pub fn centred_a_at_z(&self, z: ArrayView2<f64>, mean: ArrayView1<f64>) -> Result<Array2<f64>> {
        let (zr, p) = self.row_major(z, "Z")?;
        if mean.len() != self.n_features {
            bail!(
                "the mean has {} entries but the data has {} features",
                mean.len(),
                self.n_features
            );
        }
        let mz: Vec<f64> = mean.dot(&z).to_vec();
        let mut out = vec![0.0; self.n_features * p];
        let mut w = vec![0.0; p];
        let mut wsum = vec![0.0; p];
        for j in 0..self.n_samples() {
            let (idx, val) = self.sample(j);
            w.fill(0.0);
            for (&i, &v) in idx.iter().zip(val) {
                axpy(v, &zr[i as usize * p..][..p], &mut w);
            }
            for (wi, mi) in w.iter_mut().zip(&mz) {
                *wi -= mi;
            }
            for (&i, &v) in idx.iter().zip(val) {
                axpy(v, &w, &mut out[i as usize * p..][..p]);
            }
            axpy(1.0, &w, &mut wsum);
        }
        for (i, &m) in mean.iter().enumerate() {
            axpy(-m, &wsum, &mut out[i * p..][..p]);
        }
        Ok(Array2::from_shape_vec((self.n_features, p), out).expect("n·p entries"))
    }

    /// A1: the sum of the block's samples (n-vector), in sample order.
    pub fn sum(&self) -> Array1<f64> {
        let mut s = Array1::zeros(self.n_features);
        for j in 0..self.n_samples() {
            let (idx, val) = self.sample(j);
            for (&i, &v) in idx.iter().zip(val) {
                s[i as usize] += v;
            }
        }
        s
    }

    /// ‖A‖²_F of the block.
    pub fn fro2(&self) -> f64 {
        let r = self.indptr[0]..self.indptr[self.indptr.len() - 1];
        self.values[r].iter().map(|v| v * v).sum()
    }

    /// Add AAᵀ of the block to `g` (n × n): one outer product of each sample's non-zeros, so
    /// the cost is Σ_j nnz_j², never a dense pass.
    pub fn add_gram_to(&self, g: &mut Array2<f64>) {
        for j in 0..self.n_samples() {
            let (idx, val) = self.sample(j);
            for (&k, &vk) in idx.iter().zip(val) {
                let mut col = g.column_mut(k as usize);
                for (&i, &vi) in idx.iter().zip(val) {
                    col[i as usize] += vi * vk;
                }
            }
        }
    }

    /// Z copied row-major (n × p is small next to the data), so that Z's row i — the one a
    /// non-zero in feature i touches — is contiguous whatever Z's layout.
    fn row_major(&self, z: ArrayView2<f64>, what: &str) -> Result<(Vec<f64>, usize)> {
        if z.nrows() != self.n_features {
            bail!(
                "{what} has {} rows but the data has {} features",
                z.nrows(),
                self.n_features
            );
        }
        Ok((z.iter().copied().collect(), z.ncols()))
    }
}

/// y += a·x
#[inline]
fn axpy(a: f64, x: &[f64], y: &mut [f64]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += a * xi;
    }
}

#[cfg(test)]
mod tests {
    use super::Csr;
    use crate::linalg::max_rel_diff as rel;
    use crate::seed::{self, uniform_matrix};

    /// The CSR block's fused product (one sample at a time) equals its two-call product AᵀX
    /// then A·T to 1e-13 relative, for several shapes and densities, on whole matrices and on
    /// blocks of consecutive samples.
    #[test]
    fn csr_fused_equals_two_calls() {
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
}
