//! Readers for the real datasets' file formats: IDX (MNIST, Fashion-MNIST), CIFAR binary,
//! LIBSVM text, numeric CSV and NumPy .npy.
//!
//! Dense readers return samples as the COLUMNS of an n×m column-major matrix (features ×
//! samples, raw values: pixels stay 0..255, scaling is a later preprocessing step) plus one
//! label per sample. LIBSVM data stays sparse ([`Csr`], one row per sample). Every error names
//! the file and the byte offset or line; bad input never panics.

pub mod cifar;
pub mod csv;
pub mod idx;
pub mod libsvm;
pub mod npy;
mod open;
pub mod sparse;

pub(crate) use open::Capped;
pub use open::{decoded_cap, open_text, read_bytes, MAX_EXPANSION, MIN_DECODED_CAP};
pub use sparse::{Csr, CsrView};

use ndarray::Array2;

/// Dense samples with labels: `x` is features × samples, column-major; `labels[j]` is the
/// label of column j.
#[derive(Debug, Clone)]
pub struct Labeled {
    pub x: Array2<f64>,
    pub labels: Vec<u32>,
}

/// Sparse samples with labels: row j of `x` is sample j.
#[derive(Debug, Clone)]
pub struct LabeledSparse {
    pub x: Csr,
    pub labels: Vec<u32>,
}

impl Labeled {
    /// Samples of `parts` side by side, in order (e.g. CIFAR-10's five training batches).
    pub fn concat(parts: Vec<Labeled>) -> anyhow::Result<Labeled> {
        let n = parts.first().map_or(0, |p| p.x.nrows());
        if let Some(p) = parts.iter().find(|p| p.x.nrows() != n) {
            anyhow::bail!("cannot join samples of {} and {n} features", p.x.nrows());
        }
        let m: usize = parts.iter().map(|p| p.x.ncols()).sum();
        let mut data = Vec::with_capacity(n * m);
        let mut labels = Vec::with_capacity(m);
        for p in parts {
            // Column-major: the columns of each part follow each other in memory.
            data.extend(p.x.t().iter());
            labels.extend(p.labels);
        }
        Ok(Labeled {
            x: column_major(n, m, data)?,
            labels,
        })
    }
}

/// Dense samples whose values are bytes (IDX images, CIFAR pixels), as the files hold them:
/// sample j's `n` values are `bytes[j·n..(j+1)·n]`. An eighth of the f64 matrix, which is what
/// a rank of the MPI backend keeps while it picks its own samples ([`Labeled`] is this made f64).
#[derive(Debug, Clone)]
pub struct LabeledBytes {
    pub n: usize,
    pub bytes: Vec<u8>,
    pub labels: Vec<u32>,
}

impl LabeledBytes {
    pub fn samples(&self) -> usize {
        self.labels.len()
    }

    /// Sample `j`'s values as f64.
    pub fn column(&self, j: usize) -> ndarray::Array1<f64> {
        self.bytes[j * self.n..(j + 1) * self.n]
            .iter()
            .map(|&b| f64::from(b))
            .collect()
    }

    /// Samples of `parts` side by side, in order (e.g. CIFAR-10's five training batches).
    pub fn concat(parts: Vec<LabeledBytes>) -> anyhow::Result<LabeledBytes> {
        let n = parts.first().map_or(0, |p| p.n);
        if let Some(p) = parts.iter().find(|p| p.n != n) {
            anyhow::bail!("cannot join samples of {} and {n} features", p.n);
        }
        let mut joined = LabeledBytes {
            n,
            bytes: Vec::with_capacity(parts.iter().map(|p| p.bytes.len()).sum()),
            labels: Vec::new(),
        };
        for p in parts {
            joined.bytes.extend(p.bytes);
            joined.labels.extend(p.labels);
        }
        Ok(joined)
    }

    /// The f64 samples.
    pub fn to_labeled(self) -> anyhow::Result<Labeled> {
        let m = self.samples();
        let data = self.bytes.iter().map(|&b| f64::from(b)).collect();
        Ok(Labeled {
            x: column_major(self.n, m, data)?,
            labels: self.labels,
        })
    }
}

/// The memory budget against what a read holds so far, checked every 16 MiB of growth: a file
/// of any size (or a compressed one of any expansion) is refused at the line where it crossed
/// the budget, before it fills the memory.
pub(crate) struct Growth {
    next: u128,
}

impl Growth {
    pub(crate) fn new() -> Self {
        Growth { next: 0 }
    }

    /// Ok while `bytes` fit; otherwise an error starting with `at()` (the file and line).
    pub(crate) fn check(&mut self, bytes: u128, at: impl FnOnce() -> String) -> anyhow::Result<()> {
        if bytes < self.next {
            return Ok(());
        }
        self.next = bytes + (16 << 20);
        fits(bytes, at)
    }
}

/// Ok if `bytes` fit the memory budget; otherwise an error starting with `what()`.
pub(crate) fn fits(bytes: u128, what: impl FnOnce() -> String) -> anyhow::Result<()> {
    crate::util::memory::check(bytes).map_err(|e| anyhow::anyhow!("{} need {e}", what()))
}

/// An n×m column-major matrix from its columns laid end to end.
pub(crate) fn column_major(n: usize, m: usize, data: Vec<f64>) -> anyhow::Result<Array2<f64>> {
    use ndarray::ShapeBuilder;
    Array2::from_shape_vec((n, m).f(), data)
        .map_err(|e| anyhow::anyhow!("internal error: {n}×{m} matrix: {e}"))
}
