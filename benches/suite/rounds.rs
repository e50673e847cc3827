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
//! DPCA_BENCH_SMALL=1 uses table1's quick profile for a fast look.
//!
//! Before the rounds, the product they are made of, A_i(A_iᵀZ) on every client in parallel,
//! two ways: two BLAS calls (DPCA_PRODUCT_KERNEL=blas), and the project's kernel fused over
//! chunks of samples ([`gram_times_chunked`], what `Block::gram_times` runs: AVX-512 where the
//! CPU has it) at its default chunk length ([`chunk_len`]) and a few others; on an AVX-512 CPU
//! also its AVX2 twin (same bits) at the default chunk, what an AVX2-only CPU runs. After them, the same rounds in NumPy (scripts/numpy_rounds.py, run by the
//! Python in DPCA_BENCH_PYTHON — `make bench` sets up a venv with NumPy from PyPI — on a
//! uniform random matrix of the same shape, NumPy's multithreaded BLAS on all cores): the
//! summary's last column is NumPy's time over ours. Rounds take seconds, so each
//! bench runs 10 samples of one round after one warm-up round: criterion's "Unable to complete
//! 10 samples" warning is expected.

use crate::common::{self, heavy, instance, method, peak, row, summary, Row};

use criterion::Criterion;
use dpca_bench::data::matrix::Block;
use dpca_bench::linalg::force_single_threaded_blas;
use dpca_bench::linalg::gram_product::{chunk_len, gram_times_chunked, kernel, Kernel};
use rayon::prelude::*;

pub fn benches(c: &mut Criterion) {
    force_single_threaded_blas();
    let (peak_one, peak_all) = peak(c);
    let inst = instance("experiments/faps/table1.toml", |points| &points[0]);
    let p = inst.start().get("z").expect("start Z").ncols();
    let (n, m, d) = (inst.data().n(), inst.data().m(), inst.sizes().len());
    let name = |method: &str| format!("{method} n={n} m={m} p={p} d={d}");
    // One product A_i(A_iᵀZ) summed over clients: 2·(2·n·m_i·p) flops.
    let product = 4.0 * (n * m * p) as f64;

    let mut g = c.benchmark_group("product");
    heavy(&mut g);
    let blocks = inst.data().view().split(inst.sizes());
    let z = inst.start().get("z").expect("start Z").clone();
    let dense: Vec<_> = blocks.iter().filter_map(Block::as_dense).collect();
    let mut rows = Vec::new();
    if dense.len() == blocks.len() {
        rows.push(row(&mut g, "A_i(A_iᵀZ) two BLAS calls", product, || {
            dense
                .par_iter()
                .map(|a| a.dot(&a.t().dot(&z))[[0, 0]])
                .sum::<f64>()
        }));
        let used = chunk_len(n);
        // DPCA_PRODUCT_KERNEL=blas (or a CPU without FMA): no own kernel to time.
        let own = kernel();
        let mut runs: Vec<(Kernel, usize)> = match own.own() {
            true => [16, 32, 64, 128, 256].map(|chunk| (own, chunk)).into(),
            false => Vec::new(),
        };
        if own == Kernel::Avx512 {
            runs.push((Kernel::Avx2, used));
        }
        for (k, chunk) in runs {
            let mark = if chunk == used { " (default)" } else { "" };
            rows.push(row(
                &mut g,
                &format!("A_i(A_iᵀZ) {} fused, chunks of {chunk}{mark}", k.name()),
                product,
                || {
                    dense
                        .par_iter()
                        .map(|a| gram_times_chunked(k, *a, z.view(), chunk)[[0, 0]])
                        .sum::<f64>()
                },
            ));
        }
    }
    g.finish();

    let mut g = c.benchmark_group("round");
    heavy(&mut g);
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
    // FAPS (default: 5 fixed inner steps): 5 products (the first inner one is the last
    // round's, reused; one for W (16)) + ½ for f_i = ‖A_iᵀZ‖²_F, and its n×p work.
    let mut faps = method(inst.as_ref(), "faps", "");
    let faps_flops = 5.5 * product + faps_np2_flops(n, p, d);
    rows.push(row(&mut g, &name("faps"), faps_flops, || {
        faps.step().unwrap()
    }));
    drop(faps);
    g.finish();
    let numpy = numpy_rounds(n, m, p, d);
    let peak_avx512 = common::avx512_peak();
    for r in &mut rows {
        r.numpy = numpy.as_ref().and_then(|v| {
            let key = ["ssi", "localpower", "faps"]
                .into_iter()
                .find(|k| r.name.starts_with(k))?;
            v[key].as_f64()
        });
    }
    summary(
        "rounds",
        &rows,
        [peak_one, peak_all, peak_avx512],
        numpy.as_ref(),
    );
    faps_against_ssi(&rows, faps_flops / product);
}

/// Flops of a FAPS round (5 fixed inner steps) besides its products, over all d clients: per
/// inner step, H·V's terms X(WᵀV) + W(XᵀV) + βZ(ZᵀV) are six GEMMs of 2np² each and the QR
/// with its Q formed about 4np²; per round, the distance d_i 4np², W_i (16) 4np², Y_i 8np².
/// 5·16 + 16 = 96np² a client: 8 % of the round's flops at Table 1's size.
fn faps_np2_flops(n: usize, p: usize, d: usize) -> f64 {
    96.0 * (d * n * p * p) as f64
}

/// A FAPS round's time in SSI rounds, beside its flops in SSI rounds (an SSI round is one
/// product; its server's sum and QR are O(np²) once): the ratio FAPS would reach if all its
/// work ran at SSI's rate.
fn faps_against_ssi(rows: &[Row], flop_ratio: f64) {
    let secs = |k: &str| rows.iter().find(|r| r.name.starts_with(k))?.secs;
    if let (Some(f), Some(s)) = (secs("faps"), secs("ssi")) {
        println!(
            "\nFAPS round = {:.2} SSI rounds; by flops {flop_ratio:.2} (5.5 in products alone)",
            f / s
        );
    }
}

/// Seconds per round of the NumPy rounds at the same sizes (see the module's doc), or None
/// (said why) when DPCA_BENCH_PYTHON is unset or the script fails.
fn numpy_rounds(n: usize, m: usize, p: usize, d: usize) -> Option<serde_json::Value> {
    let args = [n, m, p, d, 3].map(|v| v.to_string());
    common::numpy("rounds", &args, &[])
}
