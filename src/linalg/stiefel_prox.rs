//! The ManPG proximal subproblem on the Stiefel manifold, solved by semismooth Newton (SSN) on
//! its dual (Chen, Ma, So & Zhang, "Proximal gradient method for nonsmooth optimization over the
//! Stiefel manifold", SIAM J. Optim. 30(1), 2020, §4.2; MATLAB code github.com/chenshixiang/ManPG,
//! `manpg_code_share/SSN_subproblem/Semi_newton_matrix.m`).
//!
//! # Problem
//! At a point Z (n×p, ZᵀZ = I) with Euclidean gradient G, step t > 0 and weight μ ≥ 0, ManPG's
//! search direction is
//!
//! ```text
//! D* = argmin ⟨G, D⟩ + ‖D‖²_F / (2t) + μ‖Z + D‖₁   subject to   ZᵀD + DᵀZ = 0,
//! ```
//!
//! a strongly convex problem over the tangent space T_Z = {D : ZᵀD skew}.
//!
//! # Dual
//! With a symmetric multiplier Λ for the constraint, ⟨Λ, ZᵀD + DᵀZ⟩ = 2⟨ZΛ, D⟩ and the KKT
//! condition reads 0 ∈ G + D/t + μ ∂‖Z + D‖₁ − 2ZΛ, i.e. Y = Z + D is the soft threshold
//!
//! ```text
//! Y(Λ) = S_{tμ}(C),   C = B + 2tZΛ,   B = Z − tG,   S_τ(x) = sign(x)·max(|x| − τ, 0),
//! ```
//!
//! and Λ* is the root of E(Λ) = ZᵀD(Λ) + D(Λ)ᵀZ with D(Λ) = Y(Λ) − Z. For ZᵀZ = I this is the
//! authors' Y(Λ)ᵀZ + ZᵀY(Λ) − 2I; the scaling (B + 2tXΛ, prox weight μt) is theirs, checked
//! against `Semi_newton_matrix.m` and its caller `SPCA/manpg_orth_sparse.m`. We evaluate the
//! tangency form Zᵀ(Y − Z): it avoids cancelling O(1) terms when D is small, and ‖E‖ ≤ tol is then
//! exactly the tangency of the returned D even when Z is orthonormal only to rounding.
//!
//! E is the gradient (in the Frobenius inner product on symmetric matrices) of the convex dual
//! merit, minus the Lagrange dual function,
//!
//! ```text
//! φ(Λ) = Σ_ij (z_ij − c_ij)²/(2t) − h(c_ij),   h(c) = min_y (y − c)²/(2t) + μ|y|  (Huber),
//! ```
//!
//! so E is monotone and semismooth and Λ* minimises φ.
//!
//! # Generalized Jacobian
//! Let a_ij = [|c_ij| > tμ] be the soft threshold's active set (the element of the Clarke
//! Jacobian with slope 0 at the kinks, as the authors' `misc/proximal_l1.m`). Then
//! dY = a ⊙ (2tZ dΛ) and
//!
//! ```text
//! J(dΛ) = 2t (K + Kᵀ),   K_{:,j} = M_j dΛ_{:,j},   M_j = Zᵀ diag(a_{:,j}) Z   (p×p, PSD).
//! ```
//!
//! Newton solves (J + reg) dΛ = −E over symmetric dΛ, written in the p(p+1)/2 coordinates of the
//! basis E_ik = e_i e_kᵀ + e_k e_iᵀ (i < k), E_ii = e_i e_iᵀ with Frobenius inner products against
//! the basis (Galerkin): a symmetric positive definite matrix, solved by Cholesky. It is the
//! authors' system (4t·pDn·g·Dn + reg·I) s = −vech(E) — Dn the duplication matrix,
//! pDn = (DnᵀDn)⁻¹Dnᵀ, g = blkdiag(M_j), solved there by LU — multiplied on the left by DnᵀDn,
//! so the solution is the same; their CG branch (p ≥ 15) applies the operator 2t(K + Kᵀ) + reg·dΛ.
//!
//! # Cost
//! M_j = Z_Aᵀ Z_A over the active rows A of column j, or ZᵀZ − Z_Iᵀ Z_I over the inactive rows,
//! whichever is smaller (the authors' `sum(ind) < n/2` rule): O(p² Σ_j min(|A_j|, n − |A_j|)),
//! at most n p³/2 and 0 for μ = 0. Everything else is O(n p²) per Newton step (Z·dΛ, Zᵀ·D; the
//! line search costs O(n p) per trial), plus O(p³) to assemble the p(p+1)/2 system and
//! O(p⁶/24) for its Cholesky factorisation (≈ 40 ms at p = 50, single-threaded OpenBLAS).
//!
//! # Constants and rules
//! From `Semi_newton_matrix.m`:
//! * the regularisation weight 0.2·max(min(‖E‖_F, 0.1), 1e-11) (`lambda = 0.2;
//!   reg = lambda*max(min(r_l,0.1),1e-11)`), which vanishes with the residual so the local
//!   superlinear rate is kept, and keeps the matrix nonsingular when a column has fewer than p
//!   active entries (M_j singular);
//! * at most 100 Newton iterations (`option.inner_iter = 100` in the SPCA demo; the reference then
//!   flags the solve as inexact and continues — we return an error).
//!
//! Deliberate departures, both for robustness across scales:
//! * the reference adds reg·I in absolute units; we scale it by 4t, the norm of J when every
//!   entry is active (identical at t = 1/4). The solution D is invariant under
//!   (G, t, μ) → (cG, t/c, cμ) and so are our iterates; with the absolute shift the iteration
//!   count grows as t shrinks (20 instead of 4 at t = 1e-3 on n = 500, p = 5; no convergence in
//!   100 at t = 1e-4);
//! * the reference backtracks on ‖E‖² (unit step, halved while ‖E_new‖² ≥ (1 − 0.001·s)‖E‖² and
//!   s > 1e-3, last trial taken regardless), which stalls when the threshold zeroes whole
//!   columns of Y (E is then locally constant, e.g. a cold start with tμ > max|B|). We backtrack
//!   on φ with Armijo constant 1e-4 instead, the standard globalisation of SSN on a convex dual
//!   (Zhao, Sun & Toh 2010; Li, Sun & Toh 2018). φ's change is summed termwise from the change of
//!   C, so the test stays meaningful down to ‖E‖ ≈ 1e-15.
//!
//! The reference stops on ‖E‖²_F ≤ inner_tol = max(1e-13, min(1e-11, 1e-3·tol·t²)) (tol the outer
//! tolerance); here the caller gives the tolerance on ‖E‖_F directly.

