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
//!   finished with the full SVT (once). Single-threaded: against the 1-core peak. Their state
//!   is private to the method's client, so the bench runs a copy of the iteration
//!   ([`IalmCopy`], [`ApgmCopy`]), first checked to reproduce the registered method's iterates
//!   bit for bit (at 200×200). The copy reaches that phase from the method's own start, each
//!   warm-up iteration printed as it runs (IALM: 8 iterations, ~40 s here; APGM: ~36, ~6 min,
//!   hence opt-in).
//! - SVD of the planted M itself: `partial_svd(k = r)` against `thin_svd`, and `partial_svd` of
//!   L₀ alone (a clear gap after σ_r) for contrast; each once.
//!
//! Full SVDs take 15-20 s each (dgesdd, 3000×3000, one core) and criterion's minimum is 10
//! samples, hence the "once" timings. Heavy benches run 10 samples of one call after one warm-up
//! call: criterion's "Unable to complete 10 samples" warning is expected. Criterion's filter
//! (`ARGS=...`) selects criterion benches only; the warm-ups and "once" timings always run.
//! DPCA_BENCH_SMALL=1 runs at m = n = 1000 (r = 50) for a fast look.

mod common;

use common::{bench, fmt_opt, heavy, median, peak, SAMPLES};

use criterion::{criterion_group, criterion_main, Criterion};
use dpca_bench::data::matrix::{Block, DataMatrix};
use dpca_bench::fed::Message;
use dpca_bench::linalg::prox::soft_threshold_inplace;
use dpca_bench::linalg::svd::{partial_svd, svt_factors, thin_svd, Svd};
use dpca_bench::linalg::{force_single_threaded_blas, fro2};
use dpca_bench::methods::registry::Running;
use dpca_bench::methods::{apgm, ialm};
use dpca_bench::problem::robust::planted;
use dpca_bench::seed;
use dpca_bench::spec::Magnitude;
use ndarray::{s, Array2, ArrayView2, Axis, ShapeBuilder, Zip};
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

// ---- Timing and the summary (as benches/rounds.rs) ----

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

/// Flops of one DCF-PCA round (src/methods/dcfpca.rs), K local steps on every client, each
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

// ---- IALM and APGM, copied so that their SVT argument can be read ----

/// The .m files' first rank prediction (src/methods/ialm.rs FIRST_RANK_HINT).
const FIRST_RANK_HINT: usize = 10;

/// src/methods/ialm.rs next_rank_hint.
fn next_rank_hint(svp: usize, hint: usize, cols: usize) -> usize {
    if svp < hint {
        (svp + 1).min(cols)
    } else {
        (svp + (0.05 * cols as f64).round() as usize).min(cols)
    }
}

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

/// The iteration of a centralised robust method, split around its one SVT.
trait Iteration {
    /// Everything before the SVT: its argument, threshold and rank hint.
    fn before_svt(&mut self) -> (Array2<f64>, f64, usize);
    /// Everything after it, from its factors.
    fn after_svt(&mut self, f: Svd);
    /// The last SVT's factors and S, as the method reveals them: (U diag σ, S).
    fn state(&self) -> (Array2<f64>, &Array2<f64>);
    fn rank(&self) -> usize;
}

/// One iteration; the seconds spent before, in and after the SVT.
fn iterate(it: &mut dyn Iteration, svt: Svt) -> [f64; 3] {
    let (before, (arg, tau, hint)) = once(|| it.before_svt());
    let (in_svt, f) = once(|| svt.run(arg.view(), tau, hint));
    drop(arg);
    let (after, ()) = once(|| it.after_svt(f));
    [before, in_svt, after]
}

fn scaled_u(f: &Svd) -> Array2<f64> {
    &f.u * &f.s.view().insert_axis(Axis(0))
}

fn empty_svd(n: usize, m: usize) -> Svd {
    Svd {
        u: Array2::zeros((n, 0)),
        s: ndarray::Array1::zeros(0),
        vt: Array2::zeros((0, m)),
    }
}

