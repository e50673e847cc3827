//! The runner's side of the MPI backend: on rank 0, a run starts its clients on the other
//! ranks ([`start`]); every other rank runs [`worker`], which builds its clients for each run
//! rank 0 starts and serves them (see [`crate::fed::mpi`] for the protocol).
//!
//! A rank builds only its share of the experiment's data ([`problem::share`]): the columns of
//! its own clients, equal to the bit to rank 0's (generation is deterministic, reading a
//! dataset or the cache gives the same bits), and never the reference solution. It needs the
//! manifest, and a cache or dataset folder, at the same paths as rank 0.

use super::{fingerprint, method_seed, Options};
use crate::data::cache::MatrixCache;
use crate::data::matrix::DataMatrix;
use crate::fed::mpi::{clients_of, Command, Ended, MpiNetwork, Reply, Worker};
use crate::fed::{Message, RunNetwork};
use crate::methods::{registry, Server};
use crate::plan;
use crate::problem;
use crate::spec::{Experiment, MethodSpec, Point};
use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::ops::Range;
use std::path::{Path, PathBuf};

/// What rank 0 tells the other ranks to start a run: enough to rebuild its data and clients,
/// and the run's fingerprint to check that every rank read the same manifest.
#[derive(Debug, Serialize, Deserialize)]
struct Job {
    manifest: PathBuf,
    /// sha256 of its bytes, which a rank compares with the manifest its own arguments name.
    manifest_sha256: String,
    profile: String,
    /// The `--set` entries, as `KEY=VALUE`.
    #[serde(default)]
    sets: Vec<String>,
    point: String,
    seed: u64,
    method: String,
    fingerprint: String,
}

/// On rank 0: the method's server and the network of its clients on the other ranks. The
/// inner error: the method cannot start on this data (a failed run, as with the local backend).
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub(super) fn start<'a>(
    exp: &Experiment,
    point: &Point,
    m: &MethodSpec,
    key: &super::RunKey,
    entry: &registry::Entry,
    start: registry::Start<'_>,
    sizes: Vec<usize>,
    dim: usize,
) -> Result<std::result::Result<(Box<dyn Server>, Box<dyn RunNetwork + 'a>), String>> {
    // As Running::new: the server first, then the clients.
    let server = match (entry.server)(&m.resolved, start, &sizes) {
        Ok(s) => s,
        Err(e) => return Ok(Err(format!("{e:#}"))),
    };
    let job = Job {
        manifest: exp.path.clone(),
        manifest_sha256: exp.hash.clone(),
        profile: exp.profile.clone(),
        sets: exp.sets.clone(),
        point: point.label.clone(),
        seed: key.seed,
        method: m.full_label(),
        fingerprint: fingerprint(exp, point, m, None),
    };
    let job = serde_json::to_value(job).expect("a job serialises to JSON");
    Ok(MpiNetwork::start(job, sizes, dim)?.map(|net| {
        let net: Box<dyn RunNetwork + 'a> = Box::new(net);
        (server, net)
    }))
}

/// A rank's share of a (manifest, point, seed)'s data.
struct Held {
    /// (manifest, profile, point, seed).
    key: (PathBuf, String, String, u64),
    exp: Experiment,
    /// The columns `lo..` of the data this rank's clients need, for every method of the
    /// manifest ([`columns_needed`]).
    lo: usize,
    cols: DataMatrix,
    /// Samples per client of the distributed methods.
    sizes: Vec<usize>,
    start: Message,
}

impl Held {
    /// Build this rank's share of `job`'s data ([`problem::share`]): the columns its clients
    /// need for every method of the manifest, not the reference solution.
    fn load(job: &Job, opts: &Options, rank: i32, ranks: i32) -> Result<Self> {
        let sets = job
            .sets
            .iter()
            .map(|t| crate::spec::Set::parse(t).map_err(anyhow::Error::msg))
            .collect::<Result<Vec<_>>>()?;
        let exp = plan::load_with(&job.manifest, &job.profile, &sets)?;
        let point = find_point(&exp, &job.point)?;
        let cache = MatrixCache::new(&opts.cache_dir);
        let pick = |sizes: &[usize]| columns_needed(&exp, sizes, rank, ranks);
        let share = problem::family(point.problem.kind).share(
            point,
            job.seed,
            &cache,
            &opts.data_dir,
            &pick,
        )?;
        Ok(Self {
            key: key_of(job),
            lo: share.lo,
            cols: share.cols,
            sizes: share.sizes,
            start: share.start,
            exp,
        })
    }

