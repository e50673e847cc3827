//! The products of [`super::avx512`] for CPUs with AVX2 and FMA but not AVX-512, giving the
//! same bits: every entry is computed by the same operations in the same order, written per
//! entry with `f64::mul_add` (one rounding, as the AVX-512 FMA) and left to the compiler to
//! vectorise across independent entries, never within one sum. The orders, as [`super::avx512`]
//! states them:
//! - [`at_x_wide`]: T[j, q] is one FMA chain over the rows in order, from zero;
//! - [`at_x`]: T[j, q] sums the rows in 8 lanes (lane r mod 8, rows in order, one FMA each),
//!   then adds the lanes as `_mm512_reduce_add_pd` does ([`reduce8`]);
//! - [`a_t`]: Y[r, q] adds A[r, j]·T[j, q] for j in sample order, one FMA each, from the value
//!   its [`Ends`] starts it at.
//!
//! (The AVX-512 kernels' masked tails add 0·0 to a lane, which changes no sum: a sum that
//! starts at +0 is never −0.) Tested bit for bit against the AVX-512 kernels where the CPU has
//! both (`DPCA_PRODUCT_KERNEL=avx2` runs these on an AVX-512 machine too).
//!
//! Safety: as [`super::avx512`]'s: callers pass pointers valid for the stated shapes and
//! leading dimensions, and have checked `avx2` and `fma` at run time.

#![allow(clippy::needless_range_loop)]

use super::product_ends::{AddTo, ThresholdSum};

/// The lanes' sum in `_mm512_reduce_add_pd`'s order: halves, then quarters, then the pair.
#[inline(always)]
pub fn reduce8(l: [f64; 8]) -> f64 {
    let h = [l[0] + l[4], l[1] + l[5], l[2] + l[6], l[3] + l[7]];
    let q = [h[0] + h[2], h[1] + h[3]];
    q[0] + q[1]
}

/// T (c × p, ldt) = Aᵀ X for A n × c (lda) and X n × p (ldx): lanes as [`super::avx512::at_x`].
///
/// # Safety
/// As the module says; CPU with avx2 and fma.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn at_x(
    (n, c, p): (usize, usize, usize),
    (a, lda): (*const f64, usize),
    (x, ldx): (*const f64, usize),
    (t, ldt): (*mut f64, usize),
) {
    let full = n / 8 * 8;
    unsafe {
        for j in 0..c {
            let aj = std::slice::from_raw_parts(a.add(j * lda), n);
            for q in 0..p {
                let xq = std::slice::from_raw_parts(x.add(q * ldx), n);
                let mut lanes = [0.0f64; 8];
                for r0 in (0..full).step_by(8) {
                    for l in 0..8 {
                        lanes[l] = aj[r0 + l].mul_add(xq[r0 + l], lanes[l]);
                    }
                }
                for r in full..n {
                    lanes[r - full] = aj[r].mul_add(xq[r], lanes[r - full]);
                }
                *t.add(j + q * ldt) = reduce8(lanes);
            }
        }
    }
}

/// Samples and columns per register tile of [`at_x_wide`] (4 × 8 chains: 8 ymm registers).
const WIDE_J: usize = 4;
const WIDE_Q: usize = 8;

/// T (c × p, ldt) = Aᵀ X for A n × c (lda), from Xᵀ (n rows of p, row stride ldxt ≥ p): each
/// T[j, q] one FMA chain over the rows in order, as [`super::avx512::at_x_wide`].
///
/// # Safety
/// As the module says; CPU with avx2 and fma.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn at_x_wide(
    (n, c, p): (usize, usize, usize),
    (a, lda): (*const f64, usize),
    (xt, ldxt): (*const f64, usize),
    (t, ldt): (*mut f64, usize),
) {
    unsafe {
        for j0 in (0..c).step_by(WIDE_J) {
            let jb = (c - j0).min(WIDE_J);
            for q0 in (0..p).step_by(WIDE_Q) {
                let qb = (p - q0).min(WIDE_Q);
                let mut acc = [[0.0f64; WIDE_Q]; WIDE_J];
                if jb == WIDE_J && qb == WIDE_Q {
                    for r in 0..n {
                        let xr = std::slice::from_raw_parts(xt.add(r * ldxt + q0), WIDE_Q);
                        for k in 0..WIDE_J {
                            let b = *a.add(r + (j0 + k) * lda);
                            for q in 0..WIDE_Q {
                                acc[k][q] = b.mul_add(xr[q], acc[k][q]);
                            }
                        }
                    }
                } else {
                    for r in 0..n {
                        for k in 0..jb {
                            let b = *a.add(r + (j0 + k) * lda);
                            for q in 0..qb {
                                acc[k][q] = b.mul_add(*xt.add(r * ldxt + q0 + q), acc[k][q]);
                            }
                        }
                    }
                }
                for k in 0..jb {
                    for q in 0..qb {
                        *t.add(j0 + k + (q0 + q) * ldt) = acc[k][q];
                    }
                }
            }
        }
    }
}

