//! The leakage attack on the consensus-ADMM sparse PCA methods (FASPCA, FSSPCA).
//!
//! Their clients send only w_i, yet the server knows everything else in the client's step: the
//! z it sent, the client's previous w_i and, because the dual update u_i ← u_i + ρ(w_i − z) is
//! deterministic, every u_i (from u_i = 0). Each step is an equation in C_i = X_iX_iᵀ with one
//! unknown per round, S_t, symmetric r×r:
//!
//! - FASPCA (Algorithm 7): w_t ∝ 2C_iw_{t−1} − u_t + ρz_t, normalised by an unknown positive
//!   factor, so 2C_i x_t = b_t + a_t S_t with x_t = w_{t−1}, a_t = w_t, b_t = u_t − ρz_t and S_t
//!   the scalar factor (r = 1). Round 1 starts from the client's private random w⁰, so it leaks
//!   nothing.
//! - FSSPCA: w_t is a stationary point of the local problem (11) on the Stiefel manifold (up to
//!   its inner solver's tolerance): its Euclidean gradient −2C_iw + λ1∇r(w) + u_t + ρ(w − z_t)
//!   is w_tS_t for a symmetric Lagrange multiplier S_t. So x_t = a_t = w_t and
//!   b_t = λ1∇r(w_t) + u_t + ρ(w_t − z_t), with λ1 and μ public.
//!
//! FSSPCA's local problem is the same for C_i and C_i + αI (tr(wᵀ(C_i + αI)w) = tr(wᵀC_iw) + αr
//! on the manifold), so no attack can tell them apart: its leak is measured up to that shift,
//! against C_i's trace-free part. FASPCA's step is not shift-invariant.
//!
//! The multipliers follow from C_i's symmetry: x_jᵀ(2C_ix_t) = (x_tᵀ(2C_ix_j))ᵀ for every pair
//! of rounds, an affine system in the S's that the server solves by least squares over pairs at
//! most [`WINDOW`] rounds apart. Then y_t = (b_t + a_tS_t)/2 = C_ix_t, and the pairs (x_t, y_t)
//! go to [`super::leakage_errors`] exactly as SSI's (Z, A_1A_1ᵀZ) do. The multipliers are solved
//! once from every round the attack evaluates (the server at the end of that window).
//!
//! Only rounds before the first deflation are used: a deflation changes C_i.

use super::Leak;
use crate::fed::{Message, Transcript};
use crate::linalg::prox::smooth_l1_grad;
use crate::methods::sparse::{faspca, fsspca};
use anyhow::{bail, Context, Result};
use ndarray::{Array1, Array2};
use ndarray_linalg::{JobSvd, SVDDC};

/// Pairs of rounds at most this far apart enter the multiplier system. CHOICE: every pair would
/// make the system quadratic in the rounds; ten neighbours already over-determine it ~10×.
pub const WINDOW: usize = 10;

/// One round's equation 2C_i x = b + a S.
struct Step {
    round: usize,
    x: Array2<f64>,
    a: Array2<f64>,
    b: Array2<f64>,
}

/// The server's view of client `client`'s steps under FASPCA, for the first `max_rounds` rounds.
pub fn faspca(
    t: &Transcript,
    client: usize,
    p: &faspca::Params,
    max_rounds: usize,
) -> Result<Leak> {
    let mut steps = Vec::new();
    let mut prev: Option<Array2<f64>> = None;
    let mut u: Option<Array2<f64>> = None;
    for (round, (msg, reply)) in rounds(t, client, max_rounds) {
        let (z, w) = (msg.get("z")?, reply.get("w")?);
        if let Some(wp) = prev.take() {
            let u = u.get_or_insert_with(|| Array2::zeros(z.dim()));
            u.scaled_add(p.rho, &(&wp - z));
            steps.push(Step {
                round,
                b: &*u - &(z * p.rho),
                x: wp,
                a: w.clone(),
            });
        }
        prev = Some(w.clone());
    }
    solve(steps, false)
}

/// The server's view of client `client`'s steps under FSSPCA, for the first `max_rounds` rounds.
pub fn fsspca(
    t: &Transcript,
    client: usize,
    p: &fsspca::Params,
    max_rounds: usize,
) -> Result<Leak> {
    let mut steps = Vec::new();
    let mut u: Option<Array2<f64>> = None;
    let mut prev: Option<Array2<f64>> = None;
    for (round, (msg, reply)) in rounds(t, client, max_rounds) {
        let (z, w) = (msg.get("z")?, reply.get("w")?);
        let u = u.get_or_insert_with(|| Array2::zeros(z.dim()));
        if let Some(wp) = prev.take() {
            u.scaled_add(p.rho, &(&wp - z));
        }
        let mut b = smooth_l1_grad(w.view(), p.mu) * p.lambda1 + &*u;
        b.scaled_add(p.rho, &(w - z));
        steps.push(Step {
            round,
            x: w.clone(),
            a: w.clone(),
            b,
        });
        prev = Some(w.clone());
    }
    solve(steps, true)
}