/// IalmClient of src/methods/ialm.rs, line for line.
struct IalmCopy<'a> {
    d: ArrayView2<'a, f64>,
    d_norm: f64,
    lambda: f64,
    mu: f64,
    mu_bar: f64,
    rho: f64,
    y: Array2<f64>,
    l: Array2<f64>,
    factors: Svd,
    s: Array2<f64>,
    hint: usize,
}

impl<'a> IalmCopy<'a> {
    fn new(d: ArrayView2<'a, f64>, seed: u64) -> Self {
        let p = ialm::Params::default();
        let (n, m) = d.dim();
        let lambda = p.lambda.unwrap_or(1.0 / (n.max(m) as f64).sqrt());
        let norm_two = ialm::spectral_norm(d, seed).expect("‖M‖₂");
        let norm_inf = d.iter().fold(0.0f64, |a, &x| a.max(x.abs())) / lambda;
        let mu = p.mu0_factor / norm_two;
        Self {
            d,
            d_norm: fro2(d).sqrt(),
            lambda,
            mu,
            mu_bar: mu * p.mu_bar_factor,
            rho: p.rho,
            y: &d / norm_two.max(norm_inf),
            l: Array2::zeros((n, m)),
            factors: empty_svd(n, m),
            s: Array2::zeros((n, m)),
            hint: FIRST_RANK_HINT,
        }
    }
}

impl Iteration for IalmCopy<'_> {
    fn before_svt(&mut self) -> (Array2<f64>, f64, usize) {
        let inv_mu = 1.0 / self.mu;
        let mut s = &self.d - &self.l + &(&self.y * inv_mu);
        soft_threshold_inplace(&mut s, self.lambda * inv_mu);
        self.s = s;
        let arg = &self.d - &self.s + &(&self.y * inv_mu);
        (arg, inv_mu, self.hint)
    }
    fn after_svt(&mut self, f: Svd) {
        self.factors = f;
        self.l = self.factors.dense();
        self.hint = next_rank_hint(self.factors.s.len(), self.hint, self.d.ncols());
        let z = &self.d - &self.l - &self.s;
        self.y.scaled_add(self.mu, &z);
        self.mu = (self.mu * self.rho).min(self.mu_bar);
        black_box(fro2(z.view()).sqrt() / self.d_norm);
    }
    fn state(&self) -> (Array2<f64>, &Array2<f64>) {
        (scaled_u(&self.factors), &self.s)
    }
    fn rank(&self) -> usize {
        self.factors.s.len()
    }
}

/// ApgmClient of src/methods/apgm.rs, line for line.
struct ApgmCopy<'a> {
    d: ArrayView2<'a, f64>,
    lambda: f64,
    mu: f64,
    mu_bar: f64,
    eta: f64,
    tau: f64,
    t: f64,
    t_prev: f64,
    a: Array2<f64>,
    e: Array2<f64>,
    a_prev: Array2<f64>,
    e_prev: Array2<f64>,
    factors: Svd,
    hint: usize,
    /// Y_A, Y_E and the scaled residual of the iteration under way.
    pending: Option<(Array2<f64>, Array2<f64>, Array2<f64>)>,
}

impl<'a> ApgmCopy<'a> {
    fn new(d: ArrayView2<'a, f64>, seed: u64) -> Self {
        let p = apgm::Params::default();
        let (n, m) = d.dim();
        let norm2 = ialm::spectral_norm(d, seed).expect("‖M‖₂");
        let zeros = Array2::zeros((n, m));
        Self {
            d,
            lambda: p.lambda.unwrap_or(1.0 / (n.max(m) as f64).sqrt()),
            mu: p.mu0_factor * norm2,
            mu_bar: p.mu_bar_factor * norm2,
            eta: p.eta,
            tau: p.lipschitz,
            t: 1.0,
            t_prev: 1.0,
            a: zeros.clone(),
            e: zeros.clone(),
            a_prev: zeros.clone(),
            e_prev: zeros,
            factors: empty_svd(n, m),
            hint: FIRST_RANK_HINT,
            pending: None,
        }
    }
}

