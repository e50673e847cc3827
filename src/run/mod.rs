//! The run loop: data → reference → clients → method steps (timed) → observer (untimed) → stop
//! rule, for every (sweep point, method variant, repeat) of an experiment.

mod progress;
mod record;
mod stop;

pub use progress::Progress;
pub use record::{RunKey, RunRecord, RunStore, TraceRow};
pub use stop::{StopReason, StopRule};

use crate::attack;
use crate::data::{
    cache::MatrixCache, matrix::DataMatrix, partition, prepare, synthetic, uniform_matrix,
};
use crate::linalg::orth;
use crate::manifest::{AttackSpec, DataSpec, Experiment, Generator, MethodSpec, Point, Spectrum};
use crate::methods::{registry, Method, Setup};
use crate::problem::subspace::Reference;
use crate::seed;
use anyhow::Result;
use ndarray::Array2;
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
}

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
}

/// Results folder of an experiment: `<root>/<paper>/<id>/<profile>`.
pub fn results_dir(exp: &Experiment, opts: &Options) -> PathBuf {
    opts.results_root
        .join(&exp.paper)
        .join(&exp.id)
        .join(&exp.profile)
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Methods selected by the `--method` filter, split into runnable and planned ones.
fn select_methods(exp: &Experiment, opts: &Options) -> (Vec<MethodSpec>, Vec<MethodSpec>) {
    let wanted = |m: &MethodSpec| {
        opts.methods.is_empty() || opts.methods.iter().any(|w| *w == m.name || *w == m.label)
    };
    exp.methods
        .iter()
        .filter(|m| wanted(m))
        .cloned()
        .partition(|m| {
            registry::lookup(&m.name).is_some_and(|e| e.status == registry::Status::Ready)
        })
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
    params: &serde_json::Value,
    attack: Option<&AttackSpec>,
) -> String {
    let text = serde_json::json!({
        "data": point.data, "partition": point.partition, "problem": point.problem,
        "stop": exp.stop, "method": m.name, "params": params, "attack": attack,
    })
    .to_string();
    let digest = <sha2::Sha256 as sha2::Digest>::digest(text.as_bytes());
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// Run (or load) every run of `exp`.
pub fn run_experiment(exp: &Experiment, opts: &Options, progress: &Progress) -> Result<Outcome> {
    let started_unix = unix_now();
    let dir = results_dir(exp, opts);
    let store = RunStore::new(&dir);
    let cache = MatrixCache::new(&opts.cache_dir);
    let (methods, planned) = select_methods(exp, opts);
    let mut resolved = Vec::new();
    for m in &methods {
        resolved.push(
            registry::check(&m.name, &m.params).map_err(|e| {
                exp.error_at(&format!("methods[{}].params.{}", m.index, e.key), e.msg)
            })?,
        );
    }
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
    let total = (exp.points.len() * seeds.len() * methods.len()) as u64;
    let runs_bar = progress.runs(total, &exp.id);
    let mut records = Vec::new();
    for point in &exp.points {
        for &run_seed in &seeds {
            let keys: Vec<(RunKey, &MethodSpec)> = methods
                .iter()
                .zip(&resolved)
                .map(|(m, params)| {
                    let key = RunKey {
                        point: point.label.clone(),
                        method: m.name.clone(),
                        label: m.label.clone(),
                        params: m.variant.clone(),
                        seed: run_seed,
                        fingerprint: fingerprint(exp, point, m, params, attack.as_ref()),
                    };
                    (key, m)
                })
                .collect();
            // Resume: runs already stored are loaded, and the data is built only if needed.
            let stored: Vec<Option<RunRecord>> = keys
                .iter()
                .map(|(k, _)| if opts.force { None } else { store.load(k) })
                .collect();
            if stored.iter().all(Option::is_some) {
                runs_bar.inc(keys.len() as u64);
                records.extend(stored.into_iter().flatten());
                continue;
            }
            let inst = Instance::build(point, run_seed, &cache, &opts.data_dir, progress)?;
            for ((key, m), old) in keys.into_iter().zip(stored) {
                let rec = match old {
                    Some(rec) => rec,
                    None => {
                        let rec = run_one(exp, &inst, m, key, attack.as_ref(), opts, progress)?;
                        store.save(&rec)?;
                        progress.log(format!(
                            "{} {}: {} {} rounds, kkt {:.2e}, sv_err {:.2e}, {:.2} s ({})",
                            exp.id,
                            rec.key.point,
                            describe(&rec.key),
                            rec.rounds,
                            rec.last().kkt,
                            rec.last().sv_err,
                            rec.last().time_s,
                            rec.stop_reason
                        ));
                        rec
                    }
                };
                records.push(rec);
                runs_bar.inc(1);
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
    crate::manifest::label_with_variant(&key.label, &key.params)
}

/// One problem instance: data, its exact reference and the common start.
pub struct Instance {
    pub point: Point,
    pub a: DataMatrix,
    /// Samples per client, in column order of `a`.
    pub sizes: Vec<usize>,
    pub reference: Reference,
    pub z0: Array2<f64>,
    pub seed: u64,
}

fn spectrum(spec: &DataSpec) -> synthetic::Spectrum {
    match spec.spectrum.expect("validated: svd data has a spectrum") {
        Spectrum::Geometric => synthetic::Spectrum::Geometric {
            xi: spec.xi.expect("validated"),
        },
        Spectrum::Arithmetic => synthetic::Spectrum::Arithmetic {
            kappa: spec.kappa.expect("validated"),
        },
    }
}

impl Instance {
    /// Build (or load from the cache) the data and reference of `point` for `run_seed`.
    pub fn build(
        point: &Point,
        run_seed: u64,
        cache: &MatrixCache,
        data_dir: &std::path::Path,
        progress: &Progress,
    ) -> Result<Self> {
        let spec = &point.data;
        let key = spec.cache_key();
        let data_seed = seed::derive(run_seed, &["data", &key]);
        let full_key = format!("{key}-seed{data_seed}");
        let task = progress.task(&format!("data {key} (generated or loaded, then cached)"));
        let (a, labels) = match spec.generator {
            Generator::Svd => {
                let a = cache.get_or_build("svd", &full_key, || {
                    synthetic::svd_matrix(spec.n, spec.m, spectrum(spec), data_seed)
                })?;
                (DataMatrix::Dense(a), None)
            }
            // Real data is read (and its checksums verified) on every run, not cached.
            Generator::Dataset => {
                let (a, labels) = prepare::dataset_matrix(spec, data_dir)?;
                (a, Some(labels))
            }
        };
        // The sample order does not change AAᵀ, so the cached reference stays valid.
        let mut rng = seed::rng(run_seed, &["partition", &key]);
        let (a, sizes) = partition::arrange(a, labels.as_deref(), &point.partition, &mut rng)?;
        let p = point.problem.p;
        task.set_message(format!("reference for {key} (computed once, then cached)"));
        let reference = Reference::build(a.view(), p, cache, &full_key)?;
        task.finish_and_clear();
        let z0 = orth(
            uniform_matrix(
                spec.n,
                p,
                &mut seed::rng(run_seed, &["z0", &key, &p.to_string()]),
            )
            .view(),
        );
        Ok(Self {
            point: point.clone(),
            a,
            sizes,
            reference,
            z0,
            seed: run_seed,
        })
    }
}

/// Run one method on one instance until the stop rule fires.
pub fn run_one(
    exp: &Experiment,
    inst: &Instance,
    m: &MethodSpec,
    key: RunKey,
    attack: Option<&AttackSpec>,
    opts: &Options,
    progress: &Progress,
) -> Result<RunRecord> {
    let blocks = inst.a.view().split(&inst.sizes);
    let attacked = attack.map(|a| a.client - 1);
    // The attack compares with A_1A_1ᵀ, which it needs dense (n × n at most).
    let attacked_block = attacked
        .map(|c| {
            blocks[c].as_dense().ok_or_else(|| {
                anyhow::anyhow!(
                    "the leakage attack needs dense data; {} is sparse",
                    inst.point.label
                )
            })
        })
        .transpose()?;
    let setup = Setup {
        blocks: blocks.clone(),
        p: inst.point.problem.p,
        z0: inst.z0.clone(),
        seed: seed::derive(inst.seed, &["method", &m.name, &inst.point.label]),
        watch: attacked.map(|c| vec![c]),
    };
    let mut method = registry::build(&m.name, &m.params, setup)?;
    let bar = progress.rounds(exp.stop.max_rounds as u64, &describe(&key));
    let mut rule = StopRule::new(&exp.stop);
    let mut seconds = 0.0;
    let m0 = inst
        .reference
        .metrics(inst.a.view(), method.estimate().view())?;
    let mut trace = vec![row(0, 0.0, seconds, method.as_ref(), m0)];
    let mut inner = Vec::new();
    let reason = loop {
        let t = Instant::now();
        let info = method.step()?;
        seconds += t.elapsed().as_secs_f64();
        // Observer: everything below is outside the timed section.
        let metrics = inst
            .reference
            .metrics(inst.a.view(), method.estimate().view())?;
        let round = method.counters().rounds;
        let mean_inner = info.inner_iters.iter().map(|&i| i as f64).sum::<f64>()
            / info.inner_iters.len().max(1) as f64;
        trace.push(row(round, mean_inner, seconds, method.as_ref(), metrics));
        inner.push(info.inner_iters);
        bar.set_position(round);
        bar.set_message(format!("kkt {:.2e}", metrics.kkt));
        if let Some(r) = rule.check(round as usize, info.objective, metrics.kkt, seconds) {
            break r;
        }
    };
    bar.finish_and_clear();
    // The attack reads the transcript after the run: untimed, like every metric.
    if let (Some(a), Some(c), Some(a1), Some(t)) =
        (attack, attacked, attacked_block, method.transcript())
    {
        let pairs = attack::pairs(t, c);
        let max = a.max_rounds.unwrap_or(usize::MAX);
        for (row, err) in trace
            .iter_mut()
            .skip(1)
            .zip(attack::leakage_errors(a1, &pairs, max)?)
        {
            row.leak_err = Some(err);
        }
    }
    Ok(RunRecord {
        key,
        rounds: method.counters().rounds,
        converged: reason.converged(),
        stop_reason: reason.as_str().into(),
        trace,
        inner,
        bytes_up_per_client: method.counters().bytes_up_per_client.clone(),
        threads: opts.threads,
        peak_rss_mib: crate::util::peak_rss_mib(),
    })
}

fn row(
    round: u64,
    inner: f64,
    seconds: f64,
    method: &dyn Method,
    m: crate::problem::subspace::Metrics,
) -> TraceRow {
    let c = method.counters();
    TraceRow {
        round,
        inner_iters: inner,
        time_s: seconds,
        bytes_up: c.bytes_up,
        bytes_down: c.bytes_down,
        vectors: c.vectors(),
        objective: m.objective,
        kkt: m.kkt,
        sv_err: m.sv_err,
        subspace_dist: m.subspace_dist,
        leak_err: None,
    }
}
