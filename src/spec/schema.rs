//! Serde types of a manifest. `deny_unknown_fields` everywhere: a misspelt key must be an error,
//! not a silently ignored setting. The typed specs are also written into run.json.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::data::DataSpec;

/// The problem families (`[problem] kind = "..."`); what each one is and does lives in
/// [`crate::problem`].
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

impl Generator {
    pub const ALL: &'static [Generator] = &[
        Generator::Svd,
        Generator::Gaussian,
        Generator::Dataset,
        Generator::Robust,
        Generator::Spiked,
        Generator::Eigengap,
        Generator::File,
    ];
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
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The whole manifest after the profile overlay, before sweep/param expansion.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawManifest {
    pub id: String,
    // Only id, data, partition, problem and methods are required: a researcher's own
    // experiment (a "minimal manifest") reproduces no paper. Defaults are filled in by load().
    /// Default: the manifest's folder name (experiments/<paper>/<id>.toml), else "own".
    #[serde(default)]
    pub paper: Option<String>,
    /// Empty: no paper, and the report is a plain one (no paper numbers beside ours).
    #[serde(default)]
    pub paper_file: String,
    /// Default: the id.
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub reproduces: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub seed: u64,
    #[serde(default = "one")]
    pub repeats: usize,
    // The sweepable sections are typed per sweep point (RawPoint), after the sweep has filled
    // in its values; here they only need to be tables.
    pub data: toml::Table,
    pub partition: toml::Table,
    pub problem: toml::Table,
    /// Absent: the family's default rule (`problem::Family::default_stop`).
    #[serde(default)]
    pub stop: Option<StopSpec>,
    pub methods: Vec<RawMethod>,
    #[serde(default)]
    pub plots: Vec<PlotSpec>,
    #[serde(default)]
    pub paper_results: Vec<PaperResult>,
    /// Run the data-leakage attack on one client's transcript (FAPS fig. 1).
    #[serde(default)]
    pub attack: Option<AttackSpec>,
    /// The paper's claims, each judged against our runs in the report.
    #[serde(default)]
    pub claims: Vec<ClaimSpec>,
    /// Metrics shown in the report's main table (default: those the paper reports, else the
    /// family's first two lower-is-better ones).
    #[serde(default)]
    pub table_metrics: Vec<String>,
    /// Looser values of `stop.objective_tol` (rule (27)) at which the report reads each run
    /// off its trace: where the run would have stopped and its metrics there. A looser stop
    /// ends the same run earlier, so no run is repeated; the stop rule and the runs' fingerprints
    /// are unchanged.
    #[serde(default)]
    pub looser_tolerances: Vec<f64>,
    /// Dotted key path → list of values; checked and expanded in merge.rs.
    #[serde(default)]
    pub sweep: toml::Table,
    /// Pair the sweep's lists element by element (all of one length) instead of crossing them:
    /// for settings that change together, e.g. n, r = 0.05n and p = 2r of DCF-PCA's Table 1.
    #[serde(default)]
    pub zip_sweep: bool,
}

fn one() -> usize {
    1
}

/// Without [stop]: a method stops when its objective changes by at most 1e-12 relatively
/// (FAPS (27); methods without an objective ignore it), or after 1000 rounds.
impl StopSpec {
    /// Rule (27) at τ = 1e-12 within 1000 rounds: the one default before families had their
    /// own, and still the subspace family's.
    pub fn objective_default() -> Self {
        StopSpec {
            max_rounds: 1000,
            objective_tol: Some(1e-12),
            target: None,
            own_criterion: false,
            time_budget_s: None,
        }
    }

    /// The method's own criterion within `max_rounds`: the default of families whose methods
    /// report no objective for rule (27).
    pub fn own_criterion(max_rounds: usize) -> Self {
        StopSpec {
            max_rounds,
            objective_tol: None,
            own_criterion: true,
            ..Self::objective_default()
        }
    }

