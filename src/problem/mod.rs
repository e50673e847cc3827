//! Problem families. A family owns its instance (data split over clients, plus a planted truth
//! where it has one), its reference solution, the common starting point, its metric definitions
//! and their evaluation. Nothing outside a family names a metric: trace rows, CSV columns, stop
//! targets, plot axes, the paper's numbers and report columns all go by [`MetricDef::name`],
//! checked against [`Family::metrics`] when a manifest loads.

pub mod eigvec;
pub mod robust;
pub mod sparse;
pub mod subspace;

use crate::data::cache::MatrixCache;
use crate::data::matrix::DataMatrix;
use crate::data::{partition, prepare, synthetic};
use crate::fed::Message;
use crate::progress::Progress;
use crate::seed;
use crate::spec::{Gen, Generator, Kind, Point, RawPoint, Scheme, StopSpec};
use anyhow::Result;
use ndarray::s;
use std::ops::Range;
use std::path::Path;

/// A problem family: its metrics, its instances and its ranks' shares. One file per family
/// implements it, and [`FAMILIES`] lists them; nothing outside a family names its metrics.
pub trait Family: Sync {
    fn kind(&self) -> Kind;
    /// The metrics this family evaluates after every round, in CSV column order.
    fn metrics(&self) -> &'static [MetricDef];
    /// The metrics that measure the distance to the solution, in order: a run is judged by the
    /// first its trace defines (finite at its end), stalled when it stopped improving after rule
    /// (27) without a target, or after the method's own criterion with no progress from its
    /// start (see `run::Status`). Empty: no such metric.
    fn accuracy(&self) -> &'static [Accuracy] {
        &[]
    }
    /// Families whose methods solve this family's problems (its own among them): a subspace
    /// method at p = 1 finds the leading eigenvector, so eigvec manifests take them too.
    fn takes_methods_of(&self) -> &'static [Kind];
    /// The generators that make this family's data (`[data] generator`).
    fn generators(&self) -> &'static [Generator];
    /// The `[problem]` keys beyond `kind` and `p` this family reads.
    fn problem_keys(&self) -> &'static [&'static str] {
        &[]
    }
    /// Whether noise features may be appended to its real data (`noise_features`: features the
    /// sparse PCA paper's loadings should leave out).
    fn takes_noise_features(&self) -> bool {
        false
    }
    /// The family's own rules on a point, beyond those every family shares (in
    /// [`crate::plan`]): Err names the keys to blame (the first one located is) and says why.
    fn check_point(
        &self,
        _point: &RawPoint,
    ) -> std::result::Result<(), (Vec<&'static str>, String)> {
        Ok(())
    }
    /// Names of the vectors [`Instance::spectra`] records (a plot of kind "spectrum" draws one,
    /// with its "<name>_truth" beside it).
    fn spectra(&self) -> &'static [&'static str] {
        &[]
    }
    /// A few words naming the spectrum `name` in legends (None: its name).
    fn spectrum_short(&self, _name: &str) -> Option<&'static str> {
        None
    }
    /// Axis labels (x, y) of the family's spectrum plots.
    fn spectrum_axes(&self) -> (&'static str, &'static str) {
        ("index i", "singular value σ_i")
    }
    /// The axis title of a sweep over `problem.p`.
    fn p_axis(&self) -> &'static str {
        "p (subspace dimension)"
    }
    /// Whether the report adds the count of communicated vectors in which one vector from every
    /// machine counts as 1 (the CEDRE paper's count).
    fn counts_communicated_vectors(&self) -> bool {
        false
    }
    /// Whether the leakage attack applies: the family's data is a matrix A whose clients'
    /// A_iA_iᵀ the attack rebuilds.
    fn attackable(&self) -> bool {
        false
    }
    /// A metric the family scales by ‖A‖²_F and the name of its unscaled twin, which
    /// `[attack] unscaled` adds (FAPS fig. 1 prints the KKT violation so).
    fn unscaled(&self) -> Option<(&'static str, &'static str)> {
        None
    }
    /// The stop rule of a manifest without `[stop]`: one per family, chosen so that a run of
    /// its methods ends where they have converged (the subspace family's objective settles;
    /// CEDRE reports none, so the eigvec family waits for sin²θ).
    fn default_stop(&self) -> StopSpec {
        StopSpec::objective_default()
    }
    /// The `[data]` and `[problem]` sections of a tiny manifest of this family, `[problem]`
    /// last: what the conformance test runs every method of the family on.
    fn example(&self) -> &'static str;
    /// How the reference of a point is computed, for run.json.
    fn reference_note(&self, point: &Point) -> String;
    /// Build (or load from the cache) the instance of `point` for `run_seed`.
    fn build(
        &self,
        point: &Point,
        run_seed: u64,
        cache: &MatrixCache,
        data_dir: &Path,
        progress: &Progress,
    ) -> Result<Box<dyn Instance>>;
    /// The share `pick` asks of `point`'s instance (see [`Share`]): what its ranks build alone,
    /// the rest built whole, then sliced.
    fn share(
        &self,
        point: &Point,
        run_seed: u64,
        cache: &MatrixCache,
        data_dir: &Path,
        pick: Pick,
    ) -> Result<Share>;
}

