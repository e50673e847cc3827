//! What the benches share: criterion's samples recorded for the summary tables, the heavy-bench
//! settings, and the machine's dgemm peak that GFLOP/s are compared with.
#![allow(dead_code)]

use crate::twin;
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, SamplingMode, Throughput};
use dpca_bench::data::cache::MatrixCache;
use dpca_bench::methods::registry::Running;
use dpca_bench::plan;
use dpca_bench::problem::{self, Instance};
use dpca_bench::progress::Progress;
use dpca_bench::seed;
use dpca_bench::seed::uniform_matrix;
use dpca_bench::spec::Point;
use ndarray::{Array2, ArrayView2};
use rayon::prelude::*;
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

/// Samples per bench (criterion's minimum).
pub const SAMPLES: usize = 10;

pub fn median(v: &[f64]) -> Option<f64> {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let h = v.len() / 2;
    match v.len() {
        0 => None,
        n if n % 2 == 1 => Some(v[h]),
        _ => Some(0.5 * (v[h - 1] + v[h])),
    }
}

/// Criterion keeps its estimates to itself, so each bench also records the seconds per call of
/// every batch it times (`iter_custom`); the last SAMPLES of them are the measured samples (the
/// earlier ones are warm-up). Their median, or None when criterion's filter skipped the bench.
pub fn bench<R>(
    g: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    flops: Option<f64>,
    mut routine: impl FnMut() -> R,
) -> Option<f64> {
    let mut secs = Vec::new();
    if let Some(f) = flops {
        g.throughput(Throughput::Elements(f as u64));
    }
    g.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let t = Instant::now();
            for _ in 0..iters {
                black_box(routine());
            }
            let e = t.elapsed();
            secs.push(e.as_secs_f64() / iters as f64);
            e
        })
    });
    median(&secs[secs.len().saturating_sub(SAMPLES)..])
}

/// Heavy benches: one warm-up call, then SAMPLES samples of one call each.
pub fn heavy(g: &mut BenchmarkGroup<'_, WallTime>) {
    g.sample_size(SAMPLES)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_secs(1));
}

/// The dgemm peak in GFLOP/s on one core and on all cores: square single-threaded dgemms, one
/// alone, then one per core in parallel (rayon, as clients run).
pub fn peak(c: &mut Criterion) -> (Option<f64>, Option<f64>) {
    let k = 1000usize;
    let cores = rayon::current_num_threads();
    let mats: Vec<(Array2<f64>, Array2<f64>)> = (0..cores)
        .map(|i| {
            let mut r = seed::rng(2, &[&i.to_string()]);
            (uniform_matrix(k, k, &mut r), uniform_matrix(k, k, &mut r))
        })
        .collect();
    let flops = 2.0 * (k * k * k) as f64;
    let mut g = c.benchmark_group("peak");
    g.sample_size(SAMPLES)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2));
    let one = bench(
        &mut g,
        &format!("dgemm {k}x{k} 1 core"),
        Some(flops),
        || mats[0].0.dot(&mats[0].1)[[0, 0]],
    );
    let all = bench(
        &mut g,
        &format!("dgemm {k}x{k} x {cores} cores"),
        Some(flops * cores as f64),
        || mats.par_iter().map(|(x, y)| x.dot(y)[[0, 0]]).sum::<f64>(),
    );
    g.finish();
    (
        one.map(|s| flops / s / 1e9),
        all.map(|s| flops * cores as f64 / s / 1e9),
    )
}

pub fn fmt_opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map_or_else(|| "-".into(), f)
}

/// The JSON that scripts/numpy_rounds.py prints for `args` (NumPy's time for the same work as a
/// bench), or None, said why, when DPCA_BENCH_PYTHON is unset (`make bench` sets it to a venv
/// with NumPy) or the script fails. `what` names the work in the messages; `env` is set for the
/// script (e.g. OPENBLAS_CORETYPE for the AVX-512 dgemm peak).
pub fn numpy(what: &str, args: &[String], env: &[(&str, &str)]) -> Option<serde_json::Value> {
    let Some(python) = std::env::var_os("DPCA_BENCH_PYTHON") else {
        println!("\nNumPy {what} skipped: DPCA_BENCH_PYTHON is not set (make bench sets it)");
        return None;
    };
    println!(
        "\nNumPy {what} (scripts/numpy_rounds.py {}) ...",
        args.join(" ")
    );
    twin::script(&python, args, env)
        .map_err(|e| println!("NumPy {what} failed: {e:#}"))
        .ok()
}

/// The NumPy twin's JSON (see twin.rs) for `config` on `arrays`, or None, said why, as [`numpy`].
pub fn twin(
    what: &str,
    arrays: &[(&str, ArrayView2<f64>)],
    config: serde_json::Value,
) -> Option<serde_json::Value> {
    let folder = twin::Twin::new();
    let args = folder.and_then(|t| {
        for (name, a) in arrays {
            t.put(name, *a)?;
        }
        Ok((t.args(&config)?, t))
    });
    match args {
        Ok((args, _folder)) => numpy(what, &args, &[]),
        Err(e) => {
            println!("NumPy {what} not run: {e:#}");
            None
        }
    }
}

