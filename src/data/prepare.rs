//! A real dataset as the n×m matrix a manifest asks for: verified load, the first m samples of
//! the split, then the preprocessing steps in order.

use super::datasets::{self, Split};
use super::fetch;
use super::matrix::DataMatrix;
use crate::manifest::{DataSpec, DataSplit, Preprocess};
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

/// Load `spec.dataset` from `root`, keep its first `spec.m` samples, preprocess; with their labels.
/// LIBSVM datasets stay sparse.
pub fn dataset_matrix(spec: &DataSpec, root: &Path) -> Result<(DataMatrix, Vec<u32>)> {
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
    let (x, labels) = if matches!(ds.format, datasets::Format::Libsvm { .. }) {
        let data = datasets::load_sparse(root, name, split)?;
        (DataMatrix::Sparse(data.x), data.labels)
    } else {
        let data = datasets::load_dense(root, name, split)?;
        (DataMatrix::Dense(data.x), data.labels)
    };
    if x.n() != spec.n {
        bail!(
            "data.n = {} but {name} has {} features: set data.n = {}",
            spec.n,
            x.n(),
            x.n()
        );
    }
    if spec.m > x.m() {
        bail!(
            "data.m = {} but the {name} split has only {} samples",
            spec.m,
            x.m()
        );
    }
    let mut a = match x {
        DataMatrix::Dense(x) => {
            DataMatrix::Dense(crate::linalg::to_f_order(x.slice(s![.., ..spec.m])))
        }
        sparse if spec.m == sparse.m() => sparse,
        sparse => sparse.select(&(0..spec.m).collect::<Vec<_>>()),
    };
    preprocess(&mut a, &spec.preprocess, name)?;
    Ok((a, labels[..spec.m].to_vec()))
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
            (DataMatrix::Sparse(_), _) => bail!(
                "preprocessing step `{}` would densify the sparse dataset {name}: \
                 only unit_top keeps it sparse",
                step.name()
            ),
        }
    }
    Ok(())
}

/// A dense preprocessing step other than unit_top.
fn apply(a: &mut Array2<f64>, step: Preprocess) {
    match step {
        Preprocess::Scale01 => a.mapv_inplace(|v| v / 255.0),
        Preprocess::Center => {
            let mean = a.mean_axis(Axis(1)).expect("m >= 1");
            *a -= &mean.insert_axis(Axis(1));
        }
        Preprocess::Standardize => {
            apply(a, Preprocess::Center);
            let sd = a.map_axis(Axis(1), |row| (row.dot(&row) / row.len() as f64).sqrt());
            let inv = sd.mapv(|s| if s > 0.0 { 1.0 / s } else { 0.0 });
            *a *= &inv.insert_axis(Axis(1));
        }
        Preprocess::UnitTop => unreachable!("rescaling is applied to dense and sparse data alike"),
    }
}
