//! Problem families. A family owns its instance (data split over clients, plus a planted truth
//! where it has one), its reference solution, the common starting point, its metric definitions
//! and their evaluation. Nothing outside a family names a metric: trace rows, CSV columns, stop
//! targets, plot axes, the paper's numbers and report columns all go by [`MetricDef::name`],
//! checked against [`Kind::metrics`] when a manifest loads.

pub mod eigvec;
pub mod robust;
pub mod sparse;
pub mod subspace;

use crate::data::cache::MatrixCache;
use crate::data::matrix::DataMatrix;
use crate::data::{partition, prepare, synthetic};
use crate::fed::Message;
use crate::manifest::{Point, Scheme};
use crate::run::Progress;
use crate::seed;
use anyhow::Result;
use ndarray::s;
use serde::{Deserialize, Serialize};
use std::ops::Range;
use std::path::Path;

/// The problem families (`[problem] kind = "..."`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// The p-dimensional dominant left singular subspace of A (FAPS, SSI, LocalPower).
    #[default]
    Subspace,
    /// Low rank plus sparse, M = L + S (DCF-PCA, CF-PCA, APGM, inexact ALM).
    Robust,
    /// Sparse loadings: r directions of large variance with few non-zero weights (FSSPCA,
    /// FASPCA, PCA as the dense baseline).
    Sparse,
    /// The leading eigenvector of the sample covariance, on the unit sphere (CEDRE and its
    /// baselines).
    Eigvec,
}

impl Kind {
    pub const ALL: &'static [Kind] = &[Kind::Subspace, Kind::Robust, Kind::Sparse, Kind::Eigvec];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Subspace => "subspace",
            Kind::Robust => "robust",
            Kind::Sparse => "sparse",
            Kind::Eigvec => "eigvec",
        }
    }

    /// The metrics this family evaluates after every round, in CSV column order.
    pub fn metrics(self) -> &'static [MetricDef] {
        match self {
            Kind::Subspace => subspace::METRICS,
            Kind::Robust => robust::METRICS,
            Kind::Sparse => sparse::METRICS,
            Kind::Eigvec => eigvec::METRICS,
        }
    }

    /// Names of the vectors [`Instance::spectra`] records (a plot of kind "spectrum" draws one,
    /// with its "<name>_truth" beside it).
    pub fn spectra(self) -> &'static [&'static str] {
        match self {
            Kind::Subspace | Kind::Eigvec => &[],
            Kind::Robust => &["sv"],
            Kind::Sparse => &["share_orig", "share_rand"],
        }
    }

    /// Whether methods written for `family` solve this family's problems: a subspace method at
    /// p = 1 finds the leading eigenvector, so eigvec manifests take them too (the compare
    /// manifests put FAPS-style and CEDRE-style methods on one axis).
    pub fn runs(self, family: Kind) -> bool {
        self == family || (self == Kind::Eigvec && family == Kind::Subspace)
    }

    pub fn metric(self, name: &str) -> Option<&'static MetricDef> {
        self.metrics().iter().find(|m| m.name == name)
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One metric of a family.
#[derive(Clone, Copy, Debug)]
pub struct MetricDef {
    /// Column name in trace.csv / summary.csv, and the manifest's name for it.
    pub name: &'static str,
    /// Axis label, with its formula.
    pub label: &'static str,
    /// A few words for legends and table headers.
    pub short: &'static str,
    pub lower_is_better: bool,
    /// Best shown on a log scale.
    pub log: bool,
}

