//! The NumPy twins of scripts/numpy_rounds.py (what `make bench` compares our rounds with) do
//! the Rust rounds' arithmetic: on a tiny instance, a few rounds of each from the same data
//! and start end at the same iterates, to 1e-8 relative (measured: FSSPCA 7e-10, its ADMM
//! and line search amplifying the different rounding of NumPy's products and QRs; FASPCA 2e-15;
//! IALM 3e-15, its SVT's Krylov started differently but converged to 1e-12).
//! Needs Python with NumPy: DPCA_BENCH_PYTHON, else `make numpy-venv`'s .venv/bin/python;
//! without either the test says so and passes.

#[path = "../../benches/suite/twin.rs"]
mod twin;

use dpca_bench::data::matrix::Block;
use dpca_bench::fed::Message;
use dpca_bench::methods::registry::Running;
use dpca_bench::problem::robust::planted;
use dpca_bench::seed::{self, uniform_matrix};
use dpca_bench::spec::Magnitude;
use ndarray::Array2;
use serde_json::json;
use std::ffi::OsString;
use twin::Twin;

const TOL: f64 = 1e-8;

fn python() -> Option<OsString> {
    let venv = std::path::Path::new(".venv/bin/python");
    std::env::var_os("DPCA_BENCH_PYTHON").or_else(|| venv.exists().then(|| venv.into()))
}

/// `rounds` rounds of `method` in Rust and in its twin from the same data and start: the
/// Rust run and the twin's final iterates `keys`.
fn both<'a>(
    x: &'a Array2<f64>,
    sizes: &[usize],
    method: &str,
    params: serde_json::Value,
    rounds: usize,
    keys: &[&str],
) -> Option<(Running<'a>, Vec<Array2<f64>>)> {
    let Some(python) = python() else {
        eprintln!("numpy_twin: no Python with NumPy (DPCA_BENCH_PYTHON, .venv): {method} skipped");
        return None;
    };
    let table: toml::Table = toml::Table::try_from(&params).unwrap();
    let start = Message::new().with("z", Array2::zeros((x.nrows(), 2)));
    let blocks = Block::Dense(x.view()).split(sizes);
    let mut run = Running::named(method, &table, &start, 7, blocks, x.nrows()).unwrap();
    let twin = Twin::new().unwrap();
    twin.put("x", x.view()).unwrap();
    if let Ok(w0) = twin::client_parts(&run, "w") {
        twin.put("w0", w0.view()).unwrap();
    }
    let config = json!({"method": method, "params": params, "sizes": sizes,
                        "warm_up": 0, "samples": rounds, "out": true});
    twin::script(&python, &twin.args(&config).unwrap(), &[]).unwrap();
    for _ in 0..rounds {
        run.step().unwrap();
    }
    Some((run, keys.iter().map(|k| twin.get(k).unwrap()).collect()))
}

fn assert_close(what: &str, ours: &Array2<f64>, numpy: &Array2<f64>) {
    let scale = ours.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let diff = (ours - numpy).iter().fold(0.0f64, |a, v| a.max(v.abs()));
    assert!(
        diff <= TOL * scale.max(1e-300),
        "{what}: max |Δ| {diff:e}, scale {scale:e}"
    );
}

/// 30 features over clients of 10, 12 (X_i applied as a factor) and 16 samples (C_i formed).
fn sparse_data() -> (Array2<f64>, Vec<usize>) {
    let x = uniform_matrix(30, 38, &mut seed::rng(5, &["twin"]));
    (dpca_bench::linalg::to_f_order(x.view()), vec![10, 12, 16])
}

#[test]
fn fsspca_twin_agrees() {
    let (x, sizes) = sparse_data();
    let params = json!({"lambda1": 0.5, "lambda2": 1.0, "rho": 100.0});
    if let Some((run, out)) = both(&x, &sizes, "fsspca", params, 6, &["w"]) {
        assert_close(
            "FSSPCA w_i",
            &twin::client_parts(&run, "w").unwrap(),
            &out[0],
        );
    };
}

#[test]
fn faspca_twin_agrees() {
    let (x, sizes) = sparse_data();
    let params = json!({"lambda": 1.0, "rho": 100.0, "tol": 0.0});
    if let Some((run, out)) = both(&x, &sizes, "faspca", params, 6, &["w"]) {
        assert_close(
            "FASPCA w_i",
            &twin::client_parts(&run, "w").unwrap(),
            &out[0],
        );
    };
}

/// IALM and APGM on a planted 120×120 M of rank 3: large enough for the SVT's Krylov path.
#[test]
fn ialm_and_apgm_twins_agree() {
    let truth = planted(
        120,
        120,
        3,
        0.05,
        Magnitude::Sign,
        &mut seed::rng(8, &["twin"]),
    )
    .unwrap();
    let m = dpca_bench::linalg::to_f_order((&truth.l0 + &truth.s0).view());
    for (method, rounds) in [("ialm", 8), ("apgm", 25)] {
        let Some((run, out)) = both(&m, &[120], method, json!({}), rounds, &["l", "s"]) else {
            return;
        };
        let r = &run.net.reveal()[0];
        let l = r.get("u").unwrap().dot(&r.get("v").unwrap().t());
        assert!(
            l.iter().any(|v| *v != 0.0),
            "{method}: L still 0 after {rounds} rounds"
        );
        assert_close(&format!("{method} L"), &l, &out[0]);
        assert_close(&format!("{method} S"), r.get("s").unwrap(), &out[1]);
    }
}
