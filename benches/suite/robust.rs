//! The robust family at DCF-PCA Fig. 1's largest size, m = n = 3000 (r = 150 = 0.05n, s = 0.05,
//! outliers ±√(mn)), with the kernels the runner uses (single-threaded BLAS, and the product
//! kernel), beside this machine's dgemm peak measured in the same run (one core; all cores in
//! parallel). Criterion's "thrpt" column reads as GFLOP/s where a bench has a flop count; a summary
//! table closes the run.
//!
//! - DCF-PCA: one round on 10 clients, K = 5 local steps, fig1_n3000's parameters, built the way
//!   the runner builds it ([`Running::named`]), its products on the process's product kernel
//!   (the AVX-512 kernels where the CPU has them; DPCA_PRODUCT_KERNEL=blas for OpenBLAS's
//!   dgemm); GFLOP/s from the counted products (see
//!   [`dcfpca_flops`]) against the all-core peak, since clients run in parallel; beside it the
//!   same round in NumPy (scripts/numpy_rounds.py dcfpca, with DPCA_BENCH_PYTHON as `make bench`
//!   sets it).
//! - IALM (and APGM with DPCA_BENCH_APGM=1): one iteration in the phase where the SVT keeps
//!   rank r, its SVT by `svt_factors` (partial: block Krylov, LAPACK fallback) as the method
//!   does it; then the next iteration's SVT argument done both ways, partial (under criterion:
//!   the argument stays fixed) and full (`thin_svd`, then threshold; once), and that iteration
//!   finished with the full SVT (once). Single-threaded: against the 1-core peak. The bench
//!   runs the methods' own clients ([`ialm::IalmClient`], [`apgm::ApgmClient`]), whose
//!   `iterate` takes the SVT as an argument (the methods pass `svt_factors`). The client
//!   reaches that phase from the method's start, each warm-up iteration printed as it runs
//!   (IALM: 8 iterations, ~40 s here; APGM: ~36, ~6 min, hence opt-in). Beside the iteration,
//!   the same iterations in NumPy ([`numpy_iterations`]), whose count of its products' flops
//!   gives the iteration's GFLOP/s.
//! - SVD of the planted M itself: `partial_svd(k = r)` against `thin_svd`, and `partial_svd` of
//!   L₀ alone (a clear gap after σ_r) for contrast; each once.
//!
//! Full SVDs take 15-20 s each (dgesdd, 3000×3000, one core) and criterion's minimum is 10
//! samples, hence the "once" timings. Heavy benches run 10 samples of one call after one warm-up
//! call: criterion's "Unable to complete 10 samples" warning is expected. Criterion's filter
//! (`ARGS=...`) selects criterion benches only; the warm-ups and "once" timings always run.
//! DPCA_BENCH_SMALL=1 runs at m = n = 1000 (r = 50) for a fast look.

use crate::common::{self, bench, fmt_opt, heavy, median, peak, SAMPLES};

use criterion::Criterion;
use dpca_bench::data::matrix::DataMatrix;
use dpca_bench::fed::Message;
use dpca_bench::linalg::force_single_threaded_blas;
use dpca_bench::linalg::svd::{partial_svd, svt_factors, thin_svd, Svd};
use dpca_bench::methods::registry::Running;
use dpca_bench::methods::robust::{apgm, ialm};
use dpca_bench::problem::robust::planted;
use dpca_bench::seed;
use dpca_bench::spec::Magnitude;
use ndarray::{s, Array2, ArrayView2, ShapeBuilder};
use rand::Rng;
use rand_distr::StandardNormal;
use std::hint::black_box;
use std::time::Instant;

/// Criterion samples per bench (its minimum).
const SPARSITY: f64 = 0.05;
const CLIENTS: usize = 10;
const SEED: u64 = 3000;
/// DCF-PCA's settings in experiments/dcfpca/fig1_n3000.toml.
const DCFPCA_PARAMS: &str = "local_steps = 5\neta0 = 0.01\nlambda = 0.2";
const LOCAL_STEPS: usize = 5;

