//! Thin, partial and thresholded singular value decompositions.
//!
//! `thin_svd` calls LAPACK's divide-and-conquer `dgesdd` directly (as `eig.rs` does for
//! `dsyevd`; ndarray-linalg's `SVDDC` measured the same). `partial_svd` and `svt` run restarted
//! block Krylov on the Gram matrix of the shorter side, G = AᵀA, then a Rayleigh–Ritz step on A
//! itself, so small singular values keep the accuracy of A rather than of A squared.
//!
//! The loop mirrors `krylov::top_eigs` but is separate for two reasons: `svt` stops on a rule
//! over all b Ritz pairs (only the triplets above τ must converge; the next one only has to be
//! shown to lie below τ, which is cheap, whereas converging it as a vector is not when it sits in
//! a noise bulk), and a deterministic work budget sends slowly converging (flat) spectra to
//! LAPACK before Krylov costs more than the full SVD would.

use super::{orth, sym_eig_desc, to_f_order};
use anyhow::{bail, Result};
use ndarray::{concatenate, s, Array1, Array2, ArrayView1, ArrayView2, Axis};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::os::raw::{c_char, c_int};

/// A = U diag(s) Vᵀ with s descending; thin: U is m×r, Vᵀ is r×n for r = min(m, n), or the k
/// triplets kept by `partial_svd`.
#[derive(Clone, Debug)]
pub struct Svd {
    pub u: Array2<f64>,
    pub s: Array1<f64>,
    pub vt: Array2<f64>,
}

impl Svd {
    /// U diag(s) Vᵀ.
    pub fn dense(&self) -> Array2<f64> {
        (&self.u * &self.s.view().insert_axis(Axis(0))).dot(&self.vt)
    }

    fn empty(m: usize, n: usize) -> Self {
        Svd {
            u: Array2::zeros((m, 0)),
            s: Array1::zeros(0),
            vt: Array2::zeros((0, n)),
        }
    }

    /// The first `k` triplets.
    fn truncate(self, k: usize) -> Self {
        if self.s.len() == k {
            return self;
        }
        Svd {
            u: self.u.slice(s![.., ..k]).to_owned(),
            s: self.s.slice(s![..k]).to_owned(),
            vt: self.vt.slice(s![..k, ..]).to_owned(),
        }
    }

    /// The SVD of Aᵀ from that of A.
    fn transpose(self) -> Self {
        Svd {
            u: self.vt.reversed_axes(),
            s: self.s,
            vt: self.u.reversed_axes(),
        }
    }
}

/// A converged Ritz pair of G has ‖Gy − θy‖ ≤ KRYLOV_TOL·θ₁ (θ₁ = σ₁²): its singular subspace
/// is off by about KRYLOV_TOL·σ₁²/(σ_j² − σ_{b+1}²), its singular value (after Rayleigh–Ritz on
/// A) by about σ₁ times the square of that.
use super::krylov::KRYLOV_TOL;
/// Krylov steps per restart (basis of b·(s+1) columns): 3 measured fewer restarts than 2 at
/// little extra cost per restart.
const KRYLOV_STEPS: usize = 3;
/// Krylov may spend at most this fraction of the modelled cost of a full SVD before giving up.
const KRYLOV_BUDGET: f64 = 0.5;
/// Fixed seed of the Krylov start block: results are a deterministic function of A and k.
const START_SEED: u64 = 0x5EED_5B0D;