    /// The rule in words, as report.md and `dpca methods` print it.
    pub fn describe(&self) -> String {
        format!(
            "{}max {} rounds{}{}{}",
            self.objective_tol.map_or(String::new(), |t| format!(
                "|f_k − f_(k−1)| ≤ {t:e}·f_k (eq. 27) or "
            )),
            self.max_rounds,
            self.target.as_ref().map_or(String::new(), |t| format!(
                ", {} reaches {:e}",
                t.metric, t.value
            )),
            self.time_budget_s
                .map_or(String::new(), |t| format!(", {t} s budget")),
            if self.own_criterion {
                ", or the method's own published stopping criterion"
            } else {
                ""
            },
        )
    }
}

fn yes() -> bool {
    true
}

/// The part of the manifest a sweep may vary, read once per sweep point (`[data]` by
/// [`DataSpec::from_table`], whose struct depends on its `generator`).
#[derive(Debug, Clone)]
pub struct RawPoint {
    pub data: DataSpec,
    pub partition: PartitionSpec,
    pub problem: ProblemSpec,
}

/// [`RawPoint`] as serde reads it, `[data]` still a table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Sections {
    pub data: toml::Table,
    pub partition: PartitionSpec,
    pub problem: ProblemSpec,
}

/// Sections whose keys may appear in `[sweep]`.
pub const SWEEPABLE: [&str; 3] = ["data", "partition", "problem"];

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMethod {
    pub name: String,
    #[serde(default)]
    pub label: Option<String>,
    #[serde(default)]
    pub params: toml::Table,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Generator {
    /// A = U Σ Vᵀ with random orthonormal U, V (FAPS eq. 23).
    Svd,
    /// A with iid N(0, 1) entries: FAPS fig. 1's "randomly generated" test matrix. Takes only
    /// n and m.
    Gaussian,
    /// A real dataset from datasets/raw/ (`dpca data list`), samples as columns.
    Dataset,
    /// Low rank plus sparse, M = L₀ + S₀ (DCF-PCA paper §5): needs rank and sparsity.
    Robust,
    /// Samples x ~ N(0, V D Vᵀ) whose leading eigenvectors are sparse and planted (the federated
    /// sparse PCA paper §IV.A, after Journée et al.): needs spikes and support.
    Spiked,
    /// Samples x ~ N(0, UΣUᵀ), U random orthogonal, Σ = diag(1, 1 − δ, (1 − δ)·decay, …) (the
    /// CEDRE paper §6.3): needs delta.
    Eigengap,
    /// The researcher's own data file, `source = "x.csv"` (implied by `source`): CSV, LIBSVM,
    /// IDX or NumPy .npy.
    File,
}

/// How a `source` file is stored (`format`; by default from its extension).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FileFormat {
    Csv,
    Libsvm,
    Idx,
    Npy,
}

/// Whether a `source` file holds one sample per row (the default, as numpy and pandas do) or
/// one per column.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Orientation {
    #[default]
    Rows,
    Columns,
}

/// Absolute paths of a `source` file and its labels file, found when the manifest loads (run
/// time reads them; records and cache keys use the digests instead, so they do not depend on
/// where the files lie).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FilePaths {
    pub data: std::path::PathBuf,
    pub labels: Option<std::path::PathBuf>,
}

/// Random features appended to a dataset (the sparse PCA paper's WDBC*): features the loadings
/// should leave out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Noise {
    /// iid U[0, 1) for every sample (§IV.B, IID).
    Uniform,
    /// Non-IID (§IV.D): the features are dealt out in contiguous blocks, one per client; a
    /// client's own block is N(0, σ_i²) with σ_i² ~ U[0, 1), the other blocks are 80% exact
    /// zeros and 20% U[0, 1).
    ClientBlocks,
}

