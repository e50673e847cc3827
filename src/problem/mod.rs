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
use crate::fed::Message;
use crate::manifest::Point;
use crate::run::Progress;
use anyhow::Result;
use serde::{Deserialize, Serialize};
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