/// m = n, and r = 0.05n.
fn size() -> (usize, usize) {
    let n = if std::env::var_os("DPCA_BENCH_SMALL").is_some() {
        1000
    } else {
        3000
    };
    (n, n / 20)
}

// ---- Timing and the summary (as rounds.rs) ----

/// One line of the summary: what was timed, its flops per call if counted, seconds per call,
/// and the peak it is compared with.
struct Row {
    name: String,
    flops: Option<f64>,
    secs: Option<f64>,
    peak: Peak,
    note: String,
}

#[derive(Clone, Copy)]
enum Peak {
    OneCore,
    AllCores,
}

/// Seconds of one call of `f`, and its result.
fn once<R>(f: impl FnOnce() -> R) -> (f64, R) {
    let t = Instant::now();
    let r = f();
    (t.elapsed().as_secs_f64(), r)
}

// ---- DCF-PCA ----

/// Flops of one DCF-PCA round (src/methods/robust/dcfpca.rs), K local steps on every client, each
/// step per client i (n×m_i block, rank r): the ridge solve's UᵀU (2nr²), (UᵀU + ρI)⁻¹ by
/// Cholesky (r³), (M_i − S_i)ᵀU (2nm_ir) and its product with the inverse (2m_ir²); U V_iᵀ
/// (2nm_ir); the gradient (S_i − R_i)V_i (2nm_ir). The elementwise passes over n×m_i (M_i − S_i,
/// and the soft threshold, which the A·T kernel's epilogue does) are memory-bound and not
/// counted; nor is the server's average.
fn dcfpca_flops(n: usize, sizes: &[usize], r: usize, steps: usize) -> f64 {
    let (n, r) = (n as f64, r as f64);
    let per_step: f64 = sizes
        .iter()
        .map(|&mi| {
            let mi = mi as f64;
            2.0 * n * r * r + r * r * r + 6.0 * n * mi * r + 2.0 * mi * r * r
        })
        .sum();
    steps as f64 * per_step
}

// ---- IALM and APGM, their SVT done the bench's way ----

/// How an SVT is computed.
#[derive(Clone, Copy, PartialEq)]
enum Svt {
    /// `svt_factors`, as the methods do.
    Partial,
    /// `thin_svd` (LAPACK dgesdd), then the triplets above τ, shrunk by τ.
    Full,
}

impl Svt {
    fn run(self, a: ArrayView2<f64>, tau: f64, hint: usize) -> Svd {
        match self {
            Svt::Partial => svt_factors(a, tau, hint).expect("svt_factors"),
            Svt::Full => {
                let f = thin_svd(a).expect("thin_svd");
                let p = f.s.iter().take_while(|&&v| v > tau).count();
                Svd {
                    u: f.u.slice(s![.., ..p]).to_owned(),
                    s: f.s.slice(s![..p]).mapv(|v| v - tau),
                    vt: f.vt.slice(s![..p, ..]).to_owned(),
                }
            }
        }
    }
}

/// The SVT of an iteration, as [`Iteration::iterate`] takes it: argument, threshold, rank hint.
type SvtFn<'f> = dyn FnMut(ArrayView2<f64>, f64, usize) -> anyhow::Result<Svd> + 'f;

/// The client of a centralised robust method (src/methods/robust/ialm.rs, apgm.rs), the method's own
/// code, its one SVT per iteration done by the caller.
trait Iteration {
    /// One iteration; its stopping value.
    fn iterate(&mut self, svt: &mut SvtFn) -> anyhow::Result<f64>;
    /// Rank of the last SVT.
    fn rank(&self) -> usize;
}

impl Iteration for ialm::IalmClient<'_> {
    fn iterate(&mut self, svt: &mut SvtFn) -> anyhow::Result<f64> {
        ialm::IalmClient::iterate(self, svt)
    }
    fn rank(&self) -> usize {
        ialm::IalmClient::rank(self)
    }
}

impl Iteration for apgm::ApgmClient<'_> {
    fn iterate(&mut self, svt: &mut SvtFn) -> anyhow::Result<f64> {
        apgm::ApgmClient::iterate(self, svt)
    }
    fn rank(&self) -> usize {
        apgm::ApgmClient::rank(self)
    }
}