impl Iteration for ApgmCopy<'_> {
    fn before_svt(&mut self) -> (Array2<f64>, f64, usize) {
        let beta = (self.t_prev - 1.0) / self.t;
        let ya = &self.a + &((&self.a - &self.a_prev) * beta);
        let ye = &self.e + &((&self.e - &self.e_prev) * beta);
        let resid = (&ya + &ye - self.d) / self.tau;
        let arg = &ya - &resid;
        self.pending = Some((ya, ye, resid));
        (arg, self.mu / self.tau, self.hint)
    }
    fn after_svt(&mut self, f: Svd) {
        let (ya, ye, resid) = self.pending.take().expect("before_svt first");
        self.factors = f;
        self.hint = next_rank_hint(self.factors.s.len(), self.hint, self.d.ncols());
        let a_next = self.factors.dense();
        let mut e_next = &ye - &resid;
        soft_threshold_inplace(&mut e_next, self.lambda * self.mu / self.tau);
        let temp = &a_next + &e_next - &ya - &ye;
        let mut num = 0.0;
        for (y, x) in [(&ya, &a_next), (&ye, &e_next)] {
            Zip::from(y)
                .and(x)
                .and(&temp)
                .for_each(|&y, &x, &t| num += (self.tau * (y - x) + t).powi(2));
        }
        let xnorm = (fro2(a_next.view()) + fro2(e_next.view())).sqrt();
        black_box(num.sqrt() / (self.tau * xnorm.max(1.0)));
        self.mu = (self.eta * self.mu).max(self.mu_bar);
        self.t_prev = self.t;
        self.t = 0.5 * (1.0 + (1.0 + 4.0 * self.t * self.t).sqrt());
        self.a_prev = std::mem::replace(&mut self.a, a_next);
        self.e_prev = std::mem::replace(&mut self.e, e_next);
    }
    fn state(&self) -> (Array2<f64>, &Array2<f64>) {
        (scaled_u(&self.factors), &self.e)
    }
    fn rank(&self) -> usize {
        self.factors.s.len()
    }
}

type MakeCopy = for<'a> fn(ArrayView2<'a, f64>, u64) -> Box<dyn Iteration + 'a>;

fn ialm_copy<'a>(d: ArrayView2<'a, f64>, seed: u64) -> Box<dyn Iteration + 'a> {
    Box::new(IalmCopy::new(d, seed))
}

fn apgm_copy<'a>(d: ArrayView2<'a, f64>, seed: u64) -> Box<dyn Iteration + 'a> {
    Box::new(ApgmCopy::new(d, seed))
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

/// The copy of `name` reproduces the registered method's iterates exactly (U diag σ of the last
/// SVT, and S) over `iters` iterations at 200×200, through the rank's growth.
fn check_copy(name: &str, make: MakeCopy, iters: usize) {
    let (m, _) = planted_m(200, 10);
    let mut method = Running::named(
        name,
        &toml::Table::new(),
        &Message::new(),
        SEED,
        vec![Block::Dense(m.view())],
        200,
    )
    .expect(name);
    let mut copy = make(m.view(), SEED);
    let mut ranks = 0;
    for k in 1..=iters {
        method.step().expect(name);
        iterate(copy.as_mut(), Svt::Partial);
        let revealed = &method.net.reveal()[0];
        let (u, s) = copy.state();
        let u_method = revealed.get("u").expect("u");
        // L = 0 is revealed as one zero column.
        let same_u = if u.ncols() == 0 {
            u_method.iter().all(|&x| x == 0.0)
        } else {
            u == *u_method
        };
        assert!(
            same_u && s == revealed.get("s").expect("s"),
            "benches/robust.rs: the copy of {name} no longer reproduces src/methods/{name}.rs \
             (iteration {k}); update the copy"
        );
        ranks = ranks.max(copy.rank());
    }
    assert!(ranks > 0, "{name}: the check never reached a nonzero rank");
}