/// Where an A·T entry's sum starts and where it goes (the scalar form of
/// [`super::avx512::Ends`], for the same [`AddTo`] and [`ThresholdSum`]).
pub trait Ends {
    /// # Safety
    /// (r, q) is within the implementor's buffers.
    unsafe fn start(&self, r: usize, q: usize) -> f64;
    /// # Safety
    /// As [`Ends::start`].
    unsafe fn finish(&self, r: usize, q: usize, sum: f64);
}

impl Ends for AddTo {
    #[inline(always)]
    unsafe fn start(&self, r: usize, q: usize) -> f64 {
        unsafe { *self.y.add(r + q * self.ld) }
    }
    #[inline(always)]
    unsafe fn finish(&self, r: usize, q: usize, sum: f64) {
        unsafe { *self.y.add(r + q * self.ld) = sum }
    }
}

impl Ends for ThresholdSum {
    #[inline(always)]
    unsafe fn start(&self, r: usize, q: usize) -> f64 {
        unsafe { *self.m.0.add(r + q * self.m.1) }
    }
    /// clamp = min(max(R, 0 − λ), λ) with the AVX-512 min/max semantics (the second operand
    /// unless the first is strictly beyond it), S = R − clamp, W = 0 − clamp.
    #[inline(always)]
    unsafe fn finish(&self, r: usize, q: usize, sum: f64) {
        let low = 0.0 - self.lambda;
        let high = if sum > low { sum } else { low };
        let clamp = if high < self.lambda {
            high
        } else {
            self.lambda
        };
        let at = r + q * self.ld;
        unsafe {
            *self.s.add(at) = sum - clamp;
            *self.w.add(at) = 0.0 - clamp;
        }
    }
}

/// Rows per register tile of [`a_t`] (16 rows × 4 columns: 16 ymm registers).
const AY_R: usize = 16;
const AY_Q: usize = 4;

/// A T (n × p) for A n × c (lda) and T c × p (ldt), into `ends` ([`AddTo`]: Y += A T), each
/// entry one FMA chain over the samples in order, as [`super::avx512::a_t`].
///
/// # Safety
/// As the module says, `ends` valid for n × p; CPU with avx2 and fma.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn a_t<E: Ends>(
    (n, c, p): (usize, usize, usize),
    (a, lda): (*const f64, usize),
    (t, ldt): (*const f64, usize),
    ends: &E,
) {
    unsafe {
        for q0 in (0..p).step_by(AY_Q) {
            let qb = (p - q0).min(AY_Q);
            for r0 in (0..n).step_by(AY_R) {
                let rb = (n - r0).min(AY_R);
                let mut acc = [[0.0f64; AY_R]; AY_Q];
                for q in 0..qb {
                    for i in 0..rb {
                        acc[q][i] = ends.start(r0 + i, q0 + q);
                    }
                }
                if rb == AY_R && qb == AY_Q {
                    for j in 0..c {
                        let aj = std::slice::from_raw_parts(a.add(r0 + j * lda), AY_R);
                        for q in 0..AY_Q {
                            let b = *t.add(j + (q0 + q) * ldt);
                            for i in 0..AY_R {
                                acc[q][i] = aj[i].mul_add(b, acc[q][i]);
                            }
                        }
                    }
                } else {
                    for j in 0..c {
                        for q in 0..qb {
                            let b = *t.add(j + (q0 + q) * ldt);
                            for i in 0..rb {
                                acc[q][i] = (*a.add(r0 + i + j * lda)).mul_add(b, acc[q][i]);
                            }
                        }
                    }
                }
                for q in 0..qb {
                    for i in 0..rb {
                        ends.finish(r0 + i, q0 + q, acc[q][i]);
                    }
                }
            }
        }
    }
}