#[cfg(test)]
thread_local! {
    /// Krylov solves that returned triplets, so tests can tell it from the LAPACK fallback.
    static KRYLOV_SOLVES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Thin SVD of `a` by LAPACK `dgesdd` (divide and conquer), singular values descending.
pub fn thin_svd(a: ArrayView2<f64>) -> Result<Svd> {
    let (m, n) = a.dim();
    let r = m.min(n);
    if r == 0 {
        return Ok(Svd::empty(m, n));
    }
    let mut x = to_f_order(a); // column-major, destroyed by dgesdd
    let mut s = vec![0.0f64; r];
    let mut u = to_f_order(Array2::zeros((m, r)).view());
    let mut vt = to_f_order(Array2::zeros((r, n)).view());
    let (jobz, mm, nn, rr) = (b'S' as c_char, m as c_int, n as c_int, r as c_int);
    let xs = x.as_slice_memory_order_mut().expect("contiguous");
    let us = u.as_slice_memory_order_mut().expect("contiguous");
    let vts = vt.as_slice_memory_order_mut().expect("contiguous");
    let mut iwork = vec![0 as c_int; 8 * r];
    // One dgesdd call: a workspace query when lwork = -1, the real decomposition otherwise.
    let mut dgesdd = |work: &mut [f64], lwork: c_int| {
        let mut info: c_int = 0;
        // SAFETY: x is m×n (lda = m), u is m×r (ldu = m), vt is r×n (ldvt = r), s has r entries,
        // iwork the 8·r LAPACK asks for; work has lwork entries (1 for the query).
        unsafe {
            lapack_sys::dgesdd_(
                &jobz,
                &mm,
                &nn,
                xs.as_mut_ptr(),
                &mm,
                s.as_mut_ptr(),
                us.as_mut_ptr(),
                &mm,
                vts.as_mut_ptr(),
                &rr,
                work.as_mut_ptr(),
                &lwork,
                iwork.as_mut_ptr(),
                &mut info,
            );
        }
        info
    };
    let mut query = [0.0f64];
    let info = dgesdd(&mut query, -1);
    if info != 0 {
        bail!("dgesdd workspace query failed (info = {info})");
    }
    let lwork = (query[0] as c_int).max(1);
    let info = dgesdd(&mut vec![0.0f64; lwork as usize], lwork);
    if info != 0 {
        bail!("dgesdd failed (info = {info}) on a {m}×{n} matrix");
    }
    Ok(Svd {
        u,
        s: Array1::from(s),
        vt,
    })
}

/// The top-`k` singular triplets of `a`, descending. By block Krylov, converged to Gram residuals
/// ‖AᵀAv − σ²v‖ ≤ 1e-12·σ₁² (values then match LAPACK to ~1e-14·σ₁, subspaces to
/// ~1e-12·σ₁²/(σ_k² − σ_{b+1}²)), when its modelled cost is below half a full SVD and it
/// converges fast enough to stay there; otherwise [`thin_svd`], truncated.
pub fn partial_svd(a: ArrayView2<f64>, k: usize) -> Result<Svd> {
    let (m, n) = a.dim();
    if k > m.min(n) {
        bail!("asked for {k} singular triplets of a {m}×{n} matrix");
    }
    if k == 0 {
        return Ok(Svd::empty(m, n));
    }
    let rule = |theta: ArrayView1<f64>, resid: &[f64]| converged(theta, resid, k);
    match krylov_svd(a, block(k), rule) {
        Ok(Some(svd)) => Ok(svd),
        _ => Ok(thin_svd(a)?.truncate(k)),
    }
}

/// D_τ(A) = U max(Σ − τ, 0) Vᵀ and the number of singular values above τ (see [`svt_factors`]).
pub fn svt(a: ArrayView2<f64>, tau: f64, rank_hint: usize) -> Result<(Array2<f64>, usize)> {
    let f = svt_factors(a, tau, rank_hint)?;
    Ok((f.dense(), f.s.len()))
}

/// D_τ(A) in factored form: the triplets with σ > τ, their values already shrunk by τ. Only
/// those are computed: Krylov with room for `rank_hint` + 1 (the inexact-ALM habit, with the
/// previous iteration's rank as hint), the room roughly doubled while Ritz values prove more
/// above τ, and a full SVD once Krylov no longer pays.
pub fn svt_factors(a: ArrayView2<f64>, tau: f64, rank_hint: usize) -> Result<Svd> {
    if tau.is_nan() || tau < 0.0 {
        bail!("singular value threshold must be ≥ 0, got {tau}");
    }
    let (m, n) = a.dim();
    let r = m.min(n);
    // σ₁ ≤ ‖A‖_F: nothing survives, no decomposition needed.
    if r == 0 || tau >= super::fro2(a).sqrt() {
        return Ok(Svd::empty(m, n));
    }
    let mut k = (rank_hint + 1).min(r);
    let mut svd = loop {
        if tau == 0.0 {
            break thin_svd(a)?; // every nonzero σ survives
        }
        let rule = |theta: ArrayView1<f64>, resid: &[f64]| above(theta, resid, tau, k);
        match krylov_svd(a, block(k), rule) {
            Ok(Some(svd)) => break svd,
            // More than k singular values above τ: room for about twice as many (≥ +5% of r).
            Ok(None) if k < r => k = (k + k.max(r / 20)).min(r),
            _ => break thin_svd(a)?,
        }
    };
    let p = svd.s.iter().take_while(|&&sv| sv > tau).count();
    svd = svd.truncate(p);
    svd.s.mapv_inplace(|sv| sv - tau);
    Ok(svd)
}

/// Block size for k wanted triplets: extra columns speed convergence, whose rate depends on
/// σ_k/σ_{b+1} rather than σ_k/σ_{k+1}.
fn block(k: usize) -> usize {
    k + (k / 10).max(10)
}

/// What a stopping rule says after a Rayleigh–Ritz step.
enum Verdict {
    /// Return the leading triplets, this many.
    Take(usize),
    /// Keep iterating; the wanted quantities are this factor above their tolerances.
    More(f64),
    /// The block is too small for what is wanted.
    Grow,
}

/// `partial_svd`'s rule: the first k Ritz pairs of G have converged.
fn converged(theta: ArrayView1<f64>, resid: &[f64], k: usize) -> Verdict {
    let scale = KRYLOV_TOL * theta[0].max(f64::MIN_POSITIVE);
    let excess = resid[..k].iter().fold(0.0f64, |e, r| e.max(r / scale));
    if excess <= 1.0 {
        Verdict::Take(k)
    } else {
        Verdict::More(excess)
    }
}

/// `svt`'s rule for room k: the p Ritz pairs above τ² have converged, and pair p + 1 is shown to
/// be below τ² (θ + ‖r‖ ≤ τ²: some eigenvalue lies within ‖r‖ of θ). Ritz values bound the
/// eigenvalues from below (interlacing), so θ_k > τ² proves more than k singular values > τ.
fn above(theta: ArrayView1<f64>, resid: &[f64], tau: f64, k: usize) -> Verdict {
    let tau2 = tau * tau;
    let p = theta.iter().take_while(|&&t| t > tau2).count();
    if p >= k {
        return Verdict::Grow;
    }
    let scale = KRYLOV_TOL * theta[0].max(f64::MIN_POSITIVE);
    let below = resid[p] / (tau2 - theta[p]);
    let excess = resid[..p].iter().fold(below, |e, r| e.max(r / scale));
    if excess <= 1.0 {
        // Pair p + 1 goes through Rayleigh–Ritz on A too: its accurate σ decides the count.
        Verdict::Take(p + 1)
    } else {
        Verdict::More(excess)
    }
}

/// Restarted block Krylov on G = AᵀA with a b-column block (as in `krylov::top_eigs`), then
/// Rayleigh–Ritz on A for the pairs the rule takes. Ok(None) when the rule asks for a bigger
/// block; an error when Krylov would cost more than the budget or did not converge within it.
fn krylov_svd(
    a: ArrayView2<f64>,
    b: usize,
    rule: impl Fn(ArrayView1<f64>, &[f64]) -> Verdict,
) -> Result<Option<Svd>> {
    let (m, n) = a.dim();
    if m < n {
        // svd(Aᵀ) = V Σ Uᵀ: iterate on the smaller Gram matrix.
        return Ok(krylov_svd(a.t(), b, rule)?.map(Svd::transpose));
    }
    if 2 * b > n {
        bail!("block {b} too large for a {m}×{n} matrix");
    }
    let steps = KRYLOV_STEPS.clamp(1, n / b - 1);
    let max_restarts = restart_budget(m, n, b, steps);
    if max_restarts == 0 {
        bail!("Krylov would cost more than a full SVD");
    }
    let apply = |x: ArrayView2<f64>| a.t().dot(&a.dot(&x));
    let mut rng = ChaCha8Rng::seed_from_u64(START_SEED);
    let start = Array2::from_shape_simple_fn((n, b), || rng.random_range(-1.0..1.0));
    let mut v = orth(start.view());
    let mut gv = apply(v.view());
    let mut last_excess = f64::INFINITY;
    for restart in 1..=max_restarts {
        // Q = [V, K₁, …, K_s] orthonormal, GQ alongside.
        let (mut q, mut gq) = (v, gv);
        for _ in 0..steps {
            let next = complement(q.view(), gq.slice(s![.., gq.ncols() - b..]));
            let g_next = apply(next.view());
            q = concatenate![Axis(1), q, next];
            gq = concatenate![Axis(1), gq, g_next];
        }
        let t = q.t().dot(&gq);
        let eig = sym_eig_desc(((&t + &t.t()) * 0.5).view())?;
        let y = eig.vectors.slice(s![.., ..b]);
        let (u, gu) = (q.dot(&y), gq.dot(&y));
        let theta = eig.values.slice(s![..b]);
        let resid: Vec<f64> = (0..b)
            .map(|j| {
                let r = &gu.column(j) - &(&u.column(j) * theta[j]);
                r.dot(&r).sqrt()
            })
            .collect();
        if !theta.iter().chain(&resid).all(|x| x.is_finite()) {
            bail!("non-finite Ritz values: A has NaN or infinite entries");
        }
        match rule(theta, &resid) {
            Verdict::Take(p) => {
                #[cfg(test)]
                KRYLOV_SOLVES.with(|c| c.set(c.get() + 1));
                return Ok(Some(rayleigh_ritz(a, u.slice(s![.., ..p]))?));
            }
            Verdict::Grow => return Ok(None),
            Verdict::More(excess) => {
                // Linear convergence at the last rate: give up early if it will not fit.
                let rate = last_excess / excess;
                let needed = excess.ln() / rate.ln();
                if restart > 1 && (rate <= 1.0 || restart as f64 + needed > max_restarts as f64) {
                    bail!("Krylov too slow: {excess:.1e} above tolerance after {restart} restarts");
                }
                last_excess = excess;
            }
        }
        // Restart from the b best Ritz vectors, keeping G·U.
        v = u;
        gv = gu;
    }
    bail!("Krylov did not converge in {max_restarts} restarts")
}

/// How many restarts fit in KRYLOV_BUDGET of a full SVD, by flop counts (calibrated at
/// 3000×3000: dgesdd ≈ 14n³, a restart as modelled here matched the measured ratio within 10%).
fn restart_budget(m: usize, n: usize, b: usize, steps: usize) -> usize {
    let (m, n, b, s) = (m as f64, n as f64, b as f64, steps as f64);
    let basis = b * (s + 1.0);
    let full = 4.0 * m * n * n + 10.0 * n * n * n;
    let products = s * 4.0 * m * n * b;
    let orthogonalise = 6.0 * n * basis * b * s;
    let ritz = 2.0 * n * basis * basis + 4.0 * n * basis * b + 10.0 * basis.powi(3);
    (KRYLOV_BUDGET * full / (products + orthogonalise + ritz)) as usize
}

/// An orthonormal basis of the part of span(W) orthogonal to the orthonormal Q (two passes of
/// block Gram–Schmidt, orthonormalise, one more pass), as in `krylov.rs`.
fn complement(q: ArrayView2<f64>, w: ArrayView2<f64>) -> Array2<f64> {
    let project = |x: Array2<f64>| &x - &q.dot(&q.t().dot(&x));
    let w = orth(project(project(w.to_owned())).view());
    orth(project(w).view())
}

/// Singular triplets of A within span(V): SVD of the small A·V, rotated back.
fn rayleigh_ritz(a: ArrayView2<f64>, v: ArrayView2<f64>) -> Result<Svd> {
    let v = orth(v);
    let small = thin_svd(a.dot(&v).view())?;
    Ok(Svd {
        u: small.u,
        s: small.s,
        vt: small.vt.dot(&v.t()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray_linalg::SVD;

    fn uniform(rng: &mut ChaCha8Rng, m: usize, n: usize) -> Array2<f64> {
        Array2::from_shape_simple_fn((m, n), || rng.random_range(-1.0..1.0))
    }

    fn fro(a: ArrayView2<f64>) -> f64 {
        super::super::fro2(a).sqrt()
    }

    fn max_abs(a: ArrayView2<f64>) -> f64 {
        a.iter().fold(0.0, |m, v| m.max(v.abs()))
    }

    /// Exact rank `rank` with σ_i = 10·decay^i, plus uniform noise of size `noise`: a clear gap
    /// after σ_rank, and a flat noise spectrum below it.
    fn low_rank_plus_noise(m: usize, n: usize, rank: usize, decay: f64, seed: u64) -> Array2<f64> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let u = orth(uniform(&mut rng, m, rank).view());
        let v = orth(uniform(&mut rng, n, rank).view());
        let sigma = Array1::from_shape_fn(rank, |i| 10.0 * decay.powi(i as i32));
        (&u * &sigma.insert_axis(Axis(0))).dot(&v.t()) + uniform(&mut rng, m, n) * 1e-3
    }

    /// ‖(I − UUᵀ)Û‖_F ≥ ‖sin Θ(U, Û)‖₂ for orthonormal U, Û.
    fn sin_theta(u: ArrayView2<f64>, u_hat: ArrayView2<f64>) -> f64 {
        fro((&u_hat - &u.dot(&u.t().dot(&u_hat))).view())
    }

    fn assert_orthonormal_columns(q: ArrayView2<f64>) {
        let p = q.ncols();
        assert!(max_abs((q.t().dot(&q) - Array2::<f64>::eye(p)).view()) <= 1e-12);
    }

    /// `part` has the top-k triplets of `a` (against LAPACK's full SVD `full`): values to
    /// 1e-10·σ₁, subspaces to 1e-8, residuals ‖Av − σu‖ to 1e-10·σ₁.
    fn assert_top_k(a: &Array2<f64>, part: &Svd, full: &Svd, k: usize) {
        let s1 = full.s[0];
        assert_eq!(part.s.len(), k);
        let ds = &part.s - &full.s.slice(s![..k]);
        assert!(ds.iter().all(|d| d.abs() <= 1e-10 * s1), "σ errors {ds}");
        assert_orthonormal_columns(part.u.view());
        assert_orthonormal_columns(part.vt.t());
        let su = sin_theta(full.u.slice(s![.., ..k]), part.u.view());
        let sv = sin_theta(full.vt.slice(s![..k, ..]).t(), part.vt.t());
        assert!(su <= 1e-8 && sv <= 1e-8, "sin Θ: U {su:.1e}, V {sv:.1e}");
        let resid = a.dot(&part.vt.t()) - &part.u * &part.s.view().insert_axis(Axis(0));
        assert!(max_abs(resid.view()) <= 1e-10 * s1);
    }

    #[test]
    fn thin_svd_is_an_svd() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for (m, n) in [(40, 25), (25, 40), (30, 30), (1, 7), (7, 1)] {
            let a = uniform(&mut rng, m, n);
            let r = m.min(n);
            let svd = thin_svd(a.view()).unwrap();
            assert_eq!(
                (svd.u.dim(), svd.s.len(), svd.vt.dim()),
                ((m, r), r, (r, n))
            );
            assert_orthonormal_columns(svd.u.view());
            assert_orthonormal_columns(svd.vt.t());
            let back = (&svd.u * &svd.s.view().insert_axis(Axis(0))).dot(&svd.vt);
            assert!(fro((&back - &a).view()) <= 1e-12 * fro(a.view()));
            assert!(svd.s.windows(2).into_iter().all(|w| w[0] >= w[1]) && svd.s[r - 1] >= 0.0);
            // dgesvd (ndarray-linalg's SVD) is an independent LAPACK path.
            let (_, s_ref, _) = a.svd(false, false).unwrap();
            assert!(max_abs((&svd.s - &s_ref).insert_axis(Axis(0)).view()) <= 1e-12 * s_ref[0]);
        }
    }

    #[test]
    fn thin_svd_closed_form() {
        // A permuted, sign-flipped diagonal: singular values |d| sorted, singular vectors ±eᵢ.
        let a = ndarray::array![
            [0.0, -3.0, 0.0],
            [2.0, 0.0, 0.0],
            [0.0, 0.0, 0.5],
            [0.0, 0.0, 0.0]
        ];
        let svd = thin_svd(a.view()).unwrap();
        assert!(
            max_abs(
                (&svd.s - &ndarray::array![3.0, 2.0, 0.5])
                    .insert_axis(Axis(0))
                    .view()
            ) <= 1e-15
        );
        assert!(
            (svd.u[[0, 0]].abs() - 1.0).abs() <= 1e-15
                && (svd.vt[[0, 1]].abs() - 1.0).abs() <= 1e-15
        );
        let empty = thin_svd(Array2::<f64>::zeros((0, 5)).view()).unwrap();
        assert_eq!(
            (empty.u.dim(), empty.s.len(), empty.vt.dim()),
            ((0, 0), 0, (0, 5))
        );
    }

    #[test]
    fn partial_svd_matches_lapack() {
        // (m, n, rank, decay, k): tall and wide, k at the gap and inside the signal.
        for (m, n, rank, decay, k) in [
            (200, 150, 10, 0.8, 10),
            (150, 200, 10, 0.8, 10),
            (200, 150, 10, 0.8, 5),
            (600, 500, 40, 0.95, 40),
            (600, 500, 40, 0.95, 25),
        ] {
            let a = low_rank_plus_noise(m, n, rank, decay, 2);
            let full = thin_svd(a.view()).unwrap();
            // the Krylov path itself, not a fallback
            let kr = krylov_svd(a.view(), block(k), |t, r| converged(t, r, k))
                .expect("Krylov converges on a gapped spectrum")
                .expect("no growth asked");
            assert_top_k(&a, &kr, &full, k);
            let part = partial_svd(a.view(), k).unwrap();
            assert_top_k(&a, &part, &full, k);
            // deterministic: the same bits twice
            let again = partial_svd(a.view(), k).unwrap();
            assert!(part
                .u
                .iter()
                .zip(again.u.iter())
                .all(|(x, y)| x.to_bits() == y.to_bits()));
        }
    }

    #[test]
    fn partial_svd_flat_spectrum_and_edges() {
        // No gap: subspaces are ill-defined, but values and residuals must still be right.
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let a = uniform(&mut rng, 200, 160);
        let full = thin_svd(a.view()).unwrap();
        let part = partial_svd(a.view(), 8).unwrap();
        let ds = &part.s - &full.s.slice(s![..8]);
        assert!(
            ds.iter().all(|d| d.abs() <= 1e-10 * full.s[0]),
            "σ errors {ds}"
        );
        let resid = a.dot(&part.vt.t()) - &part.u * &part.s.view().insert_axis(Axis(0));
        assert!(max_abs(resid.view()) <= 1e-10 * full.s[0]);
        // k beyond min(m, n)/4: exactly LAPACK's leading triplets
        let big = partial_svd(a.view(), 100).unwrap();
        assert_eq!(big.s, full.s.slice(s![..100]));
        assert_eq!(big.u, full.u.slice(s![.., ..100]));
        assert_eq!(big.vt, full.vt.slice(s![..100, ..]));
        assert_eq!(partial_svd(a.view(), 0).unwrap().u.dim(), (200, 0));
        assert!(partial_svd(a.view(), 161).is_err());
    }

    /// D_τ(A) from LAPACK's full SVD.
    fn svt_full(a: &Array2<f64>, tau: f64) -> (Array2<f64>, usize) {
        let f = thin_svd(a.view()).unwrap();
        let p = f.s.iter().take_while(|&&v| v > tau).count();
        let shrunk = f.s.slice(s![..p]).mapv(|v| v - tau).insert_axis(Axis(0));
        (
            (&f.u.slice(s![.., ..p]) * &shrunk).dot(&f.vt.slice(s![..p, ..])),
            p,
        )
    }

    #[test]
    fn svt_matches_full_svd() {
        for (m, n, rank, decay) in [
            (200, 150, 10, 0.8),
            (150, 200, 10, 0.8),
            (600, 500, 40, 0.95),
        ] {
            let a = low_rank_plus_noise(m, n, rank, decay, 4);
            let s = thin_svd(a.view()).unwrap().s;
            let r = s.len();
            let taus = [
                1.01 * s[0],                           // above σ₁: zero
                0.5 * (s[rank - 1] + s[rank]),         // in the gap
                0.5 * (s[rank / 2] + s[rank / 2 + 1]), // inside the signal
                0.5 * (s[2 * rank] + s[2 * rank + 1]), // inside the noise
                0.5 * s[r - 1],                        // below every σ: full rank
                0.0,
            ];
            let solves = KRYLOV_SOLVES.with(|c| c.get());
            for tau in taus {
                let (want, p) = svt_full(&a, tau);
                for hint in [0, rank, 3 * rank] {
                    let (got, q) = svt(a.view(), tau, hint).unwrap();
                    assert_eq!(q, p, "rank at τ = {tau}, hint {hint}");
                    if p == 0 {
                        assert!(got.iter().all(|&v| v == 0.0));
                    } else {
                        let err = fro((&got - &want).view()) / fro(want.view());
                        assert!(
                            err <= 1e-10,
                            "{m}×{n} τ = {tau} hint {hint}: rel err {err:.1e}"
                        );
                    }
                }
                // factored form: orthonormal factors, values σ − τ
                let f = svt_factors(a.view(), tau, rank).unwrap();
                assert_orthonormal_columns(f.u.view());
                assert_orthonormal_columns(f.vt.t());
                let ds = &f.s - &s.slice(s![..p]).mapv(|v| v - tau);
                assert!(ds.iter().all(|d| d.abs() <= 1e-10 * s[0]), "{ds}");
            }
            // the Krylov path, not only the LAPACK fallback, was exercised
            assert!(
                KRYLOV_SOLVES.with(|c| c.get()) > solves,
                "{m}×{n}: no Krylov solve"
            );
        }
        assert!(svt(Array2::<f64>::eye(3).view(), f64::NAN, 0).is_err());
        assert!(svt(Array2::<f64>::eye(3).view(), -1.0, 0).is_err());
        let (zero, p) = svt(Array2::<f64>::eye(3).view(), 2.0, 5).unwrap();
        assert_eq!((zero, p), (Array2::zeros((3, 3)), 0));
    }

    #[test]
    fn svt_krylov_rule() {
        let a = low_rank_plus_noise(600, 500, 40, 0.95, 5);
        let s = thin_svd(a.view()).unwrap().s;
        let tau = 0.5 * (s[39] + s[40]);
        // Room for 41 with τ in the gap: one Krylov solve, returning the 40 above τ and one below.
        let rule = |t: ArrayView1<f64>, r: &[f64]| above(t, r, tau, 41);
        let top = krylov_svd(a.view(), block(41), rule)
            .unwrap()
            .expect("room enough");
        assert_eq!(top.s.len(), 41);
        assert!(top.s[39] > tau && top.s[40] <= tau);
        // the 40 above τ converged; the 41st is only a Ritz value, a lower bound on σ₄₁
        assert!((&top.s.slice(s![..40]) - &s.slice(s![..40]))
            .iter()
            .all(|d| d.abs() <= 1e-10 * s[0]));
        assert!(top.s[40] <= s[40] * (1.0 + 1e-12));
        // Room for 20 only: Ritz values (lower bounds) already prove more than 20 above τ.
        let rule = |t: ArrayView1<f64>, r: &[f64]| above(t, r, tau, 20);
        assert!(krylov_svd(a.view(), block(20), rule).unwrap().is_none());
    }

    #[test]
    fn stopping_rules() {
        let theta = ndarray::array![100.0, 50.0, 10.0, 1.0, 0.5];
        let tol = KRYLOV_TOL * 100.0;
        let take = |v: Verdict| match v {
            Verdict::Take(p) => Some(p),
            _ => None,
        };
        // partial_svd: every one of the first k residuals must be ≤ tol·θ₁, the rest are ignored
        assert_eq!(
            take(converged(theta.view(), &[tol, tol, tol, 1.0, 1.0], 3)),
            Some(3)
        );
        assert_eq!(
            take(converged(theta.view(), &[tol, tol, 2.0 * tol, 0.0, 0.0], 3)),
            None
        );
        assert!(
            matches!(converged(theta.view(), &[4.0 * tol, 0.0, 0.0, 0.0, 0.0], 1), Verdict::More(e) if (e - 4.0).abs() < 1e-9)
        );
        let tau = 20f64.sqrt();
        // svt at τ² = 20: p = 2 above; pair 3 (θ = 10) is shown below τ² when θ + ‖r‖ ≤ 20,
        // and pairs 1–2 must have converged
        assert_eq!(
            take(above(theta.view(), &[tol, tol, 9.9, 5.0, 5.0], tau, 4)),
            Some(3)
        );
        assert_eq!(
            take(above(theta.view(), &[tol, tol, 10.1, 0.0, 0.0], tau, 4)),
            None
        );
        assert_eq!(
            take(above(
                theta.view(),
                &[tol, 2.0 * tol, 0.0, 0.0, 0.0],
                tau,
                4
            )),
            None
        );
        // room for 2 only, but Ritz values already prove 2 above τ: grow
        assert!(matches!(
            above(theta.view(), &[0.0; 5], tau, 2),
            Verdict::Grow
        ));
        // nothing above τ: one pair, shown below
        assert_eq!(
            take(above(theta.view(), &[0.0, 9.0, 0.0, 0.0, 0.0], 11.0, 3)),
            Some(1)
        );
    }

    #[test]
    fn restart_budget_crossover() {
        // At 3000×3000 a 160-column block gets a few restarts; k = min(m, n)/4 gets none.
        let small = restart_budget(3000, 3000, block(150), KRYLOV_STEPS);
        assert!((3..=10).contains(&small), "{small}");
        let k = 750;
        let b = block(k);
        assert_eq!(
            restart_budget(3000, 3000, b, KRYLOV_STEPS.clamp(1, 3000 / b - 1)),
            0
        );
    }
}
