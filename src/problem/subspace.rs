//! The p-dimensional dominant left singular subspace of A (FAPS's problem (1)).
//!
//! The reference is exact: LAPACK's dsyevd on the n×n Gram matrix G = AAᵀ, which the harness
//! (never a method) forms once, in parallel column blocks summed in a fixed order. The same G
//! makes every per-round metric cheap: O(n²p) instead of a pass over A.

use crate::linalg::{fro2, sym_eig_desc, SymEig};
use anyhow::Result;
use ndarray::{s, Array1, Array2, ArrayView2, Axis, ShapeBuilder};
use rayon::prelude::*;
use serde::Serialize;

/// Columns of A per block of the Gram sum (fixed: defines the summation order).
const GRAM_BLOCK: usize = 4096;
const GRAM_GROUPS: usize = 8;

/// G = AAᵀ, deterministic whatever the thread count.
pub fn gram(a: ArrayView2<f64>) -> Array2<f64> {
    let n = a.nrows();
    let blocks: Vec<ArrayView2<f64>> = a.axis_chunks_iter(Axis(1), GRAM_BLOCK).collect();
    let per_group = blocks.len().div_ceil(GRAM_GROUPS).max(1);
    let partials: Vec<Array2<f64>> = blocks
        .par_chunks(per_group)
        .map(|group| {
            let mut acc = Array2::<f64>::zeros((n, n).f());
            for b in group {
                ndarray::linalg::general_mat_mul(1.0, b, &b.t(), 1.0, &mut acc);
            }
            acc
        })
        .collect();
    let mut g = Array2::<f64>::zeros((n, n).f());
    for p in &partials {
        g += p;
    }
    g
}

/// Exact solution and what the metrics need.
pub struct Reference {
    pub gram: Array2<f64>,
    /// ‖A‖²_F = tr(G).
    pub fro2: f64,
    /// All eigenpairs of G, descending (σ_i² and left singular vectors).
    pub eig: SymEig,
}

impl Reference {
    pub fn from_gram(gram: Array2<f64>) -> Result<Self> {
        let fro2 = gram.diag().sum();
        let eig = sym_eig_desc(gram.view())?;
        Ok(Self { gram, fro2, eig })
    }

    /// Exact top-p singular values σ*.
    pub fn singular_values(&self, p: usize) -> Array1<f64> {
        self.eig.values.slice(s![..p]).mapv(|v| v.max(0.0).sqrt())
    }

    /// The metrics of an estimate Z (n×p, orthonormal columns).
    pub fn metrics(&self, z: ArrayView2<f64>) -> Result<Metrics> {
        let p = z.ncols();
        let gz = self.gram.dot(&z);
        let ztgz = z.t().dot(&gz);
        // KKT: ‖(I − ZZᵀ)GZ‖_F / ‖A‖²_F.
        let kkt = fro2((&gz - &z.dot(&ztgz)).view()).sqrt() / self.fro2;
        // σ(Z) = singular values of AᵀZ = √eig(ZᵀGZ).
        let sv = sym_eig_desc(ztgz.view())?
            .values
            .mapv(|v| v.max(0.0).sqrt());
        let star = self.singular_values(p);
        let sv_err = fro2((&sv - &star).insert_axis(Axis(0)).view()).sqrt()
            / fro2(star.view().insert_axis(Axis(0))).sqrt();
        // ‖sin Θ‖_F between span(Z) and the exact subspace: ‖(I − U*U*ᵀ)Z‖_F (no cancellation,
        // unlike √(p − ‖U*ᵀZ‖²_F), which bottoms out near 1e-8).
        let ustar = self.eig.vectors.slice(s![.., ..p]);
        let subspace_dist = fro2((&z - &ustar.dot(&ustar.t().dot(&z))).view()).sqrt();
        Ok(Metrics {
            objective: ztgz.diag().sum(),
            kkt,
            sv_err,
            subspace_dist,
        })
    }
}

/// Per-round quality of an estimate, computed by the observer outside the timed section.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Metrics {
    /// f(Z) = ‖AᵀZ‖²_F.
    pub objective: f64,
    /// Scaled KKT violation ‖(I − ZZᵀ)AAᵀZ‖_F / ‖A‖²_F.
    pub kkt: f64,
    /// Relative singular-value error ‖σ(Z) − σ*‖₂ / ‖σ*‖₂.
    pub sv_err: f64,
    /// ‖sin Θ(Z, U*)‖_F.
    pub subspace_dist: f64,
}
