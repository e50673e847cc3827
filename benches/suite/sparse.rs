//! Sparse data at rcv1's size, never densified: 47,236 features × 697,641 samples (rcv1.binary,
//! train + test) with ~74 non-zeros per sample, drawn with a Zipf-like feature popularity and
//! unit-norm samples, as in rcv1's tf-idf vectors. Generated in memory (rcv1 itself is not
//! reachable here); DPCA_BENCH_SMALL=1 uses a tenth of the samples.
//!
//! Measures one SSI round over 20 CSR clients (p = 10), one whole-matrix product A(AᵀZ) as the
//! per-round metrics take it when there is no Gram matrix, and — once, printed — the block-Krylov
//! reference that replaces the 17.8 GB Gram matrix. Criterion's "thrpt" reads as GFLOP/s.

use criterion::{Criterion, Throughput};
use dpca_bench::data::loaders::Csr;
use dpca_bench::data::matrix::DataMatrix;
use dpca_bench::fed::Message;
use dpca_bench::linalg::{force_single_threaded_blas, orth};
use dpca_bench::methods::registry::Running;
use dpca_bench::seed;
use dpca_bench::seed::uniform_matrix;
use rand::Rng;
use std::time::{Duration, Instant};

const FEATURES: usize = 47_236;
const PER_SAMPLE: usize = 74;
const CLIENTS: usize = 20;
const P: usize = 10;

fn samples() -> usize {
    if std::env::var_os("DPCA_BENCH_SMALL").is_some() {
        69_764
    } else {
        697_641
    }
}

/// Feature i drawn with probability ∝ 1/(i + 20); each sample's values positive, unit norm.
fn rcv1_like(m: usize) -> Csr {
    let mut rng = seed::rng(1, &["rcv1-like"]);
    let mut cdf: Vec<f64> = (0..FEATURES).map(|i| 1.0 / (i as f64 + 20.0)).collect();
    for i in 1..FEATURES {
        cdf[i] += cdf[i - 1];
    }
    let total = cdf[FEATURES - 1];
    let (mut indptr, mut indices, mut values) = (vec![0usize], Vec::new(), Vec::new());
    let mut row: Vec<u32> = Vec::with_capacity(PER_SAMPLE);
    for _ in 0..m {
        row.clear();
        while row.len() < PER_SAMPLE {
            let u = rng.random::<f64>() * total;
            let i = cdf.partition_point(|&c| c < u).min(FEATURES - 1) as u32;
            if !row.contains(&i) {
                row.push(i);
            }
        }
        row.sort_unstable();
        let vals: Vec<f64> = row.iter().map(|_| rng.random_range(0.1..1.0)).collect();
        let norm = vals.iter().map(|v| v * v).sum::<f64>().sqrt();
        indices.extend_from_slice(&row);
        values.extend(vals.iter().map(|v| v / norm));
        indptr.push(indices.len());
    }
    Csr::new(FEATURES, indptr, indices, values).expect("valid CSR")
}

pub fn benches(c: &mut Criterion) {
    force_single_threaded_blas();
    let m = samples();
    let t = Instant::now();
    let data = DataMatrix::Sparse(rcv1_like(m));
    let DataMatrix::Sparse(csr) = &data else {
        unreachable!()
    };
    let nnz = csr.nnz() as u64;
    println!(
        "sparse: {FEATURES} × {m}, {nnz} non-zeros ({:.0} MB CSR), generated in {:.1} s",
        csr.heap_bytes() as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );

    let t = Instant::now();
    let top = data.view().top_gram_eigs(P).expect("Krylov reference");
    println!(
        "sparse: block-Krylov reference p = {P}: {:.1} s, {} restarts, {} block products, \
         residual {:.1e}, σ₁² = {:.4}, σ_p² = {:.4}",
        t.elapsed().as_secs_f64(),
        top.restarts,
        top.products,
        top.residual,
        top.values[0],
        top.values[P - 1]
    );

    let sizes: Vec<usize> = (0..CLIENTS)
        .map(|i| m / CLIENTS + usize::from(i < m % CLIENTS))
        .collect();
    let z0 = orth(uniform_matrix(FEATURES, P, &mut seed::rng(2, &["z0"])).view());
    let mut g = c.benchmark_group("sparse");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    // A(AᵀZ): 2 flops per non-zero and column, twice.
    g.throughput(Throughput::Elements(4 * nnz * P as u64));
    let start = Message::new().with("z", z0.clone());
    let mut ssi = Running::named(
        "ssi",
        &toml::Table::new(),
        &start,
        1,
        data.view().split(&sizes),
        FEATURES,
    )
    .expect("ssi");
    g.bench_function(
        format!("ssi round n={FEATURES} m={m} p={P} d={CLIENTS}"),
        |b| b.iter(|| ssi.step().unwrap()),
    );
    g.bench_function(format!("metrics product A(AᵀZ) m={m} p={P}"), |b| {
        b.iter(|| data.view().gram_times_par(z0.view()))
    });
    g.finish();
}