/// Mean seconds per round of `samples` consecutive rounds after `warm_up` untimed ones, outside
/// criterion: for rounds whose work depends on the path, which their NumPy twin times on the
/// same rounds (criterion picks its own number of calls).
pub fn fixed_rounds(warm_up: usize, samples: usize, mut step: impl FnMut()) -> f64 {
    for _ in 0..warm_up {
        step();
    }
    let t = Instant::now();
    for _ in 0..samples {
        step();
    }
    t.elapsed().as_secs_f64() / samples as f64
}

/// The all-core dgemm GFLOP/s with AVX-512 kernels: NumPy's OpenBLAS told
/// OPENBLAS_CORETYPE=SkylakeX (scripts/numpy_rounds.py dgemm). None (said why) without AVX-512
/// or DPCA_BENCH_PYTHON. Debian's OpenBLAS runs its AVX2 Haswell kernels on CPUs it does not
/// know, so the peak measured in this process can sit well below what the CPU can do.
pub fn avx512_peak() -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    let avx512 = std::is_x86_feature_detected!("avx512f");
    #[cfg(not(target_arch = "x86_64"))]
    let avx512 = false;
    if !avx512 {
        return None;
    }
    numpy(
        "AVX-512 dgemm peak",
        &["dgemm".to_string()],
        &[("OPENBLAS_CORETYPE", "SkylakeX")],
    )
    .and_then(|v| v["dgemm_gflops"].as_f64())
}

/// Time `routine` as a criterion bench and keep what the summary needs.
pub fn row<R>(
    g: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    flops: f64,
    routine: impl FnMut() -> R,
) -> Row {
    Row {
        name: name.to_string(),
        flops,
        secs: bench(g, name, Some(flops), routine),
        numpy: None,
    }
}

/// What the summary needs of one bench: its flops per call and its measured seconds per call.
pub struct Row {
    pub name: String,
    pub flops: f64,
    pub secs: Option<f64>,
    /// NumPy's seconds for the same round.
    pub numpy: Option<f64>,
}

/// The table criterion cannot print, headed `title`: seconds per round, GFLOP/s, % of the all-core peak (and of
/// the AVX-512 dgemm peak where measured), and NumPy's time for the same round over ours.
pub fn summary(
    title: &str,
    rows: &[Row],
    peaks: [Option<f64>; 3],
    numpy: Option<&serde_json::Value>,
) {
    let [peak_one, peak_all, peak_avx512] = peaks;
    let gf = |g: f64| format!("{g:.1}");
    println!(
        "\n{title}: dgemm peak {} GFLOP/s on 1 core, {} GFLOP/s on {} cores (medians of {SAMPLES} samples)",
        fmt_opt(peak_one, gf),
        fmt_opt(peak_all, gf),
        rayon::current_num_threads()
    );
    if let Some(p) = peak_avx512 {
        println!(
            "AVX-512 dgemm peak (NumPy's OpenBLAS, OPENBLAS_CORETYPE=SkylakeX, all cores): {p:.1} GFLOP/s"
        );
    }
    if let Some(v) = numpy {
        println!(
            "NumPy {} on {}",
            v["numpy"].as_str().unwrap_or("?"),
            v["blas"].as_str().unwrap_or("?")
        );
    }
    println!(
        "{:<50} {:>8} {:>11} {:>8} {:>7} {:>9} {:>8} {:>8}",
        "round", "s/round", "GFLOP/round", "GFLOP/s", "% peak", "% AVX512", "NumPy s", "NumPy/us"
    );
    for r in rows {
        let rate = r.secs.map(|s| r.flops / s / 1e9);
        let share = |peak: Option<f64>| {
            fmt_opt(rate.zip(peak).map(|(g, p)| 100.0 * g / p), |s| {
                format!("{s:.0}%")
            })
        };
        println!(
            "{:<50} {:>8} {:>11.1} {:>8} {:>7} {:>9} {:>8} {:>8}",
            r.name,
            fmt_opt(r.secs, |s| format!("{s:.3}")),
            r.flops / 1e9,
            fmt_opt(rate, gf),
            share(peak_all),
            share(peak_avx512),
            fmt_opt(r.numpy, |s| format!("{s:.3}")),
            fmt_opt(r.numpy.zip(r.secs).map(|(a, b)| a / b), |x| format!(
                "{x:.2}x"
            ))
        );
    }
}

/// The point `pick` chooses of manifest `file`, built exactly as `dpca run` builds it (same cache
/// entry, same seed), at the paper profile, or the quick one with DPCA_BENCH_SMALL=1.
pub fn instance(file: &str, pick: impl Fn(&[Point]) -> &Point) -> Box<dyn Instance> {
    let profile = if std::env::var_os("DPCA_BENCH_SMALL").is_some() {
        "quick"
    } else {
        "paper"
    };
    let exp = plan::load(Path::new(file), profile).expect("manifest");
    let point = pick(&exp.points);
    problem::family(point.problem.kind)
        .build(
            point,
            exp.seed,
            &MatrixCache::new("datasets/cache"),
            Path::new("datasets/raw"),
            &Progress::new(),
        )
        .expect("instance")
}

/// `name` with manifest-style `params` on the instance's clients, as the runner builds it.
pub fn method<'a>(inst: &'a dyn Instance, name: &str, params: &str) -> Running<'a> {
    let params: toml::Table = toml::from_str(params).expect("parameters");
    let blocks = inst.data().view().split(inst.sizes());
    Running::named(name, &params, inst.start(), 1, blocks, inst.dim()).expect(name)
}
