//! Every registered method through the same properties, on a tiny instance of its family built
//! as a run builds it (manifest → plan → family → registry): the network's byte counts equal
//! the bytes of the messages that crossed it, 1 and 2 worker threads give the same bits, a
//! reported `done` stops the runner's rule, and a transcript the method declares readable is
//! read by the leakage attack.

use dpca_bench::attack;
use dpca_bench::data::cache::MatrixCache;
use dpca_bench::fed::{Message, Network, Shape};
use dpca_bench::methods::registry::{Running, Start, METHODS};
use dpca_bench::methods::StepInfo;
use dpca_bench::plan;
use dpca_bench::problem::family;
use dpca_bench::progress::Progress;
use dpca_bench::run::StopRule;
use dpca_bench::spec::{Experiment, Kind};
use std::path::Path;

/// Steps per method: enough for every method's first rounds (and the attack's pairs).
const STEPS: usize = 8;

/// The one-method manifest of `name`, loaded as a run loads it.
fn experiment(dir: &Path, name: &str, kind: Kind, needs_mu: bool) -> Experiment {
    let text = format!(
        "id = \"conformance_{name}\"\nseed = 11\n{}{}[partition]\nscheme = \"even\"\nclients = 3\n\
         [stop]\nmax_rounds = {STEPS}\n[[methods]]\nname = \"{name}\"\n",
        family(kind).example(),
        if needs_mu { "mu = 0.005\n" } else { "" }
    );
    let path = dir.join(format!("conformance_{name}.toml"));
    std::fs::write(&path, text).unwrap();
    plan::load(&path, "default").unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// What one run of a method leaves: its estimate, every client's revealed share, the network's
/// counters and the bytes of every message that crossed it.
#[derive(Debug, PartialEq)]
struct Outcome {
    estimate: Bits,
    revealed: Vec<Bits>,
    rounds: u64,
    bytes_down: u64,
    bytes_up_per_client: Vec<u64>,
}

/// A message's parts as their bits (so NaN equals NaN and -0 differs from 0).
type Bits = Vec<(&'static str, Vec<u64>)>;

fn bits(m: &Message) -> Bits {
    m.parts()
        .map(|(name, a)| (name, a.iter().map(|v| v.to_bits()).collect()))
        .collect()
}

fn run(exp: &Experiment, cache: &MatrixCache, threads: usize, check_attack: bool) -> Outcome {
    let point = &exp.points[0];
    let m = &exp.methods[0];
    let entry = dpca_bench::methods::registry::lookup(&m.name).unwrap();
    let inst = family(point.problem.kind)
        .build(
            point,
            exp.seed,
            cache,
            Path::new("datasets/raw"),
            &Progress::hidden(),
        )
        .unwrap();
    let sizes = entry.client_sizes(inst.sizes());
    let blocks = inst.data().view().split(&sizes);
    let start = Start {
        start: inst.start(),
        seed: 5,
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        let mut r = Running::new(entry, &m.resolved, start, blocks, inst.dim()).unwrap();
        r.net.record_transcript((0..sizes.len()).collect(), None);
        let mut rule = StopRule::new(&exp.stop, exp.kind).with_applicable(inst.applicable());
        for _ in 0..STEPS {
            let info: StepInfo = r.step().unwrap_or_else(|e| panic!("{}: {e:#}", m.name));
            let metrics = inst
                .evaluate(&r.server.estimate(), &r.net.reveal())
                .unwrap();
            let round = r.net.counters().rounds as usize;
            let stop = rule.check(round, &info, &metrics, 0.0);
            if info.done {
                assert!(stop.is_some(), "{}: done but the rule goes on", m.name);
            }
            if stop.is_some() {
                break;
            }
        }
        let c = r.net.counters().clone();
        let t = r.net.transcript().unwrap();
        // The counts are the messages' own sizes: 8 bytes per number, a broadcast once.
        assert_eq!(c.rounds as usize, t.rounds.len(), "{}", m.name);
        let down: u64 = t.rounds.iter().map(|x| 8 * x.broadcast.numbers()).sum();
        assert_eq!(c.bytes_down, down, "{}: bytes down", m.name);
        for (i, &up) in c.bytes_up_per_client.iter().enumerate() {
            let sent: u64 = t.pairs(i).map(|(_, reply)| 8 * reply.numbers()).sum();
            assert_eq!(up, sent, "{}: bytes up of client {i}", m.name);
        }
        assert_eq!(c.bytes_up, c.bytes_up_per_client.iter().sum::<u64>());
        assert!(c.rounds > 0, "{}: no round", m.name);
        if check_attack && family(exp.kind).attackable() && attack::reads(entry.transcript) {
            let leak = attack::leak(entry.transcript, &m.resolved, t, 0, STEPS)
                .unwrap_or_else(|e| panic!("{}: its declared transcript: {e:#}", m.name));
            assert!(
                !leak.pairs.is_empty(),
                "{}: the attack read nothing",
                m.name
            );
        }
        Outcome {
            estimate: bits(&r.server.estimate()),
            revealed: r.net.reveal().iter().map(bits).collect(),
            rounds: c.rounds,
            bytes_down: c.bytes_down,
            bytes_up_per_client: c.bytes_up_per_client,
        }
    })
}

#[test]
fn every_method_counts_its_bytes_is_thread_independent_and_readable_as_declared() {
    let dir = tempfile::tempdir().unwrap();
    let cache = MatrixCache::new(dir.path().join("cache"));
    let mut readable = 0;
    for e in METHODS {
        let exp = experiment(dir.path(), e.name, e.family, e.needs_mu);
        let one = run(&exp, &cache, 1, true);
        let two = run(&exp, &cache, 2, false);
        assert!(one == two, "{}: 1 and 2 threads differ", e.name);
        readable += usize::from(e.transcript != Shape::Opaque);
    }
    // The attack's readers are each exercised above: SSI-like answers and both ADMM shapes.
    assert!(
        readable >= 7,
        "{readable} methods declare a readable transcript"
    );
}
