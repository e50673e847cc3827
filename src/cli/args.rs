//! The command line: every command, its arguments and their help (clap).

use anyhow::Result;
use clap::{Args, Parser, Subcommand};
use dpca_bench::report::compare::Tolerance;
use dpca_bench::run::{Backend, Options};
use std::path::PathBuf;

use super::common::UsageError;

/// Reproduce and extend experiments of distributed and federated PCA papers.
///
/// Every experiment is a TOML manifest under experiments/<paper>/<id>.toml naming the data,
/// its split over clients, the methods and the stop rule, with a `paper` profile at the paper's
/// sizes and a `quick` one scaled down. Methods talk only through a simulated network that
/// counts every round, vector and byte; metrics against the problem family's reference
/// (LAPACK for dominant subspaces and sparse PCA, the planted truth for robust PCA) are
/// computed outside the timed part. Results go to results/<paper>/<id>/<profile>/: trace.csv
/// (one row per run and round), summary.csv (one row per run), report.md (the paper's numbers
/// beside ours), figures (.svg, .png) and run.json (provenance).
///
/// Examples:
///   dpca list
///   dpca run experiments/faps/table4.toml --profile quick
///   dpca run experiments/faps/table1.toml --method faps --force
///   dpca run experiments/dcfpca/fig1_n500.toml --profile quick
///   dpca run experiments/fspca/table1.toml --profile quick
///   dpca render results/faps/table4/paper
///   dpca reproduce --profile quick
///   dpca report
///   dpca scorecard --paper faps
///   dpca verify --profile quick --threads 1
///   dpca compare results/faps/table4/quick /tmp/other/faps/table4/quick
///
/// Environment (each recorded in run.json, since each decides the last bits of the results):
///   DPCA_PRODUCT_KERNEL=avx512|avx2|blas
///                                     code of the dense products A_i(A_iᵀX) and A_iᵀX: the
///                                     project's kernels (avx512 and avx2 give the same bits;
///                                     default: the CPU's best) or BLAS
///   DPCA_BLAS_PIN=on|off              on (default): dpca starts itself again with
///                                     OPENBLAS_CORETYPE=Haswell (MKL: MKL_CBWR=AVX2), so BLAS
///                                     gives the same bits on every x86-64 CPU with AVX2;
///                                     off: the BLAS picks kernels for this CPU
///   OPENBLAS_CORETYPE=NAME            your own choice of OpenBLAS's kernels (wins over the pin)
#[derive(Parser)]
#[command(name = "dpca", version, about, long_about, verbatim_doc_comment)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// List every manifest: paper, id, what it reproduces and its profiles.
    List {
        /// Folder searched recursively for *.toml manifests.
        #[arg(long, default_value = "experiments")]
        experiments: PathBuf,
    },
    /// List the methods, or one method's parameters with their types, defaults and meanings.
    ///
    /// Without NAME: every registered method with its problem family, whether it is
    /// centralised (runs on one client holding all the data, its rounds are iterations), what it
    /// is and the paper that defines it. With NAME: the parameters a manifest may set in
    /// `[[methods]] params = { ... }` (a list sweeps), each with its type, the default a run
    /// uses when it is left out, and its meaning. An unknown NAME exits with status 2 and the
    /// nearest names.
    ///
    /// Examples:
    ///   dpca methods
    ///   dpca methods faps
    #[command(verbatim_doc_comment)]
    Methods {
        /// A method's registered name (as in a manifest's `name = "..."`).
        name: Option<String>,
    },
    /// Run one or more manifests and write their results.
    ///
    /// Finished runs are stored under results/<paper>/<id>/<profile>/runs/ and skipped when
    /// run again, so an interrupted run resumes where it stopped; --force re-runs them. <paper>
    /// is the manifest's `paper`, else the name of the folder the file is in (however its path
    /// is spelt), <id> its `id`.
    ///
    /// --set KEY=VALUE changes the manifest without editing it: KEY is a manifest key
    /// (data.n, stop.max_rounds, partition.clients, sweep."data.n", or a whole table such as
    /// partition) or METHOD.PARAM, a parameter of the [[methods]] entry with that label or
    /// method name. VALUE is TOML (0.1, [1, 3] sweeps as in the file, "even", or a bare word
    /// as a string, { scheme = "dirichlet", alpha = 0.1 }). Entries apply in order after the
    /// profile and are checked as the file's own; an error names the flag. The results go to
    /// <profile>+set-<8 hex digits of the list>, beside the manifest's own, and report.md and
    /// run.json (manifest.set) record the list; `dpca render` of that folder applies it again.
    ///
    /// Examples:
    ///   dpca run experiments/faps/table4.toml --profile quick
    ///   dpca run experiments/faps/table4.toml --profile quick --set faps.beta0=0.1
    ///   dpca run M.toml --set faps.beta0=0.1 --set 'faps.inner_steps=[1,3]'
    ///   dpca run M.toml --set stop.max_rounds=500 --set partition.clients=8
    ///   dpca run M.toml --set 'sweep."data.n"=[500,1000]'
    ///   dpca run M.toml --set 'sweep.partition=[{scheme="even"}, {scheme="dirichlet", alpha=0.1}]'
    #[command(verbatim_doc_comment)]
    Run {
        /// Manifest files (experiments/<paper>/<id>.toml).
        #[arg(required = true)]
        manifests: Vec<PathBuf>,
        /// Set a manifest key or a method's parameter: KEY=VALUE (repeatable; see above).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        #[command(flatten)]
        common: Common,
    },
    /// Run the data-leakage attack on the server's view of client 1 (FAPS fig. 1) for every
    /// method of a manifest, and report how well the server rebuilds A_1A_1ᵀ.
    ///
    /// Takes a manifest or a results folder (results/<paper>/<id>/<profile>, whose run.json
    /// names its manifest). Runs stored without attack data are re-run with the transcript
    /// recorded; the error per round lands in trace.csv's `leak_err` column.
    Attack {
        /// A manifest (.toml) or a results folder with a run.json.
        target: PathBuf,
        /// The attacked client, 1-based.
        #[arg(long, default_value_t = 1)]
        client: usize,
        /// Evaluate the attack for at most this many rounds (its cost grows with the round).
        #[arg(long)]
        max_rounds: Option<usize>,
        /// Report the first round at which the reconstruction error is at or below this.
        #[arg(long, default_value_t = 1e-5)]
        target_err: f64,
        #[command(flatten)]
        common: Common,
    },
    /// Re-render a results folder (report.md, figures, CSVs, run.json) from its committed
    /// trace.csv, summary.csv and run.json, without running anything: after a change of the
    /// report, the figures or the manifest's paper numbers. Provenance stays the computing run's.
    Render {
        /// Results folders (results/<paper>/<id>/<profile>) or manifests (with --profile).
        #[arg(required = true)]
        targets: Vec<PathBuf>,
        /// Profile, when a target is a manifest (default as for `run`).
        #[arg(long)]
        profile: Option<String>,
        /// Root folder of the results, when a target is a manifest.
        #[arg(long, default_value = "results")]
        results: PathBuf,
    },
    /// Check that results folders are complete: every file their run.json lists is present and
    /// unchanged (a run or render interrupted while writing leaves a set that fails this).
    Check {
        /// Results folders (results/<paper>/<id>/<profile>).
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
    },
    /// Run every manifest under the experiments folder that has the chosen profile.
    Reproduce {
        /// Folder searched recursively for *.toml manifests.
        #[arg(long, default_value = "experiments")]
        experiments: PathBuf,
        #[command(flatten)]
        common: Common,
    },
    /// Write results/index.html (every experiment, its claims, links) and one page per results
    /// folder (its report: claims, paper-beside-ours tables, figures, links to the CSVs and
    /// run.json), from the committed CSVs, run.json and manifests. Relative links only: the pages
    /// open from the file system without a server.
    Report {
        /// Root folder of the results.
        #[arg(long, default_value = "results")]
        results: PathBuf,
    },
    /// Print each paper's scorecard from the committed results (what `dpca report` writes to
    /// results/scorecard.csv and shows on results/index.html and results/<paper>/index.html).
    ///
    /// Per paper (papers/<key>.toml names it): the numbers it states in the manifests'
    /// [[paper_results]] beside ours — within ±20 %, a lower bound (our count of a run that did
    /// not converge), outside, not run (no committed results folder: the reason is given), and
    /// times, which are counted apart (not comparable on 2 shared cores) — then the claims of its
    /// inventory: held (every judged test of the manifests that name it holds), not held (one
    /// fails), untestable (the inventory says why, or its experiments are not run here),
    /// untested (no test and no reason: never in the committed state); then the tests.
    ///
    /// Examples:
    ///   dpca scorecard                      totals of every paper, profile paper
    ///   dpca scorecard --profile quick      the same for the scaled-down runs
    ///   dpca scorecard --paper faps         FAPS's totals, then every number, claim and test
    #[command(verbatim_doc_comment)]
    Scorecard {
        /// Only this paper (its registry key, e.g. faps): its totals, then every row.
        #[arg(long)]
        paper: Option<String>,
        /// Profile of the results judged.
        #[arg(long, default_value = "paper")]
        profile: String,
        /// Root folder of the committed results (its paper registry is papers/ above it).
        #[arg(long, default_value = "results")]
        results: PathBuf,
    },
    /// Re-run experiments with committed results of the profile into a scratch folder (removed
    /// afterwards) and compare with the committed CSVs, as `compare` does. Per results folder
    /// it says whether every cell is identical (bit for bit), or all match within the tolerance,
    /// whether the round counts and stop reasons are equal, the largest relative difference of
    /// any metric, and the kernels that computed each side (run.json's blas_core and
    /// product_kernel; a mismatch is named, since other kernels sum in other orders). Exit
    /// status 1 on a difference.
    ///
    /// Examples:
    ///   dpca verify --profile quick --threads 1
    ///   dpca verify experiments/faps --rtol 1e-6
    ///   dpca verify experiments/faps/table1.toml experiments/dcfpca/fig4.toml
    #[command(verbatim_doc_comment)]
    Verify {
        /// Manifests (.toml), or folders searched recursively for them; a folder's manifests
        /// without committed results of the profile are passed over, a named manifest without
        /// them is an error.
        #[arg(default_value = "experiments")]
        targets: Vec<PathBuf>,
        /// Profile whose committed results are re-run.
        #[arg(long, default_value = "quick")]
        profile: String,
        /// Root folder of the committed results (read only).
        #[arg(long, default_value = "results")]
        results: PathBuf,
        #[command(flatten)]
        tol: TolArgs,
        /// Worker threads for client-parallel work (default: all cores). Results do not depend on it.
        #[arg(long)]
        threads: Option<usize>,
        /// Cache of generated matrices and reference solutions.
        #[arg(long, default_value = "datasets/cache")]
        cache: PathBuf,
        /// Fetched datasets (`dpca data fetch NAME`).
        #[arg(long, default_value = "datasets/raw")]
        data: PathBuf,
        /// Run even if the data or the reference exceed the memory budget: this machine's
        /// available memory, or DPCA_MEMORY_BUDGET (bytes, or with a K/M/G/T suffix).
        #[arg(long)]
        no_memory_check: bool,
    },
    /// Compare two results folders (results/<paper>/<id>/<profile>), or every results folder
    /// under two roots: the same runs, rounds and stop reasons, every metric within the
    /// tolerance; time columns are ignored. Prints a table of what differs; exit status 1 on a
    /// difference.
    ///
    /// Examples:
    ///   dpca compare results/faps/table4/quick /tmp/other/faps/table4/quick
    ///   dpca compare results /tmp/fresh-results --rtol 1e-6
    #[command(verbatim_doc_comment)]
    Compare {
        dir_a: PathBuf,
        dir_b: PathBuf,
        #[command(flatten)]
        tol: TolArgs,
    },
    /// Real datasets (MNIST, Fashion-MNIST, WDBC, CIFAR, LIBSVM): list, fetch, verify.
    ///
    /// Each lives in datasets/raw/<name>/; every file is checked by SHA-256 before it is
    /// stored or used.
    Data {
        #[command(subcommand)]
        action: DataAction,
        /// Folder holding one subfolder per dataset.
        #[arg(long, global = true, default_value = "datasets/raw")]
        dir: PathBuf,
    },
}