/// One iteration with its SVT done `svt`'s way: the seconds outside the SVT and in it.
fn iterate(it: &mut dyn Iteration, svt: Svt) -> [f64; 2] {
    let mut in_svt = 0.0;
    let (total, stop) = once(|| {
        it.iterate(&mut |a, tau, hint| {
            let (secs, f) = once(|| svt.run(a, tau, hint));
            in_svt = secs;
            Ok(f)
        })
    });
    black_box(stop.expect("iteration"));
    [total - in_svt, in_svt]
}

/// The method's client on M with its default parameters, as the runner builds it.
type MakeClient = for<'a> fn(ArrayView2<'a, f64>, u64) -> Box<dyn Iteration + 'a>;

fn ialm_client<'a>(d: ArrayView2<'a, f64>, seed: u64) -> Box<dyn Iteration + 'a> {
    Box::new(ialm::IalmClient::new(&ialm::Params::default(), d, seed).expect("ialm"))
}

fn apgm_client<'a>(d: ArrayView2<'a, f64>, seed: u64) -> Box<dyn Iteration + 'a> {
    Box::new(apgm::ApgmClient::new(&apgm::Params::default(), d, seed).expect("apgm"))
}

/// M = L₀ + S₀, column-major, and L₀.
fn planted_m(n: usize, r: usize) -> (Array2<f64>, Array2<f64>) {
    let truth = planted(
        n,
        n,
        r,
        SPARSITY,
        Magnitude::Sign,
        &mut seed::rng(SEED, &["planted", &n.to_string()]),
    )
    .expect("planted problem");
    let mut m = Array2::zeros((n, n).f());
    m.assign(&truth.l0);
    m += &truth.s0;
    (m, truth.l0)
}

/// What one method's benches measured.
struct RobustTimes {
    /// Iterations run before the bench's (its NumPy twin runs as many, and criterion's warm-up).
    warm_ups: usize,
    iteration: Option<f64>,
    svt_in_iteration: Option<f64>,
    rank: usize,
    svt_partial: Option<f64>,
    svt_full: f64,
    iteration_full: f64,
    rank_partial: usize,
    rank_full: usize,
    sv_diff: f64,
}