/// A built problem instance of any family.
pub trait Instance: Sync {
    fn data(&self) -> &DataMatrix;
    /// Samples (columns) per client, in column order of the data.
    fn sizes(&self) -> &[usize];
    /// The common start every party is given (public: derived from the run's seed).
    fn start(&self) -> &Message;
    /// The length of the vectors methods exchange (for counting n-vectors).
    fn dim(&self) -> usize;
    /// The family's metrics of an estimate, in [`Kind::metrics`] order: `server` is what the
    /// server holds, `clients` what each client revealed through the evaluation channel.
    fn evaluate(&self, server: &Message, clients: &[Message]) -> Result<Vec<f64>>;
    /// Which metrics (in [`Kind::metrics`] order) this instance defines; the others are NaN in
    /// every row and do not count as divergence (a recovery error needs a planted truth).
    /// None: all of them.
    fn applicable(&self) -> Option<Vec<bool>> {
        None
    }
    /// Vectors describing the final estimate, by name (robust PCA: the singular values of L and
    /// of L₀ for the DCF-PCA paper's fig. 3); written to spectra.csv. Most families have none.
    fn spectra(
        &self,
        _server: &Message,
        _clients: &[Message],
    ) -> Result<Vec<(&'static str, Vec<f64>)>> {
        Ok(Vec::new())
    }
}

/// Axis labels (x, y) of the family's spectrum plots.
pub fn spectrum_axes(kind: Kind) -> (&'static str, &'static str) {
    match kind {
        Kind::Sparse => sparse::SPECTRUM_AXES,
        _ => ("index i", "singular value σ_i"),
    }
}

/// A few words naming one spectrum, for legends.
pub fn spectrum_short(name: &str) -> &str {
    match name {
        "share_orig" => "original features",
        "share_rand" => "random features",
        "sv" => "σ(L)",
        other => other,
    }
}

/// How the reference of a point is computed, for run.json.
pub fn reference_note(point: &Point) -> String {
    match point.problem.kind {
        Kind::Subspace => subspace::solver_for(point.data.n),
        Kind::Robust => "the planted truth (L₀, S₀)".into(),
        Kind::Sparse if point.problem.mu.is_some() => sparse::REFERENCE_MU.into(),
        Kind::Sparse => sparse::REFERENCE.into(),
        Kind::Eigvec => eigvec::reference(point.data.n),
    }
}

/// Build (or load from the cache) the instance of `point` for `run_seed`.
pub fn build(
    point: &Point,
    run_seed: u64,
    cache: &MatrixCache,
    data_dir: &Path,
    progress: &Progress,
) -> Result<Box<dyn Instance>> {
    Ok(match point.problem.kind {
        Kind::Subspace => Box::new(subspace::SubspaceInstance::build(
            point, run_seed, cache, data_dir, progress,
        )?),
        Kind::Robust => Box::new(robust::RobustInstance::build(point, run_seed)?),
        Kind::Sparse => Box::new(sparse::SparseInstance::build(
            point, run_seed, cache, data_dir, progress,
        )?),
        Kind::Eigvec => Box::new(eigvec::EigvecInstance::build(
            point, run_seed, data_dir, progress,
        )?),
    })
}

/// What a rank of the MPI backend other than 0 holds of a point's instance: the columns its
/// clients need and the common start, equal to the bit to what [`build`] makes, without the
/// reference solution and, where the data allows it, without the other ranks' columns.
pub struct Share {
    /// Samples per client ([`Instance::sizes`]).
    pub sizes: Vec<usize>,
    /// The first column held.
    pub lo: usize,
    /// Columns `lo..` of the instance's data, in the partition's order.
    pub cols: DataMatrix,
    /// [`Instance::start`].
    pub start: Message,
}

/// The columns a rank needs, given the client sizes.
pub type Pick<'a> = &'a dyn Fn(&[usize]) -> Range<usize>;

impl Share {
    /// The columns `pick(sizes)` of data built whole (the fallback where a rank cannot build
    /// a part alone). A dense copy keeps the column-major layout, so clients see the strides
    /// they would see locally.
    fn slice(data: &DataMatrix, sizes: Vec<usize>, start: Message, pick: Pick) -> Self {
        let range = pick(&sizes);
        let cols = match data {
            DataMatrix::Dense(a) => DataMatrix::Dense(a.slice(s![.., range.clone()]).to_owned()),
            sparse => sparse.select(&range.clone().collect::<Vec<_>>()),
        };
        Self {
            sizes,
            lo: range.start,
            cols,
            start,
        }
    }
}

