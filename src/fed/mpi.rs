//! The MPI backend (cargo feature `mpi`, `dpca run --backend mpi` under `mpirun`): Open MPI
//! through rsmpi. Rank 0 is the server: it runs the runner and the method's server side.
//! Clients 0..K−1 are spread over ranks 1..R−1 in contiguous blocks ([`clients_of`]).
//!
//! Rank 0 drives every other rank by broadcasting a [`Command`]; each rank answers a command
//! that asks for an answer with one point-to-point [`Reply`], and rank 0 receives them rank by
//! rank, in rank order, before it sends anything else. So replies come back in client order
//! and sums stay in client order (never MPI_Reduce, whose order is unspecified), and no rank is
//! ever left blocked in a send when rank 0 moves on, which is what makes every error end the job
//! instead of hanging it.
//!
//! A message travels as a small JSON header (part names, shapes, strides) followed by one f64
//! payload holding the parts' numbers in memory order: the payload is exactly what
//! [`Counters`] counts, and [`MpiNetwork`] checks after every round that the payload bytes MPI
//! moved equal the counted bytes. Arrays arrive with the strides they left with, so BLAS sees
//! the same layouts as with the local backend and results are identical to the bit.
//!
//! Faults in both directions end the job instead of hanging it. Rank 0 polls every reply and
//! gives up on a rank silent past `--mpi-timeout` ([`set_reply_timeout`]). The other ranks never
//! block on rank 0 either: they take part in its broadcasts through MPI_Ibcast and send their
//! replies through MPI_Isend, and poll both. While they wait, rank 0's heartbeat thread
//! ([`keep_alive`]) sends each of them a small point-to-point message (tag [`HEARTBEAT`], outside
//! the method's network: never counted) every eighth of the timeout, whatever rank 0's main
//! thread is doing (building a reference, writing results, loading data); only a rank 0 whose
//! whole process is stopped or gone falls silent, and a rank that hears nothing from it for the
//! timeout ends the job with MPI_Abort and one message. The heartbeat thread needs
//! MPI_THREAD_MULTIPLE; a rank that has never heard a heartbeat (an MPI without it) waits for
//! rank 0 without a limit, as before.

use super::{Client, Counters, Message, Network, RunNetwork, Transcript};
use anyhow::{anyhow, bail, Context, Result};
use mpi::environment::Threading;
use mpi::request::{Request, Scope};
use mpi::topology::{Rank, SimpleCommunicator};
use mpi::traits::*;
use ndarray::{Array2, ShapeBuilder};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The server's rank.
pub const SERVER: Rank = 0;

/// Seconds rank 0 waits for a rank's reply by default (`dpca run --mpi-timeout`): long enough
/// for a rank to build a large dataset's share at a run's start, or to compute a slow round.
pub const DEFAULT_REPLY_TIMEOUT_S: u64 = 600;

static REPLY_TIMEOUT_S: AtomicU64 = AtomicU64::new(DEFAULT_REPLY_TIMEOUT_S);
static STALLED: AtomicBool = AtomicBool::new(false);
/// Whether MPI was initialised with MPI_THREAD_MULTIPLE (the heartbeat thread needs it).
static THREAD_MULTIPLE: AtomicBool = AtomicBool::new(false);

/// The tag of rank 0's heartbeats: one u64, rank 0's `--mpi-timeout` in seconds, sent point to
/// point to every other rank. Replies to rank 0 use tag 0; commands travel by broadcast.
pub const HEARTBEAT: mpi::Tag = 7;

/// How often rank 0's heartbeat thread sends, for a timeout of `timeout_s` seconds: an eighth
/// of it (at least 50 ms, at most 10 s), so that a waiting rank hears several per timeout, and a
/// rank busy computing for the whole timeout has at most about eight queued (MPI's shared-memory
/// transport lends a sender a few hundred buffers for messages not yet received).
pub fn heartbeat_interval(timeout_s: u64) -> Duration {
    Duration::from_millis((timeout_s.saturating_mul(1000) / 8).clamp(50, 10_000))
}

/// How long rank 0 waits for each reply before it ends the job (set once, from the command
/// line, before the first run).
pub fn set_reply_timeout(seconds: u64) {
    REPLY_TIMEOUT_S.store(seconds, Ordering::Relaxed);
}

/// Whether a rank stopped answering in this process's job. Rank 0 then ends the job with
/// [`abort`]: a broadcast or MPI's finalisation would wait for the silent rank forever.
pub fn stalled() -> bool {
    STALLED.load(Ordering::Relaxed)
}

/// End every rank of the job now (MPI_Abort: mpirun kills them, stopped ones included).
pub fn abort(code: i32) -> ! {
    SimpleCommunicator::world().abort(code)
}

