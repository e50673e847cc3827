//! The sparse-PCA family (federated sparse PCA paper): FASPCA and PCA driven as the runner drives
//! them, on the paper's planted synthetic data at small size, and the family's metrics.

use dpca_bench::data::matrix::DataMatrix;
use dpca_bench::data::spiked::spiked;
use dpca_bench::fed::{Counters, Message, Network};
use dpca_bench::linalg::{fro2, orth, sym_eig_desc};
use dpca_bench::methods::registry::Running;
use ndarray::{s, Array2};

/// The paper's generator at n features, with the given client sizes; planted loadings on
/// features 0..10 and 10..20.
fn planted(n: usize, sizes: &[usize], scale: f64) -> (DataMatrix, Array2<f64>) {
    let d = spiked(n, sizes, &[400.0, 300.0], 10, false, 11).unwrap();
    (DataMatrix::Dense(d.x * scale), d.loadings)
}

fn start(n: usize, r: usize) -> Message {
    Message::new().with("z", orth(Array2::<f64>::eye(n).slice(s![.., ..r])))
}

/// Run until `done` (or `cap` steps); the server's loadings and the steps taken.
fn run(
    name: &str,
    params: &str,
    x: &DataMatrix,
    sizes: &[usize],
    r: usize,
    cap: usize,
) -> (Array2<f64>, usize, Counters) {
    let table: toml::Table = params.parse().unwrap();
    let mut run = Running::named(
        name,
        &table,
        &start(x.n(), r),
        5,
        x.view().split(sizes),
        x.n(),
    )
    .unwrap();
    let mut steps = 0;
    while steps < cap {
        steps += 1;
        if run.step().unwrap().done {
            break;
        }
    }
    let z = run.server.estimate().get("z").unwrap().clone();
    (z, steps, run.net.counters().clone())
}

/// ‖sin Θ‖_F between span(z) and the top-k eigenvectors of XXᵀ.
fn distance_to_pca(x: &DataMatrix, z: &Array2<f64>) -> f64 {
    let eig = sym_eig_desc(x.view().gram().view()).unwrap();
    let u = eig.vectors.slice(s![.., ..z.ncols()]).to_owned();
    let q = orth(z.view());
    fro2((&q - &u.dot(&u.t().dot(&q))).view()).sqrt()
}

fn recovery(z: &Array2<f64>, v: &Array2<f64>) -> f64 {
    let q = orth(z.view());
    fro2((q.dot(&q.t()) - v.dot(&v.t())).view())
}

#[test]
fn faspca_without_sparsity_reaches_pcas_subspace() {
    // Scaled so that ρ outweighs 2yᵀy (‖X_i‖₂² ≈ 40): the consensus ADMM is then stable.
    let sizes = [100, 100, 100];
    let (x, _) = planted(40, &sizes, 0.01);
    let (z, steps, _) = run(
        "faspca",
        "lambda = 0.0\nrho = 1000.0\ntol = 1e-12\nmax_rounds_per_loading = 3000",
        &x,
        &sizes,
        2,
        6000,
    );
    assert!(steps < 6000, "FASPCA did not finish");
    let dist = distance_to_pca(&x, &z);
    assert!(dist <= 1e-6, "‖sin Θ‖ = {dist:e}");
}

#[test]
fn faspca_deflation_gives_orthonormal_loadings() {
    let sizes = [100, 100, 100];
    let (x, _) = planted(40, &sizes, 0.01);
    let (z, _, _) = run(
        "faspca",
        "lambda = 5.0\nmax_rounds_per_loading = 500",
        &x,
        &sizes,
        3,
        2000,
    );
    assert_eq!(z.ncols(), 3);
    let gram = z.t().dot(&z);
    let off = fro2((&gram - &Array2::<f64>::eye(3)).view()).sqrt();
    assert!(off <= 1e-10, "‖ZᵀZ − I‖ = {off:e}");
}

#[test]
fn faspca_recovery_error_falls_as_the_sparsity_weight_grows() {
    // The fig. 3 claim at quick size: n = 100, 300 samples, one worker.
    let sizes = [300];
    let (x, v) = planted(100, &sizes, 1.0);
    let errs: Vec<f64> = [0.0, 200.0]
        .iter()
        .map(|l| {
            let (z, _, _) = run(
                "faspca",
                &format!("lambda = {l}\nmax_rounds_per_loading = 1500"),
                &x,
                &sizes,
                2,
                3000,
            );
            recovery(&z, &v)
        })
        .collect();
    assert!(errs[1] < errs[0], "recovery errors {errs:?}");
}

#[test]
fn faspca_sends_one_loading_each_way_per_round() {
    let sizes = [50, 50, 50, 50];
    let (x, _) = planted(30, &sizes, 0.01);
    let (_, steps, c) = run(
        "faspca",
        "lambda = 1.0\nmax_rounds_per_loading = 7",
        &x,
        &sizes,
        2,
        14,
    );
    // The first loading is capped at 7 rounds; the last runs until the run's cap, 14.
    assert_eq!(steps, 14);
    let k = sizes.len() as u64;
    // Up: w_i (n×1) per client per round. Down: one broadcast of z per round, plus the finished
    // first loading once (the deflation part of round 8); a broadcast is counted once.
    assert_eq!(c.bytes_up, 14 * k * 30 * 8);
    assert_eq!(c.bytes_down, (14 + 1) * 30 * 8);
}

#[test]
fn pca_is_exact_and_one_shot() {
    let sizes = [120];
    let (x, _) = planted(30, &sizes, 1.0);
    let (z, steps, _) = run("pca", "", &x, &sizes, 2, 10);
    assert_eq!(steps, 1);
    assert!(distance_to_pca(&x, &z) < 1e-12);
}