/// Eigenvalues at or below this share of the largest count as zero in the rank rule
/// ([`check_rank`]): singular values at or below 1e-6·σ₁, far above the round-off of the
/// reference's eigensolvers (about n·ε·λ₁) and far below any committed experiment's λ_p/λ₁
/// (the smallest, FAPS's geometric spectra, is above 0.1).
pub const RANK_TOL: f64 = 1e-12;

/// The numerical rank of a matrix whose eigenvalues, descending, are `values` (all of them, or
/// at least the leading ones asked about): how many exceed [`RANK_TOL`]·λ₁ (0 when λ₁ is not
/// positive).
pub fn numerical_rank(values: &[f64]) -> usize {
    match values.first() {
        Some(&top) if top > 0.0 => values.iter().filter(|&&v| v > RANK_TOL * top).count(),
        _ => 0,
    }
}

/// The rank rule, the same in every family with a p-dimensional reference: the matrix whose
/// leading p eigenvectors are the reference (subspace: AAᵀ; sparse: XXᵀ, PCA's r loadings;
/// eigvec: the centred covariance, p = 1), with eigenvalues `values` (descending, at least the
/// top p), must have numerical rank ≥ p ([`numerical_rank`]): λ_p > [`RANK_TOL`]·λ₁. Otherwise
/// the leading p-dimensional subspace is not determined (any completion of the span of the data
/// is as good) and every metric against it is arbitrary, so the point is refused before any run,
/// naming `problem.p` (exit 2). `data` names the data (see [`data_name`]), `matrix` the matrix.
/// The robust family's p is a bound on the rank, not a subspace dimension: the rule does not
/// apply to it (see docs/own-data.md#degenerate-data).
pub fn check_rank(values: &[f64], p: usize, data: &str, matrix: &str) -> Result<()> {
    if values.first().is_some_and(|v| !v.is_finite()) {
        // Non-finite data is refused where it is read; nothing to judge here.
        return Ok(());
    }
    let r = numerical_rank(&values[..p.min(values.len())]);
    if r >= p {
        return Ok(());
    }
    let advice = match r {
        0 => "no direction to find: the data (after preprocessing) are zero".to_string(),
        _ => format!(
            "the leading {p}-dimensional subspace is not determined; lower p to at most {r}"
        ),
    };
    Err(prepare::KeyMismatch {
        key: "problem.p",
        message: format!(
            "{data} have numerical rank {r} < p = {p} (eigenvalues of {matrix} at or below \
             {RANK_TOL:e}·λ₁ count as 0): {advice}"
        ),
    }
    .into())
}

/// The data of `point`, as the rank rule names it: its file, its dataset or its generator.
pub fn data_name(point: &Point) -> String {
    match &point.data.gen {
        Gen::File(f) => match &f.paths {
            Some(p) => format!("the data of {}", p.data.display()),
            None => format!("the data of {}", f.source),
        },
        Gen::Dataset(d) => format!("the data of dataset `{}`", d.dataset),
        other => format!("the data of generator `{}`", other.name()),
    }
}

