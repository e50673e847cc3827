//! Soft thresholding: the proximal map of τ‖·‖₁ (the sparse-component step of robust PCA and
//! the master's step of FSSPCA), and the smoothed absolute value that FSSPCA's workers
//! differentiate instead of |·|.

use ndarray::{Array2, ArrayView2};

/// sign(v)·max(|v| − τ, 0) for τ ≥ 0, written with comparisons rather than `max` so that exact
/// zeros come out for |v| ≤ τ (also at τ = 0) and a NaN input stays NaN instead of becoming 0.
#[inline]
pub fn shrink(v: f64, tau: f64) -> f64 {
    if v > tau {
        v - tau
    } else if v < -tau {
        v + tau
    } else if v.is_nan() {
        v
    } else {
        0.0
    }
}

/// Entrywise soft threshold S_τ(X).
pub fn soft_threshold(x: ArrayView2<f64>, tau: f64) -> Array2<f64> {
    debug_assert!(tau >= 0.0, "soft threshold τ = {tau} < 0");
    x.mapv(|v| shrink(v, tau))
}

/// S_τ(X) in place: no allocation in the inner loop of iterative solvers.
pub fn soft_threshold_inplace(x: &mut Array2<f64>, tau: f64) {
    debug_assert!(tau >= 0.0, "soft threshold τ = {tau} < 0");
    x.mapv_inplace(|v| shrink(v, tau));
}

/// The smoothed absolute value ψ_μ of the federated sparse PCA paper, eq. (7) (Saheya et al.):
/// |x| for |x| ≥ μ/2, x²/μ + μ/4 inside. C¹ (value μ/2 and slope ±1 meet at ±μ/2), and
/// 0 ≤ ψ_μ(x) − |x| ≤ μ/4, so ψ_μ → |·| as μ → 0.
#[inline]
pub fn smooth_abs(x: f64, mu: f64) -> f64 {
    debug_assert!(mu > 0.0, "smoothing μ = {mu} <= 0");
    if x.abs() >= 0.5 * mu {
        x.abs()
    } else {
        x * x / mu + 0.25 * mu
    }
}

/// ψ_μ'(x): sign(x) for |x| ≥ μ/2, 2x/μ inside (Lipschitz with constant 2/μ).
#[inline]
pub fn smooth_abs_grad(x: f64, mu: f64) -> f64 {
    debug_assert!(mu > 0.0, "smoothing μ = {mu} <= 0");
    if x >= 0.5 * mu {
        1.0
    } else if x <= -0.5 * mu {
        -1.0
    } else {
        2.0 * x / mu
    }
}

/// r(W) = Σ_ij ψ_μ(w_ij): the smoothed ‖W‖₁.
pub fn smooth_l1(w: ArrayView2<f64>, mu: f64) -> f64 {
    w.iter().map(|&x| smooth_abs(x, mu)).sum()
}

