//! Shared helpers for the integration tests: a small synthetic problem.
#![allow(dead_code)]

use dpca_bench::data::matrix::Block;
use dpca_bench::data::{synthetic, uniform_matrix};
use dpca_bench::linalg::orth;
use dpca_bench::methods::Setup;
use dpca_bench::problem::subspace::Reference;
use dpca_bench::seed;
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

pub fn setup<'a>(s: &'a Small, d: usize) -> Setup<'a> {
    Setup {
        blocks: even_blocks(s.a.view(), d),
        p: s.p,
        z0: s.z0.clone(),
        seed: 7,
        watch: None,
    }
}