use anyhow::{bail, ensure, Result};
use ndarray::{Array1, Array2, ArrayView2, Axis, ShapeBuilder, Zip};
use ndarray_linalg::{Solve, SolveC};

use super::fro2;
use super::prox::shrink;

/// reg = 4t · REG_WEIGHT · clamp(‖E‖_F, REG_FLOOR, REG_CAP) (see the module doc).
const REG_WEIGHT: f64 = 0.2;
const REG_CAP: f64 = 0.1;
const REG_FLOOR: f64 = 1e-11;
/// Armijo constant of the line search on the dual merit: φ(Λ + s dΛ) ≤ φ(Λ) + ARMIJO·s·⟨E, dΛ⟩.
const ARMIJO: f64 = 1e-4;
/// Step halvings before the line search gives up (s = 2⁻³⁰).
const MAX_HALVINGS: usize = 30;
/// A line search that fails within this factor of the tolerance ends the solve (see below).
const STALL_FACTOR: f64 = 1e4;
/// Newton iteration cap (the reference's `option.inner_iter`).
const MAX_NEWTON_ITERATIONS: usize = 100;

/// Solution of the subproblem.
#[derive(Debug, Clone)]
pub struct ProxStep {
    /// The tangent step D (n×p): Z + D = Y(Λ*).
    pub d: Array2<f64>,
    /// The multiplier Λ* (p×p symmetric), to warm-start the next call.
    pub lambda: Array2<f64>,
    /// Newton iterations taken.
    pub iterations: usize,
}