#[derive(Subcommand)]
pub enum DataAction {
    /// Every dataset: its sources, size, folder, and whether it is present and verified.
    List,
    /// Fetch a dataset (its sources tried in order) and verify it.
    Fetch { name: String },
    /// Re-check the SHA-256 of every file of a dataset.
    Verify { name: String },
}

#[derive(Args, Clone, Copy)]
pub struct TolArgs {
    /// Relative tolerance of metrics: |a − b| ≤ rtol·max(|a|, |b|) + atol. Integers (rounds,
    /// bytes) and words (stop reasons) must be equal.
    #[arg(long, default_value_t = 1e-9)]
    pub rtol: f64,
    /// Absolute floor, for metrics that are differences of O(1) quantities (sv_err): a change
    /// of memory layout moves them by ~1e-16, which near convergence is 1e-8 of 1e-8.
    #[arg(long, default_value_t = 1e-14)]
    pub atol: f64,
}

impl TolArgs {
    pub fn tolerance(self) -> Result<Tolerance> {
        for (name, v) in [("--rtol", self.rtol), ("--atol", self.atol)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(UsageError(format!("{name} {v}: expected a finite number ≥ 0")).into());
            }
        }
        Ok(Tolerance {
            rtol: self.rtol,
            atol: self.atol,
        })
    }
}

