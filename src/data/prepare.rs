//! Loading the real datasets of [`crate::data::datasets`]: [`load_dense`] and [`load_sparse`]
//! read a split after checking every file's SHA-256, and [`dataset_matrix`] makes the n×m matrix
//! a manifest asks for: verified load, the first m samples of the split, then the preprocessing
//! steps in order; [`ByteSamples`] gives that matrix's columns one at a time for datasets of
//! byte values (what a rank of the MPI backend reads its own samples with).

use super::datasets::{self, Format};
use super::fetch;
use super::loaders::{cifar, csv, idx, libsvm, Csr, Labeled, LabeledBytes, LabeledSparse};
use super::matrix::DataMatrix;
use crate::data::matrix::top_eigenvalue;
use crate::spec::{DataSpec, DataSplit, Gen, Generator, Preprocess};
use anyhow::{bail, Result};
use ndarray::{s, Array1, Array2, Axis, ShapeBuilder};
use std::path::Path;

/// A dataset the manifest needs is not on this machine: not a failure of the run, but a
/// one-line message naming the command that fetches it.
#[derive(Debug)]
pub struct DatasetAbsent(pub String);

impl std::fmt::Display for DatasetAbsent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DatasetAbsent {}

/// A data file that contradicts a manifest key; the runner adds the key's file and line.
#[derive(Debug)]
pub struct KeyMismatch {
    pub key: &'static str,
    pub message: String,
}

impl std::fmt::Display for KeyMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for KeyMismatch {}

/// Which part of a dataset to load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    Train,
    Test,
    /// Train then test samples.
    All,
}

/// Load a dense dataset (IDX, CIFAR, WDBC) after checking every file's SHA-256. WDBC has no
/// test split: Train and All give its 569 samples.
pub fn load_dense(root: &Path, name: &str, split: Split) -> Result<Labeled> {
    if let Some(bytes) = load_bytes(root, name, split)? {
        return bytes.to_labeled();
    }
    let ds = datasets::find(name)?;
    let files = fetch::verified_files(root, ds)?;
    let path = |n: &str| files.dir.join(n);
    match ds.format {
        Format::Wdbc => {
            if split == Split::Test {
                bail!("wdbc has no test split: load Train or All");
            }
            let file = files.names[0];
            let opts = if file == "wdbc.data" {
                // UCI: ID, diagnosis (M/B), 30 features; no header.
                csv::CsvOptions {
                    header: csv::Header::Absent,
                    label: csv::LabelColumn::Index(1),
                    skip: vec![0],
                    label_names: vec![("M".into(), 0), ("B".into(), 1)],
                    ..Default::default()
                }
            } else {
                // scikit-learn: a "569,30,malignant,benign" header, 30 features, target 0/1.
                csv::CsvOptions {
                    header: csv::Header::Present,
                    label: csv::LabelColumn::Last,
                    ..Default::default()
                }
            };
            csv::read_csv(&path(file), &opts)
        }
        Format::Libsvm { .. } => bail!("{name} is sparse: load it with load_sparse"),
        Format::Idx | Format::Cifar10 | Format::Cifar100 => unreachable!("loaded as bytes"),
    }
}

/// Load a dataset whose values are bytes (IDX, CIFAR) after checking every file's SHA-256,
/// keeping them as bytes; None for the other formats.
pub fn load_bytes(root: &Path, name: &str, split: Split) -> Result<Option<LabeledBytes>> {
    let ds = datasets::find(name)?;
    if !matches!(ds.format, Format::Idx | Format::Cifar10 | Format::Cifar100) {
        return Ok(None);
    }
    let files = fetch::verified_files(root, ds)?;
    let path = |n: &str| files.dir.join(n);
    let train_test = |train: &dyn Fn() -> Result<LabeledBytes>,
                      test: &dyn Fn() -> Result<LabeledBytes>| match split {
        Split::Train => train(),
        Split::Test => test(),
        Split::All => LabeledBytes::concat(vec![train()?, test()?]),
    };
    let idx = |prefix: &str| {
        idx::read_pair_bytes(
            &path(&format!("{prefix}-images-idx3-ubyte")),
            &path(&format!("{prefix}-labels-idx1-ubyte")),
        )
    };
    let fine = cifar::Cifar100Label::Fine;
    match ds.format {
        Format::Idx => train_test(&|| idx("train"), &|| idx("t10k")),
        Format::Cifar10 => train_test(
            &|| {
                let batches: Vec<_> = (1..=5)
                    .map(|i| path(&format!("data_batch_{i}.bin")))
                    .collect();
                let refs: Vec<&Path> = batches.iter().map(|p| p.as_path()).collect();
                cifar::read_cifar10_batches_bytes(&refs)
            },
            &|| cifar::read_cifar10_bytes(&path("test_batch.bin")),
        ),
        Format::Cifar100 => train_test(
            &|| cifar::read_cifar100_bytes(&path("train.bin"), fine),
            &|| cifar::read_cifar100_bytes(&path("test.bin"), fine),
        ),
        _ => unreachable!("checked above"),
    }
    .map(Some)
}