/// Solve the subproblem to ‖E(Λ)‖_F ≤ tol·max(1, ‖Z − tG‖_F/‖Z‖_F) (tol e.g. 1e-12; the factor
/// is E's rounding scale); return an anyhow error, never panic, if it does not converge within
/// a cap of iterations, saying so. A line search that stalls within `STALL_FACTOR`·tol returns
/// the step reached.
///
/// `warm` is a previous Λ (symmetrised before use); `None` starts from Λ = 0. Z need not be
/// exactly orthonormal: the returned D satisfies ‖ZᵀD + DᵀZ‖_F ≤ tol for the Z given. Since E
/// is computed in floating point, a tol below its rounding level (≈ 1e-16·‖Z‖‖D‖·√n) cannot be
/// reached and ends in the non-convergence error.
pub fn stiefel_prox(
    z: ArrayView2<f64>,
    g: ArrayView2<f64>,
    t: f64,
    mu: f64,
    warm: Option<ArrayView2<f64>>,
    tol: f64,
) -> Result<ProxStep> {
    let (n, p) = z.dim();
    ensure!(
        g.dim() == (n, p),
        "stiefel_prox: G is {:?}, Z is {:?}",
        g.dim(),
        (n, p)
    );
    ensure!(
        t > 0.0 && t.is_finite(),
        "stiefel_prox: step t = {t} must be positive and finite"
    );
    ensure!(
        mu >= 0.0 && mu.is_finite(),
        "stiefel_prox: weight μ = {mu} must be ≥ 0 and finite"
    );
    ensure!(tol > 0.0, "stiefel_prox: tolerance {tol} must be positive");
    ensure!(
        z.iter().chain(g.iter()).all(|v| v.is_finite()),
        "stiefel_prox: Z or G has non-finite entries"
    );
    let mut lambda = match warm {
        Some(w) => {
            ensure!(
                w.dim() == (p, p),
                "stiefel_prox: warm start Λ is {:?}, expected {:?}",
                w.dim(),
                (p, p)
            );
            ensure!(
                w.iter().all(|v| v.is_finite()),
                "stiefel_prox: warm start Λ has non-finite entries"
            );
            (&w + &w.t()) * 0.5
        }
        None => Array2::zeros((p, p)),
    };

    let tau = t * mu;
    let b = &z - &(&g * t);
    // E is computed from C ≈ B, so its rounding level grows with ‖B‖ against ‖Z‖ (a step t
    // large against the gradient's scale): the tolerance is relative to that ratio.
    let tol = tol * (fro2(b.view()) / fro2(z)).sqrt().max(1.0);
    // C = B + 2tZΛ, updated along Newton directions rather than recomputed from Λ.
    let mut c = b + &(z.dot(&lambda) * (2.0 * t));
    let mut current = Residual::at(z, &c, tau);
    // ZᵀZ: the base of the complement form of M_j.
    let gram = z.t().dot(&z);

    let mut iterations = 0;
    'newton: while current.norm > tol {
        if iterations == MAX_NEWTON_ITERATIONS {
            bail!(
                "stiefel_prox: semismooth Newton did not converge in {MAX_NEWTON_ITERATIONS} \
                 iterations: ‖E‖_F = {:.3e} > tol = {tol:.3e} \
                 (n = {n}, p = {p}, t = {t:.3e}, μ = {mu:.3e})",
                current.norm
            );
        }
        iterations += 1;

        // In units of 4t, the scale of J, so the iteration is invariant to rescaling f.
        let reg = 4.0 * t * REG_WEIGHT * current.norm.clamp(REG_FLOOR, REG_CAP);
        let h = newton_matrix(z, &c, tau, &gram, t, reg);
        let rhs = -pair_inner(&current.e);
        // SPD in exact arithmetic; the LU fallback only guards against rounding when reg is tiny.
        let s = match h.solvec(&rhs) {
            Ok(s) => s,
            Err(_) => h.solve(&rhs)?,
        };
        let dlambda = unpack_sym(&s, p);
        // The change of C per unit step.
        let direction = z.dot(&dlambda) * (2.0 * t);

        // Armijo backtracking on the convex dual merit φ (∇φ = E), whose slope along the
        // direction is ⟨E, dΛ⟩ = −sᵀHs < 0. (The reference backtracks on ‖E‖² instead, which
        // stalls where the soft threshold zeroes whole columns: there E is locally constant.)
        let slope: f64 = (&current.e * &dlambda).sum();
        let mut step = 1.0;
        let mut halvings = 0;
        loop {
            let delta = &direction * step;
            let trial = &c + &delta;
            // Near the solution φ's decrease (≈ ‖E‖²) sinks below its rounding while ‖E‖ can still
            // be measured: then a step that shrinks ‖E‖ (the reference's test) is taken instead.
            let accepted = if merit_change(z, &c, &delta, t, tau) <= ARMIJO * step * slope {
                Some(Residual::at(z, &trial, tau))
            } else {
                let r = Residual::at(z, &trial, tau);
                (r.norm <= (1.0 - ARMIJO * step) * current.norm).then_some(r)
            };
            if let Some(r) = accepted {
                c = trial;
                lambda.scaled_add(step, &dlambda);
                current = r;
                break;
            }
            if halvings == MAX_HALVINGS {
                // At a kink of the soft threshold the generalised Jacobian can give a direction
                // along which neither φ nor ‖E‖ falls measurably (seen at ‖E‖ = 3e-10, DSSAL1's
                // server, n = 500, p = 5, μ = 0.01). Close to tol the step is as good as solved:
                // D is then tangent to within ‖E‖, which the retraction absorbs.
                if current.norm <= STALL_FACTOR * tol {
                    break 'newton;
                }
                bail!(
                    "stiefel_prox: semismooth Newton did not converge: line search failed after \
                     {iterations} iterations at ‖E‖_F = {:.3e} > tol = {tol:.3e} (tolerance below \
                     the rounding level?) (n = {n}, p = {p}, t = {t:.3e}, μ = {mu:.3e})",
                    current.norm
                );
            }
            step *= 0.5;
            halvings += 1;
        }
    }
    Ok(ProxStep {
        d: current.d,
        lambda,
        iterations,
    })
}