/// Magnitudes of the robust generator's outliers.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Magnitude {
    /// ±√(nm), random sign: the DCF-PCA paper's text ("sampled from {−√(mn), 0, √(mn)}").
    #[default]
    Sign,
    /// U[0, 1)·√(nm) with a random sign: the authors' scripts (impulsive noise).
    Uniform,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Spectrum {
    /// Σ_ii = xi^(1-i), xi > 1 (FAPS eq. 24).
    Geometric,
    /// Σ_ii = 1 - (i-1)/(n-1)·(1 - 1/kappa), kappa >= 1 (FAPS fig. 4).
    Arithmetic,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DataSplit {
    Train,
    Test,
    All,
}

/// Preprocessing of a dataset's n×m matrix (samples as columns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Preprocess {
    /// Divide by 255: pixels in [0, 1].
    Scale01,
    /// Subtract the global mean sample from every sample.
    Center,
    /// Centre and divide every feature by its standard deviation (constant features stay 0).
    Standardize,
    /// Centre and divide every feature by its sample standard deviation (divisor m − 1, as
    /// pandas and R do): the scaling under which the sparse PCA paper's PCA error is matched.
    Zscore,
    /// Rescale so that the largest eigenvalue of AAᵀ is 1.
    UnitTop,
}

impl Preprocess {
    /// The name a manifest uses.
    pub fn name(self) -> &'static str {
        match self {
            Self::Scale01 => "scale01",
            Self::Center => "center",
            Self::Standardize => "standardize",
            Self::Zscore => "zscore",
            Self::UnitTop => "unit_top",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scheme {
    /// m_i = m/d; the first m % d clients get one sample more.
    Even,
    /// m_i = unit·i for i = 1..d (FAPS Table 4); m must equal unit·d(d+1)/2.
    Uneven,
    /// Samples shuffled (seeded), then split evenly: IID clients.
    Iid,
    /// Non-IID by label: each class is split over the clients in proportions drawn from a
    /// symmetric Dirichlet(alpha) (small alpha = few classes per client). Datasets only.
    Dirichlet,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartitionSpec {
    pub scheme: Scheme,
    /// d, the number of clients.
    pub clients: usize,
    /// Uneven only: samples of client 1. Optional: derived from m when absent; checked against
    /// m when present (so a profile that changes m but not unit is caught).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<usize>,
    /// Dirichlet only: the concentration α > 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
}

impl PartitionSpec {
    /// Samples per client for m samples, in client order (contiguous column blocks).
    /// Assumes a validated spec.
    pub fn client_sizes(&self, m: usize) -> Vec<usize> {
        let d = self.clients;
        match self.scheme {
            // Dirichlet sizes are drawn at run time (data::partition::arrange); even as a fallback.
            Scheme::Even | Scheme::Iid | Scheme::Dirichlet => {
                (0..d).map(|i| m / d + usize::from(i < m % d)).collect()
            }
            Scheme::Uneven => {
                let unit = self.unit.unwrap_or(m / (d * (d + 1) / 2));
                (1..=d).map(|i| unit * i).collect()
            }
        }
    }
}

/// `[problem]`: the family and its fields (checked per family in validate.rs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProblemSpec {
    /// The problem family; "subspace" when absent.
    #[serde(default)]
    pub kind: Kind,
    /// Subspace: its dimension. Robust: the rank bound of the factor U (p ≥ r; default r).
    /// Sparse: the number of loadings r.
    #[serde(default)]
    pub p: usize,
    /// Sparse only: the weight λ of ‖z‖₁ in the family's `objective` metric
    /// ‖A − A z zᵀ‖²_F + λ‖z‖₁ (the paper's problem (3)); default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lambda: Option<f64>,
    /// Sparse only: DSSAL1's model min −½tr(ZᵀAAᵀZ) + μ‖Z‖₁ over the Stiefel manifold. Set, it
    /// is given to every method (manpg, dssal1, consensus_admm need it) and adds the model's
    /// metrics (stationarity, feasibility, F, gap and distance to centralised ManPG).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mu: Option<f64>,
}

/// Stop rules, applied by the runner to every method alike; a run stops when any rule fires.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StopSpec {
    pub max_rounds: usize,
    /// |f_k - f_{k-1}| <= tol·f_k (FAPS eq. 27).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objective_tol: Option<f64>,
    /// Stop once a metric of the family reaches a value (at or below it if lower is better).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Target>,
    /// Stop when the method's own published stopping criterion holds (DCF-PCA, APGM, IALM).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub own_criterion: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_budget_s: Option<f64>,
}

/// `target = { metric = "kkt", value = 1e-5 }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Target {
    pub metric: String,
    pub value: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum XAxis {
    Rounds,
    Seconds,
    /// dim-vectors, every machine's upload counted.
    Vectors,
    /// The CEDRE paper's count: an upload from every machine counted once.
    CommVectors,
    Bytes,
}

/// The attack's metric, beside the family's: relative error of the leakage attack's
/// reconstruction of A_1A_1ᵀ (FAPS fig. 1).
pub const LEAK_ERR: &str = "leak_err";
/// With `[attack] unscaled = true`: the attack's error ‖Φ − A₁A₁ᵀ‖_F as FAPS fig. 1 prints it.
pub const LEAK_ABS: &str = "leak_abs";
/// With `[attack] unscaled = true`: the KKT violation ‖(I − ZZᵀ)AAᵀZ‖_F as FAPS fig. 1 prints it
/// (the family's `kkt` times ‖A‖²_F).
pub const KKT_ABS: &str = "kkt_abs";

/// What a figure shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlotKind {
    /// `y` (and `also`) against `x`, one line per run.
    #[default]
    Line,
    /// Per method, the first round at which `y` (and each of `also`) is at or below `target`,
    /// against the sweep's first coordinate (FAPS fig. 1b).
    RoundsToTarget,
    /// Grouped bars: one group per sweep point, one bar per method, height `x` (rounds or
    /// seconds) of the run (FAPS fig. 2).
    Bars,
    /// One panel per method: the final value of metric `y` (log10 if `log_y`) over the grid of
    /// the two sweep keys in `grid` (DCF-PCA fig. 2, the phase transition).
    Heatmap,
    /// The family's spectrum `y` of each run's final estimate (robust: "sv" = σ(L)) against
    /// index, beside the truth's ("sv_truth") (DCF-PCA fig. 3); `also` adds more spectra (sparse:
    /// "share_orig" and "share_rand", the sparse PCA paper's figs. 5 and 7).
    Spectrum,
    /// Each run's final `y` against a swept method parameter, the first of `params` the run
    /// varies: one line per method and sweep point (the sparse PCA paper's fig. 3).
    Final,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlotSpec {
    /// Output stem: `<file>.svg` / `<file>.png`.
    pub file: String,
    #[serde(default)]
    pub kind: PlotKind,
    /// Line: the x axis. Bars: the bar height (rounds or seconds). Ignored otherwise.
    #[serde(default = "rounds")]
    pub x: XAxis,
    /// A metric of the problem family (or "leak_err" with an attack).
    pub y: String,
    /// More metrics drawn on the same axes (Line, RoundsToTarget).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<String>,
    /// RoundsToTarget: the threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<f64>,
    #[serde(default = "yes")]
    pub log_y: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Heatmap: the sweep keys of its x and y axes, e.g. ["data.sparsity", "data.rank"].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub grid: Vec<String>,
    /// Heatmap: lines drawn over the grid at these axis values (the paper's failure boundary),
    /// labelled `mark_label`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mark_x: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mark_y: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mark_label: Option<String>,
    /// Final: the method parameters on the x axis, first match per run (e.g. ["lambda",
    /// "lambda1"] when two methods name their weight differently).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub params: Vec<String>,
}

fn rounds() -> XAxis {
    XAxis::Rounds
}

/// The server-side leakage attack of FAPS §3.5 / fig. 1, computed after each run (untimed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttackSpec {
    /// The attacked client, 1-based (the paper attacks client 1).
    #[serde(default = "one")]
    pub client: usize,
    /// Evaluate the attack for at most this many rounds (its cost grows with the round).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rounds: Option<usize>,
    /// Also record the norms FAPS fig. 1 prints, unscaled: `kkt_abs` and `leak_abs` (trace.csv
    /// columns after `leak_err`). Subspace problems only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unscaled: bool,
}