/// Load a sparse (LIBSVM) dataset after checking every file's SHA-256.
pub fn load_sparse(root: &Path, name: &str, split: Split) -> Result<LabeledSparse> {
    load_sparse_rows(root, name, split, &|_| true)
}

/// [`load_sparse`] keeping only the samples `keep` accepts (by index in the split, from 0) in
/// `x`, and every sample's label ([`libsvm::read_libsvm_rows`]).
pub fn load_sparse_rows(
    root: &Path,
    name: &str,
    split: Split,
    keep: &dyn Fn(usize) -> bool,
) -> Result<LabeledSparse> {
    let ds = datasets::find(name)?;
    let Format::Libsvm { n_features } = ds.format else {
        bail!("{name} is dense: load it with load_dense");
    };
    let files = fetch::verified_files(root, ds)?;
    let read = |k: usize, keep: &dyn Fn(usize) -> bool| {
        libsvm::read_libsvm_rows(&files.dir.join(files.names[k]), Some(n_features), keep)
    };
    // Files come in (train, test) pairs.
    let picked: Vec<usize> = (0..files.names.len())
        .filter(|k| match split {
            Split::Train => k % 2 == 0,
            Split::Test => k % 2 == 1,
            Split::All => true,
        })
        .collect();
    let mut out: Option<LabeledSparse> = None;
    for k in picked {
        // Sample indices run on across the stacked files.
        let before = out.as_ref().map_or(0, |a| a.labels.len());
        let b = read(k, &|j| keep(before + j))?;
        out = Some(match out {
            None => b,
            Some(a) => {
                let mut labels = a.labels;
                labels.extend(b.labels);
                LabeledSparse {
                    x: Csr::stack(a.x, b.x)?,
                    labels,
                }
            }
        });
    }
    out.ok_or_else(|| anyhow::anyhow!("{name}: no files for this split"))
}

/// Samples `wanted` (in that order, each among the first `spec.m`) of [`dataset_matrix`]'s
/// matrix for a LIBSVM dataset without preprocessing, equal to them, holding only those
/// samples' entries (the file is still read and checked whole); None for other data.
pub fn sparse_samples(spec: &DataSpec, root: &Path, wanted: &[usize]) -> Result<Option<Csr>> {
    if spec.generator() != Generator::Dataset || !spec.preprocess().is_empty() {
        return Ok(None);
    }
    let (name, ds, split) = locate(spec, root)?;
    if !matches!(ds.format, Format::Libsvm { .. }) {
        return Ok(None);
    }
    let mut kept = vec![false; spec.m];
    for &j in wanted {
        match kept.get_mut(j) {
            Some(k) => *k = true,
            None => bail!("sample {j} of {name}'s first {}", spec.m),
        }
    }
    let data = load_sparse_rows(root, name, split, &|j| kept.get(j) == Some(&true))?;
    check_shape(spec, name, data.x.n_features(), data.labels.len())?;
    // The kept samples are in file order: sample j is the rank(j)-th kept one.
    let mut rank = vec![usize::MAX; spec.m];
    for (r, j) in (0..spec.m).filter(|&j| kept[j]).enumerate() {
        rank[j] = r;
    }
    let at: Vec<usize> = wanted.iter().map(|&j| rank[j]).collect();
    Ok(Some(data.x.select(&at)))
}

