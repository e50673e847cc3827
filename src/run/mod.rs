//! The run loop: data → reference → clients → method steps (timed) → observer (untimed) → stop
//! rule, for every (sweep point, method variant, repeat) of an experiment.

mod memory;
#[cfg(feature = "mpi")]
pub mod mpi;
mod observe;
mod record;
mod stop;

pub use observe::Observe;
pub use record::{RunKey, RunRecord, RunStore, TraceRow};
pub use stop::{Status, StopReason, StopRule, MIN_GAIN};

use crate::data::cache::MatrixCache;
use crate::data::prepare::KeyMismatch;
use crate::fed::{Counters, RunNetwork};
use crate::methods::{registry, StepInfo};
use crate::problem::{self, Instance};
use crate::progress::Progress;
use crate::seed;
use crate::spec::{AttackSpec, Experiment, MethodSpec, Point};
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

/// How to run (from the command line, not the manifest).
#[derive(Clone, Debug)]
pub struct Options {
    pub results_root: PathBuf,
    pub cache_dir: PathBuf,
    /// Where fetched datasets live (`dpca data fetch`).
    pub data_dir: PathBuf,
    /// Re-run runs that are already stored.
    pub force: bool,
    /// Only these method names or labels (all when empty).
    pub methods: Vec<String>,
    /// Override the manifest's base seed.
    pub seed: Option<u64>,
    /// Worker threads for client-parallel work.
    pub threads: usize,
    /// Run the leakage attack even if the manifest does not ask for it (`dpca attack`).
    pub attack: Option<AttackSpec>,
    /// Refuse a manifest whose data cannot fit in this machine's available memory.
    pub memory_check: bool,
    /// Where the clients run.
    pub backend: Backend,
}

/// Where the clients run (results are identical, time columns aside).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// Every client in this process, in parallel (rayon).
    #[default]
    Local,
    /// Rank 0 of an `mpirun` job is the server, the other ranks hold the clients (cargo
    /// feature `mpi`).
    Mpi,
}

/// Why `--backend mpi` cannot run in a binary built without the feature.
pub const MPI_NOT_BUILT: &str = "--backend mpi: this dpca was built without MPI support; build \
     it with `cargo build --release --features mpi` (Open MPI and libclang from Debian: `make \
     deps-system`), then start it under mpirun: `mpirun -np 3 dpca run MANIFEST --backend mpi`";

/// The stored and new runs of one experiment, in manifest order.
pub struct Outcome {
    pub dir: PathBuf,
    pub records: Vec<RunRecord>,
    /// Method specs of the manifest that cannot run yet (shown in the report, not in the CSV).
    pub planned: Vec<MethodSpec>,
    pub started_unix: u64,
    pub finished_unix: u64,
    pub threads: usize,
    /// The largest peak memory of the processes that computed the runs (see `peak_rss`).
    pub peak_rss_mib: Option<f64>,
    /// When re-rendered from committed CSVs: the run.json of the process that computed them,
    /// whose provenance (git revision, CPU, BLAS, times) the new run.json keeps.
    pub computed_by: Option<serde_json::Value>,
}