/// What rank 0 tells every other rank.
#[derive(Debug, Serialize, Deserialize)]
pub enum Command {
    /// Build this rank's clients for the run the runner describes, and answer [`Reply::Started`].
    Start(serde_json::Value),
    /// A round's broadcast (the payload follows): answer with the clients' replies.
    Round(Vec<PartHead>),
    /// The evaluation channel: answer with the clients' [`Client::reveal`].
    Reveal,
    /// Answer with the clients' [`Client::inner_iters`].
    InnerIters,
    /// The run is over: drop its clients (no answer).
    EndRun,
    /// Every run is over: exit with success (no answer).
    Done,
    /// Rank 0 failed: exit with failure (no answer).
    Abort(String),
}

/// What a rank answers.
#[derive(Debug, Serialize, Deserialize)]
pub enum Reply {
    Started,
    /// One header per client of the rank, in client order (their payloads follow, concatenated).
    Messages(Vec<Vec<PartHead>>),
    Iters(Vec<u32>),
    /// A client's error (`{:#}`): the run fails with it, as with the local backend.
    Failed(String),
    /// A client's panic message: the run fails as if the client had panicked on rank 0.
    Panicked(String),
    /// This rank cannot go on (its data could not be built, a command it could not read):
    /// the whole job ends.
    Broken(String),
}

/// One part of a message: name, shape and strides (memory order) of its numbers.
#[derive(Debug, Serialize, Deserialize)]
pub struct PartHead {
    name: String,
    rows: usize,
    cols: usize,
    strides: [usize; 2],
}

/// The clients of `rank` when `clients` clients are spread over ranks 1..`ranks`−1 in
/// contiguous blocks (rank 0 holds none; a rank may hold none when clients < ranks − 1).
pub fn clients_of(rank: Rank, clients: usize, ranks: Rank) -> Range<usize> {
    let workers = (ranks - 1).max(1) as usize;
    match rank as usize {
        0 => 0..0,
        r => (r - 1) * clients / workers..r * clients / workers,
    }
}

/// A part name received over MPI as the `&'static str` messages use: each distinct name is
/// leaked once (methods use a few dozen names in all).
fn intern(name: &str) -> &'static str {
    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    match names.get(name).copied() {
        Some(n) => n,
        None => {
            let n: &'static str = Box::leak(name.to_owned().into_boxed_str());
            names.insert(n);
            n
        }
    }
}

/// Append `msg`'s numbers to `payload` (each part in memory order); its parts' headers.
pub fn encode(msg: &Message, payload: &mut Vec<f64>) -> Vec<PartHead> {
    msg.parts()
        .map(|(name, part)| {
            let strides = part.strides();
            // Owned arrays are contiguous with non-negative strides unless a method inverted
            // an axis; such an array travels in standard order.
            let (slice, strides) = match part.as_slice_memory_order() {
                Some(s) if strides.iter().all(|&s| s >= 0) => {
                    (s.to_vec(), [strides[0] as usize, strides[1] as usize])
                }
                _ => (part.iter().copied().collect(), [part.ncols(), 1]),
            };
            payload.extend_from_slice(&slice);
            PartHead {
                name: name.to_string(),
                rows: part.nrows(),
                cols: part.ncols(),
                strides,
            }
        })
        .collect()
}

/// The message `heads` describes, its numbers taken from the front of `payload`.
pub fn decode(heads: &[PartHead], payload: &mut &[f64]) -> Result<Message> {
    let mut msg = Message::new();
    for h in heads {
        let len = h.rows * h.cols;
        if payload.len() < len {
            bail!(
                "part `{}` ({}×{}) needs {len} numbers, {} left in the payload",
                h.name,
                h.rows,
                h.cols,
                payload.len()
            );
        }
        let (numbers, rest) = payload.split_at(len);
        *payload = rest;
        let part = Array2::from_shape_vec([h.rows, h.cols].strides(h.strides), numbers.to_vec())
            .with_context(|| format!("part `{}`: shape and strides do not fit", h.name))?;
        if msg.has(&h.name) {
            bail!("part `{}` twice", h.name);
        }
        msg = msg.with(intern(&h.name), part);
    }
    Ok(msg)
}

fn to_json<T: Serialize>(value: &T) -> Vec<u8> {
    serde_json::to_vec(value).expect("commands and replies serialise to JSON")
}

/// Rank 0 and its view of the other ranks.
struct Link {
    world: SimpleCommunicator,
}

impl Link {
    fn new() -> Self {
        Self {
            world: SimpleCommunicator::world(),
        }
    }

    fn ranks(&self) -> Rank {
        self.world.size()
    }