/// (round, (broadcast, reply)) from round 1, up to the first deflation or `max_rounds`.
fn rounds(
    t: &Transcript,
    client: usize,
    max_rounds: usize,
) -> impl Iterator<Item = (usize, (&Message, &Message))> {
    t.pairs(client)
        .take(max_rounds)
        .take_while(|(msg, _)| !msg.has("deflate"))
        .enumerate()
        .map(|(i, pair)| (i + 1, pair))
}

/// Solve the symmetry system for the multipliers and return the leaked pairs (x_t, C_ix_t).
fn solve(steps: Vec<Step>, up_to_shift: bool) -> Result<Leak> {
    let Some(first) = steps.first() else {
        return Ok(Leak {
            pairs: Vec::new(),
            up_to_shift,
        });
    };
    let r = first.a.ncols();
    if steps
        .iter()
        .any(|s| s.a.ncols() != r || s.x.ncols() != r || s.b.dim() != s.x.dim())
    {
        bail!("attack: the loadings change shape within one stage");
    }
    // S_t's upper triangle, row-major: unknowns t·per .. (t + 1)·per.
    let per = r * (r + 1) / 2;
    let var = |t: usize, k: usize, q: usize| {
        let (i, j) = (k.min(q), k.max(q));
        t * per + i * r - i * (i + 1) / 2 + j
    };
    let mut rows: Vec<(Vec<(usize, f64)>, f64)> = Vec::new();
    for t in 0..steps.len() {
        for j in t.saturating_sub(WINDOW)..t {
            let (st, sj) = (&steps[t], &steps[j]);
            // (x_jᵀa_t) S_t − S_j (a_jᵀx_t) = b_jᵀx_t − x_jᵀb_t
            let l = sj.x.t().dot(&st.a);
            let rgt = sj.a.t().dot(&st.x);
            let rhs = sj.b.t().dot(&st.x) - sj.x.t().dot(&st.b);
            for p in 0..r {
                for q in 0..r {
                    let mut row = Vec::with_capacity(2 * r);
                    for k in 0..r {
                        row.push((var(t, k, q), l[[p, k]]));
                        row.push((var(j, p, k), -rgt[[k, q]]));
                    }
                    rows.push((row, rhs[[p, q]]));
                }
            }
        }
    }
    let unknowns = steps.len() * per;
    let s = if rows.is_empty() {
        Array1::zeros(unknowns)
    } else {
        // Rows scaled to unit norm: the pairs' inner products span many magnitudes.
        let mut m = Array2::<f64>::zeros((rows.len(), unknowns));
        let mut rhs = Array1::<f64>::zeros(rows.len());
        for (i, (row, b)) in rows.iter().enumerate() {
            for &(c, v) in row {
                m[[i, c]] += v;
            }
            let norm = m.row(i).dot(&m.row(i)).sqrt();
            if norm > 0.0 {
                m.row_mut(i).mapv_inplace(|v| v / norm);
                rhs[i] = b / norm;
            }
        }
        truncated_lstsq(&m, &rhs)?
    };
    let pairs = steps
        .into_iter()
        .enumerate()
        .map(|(t, st)| {
            let sm = Array2::from_shape_fn((r, r), |(k, q)| s[var(t, k, q)]);
            let y = (&st.b + &st.a.dot(&sm)) * 0.5;
            (st.round, st.x, y)
        })
        .collect();
    Ok(Leak { pairs, up_to_shift })
}

/// Singular values below this fraction of the largest are dropped from the least-squares
/// solve. CHOICE: directions the symmetry barely determines (a multiplier offset common to
/// rounds whose loadings hardly move) would otherwise be fitted to rounding and inner-solver
/// noise and blow up.
pub const RCOND: f64 = 1e-10;

/// The minimum-norm least-squares solution of m s = rhs over the singular values above
/// [`RCOND`]·σ_max.
fn truncated_lstsq(m: &Array2<f64>, rhs: &Array1<f64>) -> Result<Array1<f64>> {
    let (u, sv, vt) = m
        .svddc(JobSvd::Some)
        .context("attack: SVD of the multiplier system")?;
    let (u, vt) = (u.expect("requested"), vt.expect("requested"));
    let cut = sv.first().copied().unwrap_or(0.0) * RCOND;
    let mut s = Array1::zeros(m.ncols());
    for (k, &sigma) in sv.iter().enumerate() {
        if sigma > cut {
            s.scaled_add(u.column(k).dot(rhs) / sigma, &vt.row(k));
        }
    }
    Ok(s)
}