/// Results folder of an experiment: `<root>/<paper>/<id>/<profile>`.
pub fn results_dir(exp: &Experiment, opts: &Options) -> PathBuf {
    opts.results_root
        .join(&exp.paper)
        .join(&exp.id)
        .join(&exp.folder)
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The manifest's methods split into runnable and planned ones, each runnable one with whether
/// the `--method` filter selects it (runs of the others are only loaded, so that the report
/// still shows every stored run). A filter entry that names no method of the manifest is an
/// error, not an empty run.
#[allow(clippy::type_complexity)]
fn select_methods(
    exp: &Experiment,
    opts: &Options,
) -> Result<(Vec<(MethodSpec, bool)>, Vec<MethodSpec>)> {
    let names = |m: &MethodSpec| [m.name.clone(), m.label.clone()];
    if let Some(w) = opts
        .methods
        .iter()
        .find(|w| !exp.methods.iter().any(|m| names(m).contains(w)))
    {
        let known: Vec<String> = exp.methods.iter().map(|m| m.label.clone()).collect();
        anyhow::bail!(
            "--method {w}: {} has no such method; its methods are {}",
            exp.path.display(),
            known.join(", ")
        );
    }
    let wanted = |m: &MethodSpec| {
        opts.methods.is_empty() || opts.methods.iter().any(|w| names(m).contains(w))
    };
    let (runnable, planned): (Vec<MethodSpec>, Vec<MethodSpec>) = exp
        .methods
        .iter()
        .cloned()
        .partition(|m| registry::lookup(&m.name).is_some());
    let planned = planned.into_iter().filter(|m| wanted(m)).collect();
    Ok((
        runnable
            .into_iter()
            .map(|m| {
                let w = wanted(&m);
                (m, w)
            })
            .collect(),
        planned,
    ))
}

/// Seeds of the repeats: the base seed, then seeds derived from it.
fn run_seeds(exp: &Experiment, opts: &Options) -> Vec<u64> {
    let base = opts.seed.unwrap_or(exp.seed);
    (0..exp.repeats)
        .map(|r| {
            if r == 0 {
                base
            } else {
                seed::derive(base, &["repeat", &r.to_string()])
            }
        })
        .collect()
}

/// Everything that determines a run's numbers, hashed: the point, the stop rule, the method's
/// resolved parameters (defaults included) and the attack. Code changes are not covered: after
/// changing a method, re-run with --force.
fn fingerprint(
    exp: &Experiment,
    point: &Point,
    m: &MethodSpec,
    attack: Option<&AttackSpec>,
) -> String {
    let text = serde_json::json!({
        "data": point.data, "partition": point.partition, "problem": point.problem,
        "stop": exp.stop, "method": m.name, "params": m.resolved, "attack": attack,
    })
    .to_string();
    let digest = <sha2::Sha256 as sha2::Digest>::digest(text.as_bytes());
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// Run (or load) every run of `exp`.
pub fn run_experiment(exp: &Experiment, opts: &Options, progress: &Progress) -> Result<Outcome> {
    let started_unix = unix_now();
    memory::check(exp, opts)?;
    let dir = results_dir(exp, opts);
    let store = RunStore::new(&dir);
    let cache = MatrixCache::new(&opts.cache_dir);
    let (methods, planned) = select_methods(exp, opts)?;
    let attack = opts.attack.clone().or_else(|| exp.attack.clone());
    if let Some(a) = &attack {
        if let Some(pt) = exp.points.iter().find(|pt| a.client > pt.partition.clients) {
            return Err(exp
                .error_at(
                    "attack.client",
                    format!(
                        "client {} does not exist: {} clients",
                        a.client, pt.partition.clients
                    ),
                )
                .into());
        }
    }
    let seeds = run_seeds(exp, opts);
    let selected = methods.iter().filter(|(_, w)| *w).count();
    let total = (exp.points.len() * seeds.len() * selected) as u64;
    let runs_bar = progress.runs(total, &exp.id);
    let mut records = Vec::new();
    for point in &exp.points {
        for &run_seed in &seeds {
            let keys: Vec<(RunKey, &MethodSpec, bool)> = methods
                .iter()
                .map(|(m, selected)| {
                    let key = RunKey {
                        point: point.label.clone(),
                        method: m.name.clone(),
                        label: m.label.clone(),
                        params: m.variant.clone(),
                        seed: run_seed,
                        fingerprint: fingerprint(exp, point, m, attack.as_ref()),
                    };
                    (key, m, *selected)
                })
                .collect();
            // Resume: runs already stored are loaded, and the data is built only if needed.
            // Methods the filter leaves out are only loaded (--force does not reach them).
            let stored: Vec<Option<RunRecord>> = keys
                .iter()
                .map(|(k, _, sel)| {
                    if opts.force && *sel {
                        None
                    } else {
                        store.load(k)
                    }
                })
                .collect();
            if keys
                .iter()
                .zip(&stored)
                .all(|((.., sel), old)| old.is_some() || !sel)
            {
                runs_bar.inc(keys.iter().filter(|(.., sel)| *sel).count() as u64);
                records.extend(stored.into_iter().flatten());
                continue;
            }
            let inst = problem::family(point.problem.kind)
                .build(point, run_seed, &cache, &opts.data_dir, progress)
                .map_err(|e| match e.downcast_ref::<KeyMismatch>() {
                    Some(k) => {
                        let at = if point.label.is_empty() {
                            String::new()
                        } else {
                            format!(" (sweep point {})", point.label)
                        };
                        exp.error_at(k.key, format!("{k}{at}")).into()
                    }
                    None => e,
                })?;
            for ((key, m, selected), old) in keys.into_iter().zip(stored) {
                let rec = match old {
                    Some(rec) => rec,
                    None if !selected => continue,
                    None => {
                        let rec = run_one(
                            exp,
                            point,
                            inst.as_ref(),
                            m,
                            key,
                            attack.as_ref(),
                            opts,
                            progress,
                        )?;
                        store.save(&rec)?;
                        progress.log(format!(
                            "{} {}: {} {} rounds, {}, {:.2} s ({})",
                            exp.id,
                            rec.key.point,
                            describe(&rec.key),
                            rec.rounds,
                            headline(exp, rec.last()),
                            rec.last().time_s,
                            rec.stop_reason
                        ));
                        rec
                    }
                };
                // A run stored by an earlier build may have judged its convergence otherwise.
                let mut rec = rec;
                rec.converged = rec.status(&exp.stop, exp.kind) == Status::Converged;
                records.push(rec);
                if selected {
                    runs_bar.inc(1);
                }
            }
        }
    }
    runs_bar.finish_and_clear();
    Ok(Outcome {
        peak_rss_mib: peak_rss(&records, &dir),
        dir,
        records,
        planned,
        started_unix,
        finished_unix: unix_now(),
        threads: opts.threads,
        computed_by: None,
    })
}

/// The largest peak memory the runs recorded. Runs stored before records carried it fall back
/// on the run.json their computing process wrote, so re-rendering a report keeps the measurement
/// instead of printing the re-rendering process's own few MiB.
fn peak_rss(records: &[RunRecord], dir: &std::path::Path) -> Option<f64> {
    records
        .iter()
        .filter_map(|r| r.peak_rss_mib)
        .reduce(f64::max)
        .or_else(|| {
            let json = std::fs::read_to_string(dir.join("run.json")).ok()?;
            serde_json::from_str::<serde_json::Value>(&json).ok()?["peak_rss_mib"].as_f64()
        })
}

/// "faps (inner=fixed;inner_steps=5)" or "ssi".
pub fn describe(key: &RunKey) -> String {
    crate::spec::label_with_variant(&key.label, &key.params)
}

/// Two metrics for log lines: the stop rule's target metric first, then the family's first
/// lower-is-better ones: "stationarity 4.9e-5, recon 6.2e0".
fn headline(exp: &Experiment, row: &TraceRow) -> String {
    let target = exp.stop.target.as_ref().map(|t| t.metric.as_str());
    let rest = crate::problem::family(exp.kind)
        .metrics()
        .iter()
        .filter(|m| m.lower_is_better && Some(m.name) != target)
        .map(|m| m.name);
    target
        .into_iter()
        .chain(rest)
        .take(2)
        .map(|m| format!("{m} {:.2e}", row.metric(m).unwrap_or(f64::NAN)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The seed a method's server and clients start from.
fn method_seed(run_seed: u64, m: &MethodSpec, point: &Point) -> u64 {
    seed::derive(run_seed, &["method", &m.name, &point.label])
}

/// Run one method on one instance until the stop rule fires. A centralised method gets one
/// client holding all the data.
#[allow(clippy::too_many_arguments)]
pub fn run_one(
    exp: &Experiment,
    point: &Point,
    inst: &dyn Instance,
    m: &MethodSpec,
    key: RunKey,
    attack: Option<&AttackSpec>,
    opts: &Options,
    progress: &Progress,
) -> Result<RunRecord> {
    let entry = registry::lookup(&m.name).expect("validated: a registered method");
    let all = inst.data().view();
    let sizes = entry.client_sizes(inst.sizes());
    let blocks = all.split(&sizes);
    let leakage =
        observe::Leakage::prepare(attack, &blocks, entry.transcript, &m.resolved, &point.label)?;
    let start = registry::Start {
        start: inst.start(),
        seed: method_seed(key.seed, m, point),
    };
    let (mut server, mut net) =
        match start_method(exp, point, m, &key, opts, start, blocks, sizes, inst.dim())? {
            Ok(started) => started,
            // A method that cannot start on this data (DSI on a machine whose top eigenvalue is
            // repeated) is a failed run, not a failed experiment.
            Err(e) => return Ok(unstarted(exp, key, m, opts, progress, e)),
        };
    let net: &mut dyn RunNetwork = net.as_mut();
    if let Some(l) = &leakage {
        l.record(net);
    }
    let mut rule = StopRule::new(&exp.stop, exp.kind).with_applicable(inst.applicable());
    let target = rule.target();
    let headline = |row: &TraceRow| headline(exp, row);
    // FAPS fig. 1 prints the KKT violation unscaled: the family says which metric and name.
    let unscaled = attack
        .filter(|a| a.unscaled)
        .and_then(|_| problem::family(exp.kind).unscaled())
        .map(|(metric, name)| observe::Unscaled::of(all, metric, name));
    let mut observers: Vec<Box<dyn Observe + '_>> = vec![Box::new(observe::Bar {
        bar: progress.run(
            exp.stop.max_rounds as u64,
            &format!("{} {}", point.label, describe(&key)),
            target.map(|(_, v, lower)| (v, lower)),
        ),
        headline: &headline,
        target: target.map(|(m, ..)| m),
    })];
    observers.extend(leakage.map(|o| Box::new(o) as Box<dyn Observe>));
    observers.extend(unscaled.map(|o| Box::new(o) as Box<dyn Observe>));
    let mut seconds = 0.0;
    let observe = |net: &mut dyn RunNetwork, server: &dyn crate::methods::Server| {
        inst.evaluate(&server.estimate(), &net.reveal()?)
    };
    let m0 = observe(net, server.as_ref())?;
    let mut trace = vec![row(exp, 0.0, seconds, net.counters(), &m0)];
    let mut error = None;
    let reason = loop {
        let t = Instant::now();
        // A method that errs or panics mid-run (a singular factorisation on degenerate data)
        // ends this run as "failed" with its message; the experiment's other runs go on.
        let step = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| server.step(net)));
        seconds += t.elapsed().as_secs_f64();
        // A network that broke (an MPI rank lost or out of step) ends the experiment.
        if let Some(why) = net.broken() {
            anyhow::bail!(why);
        }
        let info: StepInfo = match step {
            Ok(Ok(info)) => info,
            Ok(Err(e)) => {
                error = Some(format!("{e:#}"));
                break StopReason::Failed;
            }
            Err(panic) => {
                error = Some(format!(
                    "panicked: {}",
                    crate::util::panic_message(panic.as_ref())
                ));
                break StopReason::Failed;
            }
        };
        // Observer: everything below is outside the timed section.
        let metrics = observe(net, server.as_ref())?;
        let inner = net.inner_iters()?;
        let mean_inner = inner.iter().map(|&i| i as f64).sum::<f64>() / inner.len().max(1) as f64;
        trace.push(row(exp, mean_inner, seconds, net.counters(), &metrics));
        let round = net.counters().rounds;
        let last = trace.last().expect("just pushed");
        observers.iter_mut().for_each(|o| o.round(last));
        if let Some(r) = rule.check(round as usize, &info, &metrics, seconds) {
            break r;
        }
    };
    if let Some(e) = &error {
        progress.log(format!(
            "warning: {} {}: {} failed after {} rounds: {e}",
            exp.id,
            point.label,
            describe(&key),
            net.counters().rounds
        ));
    }
    // After the run, untimed like every metric: the bar ends, the attack reads the transcript.
    for o in &mut observers {
        o.finish(&mut trace, &*net)?;
    }
    drop(observers);
    // A failed method's estimate may be half-updated: no spectra of it.
    let spectra = if error.is_some() {
        BTreeMap::new()
    } else {
        inst.spectra(&server.estimate(), &net.reveal()?)?
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect()
    };
    let chosen = server
        .chosen()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    let counters = net.counters();
    let status = Status::of(&reason, &exp.stop, exp.kind, &trace);
    Ok(RunRecord {
        spectra,
        key,
        rounds: counters.rounds,
        converged: status == Status::Converged,
        stop_reason: reason.as_str(),
        trace,
        bytes_up_per_client: counters.bytes_up_per_client.clone(),
        resolved: m.resolved.clone(),
        threads: opts.threads,
        peak_rss_mib: crate::util::peak_rss_mib(),
        chosen,
        error,
    })
}

