//! One round of the leading-eigenvector and sparse families' methods at their papers' largest
//! sizes, beside this machine's dgemm peak and the same rounds in NumPy, as rounds.rs
//! does for the subspace family and robust.rs for the robust one:
//!
//! - CEDRE at Fig. 3(a)'s largest point (experiments/cedre/fig3a.toml: d = 1000 features, 100
//!   machines of n_k = 2000 samples, m = 5n_k single-sample local steps, option II): one of the
//!   paper's rounds, both network exchanges (A_kw̃ back; the local steps and w_m back). η is
//!   fixed (0.05) so that every round is a plain one: with η unset the first round runs the
//!   local steps once per candidate of the step-size search.
//! - DSSAL1 at experiments/dssal1/sweep_n.toml's largest point (n = 1500, m = 16000, p = 5,
//!   16 clients, μ = 0.005) with 5 fixed inner steps (`inner = "fixed"`), so that every round does
//!   the same work (the default rule's step count varies from round to round): the clients'
//!   FAPS work and the server's ManPG proximal step (semismooth Newton) and retraction.
//!
//! - FSSPCA and FASPCA at the sparse PCA paper's largest data, Table I's WDBC* (n = 830 features,
//!   m = 569 samples over K = 10 workers; experiments/fspca/table1.toml, the dataset fetched by
//!   `make fetch`) with Table I's settings. An FSSPCA round is its workers' RGD, whose
//!   iterations and Armijo trials depend on the path: both it and FASPCA are timed over the same
//!   1 + 10 consecutive rounds from the method's start in Rust ([`common::fixed_rounds`], the
//!   mean, outside criterion) and in their NumPy twins (scripts/numpy_rounds.py twin, on the
//!   same data and the clients' starts; tests/lib/numpy_twin.rs checks that they agree). Their
//!   flops are the twin's count of its matrix products on that path (C_iw as X_i(X_iᵀw), 4n·m_i
//!   per column, or C_iw with C_i formed; the Stiefel projection's); the summary prints both
//!   sides' accepted RGD iterations, so that a path that parted shows.
//!
//! The instances are built as `dpca run` builds them (same manifests, seeds and cache); the
//! methods as the runner builds them (`Running::named`, through common::method); each bench advances its method, so
//! samples are consecutive rounds. Flops: see [`cedre_flops`] and [`dssal1_flops`]. A CEDRE
//! round is a chain of 10,000 dependent vector steps per machine (one step's w is the next
//! one's input), each a few passes over one d-vector: level-1 work (its sums in 16 lanes,
//! src/linalg/sphere_step.rs) bound by memory and the chain, not by the dgemm peak the summary
//! compares it with. After the rounds, the same rounds
//! in NumPy (scripts/numpy_rounds.py cedre / dssal1, DPCA_BENCH_PYTHON as `make bench` sets it)
//! on uniform random data of the same shapes, written as a NumPy user would: CEDRE's local steps
//! a Python loop of vector operations, DSSAL1's products one `@` each on NumPy's multithreaded
//! BLAS. DPCA_BENCH_SMALL=1 uses the manifests' quick profiles.

use crate::common::{self, heavy, instance, method, peak, row, summary, Row, SAMPLES};
use crate::twin;

use criterion::Criterion;
use dpca_bench::linalg::force_single_threaded_blas;
use dpca_bench::problem::Instance;
use dpca_bench::spec::Point;
use serde_json::json;

/// CEDRE's fixed step size in the bench (the grid's 0.05/λ̂, λ̂ = 1 after the family's scaling).
const CEDRE_ETA: f64 = 0.05;
/// CEDRE's local steps per sample (m = 5n_k, the paper's and the method's default).
const CEDRE_STEPS_PER_SAMPLE: usize = 5;
/// DSSAL1's inner steps per round in the bench.
const DSSAL1_INNER: usize = 5;

/// Table I's settings (experiments/fspca/table1.toml) as the bench's and the twin's parameters.
const FSSPCA_PARAMS: &str = "lambda1 = 10.0\nlambda2 = 190.0\nrho = 1000.0";
const FASPCA_PARAMS: &str = "lambda = 170.0\nrho = 1000.0";

/// Flops of one CEDRE round (dense, single-sample steps): exchange A's A_kw̃ = X_k(X_kᵀw̃)/n_k,
/// 4dn_k per machine; then m_k = 5n_k local steps of 23d flops each (four inner products, 8d;
/// the variance-reduced gradient, the step and ‖v‖², 14d; the normalisation, d).
fn cedre_flops(d: usize, sizes: &[usize]) -> f64 {
    sizes
        .iter()
        .map(|&n| (4 * d * n + 23 * d * CEDRE_STEPS_PER_SAMPLE * n) as f64)
        .sum()
}

/// Flops of one DSSAL1 round with 5 fixed inner steps: its clients do a FAPS round's work (5½
/// products A_i(A_iᵀV) of 4nm_ip flops, one of them reused from the last round, and 96np² of
/// n×p work each; see rounds.rs); the server's proximal step and retraction are O(np²)
/// per Newton step and not counted.
fn dssal1_flops(n: usize, m: usize, p: usize, d: usize) -> f64 {
    5.5 * 4.0 * (n * m * p) as f64 + 96.0 * (d * n * p * p) as f64
}

