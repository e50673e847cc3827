//! `dpca`: command-line front end. Parsing, dispatch and exit codes only.

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use dpca_bench::data::prepare::DatasetAbsent;
use dpca_bench::manifest::{self, ManifestError};
use dpca_bench::methods::{describe, registry};
use dpca_bench::report::compare::{self, Comparison, Tolerance};
use dpca_bench::run::{self, Backend, Options, Progress};
use dpca_bench::util::{columns, FolderLock};
use dpca_bench::{linalg, report};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

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
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
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
    /// Finished runs are stored under results/.../runs/ and skipped when run again, so an
    /// interrupted run resumes where it stopped; --force re-runs them.
    Run {
        /// Manifest files (experiments/<paper>/<id>.toml).
        #[arg(required = true)]
        manifests: Vec<PathBuf>,
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
        /// Run even if the data alone exceeds the memory this machine has available.
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
enum DataAction {
    /// Every dataset: its sources, size, folder, and whether it is present and verified.
    List,
    /// Fetch a dataset (its sources tried in order) and verify it.
    Fetch { name: String },
    /// Re-check the SHA-256 of every file of a dataset.
    Verify { name: String },
}

#[derive(Args, Clone, Copy)]
struct TolArgs {
    /// Relative tolerance of metrics: |a − b| ≤ rtol·max(|a|, |b|) + atol. Integers (rounds,
    /// bytes) and words (stop reasons) must be equal.
    #[arg(long, default_value_t = 1e-9)]
    rtol: f64,
    /// Absolute floor, for metrics that are differences of O(1) quantities (sv_err): a change
    /// of memory layout moves them by ~1e-16, which near convergence is 1e-8 of 1e-8.
    #[arg(long, default_value_t = 1e-14)]
    atol: f64,
}

impl TolArgs {
    fn tolerance(self) -> Result<Tolerance> {
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
struct Common {
    /// Profile of the manifest: `paper` (the paper's sizes) or `quick` (scaled down). Default:
    /// `paper`, or `default` for a manifest without [profiles].
    #[arg(long)]
    profile: Option<String>,
    /// Run only these methods (name or label; repeatable).
    #[arg(long = "method", value_name = "NAME")]
    methods: Vec<String>,
    /// Override the manifest's base seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Re-run runs that are already stored.
    #[arg(long)]
    force: bool,
    /// Worker threads for client-parallel work (default: all cores). Results do not depend on it.
    #[arg(long)]
    threads: Option<usize>,
    /// Root folder of the results.
    #[arg(long, default_value = "results")]
    results: PathBuf,
    /// Cache of generated matrices and reference solutions.
    #[arg(long, default_value = "datasets/cache")]
    cache: PathBuf,
    /// Fetched datasets (`dpca data fetch NAME`).
    #[arg(long, default_value = "datasets/raw")]
    data: PathBuf,
    /// Run even if the data alone exceeds the memory this machine has available.
    #[arg(long)]
    no_memory_check: bool,
    /// Where the clients run: `local` (this process) or `mpi` (under mpirun: rank 0 the server,
    /// the clients spread over the other ranks; needs a build with `--features mpi`).
    #[arg(long, value_enum, default_value_t = Backend::Local)]
    backend: Backend,
}

impl Common {
    fn options(&self) -> Options {
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
    fn common(&self) -> Option<&Common> {
        match &self.command {
            Command::Run { common, .. }
            | Command::Attack { common, .. }
            | Command::Reproduce { common, .. } => Some(common),
            _ => None,
        }
    }
}

fn main() -> ExitCode {
    // Before anything else: OpenBLAS fixed its kernels when it loaded, so pinning them means
    // starting again with OPENBLAS_CORETYPE set (src/linalg/blas_pin.rs).
    if let Err(e) = linalg::blas_pin::pin_by_reexec() {
        return exit(Err(UsageError(format!("{e:#}")).into()));
    }
    let cli = Cli::parse();
    #[cfg(feature = "mpi")]
    if let Some(common) = cli.common().filter(|c| c.backend == Backend::Mpi).cloned() {
        return mpi_main(cli, &common);
    }
    // Rust ignores SIGPIPE, so a write to a closed pipe (`dpca list | head`) is an error that
    // println! turns into a panic. With the default action the process ends quietly, as other
    // command-line tools do. (Not under MPI, whose sockets handle their own errors.)
    // SAFETY: setting a signal's disposition to its default, before any thread starts.
    #[cfg(unix)]
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    exit(dispatch(cli))
}

/// Every rank of an `mpirun` job: rank 0 runs the command, the others serve its clients. Every
/// rank exits with failure when any failed.
#[cfg(feature = "mpi")]
fn mpi_main(cli: Cli, common: &Common) -> ExitCode {
    use dpca_bench::fed::mpi;
    let universe = match mpi::initialize() {
        Ok(u) => u,
        Err(e) => return exit(Err(e)),
    };
    let rank = mpi::rank();
    if rank != 0 {
        let result = run::mpi::worker(setup(common));
        drop(universe);
        return match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("rank {rank}: stopped: {e:#}");
                ExitCode::FAILURE
            }
        };
    }
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| dispatch(cli)))
        .unwrap_or_else(|p| {
            Err(anyhow::anyhow!(
                "panicked: {}",
                dpca_bench::util::panic_message(p.as_ref())
            ))
        });
    mpi::finish(result.as_ref().err().map(|e| format!("{e:#}")));
    drop(universe);
    exit(result)
}