/// ∇r(W), entrywise ψ_μ'(w_ij).
pub fn smooth_l1_grad(w: ArrayView2<f64>, mu: f64) -> Array2<f64> {
    w.mapv(|x| smooth_abs_grad(x, mu))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn matches_closed_form() {
        let x = array![
            [3.0, -3.0, 0.5, -0.5],
            [1.0, -1.0, 0.0, -0.0],
            [1e300, -2.25, 1.75, 7.0]
        ];
        let tau = 1.0;
        let want = array![
            [2.0, -2.0, 0.0, 0.0],
            [0.0, 0.0, 0.0, 0.0],
            [1e300, -1.25, 0.75, 6.0]
        ];
        let got = soft_threshold(x.view(), tau);
        assert_eq!(got, want);
        // Exact zeros (not tiny or negative-signed leftovers) wherever |x| ≤ τ.
        for (g, v) in got.iter().zip(x.iter()) {
            if v.abs() <= tau {
                assert!(*g == 0.0 && g.is_sign_positive(), "{v} -> {g}");
            } else {
                assert_eq!(*g, v.signum() * (v.abs() - tau));
            }
        }
        let mut y = x.clone();
        soft_threshold_inplace(&mut y, tau);
        assert_eq!(y, want);
    }

    #[test]
    fn tau_zero_is_identity_and_nan_free() {
        let x = array![
            [0.0, -0.0, 1e-310, -5.0],
            [f64::MAX, -f64::MAX, 2.0, -1e-20]
        ];
        let got = soft_threshold(x.view(), 0.0);
        assert!(got.iter().all(|v| !v.is_nan()));
        assert_eq!(got, x);
        // A huge τ zeroes everything, an infinite one too (no ∞ − ∞).
        assert!(soft_threshold(x.view(), f64::INFINITY)
            .iter()
            .all(|&v| v == 0.0));
    }

    #[test]
    fn nan_propagates() {
        let x = array![[f64::NAN, 1.0]];
        let got = soft_threshold(x.view(), 0.5);
        assert!(got[[0, 0]].is_nan());
        assert_eq!(got[[0, 1]], 0.5);
    }

    #[test]
    fn is_the_prox_of_l1() {
        // S_τ(x) minimises ½(y − x)² + τ|y|: no nearby y does better.
        let tau = 0.7;
        for &x in &[-3.0, -0.7, -0.3, 0.0, 0.2, 0.7, 1.9] {
            let y = shrink(x, tau);
            let f = |y: f64| 0.5 * (y - x) * (y - x) + tau * y.abs();
            for d in [-1e-3, -1e-6, 1e-6, 1e-3] {
                assert!(f(y) <= f(y + d) + 1e-15, "x = {x}");
            }
        }
    }

    #[test]
    fn smooth_abs_matches_closed_form() {
        let mu = 1e-3;
        // Outside ±μ/2: |x|; inside: x²/μ + μ/4 (μ/4 at 0).
        for &x in &[-2.0, -1e-3, -5e-4, 5e-4, 7e-4, 3.0] {
            assert_eq!(smooth_abs(x, mu), f64::abs(x), "x = {x}");
        }
        assert_eq!(smooth_abs(0.0, mu), 0.25 * mu);
        let x = 2e-4;
        assert!((smooth_abs(x, mu) - (x * x / mu + 0.25 * mu)).abs() <= 1e-18);
        assert!((smooth_abs(-x, mu) - smooth_abs(x, mu)).abs() == 0.0);
        // Continuous in value and slope at ±μ/2.
        for edge in [0.5 * mu, -0.5 * mu] {
            let (inside, outside) = (edge * (1.0 - 1e-9), edge * (1.0 + 1e-9));
            assert!((smooth_abs(inside, mu) - smooth_abs(outside, mu)).abs() <= 1e-12);
            assert!((smooth_abs_grad(inside, mu) - smooth_abs_grad(outside, mu)).abs() <= 1e-8);
        }
        // Within μ/4 of |x| everywhere.
        for i in -100..=100 {
            let x = f64::from(i) * 1e-5;
            let gap = smooth_abs(x, mu) - x.abs();
            assert!(
                (-1e-18..=0.25 * mu + 1e-18).contains(&gap),
                "x = {x}: {gap}"
            );
        }
    }

    #[test]
    fn smooth_abs_grad_is_the_derivative() {
        let mu = 1e-3;
        let h = 1e-9;
        for &x in &[
            -1.0, -6e-4, -4e-4, -1e-4, 0.0, 1e-4, 3e-4, 4.9e-4, 5.1e-4, 0.2,
        ] {
            let fd = (smooth_abs(x + h, mu) - smooth_abs(x - h, mu)) / (2.0 * h);
            assert!((fd - smooth_abs_grad(x, mu)).abs() <= 1e-5, "x = {x}: {fd}");
        }
        // The matrix versions are the entrywise sums and maps.
        let w = ndarray::array![[0.3, -1e-4], [0.0, -2.0]];
        let want = 0.3 + (1e-8 / mu + 0.25 * mu) + 0.25 * mu + 2.0;
        assert!((smooth_l1(w.view(), mu) - want).abs() <= 1e-15);
        assert_eq!(
            smooth_l1_grad(w.view(), mu),
            ndarray::array![[1.0, -0.2], [0.0, -1.0]]
        );
    }
}
