//! CEDRE's single-sample local step on the unit sphere (Algorithm 1, Steps 9–11, mini-batch of
//! one), for dense samples:
//!
//! ```text
//! a = xᵀw, b = xᵀw̃;  d = ∇̃f_x(w̃) − G = −b(x − b w̃) − G;  wᵀd = −b(a − b·wᵀw̃) − wᵀG;
//! g = ∇̃f_x(w) − P_w(d) = −a(x − a w) − d + (wᵀd) w;  w ← (w − ηg)/‖w − ηg‖.
//! ```
//!
//! Why a kernel: a local step is a few passes over one D-vector, and CEDRE's m = 5n_k steps per
//! round are a chain (each step's w is the next one's input), so nothing runs across steps. With
//! each of the step's five sums one scalar accumulator, the step ran at the latency of its
//! additions (4 cycles per entry and sum): 2.0 µs at D = 1000 on this machine's Zen 5 core.
//! Here every sum is kept in [`LANES`] lanes, entry j in lane j mod LANES (in entry order within
//! a lane), the lanes added in a fixed tree ([`lane_sum`]) and the entries past the last full
//! group of LANES added after it in order. That order is the definition of the sums' bits: the
//! AVX-512 path and the portable one compute the same operations in the same order (separate
//! multiplies and adds, as the portable code; no FMA), so the step's bits do not depend on the
//! CPU. Dense stochastic CEDRE runs are therefore bitwise the same on AVX-512 and AVX2 machines.

/// Lanes of every sum: two AVX-512 registers of 8.
pub const LANES: usize = 16;

/// The 16 lanes added pairwise in a fixed tree: (l, l + 8), then (l, l + 4), (l, l + 2),
/// (0, 1).
fn lane_sum(v: &[f64; LANES]) -> f64 {
    let mut h = [0.0; 8];
    for l in 0..8 {
        h[l] = v[l] + v[l + 8];
    }
    let q = [h[0] + h[4], h[1] + h[5], h[2] + h[6], h[3] + h[7]];
    (q[0] + q[2]) + (q[1] + q[3])
}

/// One step from `w` (overwritten with the new unit iterate) for sample `x`, at the round's
/// w̃ = `wt` and ∇̃F(w̃) = `gf`, step size `eta`; `next` is scratch of the same length.
pub fn step(x: &[f64], w: &mut [f64], wt: &[f64], gf: &[f64], next: &mut [f64], eta: f64) {
    let n = x.len();
    assert!(
        w.len() == n && wt.len() == n && gf.len() == n && next.len() == n,
        "sphere_step: vectors of lengths {n}, {}, {}, {}, {}",
        w.len(),
        wt.len(),
        gf.len(),
        next.len()
    );
    let body = n / LANES * LANES;
    let (xb, wb, tb, gb) = (&x[..body], &w[..body], &wt[..body], &gf[..body]);
    let mut s = dot_lanes(xb, wb, tb, gb).map(|v| lane_sum(&v));
    for j in body..n {
        s[0] += x[j] * w[j];
        s[1] += x[j] * wt[j];
        s[2] += w[j] * wt[j];
        s[3] += w[j] * gf[j];
    }
    let [a, b, wwt, wg] = s;
    let wd = -b * (a - b * wwt) - wg;
    let k = [a, b, wd, eta];
    let mut norm2 = lane_sum(&update_lanes(xb, wb, tb, gb, &mut next[..body], k));
    for j in body..n {
        let v = entry(x[j], w[j], wt[j], gf[j], k);
        next[j] = v;
        norm2 += v * v;
    }
    let inv = 1.0 / norm2.sqrt();
    for (wj, v) in w.iter_mut().zip(next.iter()) {
        *wj = v * inv;
    }
}

/// The entry-wise part of the update: d, g and v = w − ηg at one entry, with k = [a, b, wᵀd, η]
/// (the same expression order as the AVX-512 path).
#[inline(always)]
fn entry(x: f64, w: f64, t: f64, g: f64, [a, b, wd, eta]: [f64; 4]) -> f64 {
    let d = -b * (x - b * t) - g;
    let grad = -a * (x - a * w) - d + wd * w;
    w - eta * grad
}

/// The lanes of xᵀw, xᵀw̃, wᵀw̃ and wᵀG over whole groups of LANES entries (all slices of one
/// length, a multiple of LANES).
fn dot_lanes(x: &[f64], w: &[f64], t: &[f64], g: &[f64]) -> [[f64; LANES]; 4] {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx512f") {
        // SAFETY: avx512f checked; the slices have one length, a multiple of LANES.
        return unsafe { avx512::dot_lanes(x, w, t, g) };
    }
    portable::dot_lanes(x, w, t, g)
}

