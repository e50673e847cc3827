//! Time per round of SSI, LocalPower and FAPS at FAPS Table 1's size (n = 2000, m = 128000,
//! p = 20, d = 128), with the achieved GFLOP/s of each round's products, beside this machine's
//! dgemm peak measured in the same run: one square single-threaded dgemm alone (1 core), and one
//! per core in parallel (all cores — the way client work runs). Criterion's "thrpt" column reads
//! as GFLOP/s (elements = flops); a summary table with GFLOP/s and % of peak closes the run.
//!
//! LocalPower runs with q = 2 local steps in every round (`q0 = 2, decay = false`): its default
//! schedule (q = 8, 4, 2, 1, 1, …) would make the measured rounds depend on how many criterion
//! runs, and at q = 1 it is exactly SSI. Each round is built the way the runner builds it
//! ([`Running::named`]) and advances the method: the samples are consecutive rounds.
//!
//! The 2 GB matrix is the one `dpca run experiments/faps/table1.toml` builds, from the same
//! verified cache (datasets/cache); the first run generates it and its reference (~2 min).
//! DPCA_BENCH_SMALL=1 uses table1's quick profile for a fast look. Rounds take seconds, so each
//! bench runs 10 samples of one round after one warm-up round: criterion's "Unable to complete
//! 10 samples" warning is expected.

mod common;

use common::{bench, fmt_opt, heavy, peak, SAMPLES};

use criterion::{criterion_group, criterion_main, Criterion};
use dpca_bench::data::cache::MatrixCache;
use dpca_bench::linalg::force_single_threaded_blas;
use dpca_bench::manifest;
use dpca_bench::methods::registry::Running;
use dpca_bench::problem::{self, Instance};
use dpca_bench::run::Progress;
use std::path::Path;

/// Table 1's instance exactly as `dpca run` builds it (same cache entry, same seed), or its
/// quick profile with DPCA_BENCH_SMALL=1.
fn instance() -> (Box<dyn Instance>, usize) {
    let profile = if std::env::var_os("DPCA_BENCH_SMALL").is_some() {
        "quick"
    } else {
        "paper"
    };
    let exp = manifest::load(Path::new("experiments/faps/table1.toml"), profile)
        .expect("table1 manifest");
    let point = &exp.points[0];
    let inst = problem::build(
        point,
        exp.seed,
        &MatrixCache::new("datasets/cache"),
        Path::new("datasets/raw"),
        &Progress::new(),
    )
    .expect("table1 instance");
    (inst, point.problem.p)
}

/// `name` with manifest-style `params` on the instance's clients, as the runner builds it.
fn method<'a>(inst: &'a dyn Instance, name: &str, params: &str) -> Running<'a> {
    let params: toml::Table = toml::from_str(params).expect("parameters");
    let blocks = inst.data().view().split(inst.sizes());
    Running::named(name, &params, inst.start(), 1, blocks, inst.dim()).expect(name)
}

/// Time `routine` as a criterion bench and keep what the summary needs.
fn row<R>(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    flops: f64,
    routine: impl FnMut() -> R,
) -> Row {
    Row {
        name: name.to_string(),
        flops,
        secs: bench(g, name, Some(flops), routine),
    }
}

/// What the summary needs of one bench: its flops per call and its measured seconds per call.
struct Row {
    name: String,
    flops: f64,
    secs: Option<f64>,
}

fn benches(c: &mut Criterion) {
    force_single_threaded_blas();
    let (peak_one, peak_all) = peak(c);
    let (inst, p) = instance();
    let (n, m, d) = (inst.data().n(), inst.data().m(), inst.sizes().len());
    let name = |method: &str| format!("{method} n={n} m={m} p={p} d={d}");
    // One product A_i(A_iᵀZ) summed over clients: 2·(2·n·m_i·p) flops.
    let product = 4.0 * (n * m * p) as f64;

    let mut g = c.benchmark_group("round");
    heavy(&mut g);
    let mut rows = Vec::new();
    let mut ssi = method(inst.as_ref(), "ssi", "");
    rows.push(row(&mut g, &name("ssi"), product, || ssi.step().unwrap()));
    drop(ssi);
    // q = 2 products per round; the orthonormalisation between them and the server's
    // Procrustes rotations (O(np²) per client) are not counted.
    let mut lp = method(inst.as_ref(), "localpower", "q0 = 2\ndecay = false");
    rows.push(row(&mut g, &name("localpower q=2"), 2.0 * product, || {
        lp.step().unwrap()
    }));
    drop(lp);
    // FAPS (default: 5 fixed inner steps): 5 inner products + 1 for W (16) + ½ for f_i.
    let mut faps = method(inst.as_ref(), "faps", "");
    rows.push(row(&mut g, &name("faps"), 6.5 * product, || {
        faps.step().unwrap()
    }));
    drop(faps);
    g.finish();
    summary(&rows, peak_one, peak_all);
}

/// The table criterion cannot print: seconds per round, GFLOP/s and % of the all-core peak.
fn summary(rows: &[Row], peak_one: Option<f64>, peak_all: Option<f64>) {
    let gf = |g: f64| format!("{g:.1}");
    println!(
        "\nrounds: dgemm peak {} GFLOP/s on 1 core, {} GFLOP/s on {} cores (medians of {SAMPLES} samples)",
        fmt_opt(peak_one, gf),
        fmt_opt(peak_all, gf),
        rayon::current_num_threads()
    );
    println!(
        "{:<44} {:>9} {:>11} {:>9} {:>9}",
        "round", "s/round", "GFLOP/round", "GFLOP/s", "% peak"
    );
    for r in rows {
        let rate = r.secs.map(|s| r.flops / s / 1e9);
        let share = rate.zip(peak_all).map(|(g, p)| 100.0 * g / p);
        println!(
            "{:<44} {:>9} {:>11.1} {:>9} {:>9}",
            r.name,
            fmt_opt(r.secs, |s| format!("{s:.3}")),
            r.flops / 1e9,
            fmt_opt(rate, gf),
            fmt_opt(share, |s| format!("{s:.0}%"))
        );
    }
}

criterion_group!(rounds, benches);
criterion_main!(rounds);