    /// This rank's clients of `job`'s method. The outer error: the rank is out of step with
    /// rank 0; the inner one: a client could not be built.
    #[allow(clippy::type_complexity)]
    fn clients(
        &self,
        job: &Job,
        rank: i32,
        ranks: i32,
    ) -> Result<std::result::Result<Vec<Box<dyn crate::fed::Client + '_>>, String>> {
        let point = find_point(&self.exp, &job.point)?;
        let m = self
            .exp
            .methods
            .iter()
            .find(|m| m.full_label() == job.method)
            .ok_or_else(|| anyhow!("no method `{}` in {}", job.method, job.manifest.display()))?;
        if fingerprint(&self.exp, point, m, None) != job.fingerprint {
            bail!(
                "{} ({} {}) differs from rank 0's: every rank must read the same manifest",
                job.manifest.display(),
                job.point,
                job.method
            );
        }
        let entry = registry::lookup(&m.name).ok_or_else(|| anyhow!(registry::unknown(&m.name)))?;
        let sizes = entry.client_sizes(&self.sizes);
        let mine = clients_of(rank, sizes.len(), ranks);
        if mine.is_empty() {
            return Ok(Ok(Vec::new()));
        }
        let first: usize = sizes[..mine.start].iter().sum();
        let all = self.cols.view();
        let mut at = first - self.lo;
        let blocks = mine
            .map(|i| {
                let b = all.range(at, at + sizes[i]);
                at += sizes[i];
                (i, b)
            })
            .collect();
        let start = registry::Start {
            start: &self.start,
            seed: method_seed(job.seed, m, point),
        };
        Ok((entry.clients)(&m.resolved, start, &sizes, blocks).map_err(|e| format!("{e:#}")))
    }
}

/// The columns `rank`'s clients hold, over every method of `exp`, for client sizes `sizes`
/// (all of them on the rank holding a centralised method's one client; none on a rank
/// without clients).
fn columns_needed(exp: &Experiment, sizes: &[usize], rank: i32, ranks: i32) -> Range<usize> {
    let (mut lo, mut hi) = (usize::MAX, 0);
    for m in &exp.methods {
        let Some(entry) = registry::lookup(&m.name) else {
            continue;
        };
        let s = entry.client_sizes(sizes);
        let mine = clients_of(rank, s.len(), ranks);
        if !mine.is_empty() {
            lo = lo.min(s[..mine.start].iter().sum());
            hi = hi.max(s[..mine.end].iter().sum());
        }
    }
    lo.min(hi)..hi
}

fn key_of(job: &Job) -> (PathBuf, String, String, u64) {
    (
        job.manifest.clone(),
        // The profile and the `--set` entries: another list is another experiment.
        format!("{}\n{}", job.profile, job.sets.join("\n")),
        job.point.clone(),
        job.seed,
    )
}

fn find_point<'e>(exp: &'e Experiment, label: &str) -> Result<&'e Point> {
    exp.points
        .iter()
        .find(|p| p.label == label)
        .ok_or_else(|| anyhow!("no sweep point `{label}` in {}", exp.path.display()))
}

/// Run `f`, a panic turned into an error.
fn guarded<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|p| {
        Err(anyhow!(
            "panicked: {}",
            crate::util::panic_message(p.as_ref())
        ))
    })
}

/// Why a worker stopped when rank 0 ended the job with a failure. Rank 0 has printed it (naming
/// the rank where it arose, if not rank 0), so the worker prints nothing: one message per fault.
#[derive(Debug)]
pub struct RankZeroFailed(pub String);

impl std::fmt::Display for RankZeroFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "rank 0 failed: {}", self.0)
    }
}

impl std::error::Error for RankZeroFailed {}