/// A claim of the paper, judged against our runs (report::claims): at least one test of
/// `less_than`, `greater_than` (each with an optional `factor`), `above`, `below` (these four
/// with an optional `or_equal`), `at_most`, `at_least`, `near_paper`, `rate` (all must hold at
/// every judged point), or
/// `trend` alone (along the sweep). `divided_by` and `relative_to` change the quantity the tests
/// read. Its `text` may hold `{{...}}` placeholders (see [`super::placeholder`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimSpec {
    /// The claim of the paper's inventory (papers/<paper>.toml, `[[claims]] id`) this test stands
    /// for; several tests (e.g. one per experiment of a figure) may share one id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The claim in the paper's words.
    pub text: String,
    /// One of [`RUN_QUANTITIES`] (`rounds`, `time_s`, `vectors`, `comm_vectors`), a metric of
    /// the family, `leak_err`, or (with `above`/`below`) a spectrum of the family.
    pub quantity: String,
    /// With a lower-is-better metric as `quantity`: the claim is about the rounds until that
    /// metric first is at or below `reach` (a run that never gets there counts as "≥ its
    /// rounds"). A higher-is-better metric is refused: "reaches" would have to mean ≥.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reach: Option<f64>,
    /// Judge only at these sweep points (by label); empty: at every point.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub points: Vec<String>,
    /// The method the claim is about (label or name).
    pub method: String,
    /// Its value is below `factor` × each of these methods' values.
    #[serde(default)]
    pub less_than: Vec<String>,
    /// Its value is above `factor` × each of these methods' values.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub greater_than: Vec<String>,
    /// The factor of `less_than` / `greater_than` (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub factor: Option<f64>,
    /// `less_than` / `greater_than` / `above` / `below` non-strict (≤ / ≥): "no worse than".
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub or_equal: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_most: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_least: Option<f64>,
    /// Another quantity of the same runs, read as `quantity` is (with its `reach`): the claim's
    /// value is above it (≥ with `or_equal`). A spectrum (`share_rand`) is compared with another
    /// spectrum entry by entry, every entry must be above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub above: Option<String>,
    /// As `above`, below it: with `reach`, "the attack is exact (leak_err ≤ 1e-5) in fewer
    /// rounds than the method converges (kkt ≤ 1e-5)".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub below: Option<String>,
    /// Another method (label or name): the quantity becomes the method's value divided by this
    /// one's at the same point (FAPS rounds / SSI rounds). A lower bound over an exact value is
    /// a lower bound; a bound in the denominator leaves the ratio undetermined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub divided_by: Option<String>,
    /// The values along the sweep, in sweep order, rise, fall or stay flat (within
    /// `tolerance`); per group of the other swept keys' values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trend: Option<Trend>,
    /// With `trend`: the swept key ("data.kappa" or its last segment "kappa"); required when
    /// the sweep has more than one key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub along: Option<String>,
    /// With `trend`, relative: each step of "increasing"/"decreasing" may go the wrong way by at
    /// most tolerance × the previous value (default 0); "flat" holds when max/min ≤ 1 +
    /// tolerance (default 0.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<f64>,
    /// `"start"`: the metric is divided by its first finite value in the run's trace (error
    /// reduction relative to the data's own scale); `reach` then applies to that ratio.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relative_to: Option<RelativeTo>,
    /// Within ±this share of the paper's value for the method at the point (`[[paper_results]]`:
    /// `rounds`, `time_s` or the metric; with `reach`, its `rounds`): 0.2 is ±20 %. A point
    /// without a paper value is not judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub near_paper: Option<f64>,
    /// `"linear"`: the metric decays linearly in rounds on a log scale, by a least-squares fit
    /// of log10(metric) against round up to the first row at or below `reach` (or the whole
    /// trace): slope < 0 and R² ≥ `min_r2`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    /// With `rate`: the least R² of the fit (default 0.9).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_r2: Option<f64>,
}

