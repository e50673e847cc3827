//! Time per SSI round and per FAPS round at FAPS Table 1's size (n = 2000, m = 128000, p = 20,
//! d = 128), with the achieved GFLOP/s of each round's products, beside this machine's dgemm
//! peak on all cores (independent single-threaded square dgemms, one per core — the same way
//! client work runs). Criterion's "thrpt" column reads as GFLOP/s (elements = flops).
//!
//! The 2 GB matrix is the one `dpca run experiments/faps/table1.toml` builds, from the same
//! verified cache (datasets/cache); the first bench generates it if needed (~1-2 min).
//! DPCA_BENCH_SMALL=1 uses table1's quick profile for a fast look.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use dpca_bench::data::{cache::MatrixCache, uniform_matrix};
use dpca_bench::linalg::force_single_threaded_blas;
use dpca_bench::manifest;
use dpca_bench::methods::{faps, ssi::Ssi, Method, Setup};
use dpca_bench::run::{Instance, Progress};
use dpca_bench::seed;
use ndarray::Array2;
use rayon::prelude::*;
use std::path::Path;
use std::time::Duration;

/// Table 1's instance exactly as `dpca run` builds it (same cache entry, same seed), or its
/// quick profile with DPCA_BENCH_SMALL=1.
fn instance() -> Instance {
    let profile = if std::env::var_os("DPCA_BENCH_SMALL").is_some() {
        "quick"
    } else {
        "paper"
    };
    let exp = manifest::load(Path::new("experiments/faps/table1.toml"), profile)
        .expect("table1 manifest");
    let cache = MatrixCache::new("datasets/cache");
    Instance::build(
        &exp.points[0],
        exp.seed,
        &cache,
        Path::new("datasets/raw"),
        &Progress::new(),
    )
    .expect("table1 instance")
}

fn setup(inst: &Instance) -> Setup<'_> {
    Setup {
        blocks: inst.a.view().split(&inst.sizes),
        p: inst.point.problem.p,
        z0: inst.z0.clone(),
        seed: 1,
        watch: None,
    }
}

fn benches(c: &mut Criterion) {
    force_single_threaded_blas();
    let inst = instance();
    let (n, m, p, d) = (
        inst.a.n(),
        inst.a.m(),
        inst.point.problem.p,
        inst.point.partition.clients,
    );
    let name = |method: &str| format!("{method} n={n} m={m} p={p} d={d}");
    let (n, m, p) = (n as u64, m as u64, p as u64);
    // One product A_i(A_iᵀZ) summed over clients: 2·(2·n·m_i·p) flops.
    let product = 4 * n * m * p;

    let mut g = c.benchmark_group("round");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    g.throughput(Throughput::Elements(product));
    let mut ssi = Ssi::new(setup(&inst));
    g.bench_function(name("ssi"), |b| b.iter(|| ssi.step().unwrap()));

    // FAPS (default: 5 fixed inner steps): 5 inner products + 1 for W (16) + ½ for f_i.
    g.throughput(Throughput::Elements(product * 13 / 2));
    let mut f = faps::Faps::new(setup(&inst), faps::Params::default());
    g.bench_function(name("faps"), |b| b.iter(|| f.step().unwrap()));
    g.finish();

    // Peak: one square single-threaded dgemm per core, in parallel.
    let k = 1000usize;
    let cores = rayon::current_num_threads();
    let mats: Vec<(Array2<f64>, Array2<f64>)> = (0..cores)
        .map(|i| {
            let mut r = seed::rng(2, &[&i.to_string()]);
            (uniform_matrix(k, k, &mut r), uniform_matrix(k, k, &mut r))
        })
        .collect();
    let mut g = c.benchmark_group("peak");
    g.sample_size(10);
    g.throughput(Throughput::Elements((2 * k * k * k * cores) as u64));
    g.bench_function(format!("dgemm {k}x{k} x {cores} cores"), |b| {
        b.iter(|| mats.par_iter().map(|(x, y)| x.dot(y)[[0, 0]]).sum::<f64>())
    });
    g.finish();
}

criterion_group!(rounds, benches);
criterion_main!(rounds);