/// Why this rank must not serve a run of rank 0's manifest (`path`, whose bytes hash to `hash`):
/// its own command line names other manifests, as when ranks were started with different
/// arguments. A named file matches by path or, on another machine or at another path, by
/// content; a named folder (`reproduce`) by holding it. None when the command line names none,
/// or none this rank can read (loading the manifest then says what is missing).
fn not_mine(own: &[PathBuf], path: &Path, hash: &str) -> Option<String> {
    let canon = |p: &Path| std::fs::canonicalize(p).ok();
    let wanted = canon(path);
    let mut readable = false;
    for o in own {
        let Ok(meta) = std::fs::metadata(o) else {
            continue;
        };
        readable = true;
        let same_path = wanted.is_some() && canon(o) == wanted;
        let inside = meta.is_dir()
            && wanted
                .as_ref()
                .zip(canon(o))
                .is_some_and(|(w, d)| w.starts_with(d));
        // Regular files of a manifest's size only: a FIFO would block the read.
        let same_bytes = meta.is_file()
            && meta.len() <= 4 << 20
            && crate::data::fetch::sha256_file(o).is_ok_and(|h| h == hash);
        if same_path || inside || same_bytes {
            return None;
        }
    }
    if !readable {
        return None;
    }
    let named: Vec<String> = own.iter().map(|p| p.display().to_string()).collect();
    Some(format!(
        "its command line names {}, but rank 0 runs {} (other bytes): start every rank with \
         the same arguments (mpirun -np N dpca run MANIFEST --backend mpi)",
        named.join(", "),
        path.display()
    ))
}

/// A rank other than 0, until rank 0 ends the job: Ok when it ended with success, the reason
/// when it failed. `opts` is this rank's setup, whose error is reported when a run starts;
/// `own` the manifests its command line names (see [`not_mine`]).
pub fn worker(opts: Result<Options>, own: &[PathBuf]) -> Result<()> {
    let w = Worker::new();
    let (rank, ranks) = (w.rank(), w.ranks());
    let mut held: Option<Held> = None;
    loop {
        let cmd = match w.command().0 {
            Ok(cmd) => cmd,
            Err(e) => {
                w.reply(&Reply::Broken(format!("{e:#}")), &[]);
                continue;
            }
        };
        match cmd {
            Command::Start(job) => {
                let job: Job = match serde_json::from_value(job).context("unreadable job") {
                    Ok(j) => j,
                    Err(e) => {
                        w.reply(&Reply::Broken(format!("{e:#}")), &[]);
                        continue;
                    }
                };
                if let Some(why) = not_mine(own, &job.manifest, &job.manifest_sha256) {
                    w.reply(&Reply::Broken(why), &[]);
                    continue;
                }
                if held.as_ref().map(|h| &h.key) != Some(&key_of(&job)) {
                    // Drop the last run's data before building the next.
                    held = None;
                    let loaded = opts
                        .as_ref()
                        .map_err(|e| anyhow!("{e:#}"))
                        .and_then(|o| guarded(|| Held::load(&job, o, rank, ranks)));
                    match loaded {
                        Ok(h) => held = Some(h),
                        Err(e) => {
                            w.reply(&Reply::Broken(format!("cannot build its data: {e:#}")), &[]);
                            continue;
                        }
                    }
                }
                let h = held.as_ref().expect("just loaded");
                match guarded(|| h.clients(&job, rank, ranks)) {
                    Err(e) => w.reply(&Reply::Broken(format!("{e:#}")), &[]),
                    Ok(Err(e)) => w.reply(&Reply::Failed(e), &[]),
                    Ok(Ok(mut clients)) => {
                        w.reply(&Reply::Started, &[]);
                        match w.serve(&mut clients) {
                            Ended::Run => {}
                            Ended::Done => return Ok(()),
                            Ended::Abort(why) => return Err(RankZeroFailed(why).into()),
                        }
                    }
                }
            }
            // After a run some rank could not start: nothing to end here.
            Command::EndRun => {}
            Command::Done => return Ok(()),
            Command::Abort(why) => return Err(RankZeroFailed(why).into()),
            other => w.reply(
                &Reply::Broken(format!("command {other:?} outside a run")),
                &[],
            ),
        }
    }
}