/// A claim's `trend` along a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trend {
    Increasing,
    Decreasing,
    Flat,
}

/// A claim's `relative_to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RelativeTo {
    /// The metric's first finite value in the run's trace.
    Start,
}

/// A claim's `rate` of decay in rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rate {
    /// log10(metric) falls linearly in rounds.
    Linear,
}

/// What the paper reports for one method, in our units, printed beside our numbers. Besides
/// the fields below, any metric of the problem family (`kkt = 1.9e-6`); other keys are errors.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaperResult {
    /// A method name or label of this manifest.
    pub method: String,
    /// The sweep point this number belongs to, by its label (e.g. "p=10"). Without it the number
    /// belongs to the whole experiment: for a sweep, the paper's average over the points, which
    /// the report sets beside our averages and never beside a single point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point: Option<String>,
    /// The paper's rounds: the length of its run, or with `reach` the rounds until that metric
    /// first is at or below its value (the paper's own criterion, where it differs from the stop
    /// rule's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<u64>,
    /// `reach = { metric = "pop_log_err", value = -7.0 }`: what `rounds` counts, as a claim's
    /// `quantity` + `reach` does; ours beside it are read the same way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reach: Option<Target>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Metric name → the paper's value.
    #[serde(flatten)]
    pub metrics: std::collections::BTreeMap<String, f64>,
}