/// Every family, one line each.
pub const FAMILIES: [&dyn Family; 4] = [
    &subspace::Subspace,
    &robust::Robust,
    &sparse::Sparse,
    &eigvec::Eigvec,
];

/// The family of `kind`.
pub fn family(kind: Kind) -> &'static dyn Family {
    match FAMILIES.iter().find(|f| f.kind() == kind) {
        Some(f) => *f,
        None => unreachable!("every Kind has a family in FAMILIES (tested)"),
    }
}

/// The family's metric called `name`.
pub fn metric(kind: Kind, name: &str) -> Option<&'static MetricDef> {
    family(kind).metrics().iter().find(|m| m.name == name)
}

/// A family's measure of the distance to the solution: a positive metric, lower is better.
#[derive(Clone, Copy, Debug)]
pub struct Accuracy {
    pub metric: &'static str,
    /// At or below this the run is at the solution (round-off): never stalled.
    pub solved: f64,
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
    /// The family's metrics of an estimate, in [`Family::metrics`] order: `server` is what the
    /// server holds, `clients` what each client revealed through the evaluation channel.
    fn evaluate(&self, server: &Message, clients: &[Message]) -> Result<Vec<f64>>;
    /// Which metrics (in [`Family::metrics`] order) this instance defines; the others are NaN in
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
    let Gen::Svd(svd) = &spec.gen else {
        anyhow::bail!(
            "internal error: an svd share of generator `{}`",
            spec.generator()
        );
    };
    let (wanted, lo, sizes) = wanted_samples(point, run_seed, None, pick)?;
    let (key, data_seed) = data_key(point, run_seed);
    let cols = match cache.get_columns("svd", &format!("{key}-seed{data_seed}"), &wanted) {
        Some(a) => a,
        None => {
            synthetic::svd_columns(spec.n, spec.m, subspace::spectrum(svd), data_seed, &wanted)?
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

#[cfg(test)]
mod tests {
    use super::*;

    /// [`family`] never reaches its `unreachable!`: every kind has exactly one family, and the
    /// family of a kind says it is that kind.
    #[test]
    fn every_kind_has_one_family() {
        for &k in Kind::ALL {
            assert_eq!(family(k).kind(), k);
            assert_eq!(FAMILIES.iter().filter(|f| f.kind() == k).count(), 1, "{k}");
        }
        assert_eq!(FAMILIES.len(), Kind::ALL.len());
    }

    /// The rank rule: eigenvalues at or below 1e-12·λ₁ count as zero; the error names
    /// `problem.p` and the rank; a rank of p or more, or data that is not finite, passes.
    #[test]
    fn the_rank_rule_counts_eigenvalues_above_1e_12_of_the_first() {
        assert_eq!(numerical_rank(&[4.0, 1.0, 4e-12, 0.0]), 2);
        assert_eq!(numerical_rank(&[4.0, 1.0, 4.1e-12, -1e-17]), 3);
        assert_eq!(numerical_rank(&[0.0, 0.0]), 0);
        assert_eq!(numerical_rank(&[]), 0);
        assert!(check_rank(&[4.0, 1.0, 1e-13], 2, "d", "AAᵀ").is_ok());
        let e = check_rank(&[4.0, 1.0, 1e-13], 3, "the data of x.csv", "AAᵀ").unwrap_err();
        let k = e.downcast_ref::<prepare::KeyMismatch>().unwrap();
        assert_eq!(k.key, "problem.p");
        assert!(
            k.message.contains("x.csv have numerical rank 2 < p = 3"),
            "{}",
            k.message
        );
        let e = check_rank(&[0.0], 1, "d", "the covariance").unwrap_err();
        assert!(format!("{e}").contains("rank 0 < p = 1"), "{e}");
        assert!(check_rank(&[f64::NAN, 0.0], 2, "d", "AAᵀ").is_ok());
    }

    /// A generator no family takes could never run.
    #[test]
    fn every_generator_makes_some_familys_data() {
        for g in crate::spec::Generator::ALL {
            assert!(FAMILIES.iter().any(|f| f.generators().contains(g)), "{g}");
        }
    }
}
