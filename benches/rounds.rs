//! Time per SSI round and per FAPS round at FAPS Table 1's size (n = 2000, m = 128000, p = 20,
//! d = 128), with the achieved GFLOP/s of each round's products, beside this machine's dgemm
//! peak on all cores (independent single-threaded square dgemms, one per core — the same way
//! client work runs). Criterion's "thrpt" column reads as GFLOP/s (elements = flops).
//!
//! The 2 GB matrix comes from the same verified cache as `dpca run` (datasets/cache), so run
//! `dpca run experiments/faps/table1.toml` first or let the first bench generate it (~1 min).
//! DPCA_BENCH_SMALL=1 uses n = 500, m = 32000 for a fast look.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use dpca_bench::data::{cache::MatrixCache, partition::split_columns, synthetic, uniform_matrix};
use dpca_bench::linalg::{force_single_threaded_blas, orth};
use dpca_bench::methods::{faps, ssi::Ssi, Method, Setup};
use dpca_bench::seed;
use ndarray::Array2;
use rayon::prelude::*;
use std::time::Duration;

struct Size {
    n: usize,
    m: usize,
    p: usize,
    d: usize,
}

fn size() -> Size {
    if std::env::var_os("DPCA_BENCH_SMALL").is_some() {
        Size {
            n: 500,
            m: 32000,
            p: 20,
            d: 128,
        }
    } else {
        Size {
            n: 2000,
            m: 128000,
            p: 20,
            d: 128,
        }
    }
}

fn matrix(s: &Size) -> Array2<f64> {
    let xi = 1.01;
    // Same key scheme as the runner would use is not needed: benches keep their own entry.
    let key = format!("bench-svd-geometric-n{}-m{}-xi{xi:?}", s.n, s.m);
    MatrixCache::new("datasets/cache")
        .get_or_build("bench", &key, || {
            synthetic::svd_matrix(s.n, s.m, synthetic::Spectrum::Geometric { xi }, 1)
        })
        .expect("benchmark matrix")
}

fn setup<'a>(a: &'a Array2<f64>, s: &Size) -> Setup<'a> {
    let sizes: Vec<usize> = (0..s.d)
        .map(|i| s.m / s.d + usize::from(i < s.m % s.d))
        .collect();
    let z0 = orth(uniform_matrix(s.n, s.p, &mut seed::rng(1, &["z0"])).view());
    Setup {
        blocks: split_columns(a.view(), &sizes),
        p: s.p,
        z0,
        seed: 1,
        watch: None,
    }
}

fn benches(c: &mut Criterion) {
    force_single_threaded_blas();
    let s = size();
    let a = matrix(&s);
    let (n, m, p) = (s.n as u64, s.m as u64, s.p as u64);
    // One product A_i(A_iᵀZ) summed over clients: 2·(2·n·m_i·p) flops.
    let product = 4 * n * m * p;

    let mut g = c.benchmark_group("round");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    g.throughput(Throughput::Elements(product));
    let mut ssi = Ssi::new(setup(&a, &s));
    g.bench_function(
        format!("ssi n={} m={} p={} d={}", s.n, s.m, s.p, s.d),
        |b| b.iter(|| ssi.step().unwrap()),
    );

    // FAPS (default: 5 fixed inner steps): 5 inner products + 1 for W (16) + ½ for f_i.
    g.throughput(Throughput::Elements(product * 13 / 2));
    let mut f = faps::Faps::new(setup(&a, &s), faps::Params::default());
    g.bench_function(
        format!("faps n={} m={} p={} d={}", s.n, s.m, s.p, s.d),
        |b| b.iter(|| f.step().unwrap()),
    );
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