/// The share `pick` asks of `point`'s instance for `run_seed` (see [`Share`]). Each family
/// says what its ranks build alone, and builds the rest whole, then slices it.
pub fn share(
    point: &Point,
    run_seed: u64,
    cache: &MatrixCache,
    data_dir: &Path,
    pick: Pick,
) -> Result<Share> {
    match point.problem.kind {
        Kind::Subspace => subspace::share(point, run_seed, cache, data_dir, pick),
        Kind::Robust => robust::share(point, run_seed, pick),
        Kind::Sparse => sparse::share(point, run_seed, cache, data_dir, pick),
        Kind::Eigvec => eigvec::share(point, run_seed, cache, data_dir, pick),
    }
}

/// The columns `pick` asks of `point`'s data: the original sample indices, in the partition's
/// order, that [`partition::arrange`] puts at those columns (with the samples' `labels`, which
/// a Dirichlet partition needs; synthetic data has none); the first column; the client sizes.
fn wanted_samples(
    point: &Point,
    run_seed: u64,
    labels: Option<&[u32]>,
    pick: Pick,
) -> Result<(Vec<usize>, usize, Vec<usize>)> {
    let key = point.data.cache_key();
    let mut rng = seed::rng(run_seed, &["partition", &key]);
    let (order, sizes) = partition::order(point.data.m, labels, &point.partition, &mut rng)?;
    let range = pick(&sizes);
    let wanted = match order {
        Some(order) => order[range.clone()].to_vec(),
        None => range.clone().collect(),
    };
    Ok((wanted, range.start, sizes))
}

/// A share of the FAPS test matrix (generator "svd", shared by the subspace and sparse
/// families through the cache): the columns from the cached matrix when rank 0 left it there
/// (shared cache folder), else generated alone.
fn svd_share(
    point: &Point,
    run_seed: u64,
    cache: &MatrixCache,
    pick: Pick,
    start: Message,
) -> Result<Share> {
    let spec = &point.data;
    let (wanted, lo, sizes) = wanted_samples(point, run_seed, None, pick)?;
    let (key, data_seed) = data_key(point, run_seed);
    let cols = match cache.get_columns("svd", &format!("{key}-seed{data_seed}"), &wanted) {
        Some(a) => a,
        None => {
            synthetic::svd_columns(spec.n, spec.m, subspace::spectrum(spec), data_seed, &wanted)?
        }
    };
    Ok(Share {
        sizes,
        lo,
        cols: DataMatrix::Dense(cols),
        start,
    })
}

/// A share of a dataset read keeping only the rank's samples: byte values sample by sample
/// ([`prepare::ByteSamples`]), or a LIBSVM file's rows ([`prepare::sparse_samples`]). None
/// where neither applies (the caller then loads the whole matrix): other formats and steps, and
/// LIBSVM data under a Dirichlet partition, which needs every label before it knows which rows
/// to keep.
fn dataset_share(
    point: &Point,
    run_seed: u64,
    data_dir: &Path,
    pick: Pick,
    start: &Message,
) -> Result<Option<Share>> {
    let share = |(_, lo, sizes): (Vec<usize>, usize, Vec<usize>), cols| Share {
        sizes,
        lo,
        cols,
        start: start.clone(),
    };
    if let Some(samples) = prepare::ByteSamples::open(&point.data, data_dir)? {
        let wanted = wanted_samples(point, run_seed, Some(samples.labels()), pick)?;
        let cols = DataMatrix::Dense(samples.columns(&wanted.0)?);
        return Ok(Some(share(wanted, cols)));
    }
    if point.partition.scheme == Scheme::Dirichlet {
        return Ok(None);
    }
    let wanted = wanted_samples(point, run_seed, None, pick)?;
    Ok(prepare::sparse_samples(&point.data, data_dir, &wanted.0)?
        .map(|rows| share(wanted, DataMatrix::Sparse(rows))))
}

/// The data's cache key and seed for `run_seed`, as every family derives them.
fn data_key(point: &Point, run_seed: u64) -> (String, u64) {
    let key = point.data.cache_key();
    let data_seed = seed::derive(run_seed, &["data", &key]);
    (key, data_seed)
}
