//! Top eigenpairs of a large symmetric positive semi-definite operator G (G = AAᵀ when the n×n
//! matrix is too big to form) by restarted block Krylov iteration: Rayleigh–Ritz on
//! span[V, GV, …, GˢV], restarted from the best b Ritz vectors, until every wanted Ritz pair
//! has residual ‖Gu − θu‖ ≤ tol·θ₁.
//!
//! Only products with G are needed, so sparse data is never densified. For a Ritz pair with
//! residual r, the eigenvalue is off by at most r²/gap and the vector by r/gap (Davis–Kahan).

use super::{orth, sym_eig_desc};
use anyhow::{bail, Result};
use ndarray::{concatenate, s, Array1, Array2, ArrayView2, Axis};

/// Relative residual ‖Gu − θu‖/θ₁ to which references and local solves converge: an eigenvalue
/// then errs by ~1e-24·θ₁²/gap, a vector by 1e-12·θ₁/gap.
pub const KRYLOV_TOL: f64 = 1e-12;

/// Settings of [`top_eigs`].
#[derive(Clone, Copy, Debug)]
pub struct KrylovOptions {
    /// Krylov steps s per restart: the basis has b·(s+1) columns.
    pub steps: usize,
    /// Converged when every wanted residual is ≤ tol·θ₁.
    pub tol: f64,
    pub max_restarts: usize,
}

/// The wanted eigenpairs, descending, and how they were obtained.
#[derive(Clone, Debug)]
pub struct TopEig {
    pub values: Array1<f64>,
    pub vectors: Array2<f64>,
    /// Largest residual ‖Gu − θu‖ / θ₁ of the returned pairs.
    pub residual: f64,
    pub restarts: usize,
    /// Products with G, counted in blocks of b columns.
    pub products: usize,
}

/// The `k` largest eigenpairs of the n×n operator `apply` (X ↦ GX), from the n×b start `start`:
/// b ≥ k is the block size (extra columns speed convergence).
pub fn top_eigs(
    k: usize,
    apply: impl Fn(ArrayView2<f64>) -> Array2<f64>,
    start: ArrayView2<f64>,
    opts: KrylovOptions,
) -> Result<TopEig> {
    let (n, b) = start.dim();
    if k == 0 || k > b || 2 * b > n {
        bail!("block Krylov needs 1 <= k <= block <= n/2, got k = {k}, block = {b}, n = {n}");
    }
    // Never more basis vectors than the space has.
    let steps = opts.steps.clamp(1, n / b - 1);
    let mut v = orth(start);
    let mut gv = apply(v.view());
    let mut products = 1;
    let mut residual = f64::INFINITY;
    for restart in 1..=opts.max_restarts {
        // Q = [V, K₁, …, K_s] orthonormal, GQ alongside; GV is carried over from the last restart.
        let mut q = v;
        let mut gq = gv;
        for _ in 0..steps {
            let next = orthogonal_complement(q.view(), gq.slice(s![.., gq.ncols() - b..]));
            let g_next = apply(next.view());
            products += 1;
            q = concatenate![Axis(1), q, next];
            gq = concatenate![Axis(1), gq, g_next];
        }
        // Rayleigh–Ritz: T = QᵀGQ, symmetrised against rounding.
        let t = q.t().dot(&gq);
        let t = (&t + &t.t()) * 0.5;
        let eig = sym_eig_desc(t.view())?;
        let y = eig.vectors.slice(s![.., ..b]);
        let u = q.dot(&y);
        let gu = gq.dot(&y);
        let theta = eig.values.slice(s![..b]);
        let scale = theta[0].abs().max(f64::MIN_POSITIVE);
        residual = (0..k)
            .map(|j| {
                let r = &gu.column(j) - &(&u.column(j) * theta[j]);
                r.dot(&r).sqrt() / scale
            })
            .fold(0.0, f64::max);
        if residual <= opts.tol {
            return Ok(TopEig {
                values: theta.slice(s![..k]).to_owned(),
                vectors: u.slice(s![.., ..k]).to_owned(),
                residual,
                restarts: restart,
                products,
            });
        }
        // Restart from the b best Ritz vectors (orthonormal up to rounding), keeping G·U.
        v = u;
        gv = gu;
    }
    bail!(
        "block Krylov did not converge: residual {residual:.2e} > {:.0e} after {} restarts",
        opts.tol,
        opts.max_restarts
    )
}

/// An orthonormal basis of the part of span(W) orthogonal to the orthonormal Q: two passes of
/// block Gram–Schmidt, orthonormalise, then one more pass, so that directions W barely adds
/// (rounding noise once the Krylov space is exhausted) are still orthogonal to Q.
fn orthogonal_complement(q: ArrayView2<f64>, w: ArrayView2<f64>) -> Array2<f64> {
    let project = |x: Array2<f64>| &x - &q.dot(&q.t().dot(&x));
    let w = project(project(w.to_owned()));
    let w = orth(w.view());
    orth(project(w).view())
}