/// Run the client of `name` from the method's start until the SVT keeps one nonzero rank twice
/// (printing every warm-up iteration), bench its iterations there, then do its next SVT both
/// ways on the same argument and finish that iteration with the full one.
fn robust_method(
    c: &mut Criterion,
    name: &str,
    make: MakeClient,
    m: ArrayView2<f64>,
) -> RobustTimes {
    let n = m.nrows();
    let (secs, mut it) = once(|| make(m, SEED));
    println!("{name}: start (‖M‖₂ by block Krylov) {secs:.2} s");
    let mut last = usize::MAX;
    let mut warm_ups = 0;
    for k in 1..=200 {
        warm_ups = k;
        let [outside, svt] = iterate(it.as_mut(), Svt::Partial);
        let rank = it.rank();
        println!(
            "{name}: warm-up iteration {k}: {:.2} s (SVT {svt:.2} s), rank {rank}",
            outside + svt
        );
        if rank > 0 && rank == last {
            break;
        }
        last = rank;
    }
    let rank = it.rank();
    let mut g = c.benchmark_group(name);
    heavy(&mut g);
    let mut svt_secs = Vec::new();
    let iteration = bench(
        &mut g,
        &format!("iteration m=n={n} rank {rank} (partial SVT)"),
        None,
        || svt_secs.push(iterate(it.as_mut(), Svt::Partial)[1]),
    );
    let svt_in_iteration = median(&svt_secs[svt_secs.len().saturating_sub(SAMPLES)..]);
    // The next iteration's SVT, on one argument: partial under criterion (repeatable: the
    // argument stays), full once; the iteration goes on with the full one.
    let mut next = None;
    let (total, stop) = once(|| {
        it.iterate(&mut |arg, tau, hint| {
            let t = Instant::now();
            let mut partial = None;
            let svt_partial = bench(
                &mut g,
                &format!("next SVT m=n={n}, one argument (partial)"),
                None,
                || partial = Some(Svt::Partial.run(arg, tau, hint)),
            );
            let partial = partial.unwrap_or_else(|| Svt::Partial.run(arg, tau, hint));
            let (svt_full, full) = once(|| Svt::Full.run(arg, tau, hint));
            let common = partial.s.len().min(full.s.len());
            let sv_diff = (&partial.s.slice(s![..common]) - &full.s.slice(s![..common]))
                .iter()
                .fold(0.0f64, |a, d| a.max(d.abs()))
                / full.s.first().map_or(1.0, |&s| s + tau);
            let (rank_partial, rank_full) = (partial.s.len(), full.s.len());
            let in_svt = t.elapsed().as_secs_f64();
            next = Some((
                svt_partial,
                svt_full,
                rank_partial,
                rank_full,
                sv_diff,
                in_svt,
            ));
            Ok(full)
        })
    });
    black_box(stop.expect(name));
    g.finish();
    let (svt_partial, svt_full, rank_partial, rank_full, sv_diff, in_svt) =
        next.expect("the iteration does its SVT");
    println!(
        "{name}: next SVT on one argument: partial {} s (rank {rank_partial}), full {svt_full:.2} \
         s (rank {rank_full}), max |Δσ|/σ₁ = {sv_diff:.1e}",
        fmt_opt(svt_partial, |s| format!("{s:.2}"))
    );
    RobustTimes {
        warm_ups,
        iteration,
        svt_in_iteration,
        rank,
        svt_partial,
        svt_full,
        iteration_full: total - in_svt + svt_full,
        rank_partial,
        rank_full,
        sv_diff,
    }
}

/// The same iterations in NumPy: the method's twin (scripts/numpy_rounds.py twin: the same
/// arithmetic, its SVT a port of `svt_factors`) on the same M from the method's start,
/// `warm_ups` untimed iterations (ours before the bench and criterion's warm-up), then SAMPLES
/// timed; the JSON also holds the flops of its matrix products per iteration, the count the
/// summary's GFLOP/s use for ours (same rule and tolerance; its Krylov start differs, so a
/// restart more or less is possible: the ranks printed show the phase).
fn numpy_iterations(name: &str, m: ArrayView2<f64>, warm_ups: usize) -> Option<serde_json::Value> {
    let config = serde_json::json!({"method": name, "params": {}, "warm_up": warm_ups,
                                    "samples": SAMPLES});
    common::twin(&format!("{name} iterations"), &[("x", m)], config)
}

/// Flops of dgesdd on an m×n matrix (m ≥ n, not much larger) with thin U and Vᵀ, counting its
/// deterministic part only: the bidiagonalisation (dgebrd, 4mn² − 4n³/3) and the back-transforms
/// of the bidiagonal SVD's vectors (dormbr, 4mn² − 2n³ for U and 2n³ for Vᵀ): 8mn² − 4n³/3,
/// 6.7n³ at m = n. The divide and conquer on the bidiagonal (dbdsdc) adds a data-dependent
/// O(n³) left out, so the GFLOP/s shown for full SVDs are lower bounds.
fn dgesdd_flops(m: usize, n: usize) -> f64 {
    let (m, n) = (m.max(n) as f64, m.min(n) as f64);
    8.0 * m * n * n - 4.0 * n * n * n / 3.0
}