/// φ(C + Δ) − φ(C) for the convex dual merit φ = Σ_ij f(z_ij, c_ij), f(z, c) = (z − c)²/(2t) −
/// huber(c) (∇_Λ φ = E), summed termwise from Δ so it stays accurate for tiny changes.
fn merit_change(z: ArrayView2<f64>, c: &Array2<f64>, delta: &Array2<f64>, t: f64, tau: f64) -> f64 {
    let mu = tau / t;
    let f = |z: f64, c: f64| {
        if c.abs() > tau {
            (z - c).powi(2) / (2.0 * t) - mu * c.abs() + 0.5 * tau * mu
        } else {
            z * (z - 2.0 * c) / (2.0 * t)
        }
    };
    Zip::from(z)
        .and(c)
        .and(delta)
        .fold(0.0, |acc, &z, &c, &dl| {
            let c2 = c + dl;
            acc + match (c.abs() > tau, c2.abs() > tau) {
                (false, false) => -z * dl / t,
                (true, true) if c.signum() == c2.signum() => {
                    dl * (dl - 2.0 * (z - c)) / (2.0 * t) - mu * c.signum() * dl
                }
                _ => f(z, c2) - f(z, c),
            }
        })
}

/// D = S_τ(C) − Z and E = ZᵀD + DᵀZ with its Frobenius norm.
struct Residual {
    d: Array2<f64>,
    e: Array2<f64>,
    norm: f64,
}

impl Residual {
    fn at(z: ArrayView2<f64>, c: &Array2<f64>, tau: f64) -> Self {
        let mut d = c.mapv(|v| shrink(v, tau));
        d -= &z;
        let ztd = z.t().dot(&d);
        let e = &ztd + &ztd.t();
        let norm = e.iter().map(|v| v * v).sum::<f64>().sqrt();
        Residual { d, e, norm }
    }
}

/// Index of the pair (i, k), i ≤ k, in the packed (vech) coordinates: column by column of the
/// upper triangle.
fn pair(i: usize, k: usize) -> usize {
    debug_assert!(i <= k);
    k * (k + 1) / 2 + i
}

/// The (row, column) entries equal to 1 in the basis matrix E_ik.
fn basis_terms(i: usize, k: usize) -> impl Iterator<Item = (usize, usize)> {
    std::iter::once((i, k)).chain((i != k).then_some((k, i)))
}

/// All pairs i ≤ k in packed order.
fn pairs(p: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..p).flat_map(|k| (0..=k).map(move |i| (i, k)))
}

/// The symmetric matrix Σ_a s_a E_a.
fn unpack_sym(s: &Array1<f64>, p: usize) -> Array2<f64> {
    let mut a = Array2::zeros((p, p));
    for (idx, (i, k)) in pairs(p).enumerate() {
        a[[i, k]] = s[idx];
        a[[k, i]] = s[idx];
    }
    a
}

/// (⟨E_a, X⟩_F)_a for a p×p matrix X.
fn pair_inner(x: &Array2<f64>) -> Array1<f64> {
    pairs(x.nrows())
        .map(|(i, k)| basis_terms(i, k).map(|rc| x[rc]).sum())
        .collect()
}