/// next = w − ηg entry by entry (see [`entry`]) over whole groups of LANES entries, and the
/// lanes of ‖next‖².
fn update_lanes(
    x: &[f64],
    w: &[f64],
    t: &[f64],
    g: &[f64],
    next: &mut [f64],
    k: [f64; 4],
) -> [f64; LANES] {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx512f") {
        // SAFETY: avx512f checked; the slices have one length, a multiple of LANES.
        return unsafe { avx512::update_lanes(x, w, t, g, next, k) };
    }
    portable::update_lanes(x, w, t, g, next, k)
}

/// The lanes in plain Rust: entry j into lane j mod LANES, in entry order.
mod portable {
    use super::{entry, LANES};

    pub(super) fn dot_lanes(x: &[f64], w: &[f64], t: &[f64], g: &[f64]) -> [[f64; LANES]; 4] {
        let mut acc = [[0.0; LANES]; 4];
        for j in 0..x.len() {
            let l = j % LANES;
            acc[0][l] += x[j] * w[j];
            acc[1][l] += x[j] * t[j];
            acc[2][l] += w[j] * t[j];
            acc[3][l] += w[j] * g[j];
        }
        acc
    }

    pub(super) fn update_lanes(
        x: &[f64],
        w: &[f64],
        t: &[f64],
        g: &[f64],
        next: &mut [f64],
        k: [f64; 4],
    ) -> [f64; LANES] {
        let mut sq = [0.0; LANES];
        for j in 0..x.len() {
            let v = entry(x[j], w[j], t[j], g[j], k);
            next[j] = v;
            sq[j % LANES] += v * v;
        }
        sq
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::LANES;
    use std::arch::x86_64::*;

    /// Two registers of 8 lanes stored as the 16 lanes in order.
    unsafe fn store(r: [__m512d; 2]) -> [f64; LANES] {
        let mut v = [0.0; LANES];
        unsafe {
            _mm512_storeu_pd(v.as_mut_ptr(), r[0]);
            _mm512_storeu_pd(v.as_mut_ptr().add(8), r[1]);
        }
        v
    }

    /// [`super::dot_lanes`] in AVX-512 registers: lanes 0–7 in the first register of each sum,
    /// 8–15 in the second.
    ///
    /// Safety: avx512f is available; the slices have one length, a multiple of LANES.
    // The two registers of each sum read best as acc[k][h] with an index loop.
    #[allow(clippy::needless_range_loop)]
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn dot_lanes(
        x: &[f64],
        w: &[f64],
        t: &[f64],
        g: &[f64],
    ) -> [[f64; LANES]; 4] {
        let (xp, wp, tp, gp) = (x.as_ptr(), w.as_ptr(), t.as_ptr(), g.as_ptr());
        unsafe {
            let mut acc = [[_mm512_setzero_pd(); 2]; 4];
            for c in (0..x.len()).step_by(LANES) {
                for h in 0..2 {
                    let j = c + 8 * h;
                    let xv = _mm512_loadu_pd(xp.add(j));
                    let wv = _mm512_loadu_pd(wp.add(j));
                    let tv = _mm512_loadu_pd(tp.add(j));
                    let gv = _mm512_loadu_pd(gp.add(j));
                    acc[0][h] = _mm512_add_pd(acc[0][h], _mm512_mul_pd(xv, wv));
                    acc[1][h] = _mm512_add_pd(acc[1][h], _mm512_mul_pd(xv, tv));
                    acc[2][h] = _mm512_add_pd(acc[2][h], _mm512_mul_pd(wv, tv));
                    acc[3][h] = _mm512_add_pd(acc[3][h], _mm512_mul_pd(wv, gv));
                }
            }
            acc.map(|r| store(r))
        }
    }

    /// [`super::update_lanes`] in AVX-512 registers, the operations of [`super::entry`] in its
    /// order.
    ///
    /// Safety: avx512f is available; the slices have one length, a multiple of LANES.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn update_lanes(
        x: &[f64],
        w: &[f64],
        t: &[f64],
        g: &[f64],
        next: &mut [f64],
        [a, b, wd, eta]: [f64; 4],
    ) -> [f64; LANES] {
        let (xp, wp, tp, gp, np) = (
            x.as_ptr(),
            w.as_ptr(),
            t.as_ptr(),
            g.as_ptr(),
            next.as_mut_ptr(),
        );
        let (av, bv, wdv, ev) = (
            _mm512_set1_pd(a),
            _mm512_set1_pd(b),
            _mm512_set1_pd(wd),
            _mm512_set1_pd(eta),
        );
        let (na, nb) = (_mm512_set1_pd(-a), _mm512_set1_pd(-b));
        let mut sq = [_mm512_setzero_pd(); 2];
        unsafe {
            for c in (0..x.len()).step_by(LANES) {
                for (h, acc) in sq.iter_mut().enumerate() {
                    let j = c + 8 * h;
                    let xv = _mm512_loadu_pd(xp.add(j));
                    let wv = _mm512_loadu_pd(wp.add(j));
                    let tv = _mm512_loadu_pd(tp.add(j));
                    let gv = _mm512_loadu_pd(gp.add(j));
                    // d = −b(x − b w̃) − G; grad = −a(x − a w) − d + (wᵀd) w; v = w − η grad.
                    let d = _mm512_sub_pd(
                        _mm512_mul_pd(nb, _mm512_sub_pd(xv, _mm512_mul_pd(bv, tv))),
                        gv,
                    );
                    let grad = _mm512_add_pd(
                        _mm512_sub_pd(
                            _mm512_mul_pd(na, _mm512_sub_pd(xv, _mm512_mul_pd(av, wv))),
                            d,
                        ),
                        _mm512_mul_pd(wdv, wv),
                    );
                    let v = _mm512_sub_pd(wv, _mm512_mul_pd(ev, grad));
                    _mm512_storeu_pd(np.add(j), v);
                    *acc = _mm512_add_pd(*acc, _mm512_mul_pd(v, v));
                }
            }
            store(sq)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed;
    use rand::Rng;

    fn vectors(n: usize, s: u64) -> [Vec<f64>; 4] {
        let mut rng = seed::rng(s, &["sphere-step-test"]);
        let mut v = || -> Vec<f64> { (0..n).map(|_| rng.random_range(-1.0..1.0)).collect() };
        let (x, mut w, mut wt, g) = (v(), v(), v(), v());
        for u in [&mut w, &mut wt] {
            let norm = u.iter().map(|a| a * a).sum::<f64>().sqrt();
            u.iter_mut().for_each(|a| *a /= norm);
        }
        let g = g.iter().map(|a| 0.01 * a).collect();
        [x, w, wt, g]
    }

    /// The step written out from the formulas, sums in entry order.
    fn reference(x: &[f64], w: &[f64], wt: &[f64], gf: &[f64], eta: f64) -> Vec<f64> {
        let dot = |u: &[f64], v: &[f64]| u.iter().zip(v).map(|(a, b)| a * b).sum::<f64>();
        let (a, b) = (dot(x, w), dot(x, wt));
        let wd = -b * (a - b * dot(w, wt)) - dot(w, gf);
        let v: Vec<f64> = (0..x.len())
            .map(|j| {
                let d = -b * (x[j] - b * wt[j]) - gf[j];
                w[j] - eta * (-a * (x[j] - a * w[j]) - d + wd * w[j])
            })
            .collect();
        let norm = dot(&v, &v).sqrt();
        v.iter().map(|a| a / norm).collect()
    }

    #[test]
    fn a_step_follows_the_formulas_and_stays_on_the_sphere() {
        // Lengths with and without a tail past the last group of 16 entries.
        for (n, s) in [(1000, 1), (1003, 2), (7, 3), (16, 4)] {
            let [x, w0, wt, g] = vectors(n, s);
            let mut w = w0.clone();
            let mut next = vec![0.0; n];
            step(&x, &mut w, &wt, &g, &mut next, 0.05);
            let want = reference(&x, &w0, &wt, &g, 0.05);
            let err = w
                .iter()
                .zip(&want)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            assert!(err <= 1e-14, "n = {n}: {err:e} from the formulas");
            let norm = w.iter().map(|a| a * a).sum::<f64>().sqrt();
            assert!((norm - 1.0).abs() <= 1e-14, "n = {n}: ‖w‖ = {norm}");
        }
    }

    #[test]
    fn every_path_gives_the_same_bits() {
        // The AVX-512 lanes against the portable ones, where the CPU has AVX-512 (elsewhere the
        // portable lanes are the only path).
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx512f") {
            for (n, s) in [(1008, 5), (16, 6)] {
                let [x, w, wt, g] = vectors(n, s);
                let k = [0.3, -0.2, 0.01, 0.2];
                let (mut n1, mut n2) = (vec![0.0; n], vec![0.0; n]);
                // SAFETY: avx512f checked; the slices have length n, a multiple of LANES.
                let (d1, u1) = unsafe {
                    (
                        avx512::dot_lanes(&x, &w, &wt, &g),
                        avx512::update_lanes(&x, &w, &wt, &g, &mut n1, k),
                    )
                };
                let d2 = portable::dot_lanes(&x, &w, &wt, &g);
                let u2 = portable::update_lanes(&x, &w, &wt, &g, &mut n2, k);
                let same =
                    |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(p, q)| p.to_bits() == q.to_bits());
                assert!(
                    d1.iter().zip(&d2).all(|(a, b)| same(a, b)),
                    "n = {n}: sums differ"
                );
                assert!(same(&u1, &u2) && same(&n1, &n2), "n = {n}: updates differ");
            }
        }
    }
}