/// The exit status of a command, its error printed.
fn exit(result: Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            // Bad user input (manifest, parameters, names) exits 2; anything else 1.
            if e.chain()
                .any(|c| c.is::<ManifestError>() || c.is::<UsageError>())
            {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

fn dispatch(cli: Cli) -> Result<()> {
    match cli.command {
        Command::List { experiments } => list(&experiments),
        Command::Methods { name: None } => {
            print!("{}", methods_table());
            Ok(())
        }
        Command::Methods { name: Some(name) } => method_params(&name),
        Command::Run { manifests, common } => {
            let opts = setup(&common)?;
            let progress = Progress::new();
            for path in &manifests {
                run_manifest(path, &profile_for(path, &common.profile)?, &opts, &progress)?;
            }
            Ok(())
        }
        Command::Attack {
            target,
            client,
            max_rounds,
            target_err,
            common,
        } => {
            if client == 0 {
                anyhow::bail!("--client 0: clients are numbered from 1");
            }
            if max_rounds == Some(0) {
                anyhow::bail!("--max-rounds 0: must be at least 1 (omit it for every round)");
            }
            if !(target_err.is_finite() && target_err > 0.0) {
                anyhow::bail!("--target-err {target_err}: expected a finite number > 0");
            }
            let mut opts = setup(&common)?;
            opts.attack = Some(manifest::AttackSpec {
                client,
                max_rounds,
                unscaled: false,
            });
            attack(&target, common.profile.as_deref(), target_err, &opts)
        }
        Command::Reproduce {
            experiments,
            common,
        } => {
            let opts = setup(&common)?;
            reproduce(
                &experiments,
                common.profile.as_deref().unwrap_or("paper"),
                &opts,
            )
        }
        Command::Data { action, dir } => data(action, &dir),
        Command::Report { results } => {
            let started = std::time::Instant::now();
            let pages = report::html::write_site(&results)?;
            println!(
                "{}: {pages} pages in {:.1} s",
                results.join("index.html").display(),
                started.elapsed().as_secs_f64()
            );
            Ok(())
        }
        Command::Compare { dir_a, dir_b, tol } => compare_dirs(&dir_a, &dir_b, tol.tolerance()?),
        Command::Verify {
            targets,
            profile,
            results,
            tol,
            threads,
            cache,
            data,
            no_memory_check,
        } => {
            let tol = tol.tolerance()?;
            let scratch = tempfile::Builder::new()
                .prefix("dpca-verify-")
                .tempdir()
                .context("cannot create a scratch folder")?;
            let common = Common {
                profile: Some(profile.clone()),
                methods: Vec::new(),
                seed: None,
                force: false,
                threads,
                results: scratch.path().to_path_buf(),
                cache,
                data,
                no_memory_check,
                // verify re-runs in this process: the scratch results are compared right after.
                backend: Backend::Local,
            };
            let opts = setup(&common)?;
            verify(&targets, &results, &profile, &opts, tol)
        }
        Command::Check { dirs } => dirs.iter().try_for_each(|d| {
            let n = report::check_complete(d)?;
            println!(
                "{}: complete, {n} files as run.json lists them",
                d.display()
            );
            Ok(())
        }),
        Command::Render {
            targets,
            profile,
            results,
        } => targets
            .iter()
            .try_for_each(|t| render(t, profile.as_deref(), &results)),
    }
}

/// More worker threads than this per core only add contention; far more exhaust the machine.
const MAX_THREADS_PER_CORE: usize = 4;

fn setup(common: &Common) -> Result<Options> {
    let _ = report::provenance::pin_git_revision();
    let opts = common.options();
    if opts.backend == Backend::Mpi && !cfg!(feature = "mpi") {
        return Err(UsageError(run::MPI_NOT_BUILT.into()).into());
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if opts.threads == 0 || opts.threads > MAX_THREADS_PER_CORE * cores {
        anyhow::bail!(
            "--threads {}: expected 1 to {} ({MAX_THREADS_PER_CORE} per core; this machine has {cores})",
            opts.threads,
            MAX_THREADS_PER_CORE * cores
        );
    }
    linalg::force_single_threaded_blas();
    linalg::gram_product::select_kernel().map_err(|e| UsageError(format!("{e:#}")))?;
    rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads)
        .build_global()
        .context("starting the worker threads")?;
    Ok(opts)
}

fn run_manifest(path: &Path, profile: &str, opts: &Options, progress: &Progress) -> Result<()> {
    let exp = manifest::load(path, profile)?;
    let _lock = FolderLock::acquire(&run::results_dir(&exp, opts))?;
    let out = run::run_experiment(&exp, opts, progress)?;
    report::write_all(&exp, &out)?;
    progress.log(format!("{}: results in {}", exp.id, out.dir.display()));
    Ok(())
}

/// Every *.toml under `dir`, sorted.
fn manifests_under(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries =
            std::fs::read_dir(&d).with_context(|| format!("cannot read folder {}", d.display()))?;
        for e in entries {
            let path = e?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "toml") {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

fn list(dir: &Path) -> Result<()> {
    for path in manifests_under(dir)? {
        match manifest::profile_names(&path).and_then(|profiles| {
            let first = profiles.first().cloned().unwrap_or_default();
            manifest::load(&path, &first).map(|e| (e, profiles))
        }) {
            Ok((e, profiles)) => println!(
                "{}/{}  [{}]  {}\n    {}{}",
                e.paper,
                e.id,
                profiles.join(", "),
                path.display(),
                e.title,
                if e.reproduces.is_empty() {
                    String::new()
                } else {
                    format!(" — reproduces {}", e.reproduces)
                }
            ),
            Err(err) => println!("(invalid) {}: {err}", path.display()),
        }
    }
    println!("\nmethods:");
    for m in registry::METHODS {
        let central = if m.centralised { ", centralised" } else { "" };
        println!(
            "  {:<12} [{}{central}] {} ({})",
            m.name, m.family, m.about, m.paper
        );
    }
    for (name, why) in registry::PLANNED {
        println!("  {name:<12} not implemented yet: {why}");
    }
    Ok(())
}

/// A mistake in the command line itself (an unknown name): exit status 2, like a bad manifest.
#[derive(Debug)]
struct UsageError(String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// `dpca methods`: one row per method, its paper on a second line under the about.
fn methods_table() -> String {
    let mut rows = vec![vec![
        "NAME".to_string(),
        "FAMILY".into(),
        "CENTRALISED".into(),
        "ABOUT / PAPER".into(),
    ]];
    for m in registry::METHODS {
        let central = if m.centralised { "yes" } else { "no" };
        rows.push(vec![
            m.name.into(),
            m.family.to_string(),
            central.into(),
            m.about.into(),
        ]);
        rows.push(vec![
            String::new(),
            String::new(),
            String::new(),
            m.paper.into(),
        ]);
    }
    let mut out = columns(&rows);
    for (name, why) in registry::PLANNED {
        out.push_str(&format!("{name}: not implemented yet: {why}\n"));
    }
    out.push_str(
        "\n`dpca methods NAME` lists a method's parameters, their defaults and meanings.\n",
    );
    out
}

/// `dpca methods NAME`: the method, then a table of its parameters.
fn method_params(name: &str) -> Result<()> {
    let m = registry::lookup(name)
        .or_else(|| {
            registry::METHODS
                .iter()
                .find(|e| e.name.eq_ignore_ascii_case(name))
        })
        .ok_or_else(|| {
            let near = describe::closest(name);
            let hint = if near.is_empty() {
                "none is close".to_string()
            } else {
                format!("closest: {}", near.join(", "))
            };
            UsageError(format!(
                "unknown method `{name}` ({hint}); `dpca methods` lists them all"
            ))
        })?;
    let runs = if m.centralised {
        "centralised: runs on one client holding all the data, its rounds are iterations"
    } else {
        "distributed over the manifest's clients"
    };
    println!("{} — {}", m.name, m.about);
    println!("  family: {}; {runs}", m.family);
    println!("  paper:  {}", m.paper);
    let params = describe::params(m).map_err(anyhow::Error::msg)?;
    if params.is_empty() {
        println!("\nno parameters");
        return Ok(());
    }
    println!("\nparameters (set in a manifest's [[methods]] params = {{ ... }}; a list sweeps):");
    // A list value would sweep, so a list-valued parameter is written inside another list.
    if let Some(p) = params.iter().find(|p| p.ty.starts_with("list")) {
        println!(
            "(a list-valued one is wrapped in a list: {} = [[...]])",
            p.name
        );
    }
    println!();
    let mut rows = vec![vec![
        "NAME".to_string(),
        "TYPE".into(),
        "DEFAULT".into(),
        "MEANING".into(),
    ]];
    rows.extend(
        params
            .into_iter()
            .map(|p| vec![p.name, p.ty, p.default, p.meaning.to_string()]),
    );
    print!("{}", columns(&rows));
    Ok(())
}

fn reproduce(dir: &Path, profile: &str, opts: &Options) -> Result<()> {
    let progress = Progress::new();
    let manifests = manifests_under(dir)?;
    let bar = progress.runs(manifests.len() as u64, "reproduce");
    let mut failed = Vec::new();
    for path in &manifests {
        let has_profile = manifest::profile_names(path).map(|p| p.iter().any(|x| x == profile));
        match has_profile {
            Ok(true) => {
                match run_manifest(path, profile, opts, &progress) {
                    Ok(()) => {}
                    // A dataset that is not here: one line with the fetch command, then go on.
                    Err(e) if e.chain().any(|c| c.is::<DatasetAbsent>()) => {
                        progress.log(format!("skipped {}: {e}", path.display()))
                    }
                    Err(e) => {
                        progress.log(format!("error: {}: {e:#}", path.display()));
                        failed.push(path.display().to_string());
                    }
                }
            }
            Ok(false) => progress.log(format!(
                "{}: no `{profile}` profile, skipped",
                path.display()
            )),
            Err(e) => {
                progress.log(format!("error: {e}"));
                failed.push(path.display().to_string());
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    if failed.is_empty() {
        Ok(())
    } else {
        anyhow::bail!("{} manifest(s) failed: {}", failed.len(), failed.join(", "))
    }
}

/// The manifest behind `target`: the file itself, or the one named by a results folder's run.json.
/// The profile asked for, or the manifest's default one.
fn profile_for(path: &Path, given: &Option<String>) -> Result<String> {
    Ok(match given {
        Some(p) => p.clone(),
        None => manifest::default_profile(path)?.to_string(),
    })
}

fn manifest_of(target: &Path) -> Result<PathBuf> {
    if target.is_dir() {
        let json = target.join("run.json");
        let text = std::fs::read_to_string(&json).with_context(|| {
            format!(
                "{} is not a results folder: no readable run.json",
                target.display()
            )
        })?;
        let v: serde_json::Value = serde_json::from_str(&text)
            .with_context(|| format!("{} is not valid JSON", json.display()))?;
        let path = v["manifest"]["path"]
            .as_str()
            .with_context(|| format!("{}: no manifest.path", json.display()))?;
        Ok(PathBuf::from(path))
    } else {
        Ok(target.to_path_buf())
    }
}

fn render(target: &Path, profile: Option<&str>, results: &Path) -> Result<()> {
    let (path, profile) = if target.is_dir() {
        let json = target.join("run.json");
        let v: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(&json)
                .with_context(|| format!("cannot read {}", json.display()))?,
        )
        .with_context(|| format!("{} is not valid JSON", json.display()))?;
        let profile = v["profile"]
            .as_str()
            .with_context(|| format!("{}: no profile", json.display()))?
            .to_string();
        (manifest_of(target)?, profile)
    } else {
        let given = profile.map(str::to_string);
        (target.to_path_buf(), profile_for(target, &given)?)
    };
    let exp = manifest::load(&path, &profile)?;
    let dir = if target.is_dir() {
        target.to_path_buf()
    } else {
        results.join(&exp.paper).join(&exp.id).join(&exp.profile)
    };
    if !dir.is_dir() {
        anyhow::bail!(
            "{}: no results to re-render (run `dpca run {} --profile {}` first)",
            dir.display(),
            path.display(),
            exp.profile
        );
    }
    let _lock = FolderLock::acquire(&dir)?;
    let out = report::reload::outcome_from_csv(&exp, &dir)?;
    report::write_all(&exp, &out)?;
    println!("{}: re-rendered {} runs", dir.display(), out.records.len());
    Ok(())
}

fn attack(target: &Path, profile: Option<&str>, target_err: f64, opts: &Options) -> Result<()> {
    let path = manifest_of(target)?;
    let profile = profile_for(&path, &profile.map(str::to_string))?;
    let exp = manifest::load(&path, &profile)?;
    let _lock = FolderLock::acquire(&run::results_dir(&exp, opts))?;
    let progress = Progress::new();
    let out = run::run_experiment(&exp, opts, &progress)?;
    report::write_all(&exp, &out)?;
    let client = opts.attack.as_ref().map_or(1, |a| a.client);
    println!(
        "leakage attack on client {client} ({}, profile {profile}):",
        exp.id
    );
    println!(
        "{:<12} {:<40} {:>7} {:>16} {:>12}",
        "point", "method", "rounds", "first ≤ target", "final error"
    );
    for r in &out.records {
        let first = r.first_round_below(|t| t.leak_err, target_err);
        let last = r.trace.iter().rev().find_map(|t| t.leak_err);
        println!(
            "{:<12} {:<40} {:>7} {:>16} {:>12}",
            r.key.point,
            run::describe(&r.key),
            r.rounds,
            first.map_or("never".into(), |k| format!("round {k}")),
            last.map_or("—".into(), |e| format!("{e:.2e}")),
        );
    }
    println!(
        "(target {target_err:e}; per-round errors in {}/trace.csv, column leak_err)",
        out.dir.display()
    );
    Ok(())
}

fn data(action: DataAction, dir: &Path) -> Result<()> {
    use dpca_bench::data::{datasets, fetch};
    match action {
        DataAction::List => print!("{}", fetch::list_text(dir)),
        DataAction::Fetch { name } => {
            let ds = datasets::find(&name)?;
            fetch::fetch(dir, ds, &|line| eprintln!("{line}"))?;
        }
        DataAction::Verify { name } => {
            let ds = datasets::find(&name)?;
            // Absence is reported, not an error: nothing is wrong with what is on disk.
            match fetch::verify(dir, ds)? {
                Some(f) => println!(
                    "{}: {} files verified by SHA-256 in {}",
                    ds.name,
                    f.names.len(),
                    f.dir.display()
                ),
                None => println!("{}", fetch::absent_message(dir, ds)),
            }
        }
    }
    Ok(())
}

/// One line of `verify`'s and `compare`'s closing table.
fn outcome_row(name: &str, c: &Comparison) -> Vec<String> {
    vec![
        name.to_string(),
        match (c.identical(), c.matches()) {
            (true, _) => "identical",
            (false, true) => "match",
            (false, false) => "DIFFERS",
        }
        .into(),
        if c.rounds_differ() { "DIFFER" } else { "equal" }.into(),
        c.rows.to_string(),
        c.differences.len().to_string(),
        c.largest.map_or("0".into(), |r| format!("{r:.2e}")),
    ]
}

/// Columns of the closing table of `compare` (MAX REL. DIFF: over every compared number,
/// within the tolerance or not).
const OUTCOME_HEADER: [&str; 6] = [
    "RESULTS",
    "STATUS",
    "ROUNDS/STOP",
    "ROWS",
    "DIFFERENCES",
    "MAX REL. DIFF",
];

/// `verify`'s closing table adds the kernels of both sides.
const KERNELS_HEADER: &str = "KERNELS (A, B)";

/// Differences printed per folder before "… and N more".
const SHOWN: usize = 20;

/// Print one folder's comparison: nothing more when it matches, else its differences.
fn print_comparison(name: &str, c: &Comparison, tol: Tolerance) {
    if c.identical() {
        println!(
            "{name}: identical ({} rows, every cell bit for bit)",
            c.rows
        );
    } else if c.matches() {
        println!(
            "{name}: match ({} rows; metrics to {:e} relative + {:e}; largest difference {:.2e})",
            c.rows,
            tol.rtol,
            tol.atol,
            c.largest.unwrap_or(0.0)
        );
    } else {
        println!(
            "{name}: {} difference(s) (A = first, B = second):\n{}",
            c.differences.len(),
            c.table(SHOWN)
        );
    }
}

/// `dpca compare`: two results folders, or every results folder under two roots.
fn compare_dirs(a: &Path, b: &Path, tol: Tolerance) -> Result<()> {
    for d in [a, b] {
        if !d.is_dir() {
            return Err(UsageError(format!("{}: no such folder", d.display())).into());
        }
    }
    let is_folder = |d: &Path| d.join("summary.csv").is_file();
    let names: Vec<PathBuf> = if is_folder(a) && is_folder(b) {
        vec![PathBuf::new()]
    } else {
        let mut all = compare::folders_under(a)?;
        all.extend(compare::folders_under(b)?);
        all.sort();
        all.dedup();
        all
    };
    if names.is_empty() {
        return Err(UsageError(format!(
            "neither {} nor {} holds a results folder (one with a summary.csv)",
            a.display(),
            b.display()
        ))
        .into());
    }
    let mut rows = vec![OUTCOME_HEADER.map(String::from).to_vec()];
    let mut differing = 0;
    for rel in &names {
        let name = if rel.as_os_str().is_empty() {
            format!("{} vs {}", a.display(), b.display())
        } else {
            rel.display().to_string()
        };
        let (da, db) = (a.join(rel), b.join(rel));
        if !(is_folder(&da) && is_folder(&db)) {
            let only = if is_folder(&da) { "A" } else { "B" };
            println!("{name}: only in {only}");
            rows.push(vec![
                name,
                format!("only in {only}"),
                "—".into(),
                "—".into(),
                "—".into(),
                "—".into(),
            ]);
            differing += 1;
            continue;
        }
        let c = compare::compare_folders(&da, &db, tol)?;
        print_comparison(&name, &c, tol);
        differing += usize::from(!c.matches());
        rows.push(outcome_row(&name, &c));
    }
    if names.len() > 1 {
        print!("\n{}", columns(&rows));
    }
    if differing > 0 {
        anyhow::bail!("{differing} of {} results folder(s) differ", names.len());
    }
    Ok(())
}

/// `dpca verify`: re-run every manifest with committed results of `profile` into the scratch
/// root `opts.results_root` and compare.
fn verify(
    targets: &[PathBuf],
    committed: &Path,
    profile: &str,
    opts: &Options,
    tol: Tolerance,
) -> Result<()> {
    // Every manifest to re-run, and whether it was named (then it must have results).
    let mut manifests = Vec::new();
    for t in targets {
        if t.is_dir() {
            manifests.extend(manifests_under(t)?.into_iter().map(|m| (m, false)));
        } else if t.is_file() {
            manifests.push((t.clone(), true));
        } else {
            return Err(UsageError(format!("{}: no such manifest or folder", t.display())).into());
        }
    }
    let progress = Progress::new();
    let mut header = OUTCOME_HEADER.map(String::from).to_vec();
    header.push(KERNELS_HEADER.into());
    let width = header.len();
    let mut rows = vec![header];
    let (mut checked, mut differing, mut skipped) = (0, 0, 0);
    for (path, named) in manifests {
        let has_profile = manifest::profile_names(&path)?.iter().any(|p| p == profile);
        let exp = match has_profile {
            true => Some(manifest::load(&path, profile)?),
            false => None,
        };
        // The results folder's path under the results root, when the profile has results.
        let rel = exp
            .map(|e| Path::new(&e.paper).join(&e.id).join(&e.profile))
            .filter(|rel| committed.join(rel).join("summary.csv").is_file());
        let Some(rel) = rel else {
            if named {
                return Err(UsageError(format!(
                    "{}: no committed results of profile `{profile}` under {}",
                    path.display(),
                    committed.display()
                ))
                .into());
            }
            continue;
        };
        let old = committed.join(&rel);
        let name = rel.display().to_string();
        let started = std::time::Instant::now();
        match run_manifest(&path, profile, opts, &progress) {
            Ok(()) => {}
            Err(e) if e.chain().any(|c| c.is::<DatasetAbsent>()) => {
                progress.log(format!("skipped {name}: {e}"));
                let mut row = vec![name, "skipped: dataset absent".into()];
                row.resize(width, "—".into());
                rows.push(row);
                skipped += 1;
                continue;
            }
            Err(e) => return Err(e.context(format!("re-running {}", path.display()))),
        }
        let fresh = opts.results_root.join(&rel);
        let c = compare::compare_folders(&old, &fresh, tol)?;
        let kernels = kernels_line(&old, &fresh);
        progress.log(format!(
            "{name}: re-run in {:.0} s",
            started.elapsed().as_secs_f64()
        ));
        print_comparison(&name, &c, tol);
        println!("    kernels: {kernels}");
        checked += 1;
        differing += usize::from(!c.matches());
        let mut row = outcome_row(&name, &c);
        row.push(kernels);
        rows.push(row);
    }
    if checked + skipped == 0 {
        return Err(UsageError(format!(
            "no manifest in {} has committed results of profile `{profile}` in {}",
            targets
                .iter()
                .map(|t| t.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            committed.display()
        ))
        .into());
    }
    println!(
        "\n(A = committed in {}, B = re-run)\n{}",
        committed.display(),
        columns(&rows)
    );
    if differing > 0 {
        anyhow::bail!(
            "{differing} of {checked} re-run results folder(s) differ from the committed ones"
        );
    }
    println!(
        "{checked} results folder(s) reproduced{}",
        if skipped > 0 {
            format!(", {skipped} skipped (dataset absent)")
        } else {
            String::new()
        }
    );
    Ok(())
}

/// The kernels of the committed run (A) and the re-run (B), from their run.json files: "A = B"
/// when they give the same bits, else "A ≠ B (other kernels: other last bits)".
fn kernels_line(a: &Path, b: &Path) -> String {
    let read = |d: &Path| -> serde_json::Value {
        std::fs::read(d.join("run.json"))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    };
    let (ra, rb) = (read(a), read(b));
    let (ka, kb) = (
        report::provenance::kernels(&ra),
        report::provenance::kernels(&rb),
    );
    match report::provenance::same_bits_kernels(&ra, &rb) {
        true if ka == kb => format!("{ka} = {kb}"),
        true => format!("{ka} ≡ {kb} (same bits)"),
        false => format!("{ka} ≠ {kb} (other kernels: other last bits)"),
    }
}
