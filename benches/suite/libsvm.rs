//! LIBSVM loading at the acceptance size: 10⁵ samples × 5·10⁴ features at 0.1 % density
//! (5·10⁶ non-zeros, ≈ 70 MB of text), written to a temporary folder first.
//!
//! `make bench BENCH=libsvm`. Prints the file size and the loaded matrix's heap
//! bytes per non-zero (memory proportional to the non-zeros: 12 B each + 8 B per sample).

use criterion::Criterion;
use dpca_bench::data::loaders::libsvm::read_libsvm;
use rand::{Rng, SeedableRng};
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Duration;

const SAMPLES: usize = 100_000;
const FEATURES: usize = 50_000;
const PER_SAMPLE: usize = 50; // 0.1 % of 50,000

fn write_file(path: &Path) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let mut w = BufWriter::new(std::fs::File::create(path).unwrap());
    let mut idx = Vec::with_capacity(PER_SAMPLE);
    for _ in 0..SAMPLES {
        idx.clear();
        while idx.len() < PER_SAMPLE {
            let i = rng.random_range(1..=FEATURES);
            if !idx.contains(&i) {
                idx.push(i);
            }
        }
        idx.sort_unstable();
        write!(w, "{}", if rng.random::<bool>() { "+1" } else { "-1" }).unwrap();
        for &i in &idx {
            write!(w, " {i}:{:.6}", rng.random_range(-1.0..1.0f64)).unwrap();
        }
        writeln!(w).unwrap();
    }
    w.flush().unwrap();
}

pub fn benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.svm");
    write_file(&path);
    let d = read_libsvm(&path, Some(FEATURES)).unwrap();
    let nnz = d.x.nnz();
    println!(
        "libsvm: {} samples × {} features, {nnz} non-zeros, file {:.1} MB, CSR heap {:.1} MB \
         ({:.2} B per non-zero)",
        d.x.n_samples(),
        d.x.n_features(),
        std::fs::metadata(&path).unwrap().len() as f64 / 1e6,
        d.x.heap_bytes() as f64 / 1e6,
        d.x.heap_bytes() as f64 / nnz as f64
    );
    if let Some(peak) = peak_rss_mb() {
        println!("libsvm: peak resident memory of this process after one load: {peak:.1} MB");
    }
    drop(d);
    let mut g = c.benchmark_group("libsvm");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    g.bench_function("read 1e5 x 5e4 at 0.1%", |b| {
        b.iter(|| read_libsvm(&path, Some(FEATURES)).unwrap())
    });
    g.finish();
}

/// VmHWM from /proc (Linux): the process's peak resident set.
fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1e3)
}