pub fn benches(c: &mut Criterion) {
    force_single_threaded_blas();
    let (peak_one, peak_all) = peak(c);
    let (n, r) = size();
    let with_apgm = std::env::var_os("DPCA_BENCH_APGM").is_some();

    let (secs, (m, l0)) = once(|| planted_m(n, r));
    println!("robust: planted M = L₀ + S₀, {n}×{n}, rank {r}, s = {SPARSITY} ({secs:.1} s)");
    let mut rows = Vec::new();

    // DCF-PCA: one round.
    let data = DataMatrix::Dense(m);
    let sizes: Vec<usize> = (0..CLIENTS)
        .map(|i| n / CLIENTS + usize::from(i < n % CLIENTS))
        .collect();
    let mut rng = seed::rng(SEED, &["u0"]);
    let u0 = Array2::from_shape_fn((n, r).f(), |_| rng.sample::<f64, _>(StandardNormal));
    let start = Message::new().with("u", u0);
    let params: toml::Table = toml::from_str(DCFPCA_PARAMS).expect("parameters");
    let mut dcf = Running::named(
        "dcfpca",
        &params,
        &start,
        SEED,
        data.view().split(&sizes),
        n,
    )
    .expect("dcfpca");
    let flops = dcfpca_flops(n, &sizes, r, LOCAL_STEPS);
    let name = format!("round m=n={n} r={r} d={CLIENTS} K={LOCAL_STEPS}");
    let mut g = c.benchmark_group("dcfpca");
    heavy(&mut g);
    let secs = bench(&mut g, &name, Some(flops), || dcf.step().expect("dcfpca"));
    g.finish();
    drop(dcf);
    // The same round in NumPy (clients one after the other, each product on all cores).
    let args = ["dcfpca".to_string()]
        .into_iter()
        .chain([n, r, CLIENTS, LOCAL_STEPS, 3].map(|v| v.to_string()))
        .collect::<Vec<_>>();
    let numpy = common::numpy("DCF-PCA round", &args, &[])
        .and_then(|v| v["dcfpca"].as_f64())
        .map(|np| {
            let ratio = fmt_opt(secs, |s| format!("{:.2}x", np / s));
            format!("NumPy {np:.3} s, NumPy/ours {ratio}")
        });
    // Beside the in-process peak (OpenBLAS's AVX2 kernels on a CPU it does not know), the
    // AVX-512 dgemm peak, as the rounds bench reports it.
    let avx512 = common::avx512_peak().map(|p| {
        let share = fmt_opt(secs, |s| format!("{:.0}%", 100.0 * flops / s / 1e9 / p));
        format!("{share} of the AVX-512 dgemm peak ({p:.0} GFLOP/s)")
    });
    let note = [numpy, avx512].into_iter().flatten().collect::<Vec<_>>();
    rows.push(Row {
        name: format!("dcfpca {name}"),
        flops: Some(flops),
        secs,
        peak: Peak::AllCores,
        note: note.join("; "),
    });

    let m = data.view().as_dense().expect("dense");
    let mut methods = vec![("ialm", ialm_client as MakeClient)];
    if with_apgm {
        methods.push(("apgm", apgm_client));
    }
    for (name, make) in methods {
        let t = robust_method(c, name, make, m);
        let ratio = fmt_opt(t.svt_partial, |s| format!("{:.1}x", t.svt_full / s));
        let twin = numpy_iterations(name, m, t.warm_ups + 1);
        let twin_secs = twin.as_ref().and_then(|v| v["secs"].as_f64());
        let numpy = twin_secs.map(|np| {
            let ratio = fmt_opt(t.iteration, |s| format!("{:.2}x", np / s));
            let ranks = twin
                .as_ref()
                .map_or("-".into(), |v| v["counts"].to_string());
            format!("; NumPy {np:.3} s, NumPy/ours {ratio} (its ranks {ranks})")
        });
        rows.extend([
            Row {
                name: format!("{name} iteration, partial SVT, rank {}", t.rank),
                flops: twin.as_ref().and_then(|v| v["flops"].as_f64()),
                secs: t.iteration,
                peak: Peak::OneCore,
                note: format!(
                    "SVT {} s of it{}",
                    t.svt_in_iteration.map_or("-".into(), |s| format!("{s:.2}")),
                    numpy.unwrap_or_default()
                ),
            },
            Row {
                name: format!("{name} next SVT, partial (svt_factors)"),
                flops: None,
                secs: t.svt_partial,
                peak: Peak::OneCore,
                note: format!("rank {}", t.rank_partial),
            },
            Row {
                name: format!("{name} same SVT, full (thin_svd)"),
                flops: Some(dgesdd_flops(n, n)),
                secs: Some(t.svt_full),
                peak: Peak::OneCore,
                note: format!(
                    "once; rank {}, full/partial {ratio}, |Δσ| {:.0e}",
                    t.rank_full, t.sv_diff
                ),
            },
            Row {
                name: format!("{name} that iteration with the full SVT"),
                flops: None,
                secs: Some(t.iteration_full),
                peak: Peak::OneCore,
                note: format!(
                    "once; {} the partial iteration",
                    t.iteration
                        .map_or("-".into(), |s| format!("{:.1}x", t.iteration_full / s))
                ),
            },
        ]);
    }

    // SVD of M itself, and of L₀.
    let (full_secs, full) = once(|| thin_svd(m).expect("thin_svd"));
    let (part_secs, part) = once(|| partial_svd(m, r).expect("partial_svd"));
    let diff = (&part.s - &full.s.slice(s![..r]))
        .iter()
        .fold(0.0f64, |a, d| a.max(d.abs()))
        / full.s[0];
    let (l0_secs, _) = once(|| partial_svd(l0.view(), r).expect("partial_svd"));
    println!(
        "robust: M: thin_svd {full_secs:.2} s, partial_svd(k = {r}) {part_secs:.2} s \
         (max |Δσ|/σ₁ = {diff:.1e}); L₀: partial_svd(k = {r}) {l0_secs:.2} s"
    );
    rows.extend([
        Row {
            name: format!("thin_svd(M) {n}×{n}"),
            flops: Some(dgesdd_flops(n, n)),
            secs: Some(full_secs),
            peak: Peak::OneCore,
            note: "once".into(),
        },
        Row {
            name: format!("partial_svd(M, k={r})"),
            flops: None,
            secs: Some(part_secs),
            peak: Peak::OneCore,
            note: format!(
                "once; thin_svd/partial {:.2}x, |Δσ| {diff:.0e}",
                full_secs / part_secs
            ),
        },
        Row {
            name: format!("partial_svd(L₀, k={r})"),
            flops: None,
            secs: Some(l0_secs),
            peak: Peak::OneCore,
            note: format!("once; thin_svd(M)/this {:.1}x", full_secs / l0_secs),
        },
    ]);
    summary(&rows, peak_one, peak_all);
}