    /// Broadcast a command (and the payload of a round) from rank 0. Non-blocking broadcasts
    /// (MPI_Ibcast), polled up to `--mpi-timeout` ([`broadcast_done`]): the other ranks poll theirs
    /// (see [`Worker::wait`]), and a blocking broadcast would not match a non-blocking one.
    fn broadcast(&self, cmd: &Command, payload: &mut [f64]) {
        let root = self.world.process_at_rank(SERVER);
        let mut bytes = to_json(cmd);
        let mut len = bytes.len() as u64;
        mpi::request::scope(|s| broadcast_done(root.immediate_broadcast_into(s, &mut len)));
        mpi::request::scope(|s| broadcast_done(root.immediate_broadcast_into(s, &mut bytes[..])));
        if matches!(cmd, Command::Round(_)) {
            let mut n = payload.len() as u64;
            mpi::request::scope(|s| broadcast_done(root.immediate_broadcast_into(s, &mut n)));
            mpi::request::scope(|s| broadcast_done(root.immediate_broadcast_into(s, payload)));
        }
    }

    /// One reply per other rank, in rank order, with its payload (empty unless messages).
    /// Every rank's reply is received even when one cannot be read, so that none is left
    /// blocked in a send; the first unreadable one is the error. A rank silent past the reply
    /// timeout (stopped, or stuck) is an error naming it and `what` was asked.
    fn gather(&self, what: &str) -> Result<Vec<(Reply, Vec<f64>)>> {
        let timeout = Duration::from_secs(REPLY_TIMEOUT_S.load(Ordering::Relaxed));
        let deadline = Instant::now() + timeout;
        let mut out = Vec::new();
        let mut error = None;
        for rank in 1..self.ranks() {
            let bytes = self.receive_by::<u8>(rank, deadline, timeout, what)?;
            match serde_json::from_slice::<Reply>(&bytes) {
                Ok(reply) => {
                    let payload = if matches!(reply, Reply::Messages(_)) {
                        self.receive_by::<f64>(rank, deadline, timeout, what)?
                    } else {
                        Vec::new()
                    };
                    out.push((reply, payload));
                }
                Err(e) => {
                    error.get_or_insert_with(|| anyhow!("rank {rank}: unreadable reply: {e}"));
                }
            }
        }
        match error {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    /// The next message from `rank`, polled (MPI_Improbe) rather than waited for, so that a
    /// rank that never sends ends the wait at `deadline`. Polls yield the core at first (a
    /// reply within milliseconds costs no latency), then sleep a millisecond between them.
    fn receive_by<T: mpi::datatype::Equivalence + Copy + Default>(
        &self,
        rank: Rank,
        deadline: Instant,
        timeout: Duration,
        what: &str,
    ) -> Result<Vec<T>> {
        let p = self.world.process_at_rank(rank);
        let started = Instant::now();
        loop {
            if let Some((msg, status)) = p.immediate_matched_probe() {
                let count = status.count(T::equivalent_datatype()).max(0) as usize;
                let mut buf = vec![T::default(); count];
                msg.matched_receive_into(&mut buf[..]);
                return Ok(buf);
            }
            let now = Instant::now();
            if now >= deadline {
                STALLED.store(true, Ordering::Relaxed);
                bail!(
                    "rank {rank} did not answer {what} within {} s (--mpi-timeout): it is \
                     stopped, stuck or far slower than expected; ending the job",
                    timeout.as_secs()
                );
            }
            poll_pause(now - started);
        }
    }
}

/// Start MPI (once, before anything else uses it); it ends when the universe is dropped. It
/// asks for MPI_THREAD_MULTIPLE, which rank 0's heartbeat thread ([`keep_alive`]) needs.
pub fn initialize() -> Result<mpi::environment::Universe> {
    let (universe, level) = mpi::initialize_with_threading(Threading::Multiple)
        .context("MPI could not be initialised (was it already?)")?;
    THREAD_MULTIPLE.store(level == Threading::Multiple, Ordering::Relaxed);
    Ok(universe)
}

/// Between two polls of a wait that has lasted `waited`: yield the core for the first 50 ms (a
/// reply within milliseconds costs no latency), then sleep a millisecond.
fn poll_pause(waited: Duration) {
    if waited < Duration::from_millis(50) {
        std::thread::yield_now();
    } else {
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Rank 0's side of a broadcast, polled up to `--mpi-timeout`: a rank that never joins it
/// (stopped after its last reply) holds a payload above MPI's eager limit, and with it rank 0,
/// forever. A pending broadcast cannot be cancelled, so the job is ended with one message.
fn broadcast_done<'a, D: ?Sized, S: Scope<'a>>(mut req: Request<'a, D, S>) {
    let timeout = Duration::from_secs(REPLY_TIMEOUT_S.load(Ordering::Relaxed));
    let started = Instant::now();
    loop {
        req = match req.test() {
            Ok(_) => return,
            Err(req) => req,
        };
        let waited = started.elapsed();
        if waited >= timeout {
            eprintln!(
                "error: a rank did not take rank 0's broadcast within {} s (--mpi-timeout): it \
                 is stopped, stuck or cut off; ending the job",
                timeout.as_secs()
            );
            abort(1);
        }
        poll_pause(waited);
    }
}

/// Rank 0's heartbeat thread, while it runs: its stop flag and handle.
static KEEPER: Mutex<Option<(Arc<AtomicBool>, std::thread::JoinHandle<()>)>> = Mutex::new(None);

/// On rank 0, after [`set_reply_timeout`]: start the thread that sends every other rank a
/// heartbeat every [`heartbeat_interval`], so that they can tell a busy rank 0 (the thread goes
/// on) from a stopped one (nothing comes). Without MPI_THREAD_MULTIPLE it does nothing, and the
/// other ranks, never hearing one, wait without a limit. [`finish`] stops it.
pub fn keep_alive() {
    if !THREAD_MULTIPLE.load(Ordering::Relaxed) {
        return;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let timeout = REPLY_TIMEOUT_S.load(Ordering::Relaxed);
    let spawned = std::thread::Builder::new()
        .name("mpi-heartbeat".into())
        .spawn(move || heartbeats(timeout, &flag));
    match spawned {
        Ok(handle) => *KEEPER.lock().unwrap_or_else(|e| e.into_inner()) = Some((stop, handle)),
        // Without the thread the other ranks never arm their wait for rank 0: as before.
        Err(e) => eprintln!(
            "warning: no MPI heartbeat thread ({e}): a stopped rank 0 would not be detected"
        ),
    }
}

/// Stop rank 0's heartbeat thread (before the job's last broadcast, and MPI's finalisation).
fn stop_keeping_alive() {
    let keeper = KEEPER.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some((stop, handle)) = keeper {
        stop.store(true, Ordering::Relaxed);
        let _ = handle.join();
    }
}

/// The heartbeat thread: every `heartbeat_interval(timeout_s)`, one message to every other
/// rank, unless the last one to that rank is still on its way (MPI completes a small send at
/// once unless the receiver holds all the buffers it lends: one more would only pile up).
/// Non-blocking sends only, so that a stopped rank never holds up the others' heartbeats.
fn heartbeats(timeout_s: u64, stop: &AtomicBool) {
    let world = SimpleCommunicator::world();
    let beat: &'static [u64] = Box::leak(Box::new([timeout_s]));
    let every = heartbeat_interval(timeout_s);
    let mut pending: Vec<Option<Request<'static, [u64]>>> =
        (0..world.size()).map(|_| None).collect();
    let mut next = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        if Instant::now() >= next {
            for rank in 1..world.size() {
                let slot = &mut pending[rank as usize];
                if let Some(req) = slot.take() {
                    if let Err(req) = req.test() {
                        *slot = Some(req);
                        continue;
                    }
                }
                *slot = Some(world.process_at_rank(rank).immediate_send_with_tag(
                    mpi::request::StaticScope,
                    beat,
                    HEARTBEAT,
                ));
            }
            next = Instant::now() + every;
        }
        std::thread::sleep(every.min(Duration::from_millis(50)));
    }
    // Complete the last sends (the other ranks are alive and draining them); one still on its
    // way after a second is left to MPI (a request dropped incomplete would panic).
    let until = Instant::now() + Duration::from_secs(1);
    for mut slot in pending.into_iter().flatten().map(Some) {
        while let Some(req) = slot.take() {
            match req.test() {
                Ok(_) => {}
                Err(req) if Instant::now() < until => {
                    slot = Some(req);
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(req) => std::mem::forget(req),
            }
        }
    }
}

/// This process's rank.
pub fn rank() -> Rank {
    SimpleCommunicator::world().rank()
}

/// Tell every other rank that the job is over: `None` on success, else why it failed.
/// Call once, on rank 0, after the last run (no network may be alive).
pub fn finish(failure: Option<String>) {
    stop_keeping_alive();
    let link = Link::new();
    let cmd = match failure {
        None => Command::Done,
        Some(why) => Command::Abort(why),
    };
    link.broadcast(&cmd, &mut []);
}

/// The other ranks' clients, seen from rank 0.
pub struct MpiNetwork {
    link: Link,
    sizes: Vec<usize>,
    counters: Counters,
    transcript: Option<Transcript>,
    /// Payload bytes MPI moved for rounds: the broadcast once, every reply.
    moved_down: u64,
    moved_up: u64,
    broken: Option<String>,
    /// Set while ranks are replying: a panic then would leave them blocked (see Drop).
    in_flight: bool,
}

impl MpiNetwork {
    /// Start a run on every other rank: each builds its clients (of `sizes.len()`) from `job`,
    /// the runner's description of the run. The outer error is a broken rank (the job cannot
    /// go on); the inner one a client that could not be built (the run fails to start, as with
    /// the local backend), with the first such client's error.
    pub fn start(
        job: serde_json::Value,
        sizes: Vec<usize>,
        dim: usize,
    ) -> Result<std::result::Result<Self, String>> {
        let link = Link::new();
        if link.ranks() < 2 {
            bail!(
                "--backend mpi needs at least 2 MPI ranks (rank 0 is the server, the others hold \
                 the clients): start it with `mpirun -np 3 dpca run ...`"
            );
        }
        let mut net = Self {
            counters: Counters::new(sizes.len(), dim),
            sizes,
            link,
            transcript: None,
            moved_down: 0,
            moved_up: 0,
            broken: None,
            in_flight: false,
        };
        let replies = net.ask(&Command::Start(job), &mut [])?;
        let mut failed = None;
        for (rank, (reply, _)) in (1..).zip(replies) {
            match reply {
                Reply::Started => {}
                Reply::Failed(e) | Reply::Panicked(e) => {
                    failed.get_or_insert(e);
                }
                other => return Err(net.unexpected(rank, &other)),
            }
        }
        Ok(match failed {
            None => Ok(net),
            // Drop ends the run on the ranks that did start.
            Some(e) => Err(e),
        })
    }

    /// Broadcast `cmd` and receive every rank's reply. A rank that reports itself broken
    /// breaks the network.
    fn ask(&mut self, cmd: &Command, payload: &mut [f64]) -> Result<Vec<(Reply, Vec<f64>)>> {
        if let Some(why) = &self.broken {
            bail!("{why}");
        }
        // A rank that timed out before (in an earlier run of this job) may still answer that
        // old round: asking it anything new would take its late reply as the answer.
        if stalled() {
            bail!("MPI backend: a rank stopped answering earlier in this job (--mpi-timeout): no further run can use the ranks");
        }
        let round = self.counters.rounds + 1;
        let what = match cmd {
            Command::Start(_) => "the run's start (building its data and clients)".to_string(),
            Command::Round(_) => format!("round {round}"),
            Command::Reveal => format!("the evaluation after round {}", round - 1),
            _ => format!("{cmd:?} after round {}", round - 1),
        };
        let is_round = matches!(cmd, Command::Round(_));
        if is_round && test_busy_at().is_some_and(|(r, _)| r == round) {
            // Rank 0 busy outside MPI (as building a reference is), longer than the timeout.
            std::thread::sleep(test_busy_at().map(|(_, d)| d).unwrap_or_default());
        }
        self.in_flight = true;
        self.link.broadcast(cmd, payload);
        if is_round && test_stop_at(SERVER) == Some(round) {
            // SAFETY: raising a signal at this process; SIGSTOP cannot be caught.
            unsafe {
                libc::raise(libc::SIGSTOP);
            }
        }
        let replies = self.link.gather(&what);
        self.in_flight = false;
        let replies = replies.map_err(|e| self.brake(format!("{e:#}")))?;
        if let Some((rank, why)) = (1..).zip(&replies).find_map(|(r, (reply, _))| match reply {
            Reply::Broken(why) => Some((r, why.clone())),
            _ => None,
        }) {
            return Err(self.brake(format!("rank {rank}: {why}")));
        }
        Ok(replies)
    }

    fn brake(&mut self, why: String) -> anyhow::Error {
        let e = anyhow!("MPI backend: {why}");
        self.broken = Some(format!("{e}"));
        e
    }

    fn unexpected(&mut self, rank: Rank, reply: &Reply) -> anyhow::Error {
        self.brake(format!("rank {rank}: unexpected reply {reply:?}"))
    }

    /// The clients' messages of a `Messages` reply from every rank, in client order.
    fn messages(&mut self, replies: Vec<(Reply, Vec<f64>)>) -> Result<Vec<Message>> {
        let mut out = Vec::with_capacity(self.sizes.len());
        let mut failed = None;
        for (rank, (reply, payload)) in (1..).zip(replies) {
            match reply {
                Reply::Messages(heads) => {
                    let expect = clients_of(rank, self.sizes.len(), self.link.ranks()).len();
                    if heads.len() != expect {
                        return Err(self.brake(format!(
                            "rank {rank} sent {} messages for its {expect} clients",
                            heads.len()
                        )));
                    }
                    let mut rest = &payload[..];
                    for h in &heads {
                        let m = decode(h, &mut rest)
                            .map_err(|e| self.brake(format!("rank {rank}: {e:#}")))?;
                        out.push(m);
                    }
                    if !rest.is_empty() {
                        return Err(self.brake(format!(
                            "rank {rank}: {} numbers beyond its messages",
                            rest.len()
                        )));
                    }
                }
                Reply::Failed(e) => {
                    failed.get_or_insert(Err(e));
                }
                Reply::Panicked(e) => {
                    failed.get_or_insert(Ok(e));
                }
                other => return Err(self.unexpected(rank, &other)),
            }
        }
        match failed {
            None => Ok(out),
            Some(Err(e)) => Err(anyhow!(e)),
            // As the local backend's rayon does with a client's panic: on to the caller.
            Some(Ok(panic)) => std::panic::resume_unwind(Box::new(panic)),
        }
    }

    /// Payload bytes MPI moved for rounds so far: (down, up).
    pub fn moved(&self) -> (u64, u64) {
        (self.moved_down, self.moved_up)
    }
}

impl Network for MpiNetwork {
    fn num_clients(&self) -> usize {
        self.sizes.len()
    }

    fn client_sizes(&self) -> &[usize] {
        &self.sizes
    }

    fn round(&mut self, msg: &Message) -> Result<Vec<Message>> {
        if let Some(why) = &self.broken {
            bail!("{why}");
        }
        self.counters.broadcast(msg.numbers());
        let mut payload = Vec::with_capacity(msg.numbers() as usize);
        let heads = encode(msg, &mut payload);
        self.moved_down += 8 * payload.len() as u64;
        let replies = self.ask(&Command::Round(heads), &mut payload)?;
        let up: u64 = replies.iter().map(|(_, p)| 8 * p.len() as u64).sum();
        let replies = self.messages(replies)?;
        self.moved_up += up;
        for (i, r) in replies.iter().enumerate() {
            self.counters.upload(i, r.numbers());
        }
        self.counters.end_round();
        if (self.moved_down, self.moved_up) != (self.counters.bytes_down, self.counters.bytes_up) {
            return Err(self.brake(format!(
                "MPI moved {} bytes down and {} up, the counters say {} and {}",
                self.moved_down, self.moved_up, self.counters.bytes_down, self.counters.bytes_up
            )));
        }
        if let Some(t) = &mut self.transcript {
            t.record(msg, &replies);
        }
        Ok(replies)
    }

    fn counters(&self) -> &Counters {
        &self.counters
    }

    fn transcript(&self) -> Option<&Transcript> {
        self.transcript.as_ref()
    }
}

impl RunNetwork for MpiNetwork {
    fn record_transcript(&mut self, clients: Vec<usize>, rounds: Option<usize>) {
        self.transcript = Some(Transcript::new(clients, rounds));
    }

    fn reveal(&mut self) -> Result<Vec<Message>> {
        let replies = self.ask(&Command::Reveal, &mut [])?;
        // A failure here is not a method's: the local backend's reveal cannot fail.
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.messages(replies)))
            .unwrap_or_else(|_| Err(anyhow!("a client panicked revealing its estimate")))
            .map_err(|e| self.brake(format!("evaluation channel: {e:#}")))
    }

    fn inner_iters(&mut self) -> Result<Vec<u32>> {
        let replies = self.ask(&Command::InnerIters, &mut [])?;
        let mut out = Vec::with_capacity(self.sizes.len());
        for (rank, (reply, _)) in (1..).zip(replies) {
            match reply {
                Reply::Iters(i) => out.extend(i),
                other => return Err(self.unexpected(rank, &other)),
            }
        }
        Ok(out)
    }

    fn broken(&self) -> Option<String> {
        self.broken.clone()
    }
}

impl Drop for MpiNetwork {
    /// End the run on every rank. If rank 0 panicked while ranks were replying, some may be
    /// blocked in a send no one will receive: end the whole job rather than hang.
    fn drop(&mut self) {
        if stalled() {
            // The silent rank would never take part in the broadcast: main aborts the job.
            return;
        }
        if self.in_flight {
            eprintln!("error: rank 0 failed while the other ranks were replying; aborting");
            self.link.world.abort(1);
        }
        self.link.broadcast(&Command::EndRun, &mut []);
    }
}

/// A rank other than 0: receives rank 0's commands and answers them.
pub struct Worker {
    link: Link,
    rank: Rank,
    /// Rank 0's `--mpi-timeout` (seconds), from its last heartbeat; 0 until one came (rank 0
    /// then has no heartbeat thread, and this rank waits for it without a limit).
    timeout_s: AtomicU64,
}

impl Default for Worker {
    fn default() -> Self {
        Self::new()
    }
}

/// How a run's service ended.
pub enum Ended {
    /// The run is over; wait for the next command.
    Run,
    /// The job is over: exit with success.
    Done,
    /// Rank 0 failed: exit with failure.
    Abort(String),
}

impl Worker {
    pub fn new() -> Self {
        let link = Link::new();
        Self {
            rank: link.world.rank(),
            link,
            timeout_s: AtomicU64::new(0),
        }
    }

    /// Receive every heartbeat rank 0 has sent; whether there was one.
    fn heartbeats(&self) -> bool {
        let root = self.link.world.process_at_rank(SERVER);
        let mut heard = false;
        while let Some((msg, _)) = root.immediate_matched_probe_with_tag(HEARTBEAT) {
            let mut beat = [0u64];
            msg.matched_receive_into(&mut beat[..]);
            self.timeout_s.store(beat[0].max(1), Ordering::Relaxed);
            heard = true;
        }
        heard
    }

    /// Complete `req` (a broadcast from rank 0 or a send to it), polling: rank 0's heartbeats
    /// are received meanwhile, and when none has come for rank 0's timeout the job ends
    /// (MPI_Abort) with one message. Rank 1 says it; the others wait a little longer, so that
    /// only rank 1's message is printed unless rank 1 is gone too.
    fn wait<'a, D: ?Sized, S: Scope<'a>>(&self, mut req: Request<'a, D, S>) {
        let started = Instant::now();
        let mut heard = started;
        loop {
            req = match req.test() {
                Ok(_) => return,
                Err(req) => req,
            };
            if self.heartbeats() {
                heard = Instant::now();
            }
            let timeout_s = self.timeout_s.load(Ordering::Relaxed);
            if timeout_s > 0 {
                let timeout = Duration::from_secs(timeout_s);
                let limit = match self.rank {
                    1 => timeout,
                    _ => timeout + (timeout / 4).max(Duration::from_secs(2)),
                };
                if heard.elapsed() > limit {
                    eprintln!(
                        "error: rank 0 sent nothing for {} s (--mpi-timeout): it is stopped, \
                         stuck or cut off (seen from rank {}); ending the job",
                        limit.as_secs(),
                        self.rank
                    );
                    abort(1);
                }
            }
            poll_pause(started.elapsed());
        }
    }

    /// Take part in rank 0's broadcast into `buf`, polling ([`Worker::wait`]).
    fn broadcast_into<B: mpi::datatype::BufferMut + ?Sized>(&self, buf: &mut B) {
        let root = self.link.world.process_at_rank(SERVER);
        mpi::request::scope(|s| self.wait(root.immediate_broadcast_into(s, buf)));
    }

    /// Send `buf` to rank 0, polling ([`Worker::wait`]).
    fn send<B: mpi::datatype::Buffer + ?Sized>(&self, buf: &B) {
        let root = self.link.world.process_at_rank(SERVER);
        mpi::request::scope(|s| self.wait(root.immediate_send(s, buf)));
    }

    pub fn rank(&self) -> Rank {
        self.rank
    }

    pub fn ranks(&self) -> Rank {
        self.link.ranks()
    }

    /// The next command from rank 0, with a round's broadcast message decoded.
    pub fn command(&self) -> (Result<Command>, Option<Message>) {
        let mut len = 0u64;
        self.broadcast_into(&mut len);
        let mut bytes = vec![0u8; len as usize];
        self.broadcast_into(&mut bytes[..]);
        let cmd = serde_json::from_slice::<Command>(&bytes)
            .map_err(|e| anyhow!("unreadable command from rank 0: {e}"));
        match cmd {
            Ok(Command::Round(heads)) => {
                let mut n = 0u64;
                self.broadcast_into(&mut n);
                let mut payload = vec![0f64; n as usize];
                self.broadcast_into(&mut payload[..]);
                match decode(&heads, &mut &payload[..]) {
                    Ok(msg) => (Ok(Command::Round(heads)), Some(msg)),
                    Err(e) => (Err(e.context("the round's message")), None),
                }
            }
            other => (other, None),
        }
    }

    /// Answer the last command.
    pub fn reply(&self, reply: &Reply, payload: &[f64]) {
        self.send(&to_json(reply)[..]);
        if matches!(reply, Reply::Messages(_)) {
            self.send(payload);
        }
    }

    fn messages(&self, msgs: &[Message]) {
        let mut payload = Vec::new();
        let heads = msgs.iter().map(|m| encode(m, &mut payload)).collect();
        self.reply(&Reply::Messages(heads), &payload);
    }

    /// Serve a started run with this rank's `clients` (in client order) until rank 0 ends it.
    pub fn serve(&self, clients: &mut [Box<dyn Client + '_>]) -> Ended {
        let stop_at = test_stop_at(self.rank);
        let stop_after = test_stop_after(self.rank);
        let mut round = 0u64;
        loop {
            match self.command() {
                (Ok(Command::Round(_)), Some(msg)) => {
                    round += 1;
                    if stop_at == Some(round) {
                        // SAFETY: raising a signal at this process; SIGSTOP cannot be caught.
                        unsafe {
                            libc::raise(libc::SIGSTOP);
                        }
                    }
                    let replies: Vec<std::thread::Result<Result<Message>>> = clients
                        .par_iter_mut()
                        .map(|c| {
                            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                c.respond(&msg)
                            }))
                        })
                        .collect();
                    match replies.iter().find_map(failure) {
                        Some(f) => self.reply(&f, &[]),
                        None => {
                            let msgs: Vec<Message> =
                                replies.into_iter().flatten().flatten().collect();
                            self.messages(&msgs);
                        }
                    }
                }
                (Ok(Command::Reveal), _) => {
                    let revealed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        clients.iter().map(|c| c.reveal()).collect::<Vec<_>>()
                    }));
                    match revealed {
                        Ok(msgs) => self.messages(&msgs),
                        Err(p) => self.reply(
                            &Reply::Broken(format!(
                                "a client panicked revealing its estimate: {}",
                                crate::util::panic_message(p.as_ref())
                            )),
                            &[],
                        ),
                    }
                }
                (Ok(Command::InnerIters), _) => {
                    self.reply(
                        &Reply::Iters(clients.iter().map(|c| c.inner_iters()).collect()),
                        &[],
                    );
                    // The last command of a round (after its evaluation).
                    if stop_after == Some(round) {
                        // SAFETY: raising a signal at this process; SIGSTOP cannot be caught.
                        unsafe {
                            libc::raise(libc::SIGSTOP);
                        }
                    }
                }
                (Ok(Command::EndRun), _) => return Ended::Run,
                (Ok(Command::Done), _) => return Ended::Done,
                (Ok(Command::Abort(why)), _) => return Ended::Abort(why),
                (Ok(other), _) => self.reply(
                    &Reply::Broken(format!("command {other:?} in the middle of a run")),
                    &[],
                ),
                (Err(e), _) => self.reply(&Reply::Broken(format!("{e:#}")), &[]),
            }
        }
    }
}