pub fn benches(c: &mut Criterion) {
    force_single_threaded_blas();
    let (peak_one, peak_all) = peak(c);
    let mut rows = Vec::new();
    let mut g = c.benchmark_group("families");
    heavy(&mut g);

    let cedre_inst = instance("experiments/cedre/fig3a.toml", largest);
    let (d, sizes) = (cedre_inst.dim(), cedre_inst.sizes().to_vec());
    let cedre_name = format!("cedre d={d} n_k={} K={} m=5n_k", sizes[0], sizes.len());
    let mut cedre = method(cedre_inst.as_ref(), "cedre", &format!("eta = {CEDRE_ETA}"));
    rows.push(row(&mut g, &cedre_name, cedre_flops(d, &sizes), || {
        cedre.step().unwrap()
    }));
    drop(cedre);
    drop(cedre_inst);

    let inst = instance("experiments/dssal1/sweep_n.toml", largest);
    let (n, m, clients) = (inst.data().n(), inst.data().m(), inst.sizes().len());
    let p = inst.start().get("z").expect("start Z").ncols();
    let params = format!("inner = \"fixed\"\ninner_steps = {DSSAL1_INNER}");
    let mut dssal1 = method(inst.as_ref(), "dssal1", &params);
    rows.push(row(
        &mut g,
        &format!("dssal1 n={n} m={m} p={p} d={clients} 5 inner"),
        dssal1_flops(n, m, p, clients),
        || dssal1.step().unwrap(),
    ));
    drop(dssal1);
    g.finish();

    let numpy = [
        common::numpy(
            "CEDRE round",
            &numpy_args("cedre", &[d, sizes[0], sizes.len(), 1]),
            &[],
        ),
        common::numpy(
            "DSSAL1 round",
            &numpy_args("dssal1", &[n, m, p, clients, 3]),
            &[],
        ),
    ];
    for (r, v) in rows.iter_mut().zip(&numpy) {
        let key = r.name.split(' ').next().expect("a name");
        r.numpy = v.as_ref().and_then(|v| v[key].as_f64());
    }
    let sparse = instance("experiments/fspca/table1.toml", largest);
    for (name, params) in [("fsspca", FSSPCA_PARAMS), ("faspca", FASPCA_PARAMS)] {
        rows.push(sparse_row(sparse.as_ref(), name, params));
    }
    let peak_avx512 = common::avx512_peak();
    summary(
        "families",
        &rows,
        [peak_one, peak_all, peak_avx512],
        numpy.iter().flatten().next(),
    );
    cedre_step_rate(&rows, &sizes);
}

/// One round of sparse PCA method `name`, timed over the same rounds in Rust and in its NumPy
/// twin (see the module's doc), its flops counted by the twin (0 without one).
fn sparse_row(inst: &dyn Instance, name: &str, params: &str) -> Row {
    let (n, m, k) = (inst.data().n(), inst.data().m(), inst.sizes().len());
    let mut run = method(inst, name, params);
    let x = inst.data().view();
    let x = x.as_dense().expect("WDBC* is dense");
    let w0 = twin::client_parts(&run, "w").expect("the clients' w");
    // Accepted RGD iterations (FASPCA: one per client) of the timed rounds, the warm-up's not.
    let (mut calls, mut iters) = (0, 0);
    let secs = common::fixed_rounds(1, SAMPLES, || {
        run.step().expect(name);
        calls += 1;
        if calls > 1 {
            iters += run.net.inner_iters().iter().sum::<u32>();
        }
    });
    let params: toml::Table = toml::from_str(params).expect("parameters");
    let config = json!({"method": name, "params": params, "sizes": inst.sizes(),
                        "warm_up": 1, "samples": SAMPLES});
    let numpy = common::twin(name, &[("x", x), ("w0", w0.view())], config);
    let numpy = numpy.as_ref();
    let twin_iters: Option<u64> =
        numpy.and_then(|v| v["counts"].as_array()?.iter().map(|c| c.as_u64()).sum());
    println!(
        "{name}: inner iterations over the {SAMPLES} timed rounds: ours {iters}, the twin's {}",
        twin_iters.map_or("-".into(), |t| t.to_string())
    );
    Row {
        name: format!("{name} n={n} m={m} K={k} (mean of {SAMPLES} rounds)"),
        flops: numpy.and_then(|v| v["flops"].as_f64()).unwrap_or(0.0),
        secs: Some(secs),
        numpy: numpy.and_then(|v| v["secs"].as_f64()),
    }
}

/// A manifest's last (largest) sweep point.
fn largest(points: &[Point]) -> &Point {
    points.last().expect("a point")
}

fn numpy_args(what: &str, v: &[usize]) -> Vec<String> {
    std::iter::once(what.to_string())
        .chain(v.iter().map(|x| x.to_string()))
        .collect()
}

/// CEDRE's round time per local step and core (exchange A's two passes over the data included):
/// the figure its chains of level-1 steps are bound by.
fn cedre_step_rate(rows: &[Row], sizes: &[usize]) {
    let Some(secs) = rows[0].secs else { return };
    let steps: usize = sizes.iter().map(|n| CEDRE_STEPS_PER_SAMPLE * n).sum();
    let cores = rayon::current_num_threads();
    println!(
        "\nCEDRE: {steps} local steps a round, {:.2} µs of the round per step on each of {cores} \
         cores (exchange A included)",
        secs * cores as f64 / steps as f64 * 1e6
    );
}