impl PaperResult {
    pub fn metric(&self, name: &str) -> Option<f64> {
        self.metrics.get(name).copied()
    }

    /// The paper's rounds where they count the length of its run (no `reach`): what a run's own
    /// rounds stand beside in a figure or a table of stop rules.
    pub fn run_rounds(&self) -> Option<u64> {
        self.rounds.filter(|_| self.reach.is_none())
    }
}

/// What a run has beside the family's metrics, each a number per run: its rounds, its seconds,
/// the n-vectors it sent (trace.csv `vectors`, every machine's upload counted), and the
/// communicated vectors of the CEDRE paper (a broadcast = 1, one vector from every machine =
/// 1). Rounds and vectors of a run that did not converge are lower bounds.
pub const RUN_QUANTITIES: [&str; 4] = ["rounds", "time_s", "vectors", "comm_vectors"];

// The manifest spelling of each enum value (same strings serde uses), for labels and messages.
macro_rules! names {
    ($t:ty { $($v:ident => $s:literal),* }) => {
        impl $t {
            pub fn as_str(&self) -> &'static str {
                match self { $(Self::$v => $s),* }
            }
        }
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
names!(Generator { Svd => "svd", Gaussian => "gaussian", Dataset => "dataset", Robust => "robust", Spiked => "spiked", Eigengap => "eigengap", File => "file" });
names!(FileFormat { Csv => "csv", Libsvm => "libsvm", Idx => "idx", Npy => "npy" });
names!(Orientation { Rows => "rows", Columns => "columns" });
names!(Noise { Uniform => "uniform", ClientBlocks => "client_blocks" });
names!(Magnitude { Sign => "sign", Uniform => "uniform" });
names!(Spectrum { Geometric => "geometric", Arithmetic => "arithmetic" });
names!(Scheme { Even => "even", Uneven => "uneven", Iid => "iid", Dirichlet => "dirichlet" });
names!(PlotKind { Line => "line", RoundsToTarget => "rounds_to_target", Bars => "bars", Heatmap => "heatmap", Spectrum => "spectrum", Final => "final" });
names!(Trend { Increasing => "increasing", Decreasing => "decreasing", Flat => "flat" });
names!(XAxis { Rounds => "rounds", Seconds => "seconds", Vectors => "vectors", CommVectors => "comm_vectors", Bytes => "bytes" });