/// The variable that makes a rank stop itself (SIGSTOP) at a round, for the tests of the
/// timeouts: `RANK:ROUND`, e.g. `1:2`. A worker stops when the round arrives, rank 0 once it has
/// broadcast it; `1:2:replied`: worker 1 stops once it has answered round 2 and the commands
/// after it (evaluation, inner iterations), before it joins round 3's broadcast. Nothing else reads it.
pub const TEST_STOP_VAR: &str = "DPCA_TEST_MPI_STOP_AT";

/// The variable that keeps rank 0 busy (asleep, outside MPI, as when it builds a reference)
/// before it broadcasts a round, for the test that a busy rank 0 is not taken for a stopped one:
/// `ROUND:SECONDS`, e.g. `2:8`. Nothing else reads it.
pub const TEST_BUSY_VAR: &str = "DPCA_TEST_MPI_BUSY_AT";

/// The round before which rank 0 is to be busy, and for how long, if [`TEST_BUSY_VAR`] says.
fn test_busy_at() -> Option<(u64, Duration)> {
    let text = std::env::var(TEST_BUSY_VAR).ok()?;
    let (round, secs) = text.split_once(':')?;
    Some((
        round.trim().parse().ok()?,
        Duration::from_secs_f64(
            secs.trim()
                .parse::<f64>()
                .ok()
                .filter(|s| s.is_finite() && *s >= 0.0)?,
        ),
    ))
}