/// The Galerkin matrix H_ab = ⟨E_a, J(E_b)⟩ + reg⟨E_a, E_b⟩ of the regularised generalized
/// Jacobian at C = B + 2tZΛ, column-major for LAPACK. `gram` is ZᵀZ.
fn newton_matrix(
    z: ArrayView2<f64>,
    c: &Array2<f64>,
    tau: f64,
    gram: &Array2<f64>,
    t: f64,
    reg: f64,
) -> Array2<f64> {
    let p = z.ncols();
    // M_j = Z_Aᵀ Z_A over the active rows A of column j, or ZᵀZ − Z_Iᵀ Z_I over the inactive
    // ones, whichever set is smaller (the reference's `sum(ind) < n/2` rule).
    let m: Vec<Array2<f64>> = c
        .columns()
        .into_iter()
        .map(|col| {
            let (active, inactive): (Vec<usize>, Vec<usize>) =
                (0..col.len()).partition(|&i| col[i].abs() > tau);
            if active.len() <= inactive.len() {
                let za = z.select(Axis(0), &active);
                za.t().dot(&za)
            } else {
                let zi = z.select(Axis(0), &inactive);
                gram - &zi.t().dot(&zi)
            }
        })
        .collect();

    // ⟨E_a, 2t(K + Kᵀ)⟩ = 4t⟨E_a, K⟩ = 4t Σ_{(r,j) ∈ E_a} Σ_r2 (M_j)_{r,r2} dΛ_{r2,j}, and the
    // basis element with an entry at (r2, j) is the pair {r2, j}: O(p) entries per term, O(p³) in
    // all. H is symmetric, so row a is written as column a (contiguous in column-major).
    let npair = p * (p + 1) / 2;
    let mut h = Array2::zeros((npair, npair).f());
    for (a, (i, k)) in pairs(p).enumerate() {
        let mut weight = 0.0;
        for (r, j) in basis_terms(i, k) {
            weight += 1.0;
            for r2 in 0..p {
                h[[pair(r2.min(j), r2.max(j)), a]] += 4.0 * t * m[j][[r, r2]];
            }
        }
        h[[a, a]] += reg * weight;
    }
    h
}

#[cfg(test)]
mod tests {
    use super::super::manifold::{stiefel_project, stiefel_retract_polar};
    use super::super::orth;
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use rand_distr::StandardNormal;

    fn normal(rng: &mut ChaCha8Rng, n: usize, p: usize) -> Array2<f64> {
        Array2::from_shape_simple_fn((n, p), || rng.sample::<f64, _>(StandardNormal))
    }

    fn fro(a: &Array2<f64>) -> f64 {
        a.iter().map(|v| v * v).sum::<f64>().sqrt()
    }

    fn max_abs(a: &Array2<f64>) -> f64 {
        a.iter().fold(0.0, |m, v| m.max(v.abs()))
    }

    /// The subproblem's objective ⟨G, D⟩ + ‖D‖²/(2t) + μ‖Z + D‖₁.
    fn objective(z: &Array2<f64>, g: &Array2<f64>, t: f64, mu: f64, d: &Array2<f64>) -> f64 {
        let l1: f64 = (z + d).iter().map(|v| v.abs()).sum();
        (g * d).sum() + fro(d).powi(2) / (2.0 * t) + mu * l1
    }

    /// ‖ZᵀD + DᵀZ‖_F.
    fn tangency(z: &Array2<f64>, d: &Array2<f64>) -> f64 {
        let c = z.t().dot(d);
        fro(&(&c + &c.t()))
    }

    /// Largest violation of the KKT inclusion −(tG + D − 2tZΛ) ∈ tμ ∂‖Z + D‖₁ (scaled by t so it
    /// is in the units of D): |W_ij + tμ sign(Y_ij)| where Y_ij ≠ 0, (|W_ij| − tμ)₊ where Y_ij = 0.
    fn kkt_violation(z: &Array2<f64>, g: &Array2<f64>, t: f64, mu: f64, step: &ProxStep) -> f64 {
        let lam = &step.lambda;
        assert!(max_abs(&(lam - &lam.t())) == 0.0, "Λ not symmetric");
        let w = g * t + &step.d - &(z.dot(lam) * (2.0 * t));
        let y = z + &step.d;
        let mut worst: f64 = 0.0;
        for (wv, yv) in w.iter().zip(y.iter()) {
            let v = if *yv != 0.0 {
                (wv + t * mu * yv.signum()).abs()
            } else {
                (wv.abs() - t * mu).max(0.0)
            };
            worst = worst.max(v);
        }
        worst
    }

    /// Slow independent reference: scaled ADMM on min ⟨G,D⟩ + ‖D‖²/(2t) + ι_T(D) + μ‖W‖₁ s.t.
    /// D + Z − W = 0. The D-step is the projection onto T of an isotropic quadratic's minimiser,
    /// the W-step a soft threshold; run until both residuals are at rounding level.
    fn admm_reference(z: &Array2<f64>, g: &Array2<f64>, t: f64, mu: f64) -> Array2<f64> {
        let rho = 1.0 / t;
        let mut w = z.clone();
        let mut u = Array2::zeros(z.raw_dim());
        for _ in 0..2_000_000 {
            let v = &w - z - &u;
            let d = stiefel_project(z.view(), ((&v * rho - g) / (1.0 / t + rho)).view());
            let w_old = w.clone();
            w = (&d + z + &u).mapv(|x| shrink(x, mu / rho));
            let primal = &d + z - &w;
            u += &primal;
            if max_abs(&primal) < 1e-15 && max_abs(&(&w - &w_old)) < 1e-15 {
                return d;
            }
        }
        panic!("ADMM reference did not converge");
    }

