//! Soft thresholding: the proximal map of τ‖·‖₁ (the sparse-component step of robust PCA).

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
}