/// The round at which this rank is to stop itself, if [`TEST_STOP_VAR`] names it.
fn test_stop_at(rank: Rank) -> Option<u64> {
    test_stop(rank).filter(|s| !s.1).map(|s| s.0)
}

/// The round after whose last command (inner iterations) this worker is to stop itself
/// (`RANK:ROUND:replied`).
fn test_stop_after(rank: Rank) -> Option<u64> {
    test_stop(rank).filter(|s| s.1).map(|s| s.0)
}

fn test_stop(rank: Rank) -> Option<(u64, bool)> {
    let text = std::env::var(TEST_STOP_VAR).ok()?;
    let mut parts = text.split(':');
    (parts.next()?.trim().parse::<Rank>().ok()? == rank).then_some(())?;
    let round = parts.next()?.trim().parse().ok()?;
    Some((round, parts.next().map(str::trim) == Some("replied")))
}

/// A client's failed reply, as the reply to send instead of the messages.
fn failure(r: &std::thread::Result<Result<Message>>) -> Option<Reply> {
    match r {
        Ok(Ok(_)) => None,
        Ok(Err(e)) => Some(Reply::Failed(format!("{e:#}"))),
        Err(p) => Some(Reply::Panicked(crate::util::panic_message(p.as_ref()))),
    }
}