    fn random_point(rng: &mut ChaCha8Rng, n: usize, p: usize) -> Array2<f64> {
        orth(normal(rng, n, p).view())
    }

    #[test]
    fn optimality_conditions_hold() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        for &(n, p, t, mu) in &[
            (40, 3, 0.5, 0.3),
            (200, 5, 0.05, 2.0),
            (100, 8, 1.0, 0.05),
            (30, 1, 0.2, 1.0),
        ] {
            let z = random_point(&mut rng, n, p);
            let g = normal(&mut rng, n, p);
            let step = stiefel_prox(z.view(), g.view(), t, mu, None, 1e-12).unwrap();
            assert!(
                tangency(&z, &step.d) <= 1e-12,
                "tangency {}",
                tangency(&z, &step.d)
            );
            let kkt = kkt_violation(&z, &g, t, mu, &step);
            assert!(
                kkt <= 1e-10,
                "(n, p, t, μ) = {:?}: KKT violation {kkt}",
                (n, p, t, mu)
            );
            // Independent of Λ: no tangent perturbation lowers the (convex) objective.
            let f0 = objective(&z, &g, t, mu, &step.d);
            for _ in 0..20 {
                let v = stiefel_project(z.view(), normal(&mut rng, n, p).view());
                for eps in [1e-3, 1e-5] {
                    let f = objective(&z, &g, t, mu, &(&step.d + &(&v * eps)));
                    assert!(
                        f >= f0 - 1e-12 * f0.abs().max(1.0),
                        "descent along a tangent"
                    );
                }
            }
        }
    }

    #[test]
    fn a_large_step_meets_a_tolerance_relative_to_its_scale() {
        // DSSAL1's server passes G = QZ with ‖Q‖ up to Σβ_i: t‖G‖ ≫ 1 puts E's rounding level
        // far above an absolute 1e-12, where Newton stalls (it failed so at t‖G‖ ≈ 2e4).
        let mut rng = ChaCha8Rng::seed_from_u64(18);
        let (n, p, mu) = (200, 5, 0.01);
        let z = random_point(&mut rng, n, p);
        let g = normal(&mut rng, n, p) * 1e3 - &(&z * 1e4);
        for t in [1.0, 30.0] {
            let step = stiefel_prox(z.view(), g.view(), t, mu, None, 1e-12).unwrap();
            let scale = (fro2((&z - &(&g * t)).view()) / p as f64).sqrt();
            assert!(tangency(&z, &step.d) <= 1e-12 * scale, "t = {t}");
            let kkt = kkt_violation(&z, &g, t, mu, &step);
            assert!(kkt <= 1e-10 * scale, "t = {t}: KKT violation {kkt}");
        }
    }

    #[test]
    fn matches_closed_form_without_penalty() {
        let mut rng = ChaCha8Rng::seed_from_u64(12);
        for &(n, p, t) in &[(10, 1, 0.3), (50, 4, 0.02), (300, 10, 2.0)] {
            let z = random_point(&mut rng, n, p);
            let g = normal(&mut rng, n, p) * 5.0;
            let step = stiefel_prox(z.view(), g.view(), t, 0.0, None, 1e-12).unwrap();
            let expected = stiefel_project(z.view(), g.view()) * -t;
            let err = fro(&(&step.d - &expected)) / fro(&expected);
            assert!(err < 1e-12, "(n, p) = {:?}: relative error {err}", (n, p));
            // Λ* = sym(ZᵀG)/2 for μ = 0.
            let c = z.t().dot(&g);
            let lam = (&c + &c.t()) * 0.25;
            assert!(max_abs(&(&step.lambda - &lam)) < 1e-10 * max_abs(&lam));
        }
    }

    #[test]
    fn matches_admm_reference() {
        let mut rng = ChaCha8Rng::seed_from_u64(13);
        for n in [6, 9, 12] {
            for p in 1..=3 {
                for mu in [0.0, 0.1, 0.5, 1.5] {
                    let t = rng.random_range(0.1..1.0);
                    let z = random_point(&mut rng, n, p);
                    let g = normal(&mut rng, n, p);
                    let step = stiefel_prox(z.view(), g.view(), t, mu, None, 1e-12).unwrap();
                    let reference = admm_reference(&z, &g, t, mu);
                    let err = fro(&(&step.d - &reference)) / fro(&reference).max(1e-3);
                    assert!(
                        err < 1e-6,
                        "(n, p, μ) = {:?}: relative difference {err}",
                        (n, p, mu)
                    );
                }
            }
        }
    }

    #[test]
    fn warm_start_from_solution_is_immediate() {
        let mut rng = ChaCha8Rng::seed_from_u64(14);
        let (n, p, t, mu) = (120, 4, 0.3, 0.4);
        let z = random_point(&mut rng, n, p);
        let g = normal(&mut rng, n, p);
        let cold = stiefel_prox(z.view(), g.view(), t, mu, None, 1e-12).unwrap();
        assert!(
            cold.iterations >= 2,
            "cold start took {} iterations",
            cold.iterations
        );
        let warm =
            stiefel_prox(z.view(), g.view(), t, mu, Some(cold.lambda.view()), 1e-12).unwrap();
        assert!(
            warm.iterations <= 1,
            "warm start took {} iterations",
            warm.iterations
        );
        assert!(max_abs(&(&warm.d - &cold.d)) < 1e-10);
        // A nearby problem (the next outer iterate's) also gains from the warm start.
        let g2 = &g + &(normal(&mut rng, n, p) * 1e-4);
        let cold2 = stiefel_prox(z.view(), g2.view(), t, mu, None, 1e-12).unwrap();
        let warm2 =
            stiefel_prox(z.view(), g2.view(), t, mu, Some(cold.lambda.view()), 1e-12).unwrap();
        assert!(
            warm2.iterations < cold2.iterations,
            "{} vs {}",
            warm2.iterations,
            cold2.iterations
        );
        assert!(max_abs(&(&warm2.d - &cold2.d)) < 1e-10);
    }

    #[test]
    fn heavy_thresholding() {
        // Most of Z + D thresholded, and in the last cases some column keeps fewer than p
        // nonzeros, so its M_j is singular near the solution and only reg keeps H invertible.
        let mut rng = ChaCha8Rng::seed_from_u64(15);
        let t = 0.2;
        let mut singular_seen = false;
        for &(n, p, mu) in &[
            (300, 6, 5.0),
            (60, 4, 5.0),
            (500, 5, 20.0),
            (300, 8, 50.0),
            (60, 4, 20.0),
        ] {
            let z = random_point(&mut rng, n, p);
            let g = normal(&mut rng, n, p);
            let step = stiefel_prox(z.view(), g.view(), t, mu, None, 1e-12).unwrap();
            let y = &z + &step.d;
            let zeros = y.iter().filter(|v| **v == 0.0).count() as f64 / (n * p) as f64;
            assert!(
                zeros > 0.75,
                "only {zeros} of Z + D thresholded: case not hard"
            );
            let min_nnz = y
                .columns()
                .into_iter()
                .map(|c| c.iter().filter(|v| **v != 0.0).count())
                .min();
            singular_seen |= min_nnz.unwrap() < p;
            assert!(tangency(&z, &step.d) <= 1e-12);
            assert!(kkt_violation(&z, &g, t, mu, &step) <= 1e-10);
            if n <= 60 {
                let reference = admm_reference(&z, &g, t, mu);
                let err = fro(&(&step.d - &reference)) / fro(&reference);
                assert!(
                    err < 1e-6,
                    "(n, p, μ) = {:?}: relative difference to ADMM {err}",
                    (n, p, mu)
                );
            }
        }
        assert!(singular_seen, "no case with a column sparser than p");
    }

    #[test]
    fn flat_cold_start() {
        // tμ > max|B|: at Λ = 0 every entry is thresholded, Y = 0 and E = −2ZᵀZ is locally
        // constant, so a line search on ‖E‖² (the reference's) finds no decrease and crawls
        // (it failed to converge in 100 iterations here); the one on the dual merit φ must not.
        let mut rng = ChaCha8Rng::seed_from_u64(19);
        let (n, p, t, mu) = (60, 4, 0.2, 50.0);
        let z = random_point(&mut rng, n, p);
        let g = normal(&mut rng, n, p);
        assert!(max_abs(&(&z - &(&g * t))) < t * mu, "not a flat start");
        let step = stiefel_prox(z.view(), g.view(), t, mu, None, 1e-12).unwrap();
        assert!(tangency(&z, &step.d) <= 1e-12);
        assert!(kkt_violation(&z, &g, t, mu, &step) <= 1e-10);
        let reference = admm_reference(&z, &g, t, mu);
        let err = fro(&(&step.d - &reference)) / fro(&reference);
        assert!(err < 1e-6, "relative difference to ADMM {err}");
    }

    #[test]
    fn newton_matrix_matches_operator() {
        // H s must equal (⟨E_a, 2t(K + Kᵀ) + reg·X⟩)_a for X = unpack(s), with M_j formed
        // directly as Zᵀ diag(a_j) Z; check both the direct and the complement summation.
        let mut rng = ChaCha8Rng::seed_from_u64(16);
        let (n, p, t, reg) = (40, 4, 0.7, 0.03);
        let z = random_point(&mut rng, n, p);
        let arg = normal(&mut rng, n, p);
        let gram = z.t().dot(&z);
        for tau in [0.1, 1.5] {
            let h = newton_matrix(z.view(), &arg, tau, &gram, t, reg);
            assert!(max_abs(&(&h - &h.t())) < 1e-14, "H not symmetric");
            let s: Array1<f64> = (0..p * (p + 1) / 2)
                .map(|_| rng.random_range(-1.0..1.0))
                .collect();
            let x = unpack_sym(&s, p);
            let mut k = Array2::zeros((p, p));
            for j in 0..p {
                let a = arg
                    .column(j)
                    .mapv(|v| if v.abs() > tau { 1.0 } else { 0.0 });
                let za = &z * &a.insert_axis(Axis(1));
                k.column_mut(j).assign(&za.t().dot(&z).dot(&x.column(j)));
            }
            let op = (&k + &k.t()) * (2.0 * t) + &x * reg;
            let err = (&h.dot(&s) - &pair_inner(&op))
                .iter()
                .fold(0.0f64, |m, v| m.max(v.abs()));
            assert!(err < 1e-13, "τ = {tau}: mismatch {err}");
        }
    }

    #[test]
    fn errors_instead_of_panicking() {
        let mut rng = ChaCha8Rng::seed_from_u64(17);
        let z = random_point(&mut rng, 20, 3);
        let g = normal(&mut rng, 20, 3);
        // Below the rounding level of E: reported as non-convergence.
        let err = stiefel_prox(z.view(), g.view(), 0.5, 0.5, None, 1e-300).unwrap_err();
        assert!(err.to_string().contains("did not converge"), "{err}");
        assert!(stiefel_prox(z.view(), g.view(), 0.0, 0.5, None, 1e-12).is_err());
        assert!(stiefel_prox(z.view(), g.view(), 0.5, -1.0, None, 1e-12).is_err());
        assert!(stiefel_prox(z.view(), g.t(), 0.5, 0.5, None, 1e-12).is_err());
        let bad = Array2::zeros((2, 2));
        assert!(stiefel_prox(z.view(), g.view(), 0.5, 0.5, Some(bad.view()), 1e-12).is_err());
    }

    /// The ManPG sparse PCA setting of the reference's demo (`demo_compare_SPCA_dimension_n.m`):
    /// A = BᵀB for a 50×n centred data matrix with unit columns, f(X) = −tr(XᵀAX), μ = 0.8,
    /// t = 1/L with L = 2‖B‖₂², and a few outer ManPG steps (Armijo on F, polar retraction)
    /// with warm starts. Guards the iteration counts reported to the caller.
    #[test]
    fn spca_like_iteration_counts() {
        let mut rng = ChaCha8Rng::seed_from_u64(18);
        let (m, n, p, mu) = (50, 500, 5, 0.8);
        let mut b = normal(&mut rng, m, n);
        let mean = b.mean_axis(Axis(0)).unwrap();
        b -= &mean;
        for mut col in b.columns_mut() {
            let norm = col.dot(&col).sqrt();
            col /= norm;
        }
        let a = b.t().dot(&b);
        let t = 1.0 / (2.0 * super::super::sym_eig_desc(a.view()).unwrap().values[0]);
        let f =
            |x: &Array2<f64>| -(x * &a.dot(x)).sum() + mu * x.iter().map(|v| v.abs()).sum::<f64>();
        let mut x = random_point(&mut rng, n, p);
        let mut lambda: Option<Array2<f64>> = None;
        let mut counts = Vec::new();
        for _ in 0..30 {
            let grad = a.dot(&x) * -2.0;
            let step = stiefel_prox(
                x.view(),
                grad.view(),
                t,
                mu,
                lambda.as_ref().map(|l| l.view()),
                1e-12,
            )
            .unwrap();
            counts.push(step.iterations);
            let fx = f(&x);
            let dd = fro(&step.d).powi(2);
            let mut alpha = 1.0;
            let mut next = stiefel_retract_polar(x.view(), step.d.view()).unwrap();
            while f(&next) >= fx - 0.5 / t * alpha * dd && alpha > 1e-4 {
                alpha *= 0.5;
                next = stiefel_retract_polar(x.view(), (&step.d * alpha).view()).unwrap();
            }
            x = next;
            lambda = Some(step.lambda);
        }
        eprintln!("SSN iterations along 30 ManPG steps (n = {n}, p = {p}): {counts:?}");
        assert!(counts[0] <= 15, "cold start took {}", counts[0]);
        assert!(counts[1..].iter().all(|&c| c <= 10), "{counts:?}");
    }
}