/// What one method's benches measured.
struct RobustTimes {
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

/// Run the copy of `name` from the method's start until the SVT keeps one nonzero rank twice
/// (printing every warm-up iteration), bench its iterations there, then do its next SVT both
/// ways on the same argument and finish that iteration with the full one.
fn robust_method(c: &mut Criterion, name: &str, make: MakeCopy, m: ArrayView2<f64>) -> RobustTimes {
    let n = m.nrows();
    let (secs, mut it) = once(|| make(m, SEED));
    println!("{name}: start (‖M‖₂ by block Krylov) {secs:.2} s");
    let mut last = usize::MAX;
    for k in 1..=200 {
        let [b, svt, a] = iterate(it.as_mut(), Svt::Partial);
        let rank = it.rank();
        println!(
            "{name}: warm-up iteration {k}: {:.2} s (SVT {svt:.2} s), rank {rank}",
            b + svt + a
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
    // argument stays), full once.
    let (before, (arg, tau, hint)) = once(|| it.before_svt());
    let mut partial = None;
    let svt_partial = bench(
        &mut g,
        &format!("next SVT m=n={n}, one argument (partial)"),
        None,
        || partial = Some(Svt::Partial.run(arg.view(), tau, hint)),
    );
    g.finish();
    let partial = partial.unwrap_or_else(|| Svt::Partial.run(arg.view(), tau, hint));
    let (svt_full, full) = once(|| Svt::Full.run(arg.view(), tau, hint));
    let common = partial.s.len().min(full.s.len());
    let sv_diff = (&partial.s.slice(s![..common]) - &full.s.slice(s![..common]))
        .iter()
        .fold(0.0f64, |a, d| a.max(d.abs()))
        / full.s.first().map_or(1.0, |&s| s + tau);
    let (rank_partial, rank_full) = (partial.s.len(), full.s.len());
    drop(arg);
    let (after, ()) = once(|| it.after_svt(full));
    println!(
        "{name}: next SVT on one argument: partial {} s (rank {rank_partial}), full {svt_full:.2} \
         s (rank {rank_full}), max |Δσ|/σ₁ = {sv_diff:.1e}",
        fmt_opt(svt_partial, |s| format!("{s:.2}"))
    );
    RobustTimes {
        iteration,
        svt_in_iteration,
        rank,
        svt_partial,
        svt_full,
        iteration_full: before + svt_full + after,
        rank_partial,
        rank_full,
        sv_diff,
    }
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

fn benches(c: &mut Criterion) {
    force_single_threaded_blas();
    let (peak_one, peak_all) = peak(c);
    let (n, r) = size();
    let with_apgm = std::env::var_os("DPCA_BENCH_APGM").is_some();

    let (secs, ()) = once(|| {
        check_copy("ialm", ialm_copy, 30);
        if with_apgm {
            check_copy("apgm", apgm_copy, 60);
        }
    });
    println!("robust: the copies reproduce the methods' iterates at 200×200 ({secs:.1} s)");

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
    let mut methods = vec![("ialm", ialm_copy as MakeCopy)];
    if with_apgm {
        methods.push(("apgm", apgm_copy));
    }
    for (name, make) in methods {
        let t = robust_method(c, name, make, m);
        let ratio = fmt_opt(t.svt_partial, |s| format!("{:.1}x", t.svt_full / s));
        rows.extend([
            Row {
                name: format!("{name} iteration, partial SVT, rank {}", t.rank),
                flops: None,
                secs: t.iteration,
                peak: Peak::OneCore,
                note: format!(
                    "SVT {} s of it",
                    t.svt_in_iteration.map_or("-".into(), |s| format!("{s:.2}"))
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

criterion_group!(robust, benches);
criterion_main!(robust);