/// Load `spec.dataset` from `root`, keep its first `spec.m` samples, preprocess; with their labels.
/// LIBSVM datasets stay sparse. A manifest's own file (generator "file") is read by
/// [`super::own::file_matrix`], with labels only if it has them.
pub fn dataset_matrix(spec: &DataSpec, root: &Path) -> Result<(DataMatrix, Option<Vec<u32>>)> {
    if spec.generator() == Generator::File {
        return super::own::file_matrix(spec);
    }
    let (name, ds, split) = locate(spec, root)?;
    let (x, labels) = if matches!(ds.format, Format::Libsvm { .. }) {
        let data = load_sparse(root, name, split)?;
        (DataMatrix::Sparse(data.x), data.labels)
    } else {
        let data = load_dense(root, name, split)?;
        (DataMatrix::Dense(data.x), data.labels)
    };
    check_shape(spec, name, x.n(), x.m())?;
    let mut a = match x {
        DataMatrix::Dense(x) => {
            DataMatrix::Dense(crate::linalg::to_f_order(x.slice(s![.., ..spec.m])))
        }
        sparse if spec.m == sparse.m() => sparse,
        sparse => sparse.select(&(0..spec.m).collect::<Vec<_>>()),
    };
    preprocess(&mut a, spec.preprocess(), name)?;
    Ok((a, Some(labels[..spec.m].to_vec())))
}

/// The samples of [`dataset_matrix`]'s matrix one at a time, equal to its columns bit for bit,
/// without holding them in f64: for datasets of byte values (IDX, CIFAR), kept as bytes, whose
/// preprocessing steps act entry by entry given statistics of all samples (`scale01`, `center`:
/// the mean is summed column by column in sample order, as [`center`] sums it). None for other
/// datasets and steps (the caller loads the whole matrix). What a rank of the MPI backend reads
/// its own samples from.
pub struct ByteSamples {
    raw: LabeledBytes,
    steps: Vec<Preprocess>,
    /// The mean of each centring step, over the samples as the steps before it left them.
    means: Vec<Array1<f64>>,
    /// Samples kept: the first m.
    m: usize,
}

impl ByteSamples {
    pub fn open(spec: &DataSpec, root: &Path) -> Result<Option<Self>> {
        let entrywise = |s: &Preprocess| matches!(s, Preprocess::Scale01 | Preprocess::Center);
        if spec.generator() != Generator::Dataset || !spec.preprocess().iter().all(entrywise) {
            return Ok(None);
        }
        let (name, _, split) = locate(spec, root)?;
        let Some(raw) = load_bytes(root, name, split)? else {
            return Ok(None);
        };
        check_shape(spec, name, raw.n, raw.samples())?;
        let mut samples = Self {
            raw,
            steps: Vec::new(),
            means: Vec::new(),
            m: spec.m,
        };
        for step in spec.preprocess() {
            if *step == Preprocess::Center {
                let mut sum = Array1::<f64>::zeros(samples.n());
                for j in 0..samples.m {
                    sum += &samples.column(j);
                }
                samples.means.push(sum / samples.m as f64);
            }
            samples.steps.push(*step);
        }
        Ok(Some(samples))
    }

    /// Features.
    pub fn n(&self) -> usize {
        self.raw.n
    }

    /// Samples (the first m of the split).
    pub fn m(&self) -> usize {
        self.m
    }

    /// The labels of the m samples.
    pub fn labels(&self) -> &[u32] {
        &self.raw.labels[..self.m]
    }

    /// Sample `j` (< m) after the preprocessing steps: the same operation on each entry as
    /// [`apply`] on the whole matrix.
    pub fn column(&self, j: usize) -> Array1<f64> {
        let mut col = self.raw.column(j);
        let mut centred = 0;
        for step in &self.steps {
            match step {
                Preprocess::Scale01 => col.mapv_inplace(|v| v / 255.0),
                Preprocess::Center => {
                    col -= &self.means[centred];
                    centred += 1;
                }
                other => unreachable!("{} is not entrywise", other.name()),
            }
        }
        col
    }

    /// Samples `wanted` (each < m), side by side, column-major.
    pub fn columns(&self, wanted: &[usize]) -> Result<Array2<f64>> {
        if let Some(&j) = wanted.iter().find(|&&j| j >= self.m) {
            bail!("sample {j} of the first {}", self.m);
        }
        let mut out = Array2::<f64>::zeros((self.n(), wanted.len()).f());
        for (at, &j) in wanted.iter().enumerate() {
            out.column_mut(at).assign(&self.column(j));
        }
        Ok(out)
    }
}