/// The method's server and the network of its clients on the chosen backend; the inner error:
/// the method cannot start on this data.
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn start_method<'a>(
    exp: &Experiment,
    point: &Point,
    m: &'a MethodSpec,
    key: &RunKey,
    opts: &Options,
    start: registry::Start<'a>,
    blocks: Vec<crate::data::matrix::Block<'a>>,
    sizes: Vec<usize>,
    dim: usize,
) -> Result<std::result::Result<(Box<dyn crate::methods::Server>, Box<dyn RunNetwork + 'a>), String>>
{
    let entry = registry::lookup(&m.name).expect("validated: a registered method");
    Ok(match opts.backend {
        Backend::Local => registry::Running::new(entry, &m.resolved, start, blocks, dim)
            .map(|r| {
                let net: Box<dyn RunNetwork + 'a> = Box::new(r.net);
                (r.server, net)
            })
            .map_err(|e| format!("{e:#}")),
        #[cfg(feature = "mpi")]
        Backend::Mpi => {
            let _ = blocks;
            mpi::start(exp, point, m, key, entry, start, sizes, dim)?
        }
        #[cfg(not(feature = "mpi"))]
        Backend::Mpi => {
            let _ = (exp, point, key, blocks, sizes);
            anyhow::bail!(MPI_NOT_BUILT)
        }
    })
}

/// The record of a run whose method could not start: round 0 only, metrics NaN.
fn unstarted(
    exp: &Experiment,
    key: RunKey,
    m: &MethodSpec,
    opts: &Options,
    progress: &Progress,
    error: String,
) -> RunRecord {
    progress.log(format!(
        "warning: {} {}: {} could not start: {error}",
        exp.id,
        key.point,
        describe(&key)
    ));
    let metrics = crate::problem::family(exp.kind)
        .metrics()
        .iter()
        .map(|d| (d.name.to_string(), f64::NAN))
        .collect();
    RunRecord {
        key,
        rounds: 0,
        converged: false,
        stop_reason: StopReason::Failed.as_str(),
        trace: vec![TraceRow::at_start(metrics)],
        bytes_up_per_client: Vec::new(),
        resolved: m.resolved.clone(),
        spectra: BTreeMap::new(),
        threads: opts.threads,
        peak_rss_mib: crate::util::peak_rss_mib(),
        chosen: BTreeMap::new(),
        error: Some(format!("could not start: {error}")),
    }
}

fn row(exp: &Experiment, inner: f64, seconds: f64, c: &Counters, values: &[f64]) -> TraceRow {
    let metrics: BTreeMap<String, f64> = crate::problem::family(exp.kind)
        .metrics()
        .iter()
        .zip(values)
        .map(|(m, &v)| (m.name.to_string(), v))
        .collect();
    TraceRow {
        round: c.rounds,
        inner_iters: inner,
        time_s: seconds,
        bytes_up: c.bytes_up,
        bytes_down: c.bytes_down,
        vectors: c.vectors(),
        metrics,
        leak_err: None,
    }
}
