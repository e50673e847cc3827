//! Shared helpers for the integration tests: a small synthetic problem.
#![allow(dead_code)]

use dpca_bench::data::matrix::Block;
use dpca_bench::data::synthetic;
use dpca_bench::fed::Message;
use dpca_bench::linalg::orth;
use dpca_bench::methods::registry::Running;
use dpca_bench::problem::subspace::Reference;
use dpca_bench::seed;
use dpca_bench::seed::uniform_matrix;
use ndarray::{Array2, ArrayView2};

pub struct Small {
    pub a: Array2<f64>,
    pub reference: Reference,
    pub z0: Array2<f64>,
    pub p: usize,
}

/// A = UΣVᵀ with a geometric spectrum: n×m, p columns sought.
pub fn small(n: usize, m: usize, p: usize, xi: f64, s: u64) -> Small {
    let a = synthetic::svd_matrix(n, m, synthetic::Spectrum::Geometric { xi }, s).unwrap();
    let reference = Reference::from_gram(Block::Dense(a.view()).gram()).unwrap();
    let z0 = orth(uniform_matrix(n, p, &mut seed::rng(s, &["z0"])).view());
    Small {
        a,
        reference,
        z0,
        p,
    }
}

pub fn even_sizes(m: usize, d: usize) -> Vec<usize> {
    (0..d).map(|i| m / d + usize::from(i < m % d)).collect()
}

pub fn even_blocks(a: ArrayView2<f64>, d: usize) -> Vec<Block> {
    Block::Dense(a).split(&even_sizes(a.ncols(), d))
}

/// `name` with manifest-style `params` on `d` even clients of `s`, as the runner builds it.
pub fn method<'a>(name: &str, params: toml::Table, s: &'a Small, d: usize) -> Running<'a> {
    let start = Message::new().with("z", s.z0.clone());
    Running::named(
        name,
        &params,
        &start,
        7,
        even_blocks(s.a.view(), d),
        s.a.nrows(),
    )
    .unwrap()
}

/// Manifest-style parameters from TOML text, e.g. `params("q0 = 1")`.
pub fn params(text: &str) -> toml::Table {
    toml::from_str(text).unwrap()
}

/// The server's subspace estimate Z.
pub fn z(r: &Running) -> Array2<f64> {
    r.server.estimate().get("z").unwrap().clone()
}