/// The dataset `spec` names (fetched, or an error naming the command that fetches it), and
/// the split to load.
fn locate<'s>(
    spec: &'s DataSpec,
    root: &Path,
) -> Result<(&'s str, &'static datasets::Dataset, Split)> {
    let Gen::Dataset(d) = &spec.gen else {
        bail!(
            "internal error: generator = \"{}\" names no dataset",
            spec.generator()
        );
    };
    let name = d.dataset.as_str();
    let ds = datasets::find(name)?;
    if matches!(
        fetch::status(root, ds),
        fetch::State::Absent | fetch::State::Incomplete(_)
    ) {
        return Err(DatasetAbsent(fetch::absent_message(root, ds)).into());
    }
    let split = match d.split.unwrap_or(DataSplit::Train) {
        DataSplit::Train => Split::Train,
        DataSplit::Test => Split::Test,
        DataSplit::All => Split::All,
    };
    Ok((name, ds, split))
}

/// The manifest's n and m against the dataset's `features` × `samples`.
fn check_shape(spec: &DataSpec, name: &str, features: usize, samples: usize) -> Result<()> {
    // data.n counts the appended noise features too (they are added by the caller).
    let noise = spec.noise_features();
    if features + noise != spec.n {
        let plus = if noise > 0 {
            format!(" + {noise} noise features")
        } else {
            String::new()
        };
        return Err(KeyMismatch {
            key: "data.n",
            message: format!(
                "data.n = {} but {name} has {features} features{plus}: set data.n = {}",
                spec.n,
                features + noise
            ),
        }
        .into());
    }
    if spec.m > samples {
        return Err(KeyMismatch {
            key: "data.m",
            message: format!(
                "data.m = {} but the {name} split has only {samples} samples: set data.m ≤ {samples}",
                spec.m,
            ),
        }
        .into());
    }
    Ok(())
}

/// Apply `steps` in order to the data of dataset `name`; sparse data accepts only unit_top.
pub fn preprocess(a: &mut DataMatrix, steps: &[Preprocess], name: &str) -> Result<()> {
    for step in steps {
        match (&mut *a, step) {
            // Rescaling keeps zeros zero: the one step for dense and sparse data alike.
            (_, Preprocess::UnitTop) => {
                let top = top_eigenvalue(a.view())?;
                if top <= 0.0 {
                    bail!("cannot rescale to λ₁ = 1: the data matrix is zero");
                }
                a.scale(1.0 / top.sqrt());
            }
            (DataMatrix::Dense(d), _) => apply(d, *step),
            (DataMatrix::Sparse(_) | DataMatrix::Centred { .. }, _) => bail!(
                "preprocessing step `{}` would densify the sparse dataset {name}: \
                 only unit_top keeps it sparse",
                step.name()
            ),
        }
    }
    Ok(())
}

/// Centre every feature (row), then divide it by its standard deviation with divisor
/// m − `ddof`; constant features stay 0.
fn scale_features(a: &mut Array2<f64>, ddof: usize) {
    apply(a, Preprocess::Center);
    let m = a.ncols();
    let divisor = m.saturating_sub(ddof).max(1) as f64;
    let sd = a.map_axis(Axis(1), |row| (row.dot(&row) / divisor).sqrt());
    let inv = sd.mapv(|s| if s > 0.0 { 1.0 / s } else { 0.0 });
    *a *= &inv.insert_axis(Axis(1));
}

/// Subtract the global mean sample from every sample (column).
pub fn center(a: &mut Array2<f64>) {
    let mean = a.mean_axis(Axis(1)).expect("m >= 1");
    *a -= &mean.insert_axis(Axis(1));
}

/// A dense preprocessing step other than unit_top.
fn apply(a: &mut Array2<f64>, step: Preprocess) {
    match step {
        Preprocess::Scale01 => a.mapv_inplace(|v| v / 255.0),
        Preprocess::Center => center(a),
        Preprocess::Standardize => scale_features(a, 0),
        Preprocess::Zscore => scale_features(a, 1),
        Preprocess::UnitTop => unreachable!("rescaling is applied to dense and sparse data alike"),
    }
}