#[derive(Args, Clone)]
pub struct Common {
    /// Profile of the manifest: `paper` (the paper's sizes) or `quick` (scaled down). Default:
    /// `paper`, or `default` for a manifest without [profiles].
    #[arg(long)]
    pub profile: Option<String>,
    /// Run only these methods (name or label; repeatable).
    #[arg(long = "method", value_name = "NAME")]
    pub methods: Vec<String>,
    /// Override the manifest's base seed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Re-run runs that are already stored.
    #[arg(long)]
    pub force: bool,
    /// Worker threads for client-parallel work (default: all cores). Results do not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Root folder of the results.
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// Cache of generated matrices and reference solutions.
    #[arg(long, default_value = "datasets/cache")]
    pub cache: PathBuf,
    /// Fetched datasets (`dpca data fetch NAME`).
    #[arg(long, default_value = "datasets/raw")]
    pub data: PathBuf,
    /// Run even if the data or the reference exceed the memory budget: this machine's
    /// available memory, or DPCA_MEMORY_BUDGET (bytes, or with a K/M/G/T suffix).
    #[arg(long)]
    pub no_memory_check: bool,
    /// Where the clients run: `local` (this process) or `mpi` (under mpirun: rank 0 the server,
    /// the clients spread over the other ranks; needs a build with `--features mpi`).
    #[arg(long, value_enum, default_value_t = Backend::Local)]
    pub backend: Backend,
    /// With --backend mpi: seconds rank 0 waits for a rank's reply (a round's answer, or its
    /// share of the data at a run's start) before it ends the job, naming the rank and the
    /// round; a stopped or stuck rank would otherwise hang it. Raise it for data that takes a
    /// rank longer to build. The other ranks end the job when rank 0, whose heartbeats go on
    /// while it is busy, has sent nothing for rank 0's value of it (it is stopped).
    #[arg(long, value_name = "SECONDS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    pub mpi_timeout: u64,
}

impl Common {
    pub fn options(&self) -> Options {
        Options {
            results_root: self.results.clone(),
            cache_dir: self.cache.clone(),
            data_dir: self.data.clone(),
            force: self.force,
            methods: self.methods.clone(),
            seed: self.seed,
            threads: self
                .threads
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
            attack: None,
            memory_check: !self.no_memory_check,
            backend: self.backend,
        }
    }
}

#[cfg(feature = "mpi")]
impl Cli {
    /// The options of a command that runs experiments.
    pub fn common(&self) -> Option<&Common> {
        match &self.command {
            Command::Run { common, .. }
            | Command::Attack { common, .. }
            | Command::Reproduce { common, .. } => Some(common),
            _ => None,
        }
    }
}
