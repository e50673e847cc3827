//! Loading the real datasets of [`crate::data::datasets`]: [`load_dense`] and [`load_sparse`]
//! read a split after checking every file's SHA-256, and [`dataset_matrix`] makes the n×m matrix
//! a manifest asks for: verified load, the first m samples of the split, then the preprocessing
//! steps in order.

use super::datasets::{self, Format};
use super::fetch;
use super::loaders::{cifar, csv, idx, libsvm, Csr, Labeled, LabeledSparse};
use super::matrix::DataMatrix;
use crate::manifest::{DataSpec, DataSplit, Generator, Preprocess};
use crate::problem::subspace::top_eigenvalue;
use anyhow::{bail, Result};
use ndarray::{s, Array2, Axis};
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
    let ds = datasets::find(name)?;
    let files = fetch::verified_files(root, ds)?;
    let path = |n: &str| files.dir.join(n);
    let train_test =
        |train: &dyn Fn() -> Result<Labeled>, test: &dyn Fn() -> Result<Labeled>| match split {
            Split::Train => train(),
            Split::Test => test(),
            Split::All => Labeled::concat(vec![train()?, test()?]),
        };
    match ds.format {
        Format::Idx => train_test(
            &|| {
                idx::read_pair(
                    &path("train-images-idx3-ubyte"),
                    &path("train-labels-idx1-ubyte"),
                )
            },
            &|| {
                idx::read_pair(
                    &path("t10k-images-idx3-ubyte"),
                    &path("t10k-labels-idx1-ubyte"),
                )
            },
        ),
        Format::Cifar10 => train_test(
            &|| {
                let batches: Vec<_> = (1..=5)
                    .map(|i| path(&format!("data_batch_{i}.bin")))
                    .collect();
                let refs: Vec<&Path> = batches.iter().map(|p| p.as_path()).collect();
                cifar::read_cifar10_batches(&refs)
            },
            &|| cifar::read_cifar10(&path("test_batch.bin")),
        ),
        Format::Cifar100 => train_test(
            &|| cifar::read_cifar100(&path("train.bin"), cifar::Cifar100Label::Fine),
            &|| cifar::read_cifar100(&path("test.bin"), cifar::Cifar100Label::Fine),
        ),
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
    }
}

/// Load a sparse (LIBSVM) dataset after checking every file's SHA-256.
pub fn load_sparse(root: &Path, name: &str, split: Split) -> Result<LabeledSparse> {
    let ds = datasets::find(name)?;
    let Format::Libsvm { n_features } = ds.format else {
        bail!("{name} is dense: load it with load_dense");
    };
    let files = fetch::verified_files(root, ds)?;
    let read = |k: usize| libsvm::read_libsvm(&files.dir.join(files.names[k]), Some(n_features));
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
        let b = read(k)?;
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

/// Load `spec.dataset` from `root`, keep its first `spec.m` samples, preprocess; with their labels.
/// LIBSVM datasets stay sparse. A manifest's own file (generator "file") is read by
/// [`super::own::file_matrix`], with labels only if it has them.
pub fn dataset_matrix(spec: &DataSpec, root: &Path) -> Result<(DataMatrix, Option<Vec<u32>>)> {
    if spec.generator == Generator::File {
        return super::own::file_matrix(spec);
    }
    let name = spec
        .dataset
        .as_deref()
        .expect("validated: dataset data has a name");
    let ds = datasets::find(name)?;
    if matches!(
        fetch::status(root, ds),
        fetch::State::Absent | fetch::State::Incomplete(_)
    ) {
        return Err(DatasetAbsent(fetch::absent_message(root, ds)).into());
    }
    let split = match spec.split.unwrap_or(DataSplit::Train) {
        DataSplit::Train => Split::Train,
        DataSplit::Test => Split::Test,
        DataSplit::All => Split::All,
    };
    let (x, labels) = if matches!(ds.format, Format::Libsvm { .. }) {
        let data = load_sparse(root, name, split)?;
        (DataMatrix::Sparse(data.x), data.labels)
    } else {
        let data = load_dense(root, name, split)?;
        (DataMatrix::Dense(data.x), data.labels)
    };
    // data.n counts the appended noise features too (they are added by the caller).
    let noise = spec.noise_features.unwrap_or(0);
    if x.n() + noise != spec.n {
        let plus = if noise > 0 {
            format!(" + {noise} noise features")
        } else {
            String::new()
        };
        return Err(KeyMismatch {
            key: "data.n",
            message: format!(
                "data.n = {} but {name} has {} features{plus}: set data.n = {}",
                spec.n,
                x.n(),
                x.n() + noise
            ),
        }
        .into());
    }
    if spec.m > x.m() {
        return Err(KeyMismatch {
            key: "data.m",
            message: format!(
                "data.m = {} but the {name} split has only {} samples: set data.m ≤ {}",
                spec.m,
                x.m(),
                x.m()
            ),
        }
        .into());
    }
    let mut a = match x {
        DataMatrix::Dense(x) => {
            DataMatrix::Dense(crate::linalg::to_f_order(x.slice(s![.., ..spec.m])))
        }
        sparse if spec.m == sparse.m() => sparse,
        sparse => sparse.select(&(0..spec.m).collect::<Vec<_>>()),
    };
    preprocess(&mut a, &spec.preprocess, name)?;
    Ok((a, Some(labels[..spec.m].to_vec())))
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