/// The table criterion cannot print: seconds per call, GFLOP/s and % of the peak that applies
/// (all cores for DCF-PCA's parallel clients, one core for the rest).
fn summary(rows: &[Row], peak_one: Option<f64>, peak_all: Option<f64>) {
    let gf = |g: f64| format!("{g:.1}");
    println!(
        "\nrobust: dgemm peak {} GFLOP/s on 1 core, {} GFLOP/s on {} cores; criterion rows are \
         medians of {SAMPLES} samples, \"once\" rows one call; % of the 1-core (1c) or \
         all-core (all) peak; full-SVD GFLOP/s are lower bounds (see dgesdd_flops)",
        fmt_opt(peak_one, gf),
        fmt_opt(peak_all, gf),
        rayon::current_num_threads()
    );
    println!(
        "{:<46} {:>8} {:>7} {:>8} {:>11}  note",
        "bench", "s/call", "GFLOP", "GFLOP/s", "% peak"
    );
    for r in rows {
        let rate = r.secs.zip(r.flops).map(|(s, f)| f / s / 1e9);
        let peak = match r.peak {
            Peak::OneCore => peak_one.map(|p| (p, "1c")),
            Peak::AllCores => peak_all.map(|p| (p, "all")),
        };
        let share = rate
            .zip(peak)
            .map(|(g, (p, of))| format!("{:.0}% {of}", 100.0 * g / p));
        println!(
            "{:<46} {:>8} {:>7} {:>8} {:>11}  {}",
            r.name,
            fmt_opt(r.secs, |s| format!("{s:.3}")),
            fmt_opt(r.flops, |f| format!("{:.1}", f / 1e9)),
            fmt_opt(rate, gf),
            share.unwrap_or_else(|| "-".into()),
            r.note
        );
    }
}
