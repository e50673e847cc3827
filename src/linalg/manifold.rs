//! Geometry of the unit sphere and the Stiefel manifold St(n, p) = {X : XᵀX = I} with the
//! embedded metric: tangent projections (Riemannian gradients from Euclidean ones) and
//! retractions (moving along a tangent vector while staying on the manifold). Also the
//! generalized Stiefel manifold {X : XᵀGX = I} (G symmetric positive semidefinite) that
//! FSSPCA's deflation works on (Sato & Aihara's Cholesky-QR retraction).

use super::{cholesky_upper, orth, sym_eig_desc};
use anyhow::{bail, Context, Result};
use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis};

/// P_w(g) = g − w(wᵀg): the component of g tangent to the sphere at the unit vector w.
pub fn sphere_project(w: ArrayView1<f64>, g: ArrayView1<f64>) -> Array1<f64> {
    &g - &(&w * w.dot(&g))
}

/// R_w(ξ) = (w + ξ)/‖w + ξ‖; never zero for tangent ξ, since ‖w + ξ‖² = 1 + ‖ξ‖².
pub fn sphere_retract(w: ArrayView1<f64>, xi: ArrayView1<f64>) -> Array1<f64> {
    let y = &w + &xi;
    let norm = y.dot(&y).sqrt();
    y / norm
}

/// The exponential map of the unit sphere: Exp_w(ξ) = cos‖ξ‖·w + sin‖ξ‖·ξ/‖ξ‖ (ξ tangent),
/// the point at geodesic distance ‖ξ‖ from w in the direction ξ. Renormalised against rounding.
pub fn sphere_exp(w: ArrayView1<f64>, xi: ArrayView1<f64>) -> Array1<f64> {
    let t = xi.dot(&xi).sqrt();
    if t == 0.0 {
        return w.to_owned();
    }
    let y = &w * t.cos() + &xi * (t.sin() / t);
    let norm = y.dot(&y).sqrt();
    y / norm
}

/// The inverse of [`sphere_exp`]: the tangent vector at w pointing to u with length the
/// geodesic distance arccos(wᵀu) (u ≠ −w).
pub fn sphere_log(w: ArrayView1<f64>, u: ArrayView1<f64>) -> Array1<f64> {
    let p = sphere_project(w, u);
    let pn = p.dot(&p).sqrt();
    if pn == 0.0 {
        return Array1::zeros(w.len());
    }
    // atan2 keeps the angle accurate near 0 and π, where acos loses digits.
    let theta = pn.atan2(w.dot(&u));
    p * (theta / pn)
}

/// P_X(G) = G − X sym(XᵀG): the component of G tangent to St(n, p) at X (Xᵀ P_X(G) is skew).
pub fn stiefel_project(x: ArrayView2<f64>, g: ArrayView2<f64>) -> Array2<f64> {
    &g - &x.dot(&sym(x.t().dot(&g)))
}

/// QR retraction qf(X + ξ), the Q factor with diag(R) ≥ 0 (unique, so the map is smooth).
pub fn stiefel_retract_qr(x: ArrayView2<f64>, xi: ArrayView2<f64>) -> Array2<f64> {
    orth((&x + &xi).view())
}

/// Polar retraction (X + ξ)(I + ξᵀξ)^{-1/2}, the nearest point of St(n, p) to X + ξ.
///
/// Computed as Y(YᵀY)^{-1/2} with Y = X + ξ, which equals the formula for tangent ξ
/// (YᵀY = I + ξᵀξ when Xᵀξ is skew) and still lands on the manifold when ξ is tangent only up to
/// rounding. YᵀY has eigenvalues ≥ 1 for tangent ξ, so the inverse square root is well conditioned.
pub fn stiefel_retract_polar(x: ArrayView2<f64>, xi: ArrayView2<f64>) -> Result<Array2<f64>> {
    let y = &x + &xi;
    let eig = sym_eig_desc(y.t().dot(&y).view())?;
    let (largest, smallest) = match (eig.values.first(), eig.values.last()) {
        (Some(&l), Some(&s)) => (l, s),
        _ => return Ok(y), // p = 0
    };
    if smallest.is_nan() || smallest <= f64::EPSILON * largest {
        bail!("polar retraction: X + ξ is (numerically) rank deficient");
    }
    // (YᵀY)^{-1/2} = V diag(λ^{-1/2}) Vᵀ
    let scaled = &eig.vectors * &eig.values.mapv(|l| l.sqrt().recip()).insert_axis(Axis(0));
    Ok(y.dot(&scaled.dot(&eig.vectors.t())))
}

/// The G of a generalized Stiefel manifold {X : XᵀGX = I}, applied to matrices.
#[derive(Clone, Copy, Debug)]
pub enum Metric<'a> {
    /// G = I: the ordinary Stiefel manifold.
    Identity,
    /// A dense symmetric positive semidefinite n×n G.
    Dense(ArrayView2<'a, f64>),
    /// G = I − FFᵀ for F (n×k) with orthonormal columns: the projector onto span(F)^⊥ of a
    /// deflation, applied as X − F(FᵀX) so that no n×n matrix is formed.
    Complement(ArrayView2<'a, f64>),
}

impl Metric<'_> {
    /// G X.
    pub fn apply(&self, x: ArrayView2<f64>) -> Array2<f64> {
        match self {
            Self::Identity => x.to_owned(),
            Self::Dense(g) => g.dot(&x),
            Self::Complement(f) => &x - &f.dot(&f.t().dot(&x)),
        }
    }
}

/// P_X(ξ) = ξ − X sym(XᵀGξ), the federated sparse PCA paper's (18): a projection onto the
/// tangent space {ξ : ξᵀGX + XᵀGξ = 0} at X (XᵀGX = I). It is the G-orthogonal projection
/// (orthogonal in ⟨ξ, η⟩ = tr(ξᵀGη)); with G = I it is [`stiefel_project`].
pub fn gen_stiefel_project(x: ArrayView2<f64>, g: &Metric, xi: ArrayView2<f64>) -> Array2<f64> {
    &xi - &x.dot(&sym(g.apply(x).t().dot(&xi)))
}

/// Y R⁻¹ with RᵀR = YᵀGY (Cholesky): the point of {XᵀGX = I} with the same column span as Y and
/// an upper-triangular change of basis. Errors when YᵀGY is not positive definite (Y has a
/// G-null combination of columns).
pub fn gen_stiefel_normalize(y: ArrayView2<f64>, g: &Metric) -> Result<Array2<f64>> {
    let gram = y.t().dot(&g.apply(y));
    let r =
        cholesky_upper(gram.view()).context("generalized Stiefel: YᵀGY not positive definite")?;
    // Solve Q R = Y column by column (R is p×p, p small): q_j = (y_j − Σ_{i<j} q_i r_ij)/r_jj.
    let mut q = y.to_owned();
    for j in 0..q.ncols() {
        for i in 0..j {
            let (done, mut rest) = q.view_mut().split_at(Axis(1), j);
            rest.column_mut(0).scaled_add(-r[[i, j]], &done.column(i));
        }
        q.column_mut(j).mapv_inplace(|v| v / r[[j, j]]);
    }
    Ok(q)
}

/// The Cholesky-QR retraction of Algorithm 5 (Sato & Aihara): Y = X + ξ, RᵀR = YᵀGY,
/// R_X(ξ) = Y R⁻¹. For tangent ξ, YᵀGY = I + ξᵀGξ ⪰ I, so it never fails at a point of the
/// manifold; it agrees with [`stiefel_retract_qr`] when G = I.
pub fn gen_stiefel_retract_cholqr(
    x: ArrayView2<f64>,
    g: &Metric,
    xi: ArrayView2<f64>,
) -> Result<Array2<f64>> {
    gen_stiefel_normalize((&x + &xi).view(), g)
}

/// sym(A) = (A + Aᵀ)/2.
fn sym(a: Array2<f64>) -> Array2<f64> {
    (&a + &a.t()) * 0.5
}

#[cfg(test)]
mod tests {
    use super::super::{fro2, orth};
    use super::*;
    use ndarray_linalg::SVD;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn uniform(rng: &mut ChaCha8Rng, m: usize, n: usize) -> Array2<f64> {
        Array2::from_shape_simple_fn((m, n), || rng.random_range(-1.0..1.0))
    }

    fn fro(a: ArrayView2<f64>) -> f64 {
        fro2(a).sqrt()
    }

    fn norm(v: ArrayView1<f64>) -> f64 {
        v.dot(&v).sqrt()
    }

    fn off_stiefel(x: &Array2<f64>) -> f64 {
        fro((x.t().dot(x) - Array2::<f64>::eye(x.ncols())).view())
    }

    /// e(t) = ‖R(tξ) − X − tξ‖ must shrink like t²: e(t)/t² roughly constant and not zero.
    fn assert_second_order_error(e: impl Fn(f64) -> f64) {
        let ratios: Vec<f64> = [1e-1, 1e-2, 1e-3].iter().map(|&t| e(t) / (t * t)).collect();
        for w in ratios.windows(2) {
            assert!(
                w[0] > 1e-3 && (w[1] / w[0] - 1.0).abs() < 0.2,
                "e(t)/t² = {ratios:?}"
            );
        }
    }

    #[test]
    fn sphere() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let n = 40;
        let w0 = uniform(&mut rng, n, 1).column(0).to_owned();
        let w = &w0 / norm(w0.view());
        let g = uniform(&mut rng, n, 1).column(0).to_owned() * 10.0;
        let p = sphere_project(w.view(), g.view());
        let gn = norm(g.view());
        // idempotent, tangent (⊥ w), and g − P(g) is normal (parallel to w)
        assert!(norm((&sphere_project(w.view(), p.view()) - &p).view()) <= 1e-12 * gn);
        assert!(w.dot(&p).abs() <= 1e-12 * gn);
        let normal = &g - &p;
        assert!(norm((&normal - &(&w * w.dot(&normal))).view()) <= 1e-12 * gn);
        // retraction lands on the sphere, at the closed form (w + ξ)/√(1 + ‖ξ‖²) for tangent ξ
        let xi = &p * (0.5 / norm(p.view()));
        let r = sphere_retract(w.view(), xi.view());
        assert!((norm(r.view()) - 1.0).abs() <= 1e-12);
        let want = (&w + &xi) / (1.0 + xi.dot(&xi)).sqrt();
        assert!(norm((&r - &want).view()) <= 1e-12);
        assert_second_order_error(|t| {
            let r = sphere_retract(w.view(), (&xi * t).view());
            norm((&r - &w - &(&xi * t)).view())
        });
    }

    #[test]
    fn sphere_exp_and_log() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let n = 30;
        let unit = |v: Array1<f64>| &v / norm(v.view());
        let w = unit(uniform(&mut rng, n, 1).column(0).to_owned());
        let u = unit(uniform(&mut rng, n, 1).column(0).to_owned());
        let xi = sphere_log(w.view(), u.view());
        // tangent, of length the angle, and Exp undoes it
        assert!(w.dot(&xi).abs() <= 1e-14);
        assert!((norm(xi.view()) - w.dot(&u).clamp(-1.0, 1.0).acos()).abs() <= 1e-12);
        let back = sphere_exp(w.view(), xi.view());
        assert!(norm((&back - &u).view()) <= 1e-13);
        // Exp stays on the sphere, even for long steps, and is the geodesic: distance = ‖ξ‖
        let long = &xi * 2.5;
        let e = sphere_exp(w.view(), long.view());
        assert!((norm(e.view()) - 1.0).abs() <= 1e-14);
        // Exp and the retraction agree to second order
        assert_second_order_error(|t| {
            let xt = &xi * t;
            norm((&sphere_exp(w.view(), xt.view()) - &sphere_retract(w.view(), xt.view())).view())
                / t
        });
        assert!(norm(sphere_log(w.view(), w.view()).view()) <= 1e-15);
    }

    #[test]
    fn stiefel_projection() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let (n, p) = (50, 7);
        let x = orth(uniform(&mut rng, n, p).view());
        let g = uniform(&mut rng, n, p) * 10.0;
        let gn = fro(g.view());
        let pg = stiefel_project(x.view(), g.view());
        assert!(fro((stiefel_project(x.view(), pg.view()) - &pg).view()) <= 1e-12 * gn);
        // tangent: XᵀP(G) skew, i.e. P(G) ⊥ every normal vector XS (S symmetric)
        let xtp = x.t().dot(&pg);
        assert!(fro((&xtp + &xtp.t()).view()) <= 1e-12 * gn);
        let s = sym(uniform(&mut rng, p, p));
        assert!((&pg * &x.dot(&s)).sum().abs() <= 1e-12 * gn * fro(s.view()));
        // G − P(G) = X sym(XᵀG) is normal, so ⟨P(G), G − P(G)⟩ = 0
        assert!((&pg * &(&g - &pg)).sum().abs() <= 1e-12 * gn * gn);
        // a tangent vector is left unchanged
        let skew = {
            let a = uniform(&mut rng, p, p);
            &a - &a.t()
        };
        let perp = {
            let z = uniform(&mut rng, n, p);
            &z - &x.dot(&x.t().dot(&z))
        };
        let tangent = x.dot(&skew) + &perp;
        let back = stiefel_project(x.view(), tangent.view());
        assert!(fro((&back - &tangent).view()) <= 1e-12 * fro(tangent.view()));
    }

    #[test]
    fn stiefel_retractions() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let (n, p) = (60, 5);
        let x = orth(uniform(&mut rng, n, p).view());
        let xi = stiefel_project(x.view(), uniform(&mut rng, n, p).view());
        let xi = &xi / fro(xi.view());
        for scale in [1e-3, 0.5, 3.0] {
            let step = &xi * scale;
            let q = stiefel_retract_qr(x.view(), step.view());
            let polar = stiefel_retract_polar(x.view(), step.view()).unwrap();
            assert!(off_stiefel(&q) <= 1e-12, "{}", off_stiefel(&q));
            assert!(off_stiefel(&polar) <= 1e-12, "{}", off_stiefel(&polar));
            // both span X + ξ: Q R = X + ξ with R upper triangular, diag ≥ 0
            let y = &x + &step;
            let r = q.t().dot(&y);
            assert!(fro((q.dot(&r) - &y).view()) <= 1e-12 * fro(y.view()));
            for i in 0..p {
                assert!(r[[i, i]] > 0.0 && (0..i).all(|j| r[[i, j]].abs() <= 1e-12));
            }
            // polar factor U Vᵀ of svd(X + ξ), as LAPACK computes it
            let (u, _, vt) = y.svd(true, true).unwrap();
            let uvt = u.unwrap().slice(ndarray::s![.., ..p]).dot(&vt.unwrap());
            assert!(
                fro((&polar - &uvt).view()) <= 1e-12,
                "{}",
                fro((&polar - &uvt).view())
            );
        }
        assert_second_order_error(|t| {
            let step = &xi * t;
            fro((stiefel_retract_qr(x.view(), step.view()) - &x - &step).view())
        });
        assert_second_order_error(|t| {
            let step = &xi * t;
            fro((stiefel_retract_polar(x.view(), step.view()).unwrap() - &x - &step).view())
        });
    }

    #[test]
    fn polar_rejects_rank_deficiency() {
        let x = Array2::<f64>::eye(3).slice(ndarray::s![.., ..2]).to_owned();
        let xi = -&x;
        assert!(stiefel_retract_polar(x.view(), xi.view()).is_err());
    }

    /// ‖XᵀGX − I‖_F.
    fn off_gen_stiefel(x: &Array2<f64>, g: &Metric) -> f64 {
        fro((x.t().dot(&g.apply(x.view())) - Array2::<f64>::eye(x.ncols())).view())
    }

    #[test]
    fn generalized_stiefel() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let (n, p, k) = (40, 3, 4);
        let f = orth(uniform(&mut rng, n, k).view());
        let g_dense = Array2::<f64>::eye(n) - f.dot(&f.t());
        let metrics = [
            Metric::Identity,
            Metric::Dense(g_dense.view()),
            Metric::Complement(f.view()),
        ];
        // The two forms of I − FFᵀ agree.
        let y = uniform(&mut rng, n, p);
        let (a, b) = (metrics[1].apply(y.view()), metrics[2].apply(y.view()));
        assert!(fro((&a - &b).view()) <= 1e-13);
        for g in &metrics {
            // A start point: W ← GW, then Cholesky-normalised.
            let x =
                gen_stiefel_normalize(g.apply(uniform(&mut rng, n, p).view()).view(), g).unwrap();
            assert!(off_gen_stiefel(&x, g) <= 1e-12, "{g:?}");
            let xi = uniform(&mut rng, n, p) * 10.0;
            let pg = gen_stiefel_project(x.view(), g, xi.view());
            // tangent: XᵀGξ + ξᵀGX = 0, and projecting again changes nothing
            let xtg = x.t().dot(&g.apply(pg.view()));
            assert!(fro((&xtg + &xtg.t()).view()) <= 1e-12, "{g:?}");
            let again = gen_stiefel_project(x.view(), g, pg.view());
            assert!(fro((&again - &pg).view()) <= 1e-12 * fro(pg.view()));
            for scale in [1e-3, 0.5, 3.0] {
                let step = &pg * (scale / fro(pg.view()));
                let r = gen_stiefel_retract_cholqr(x.view(), g, step.view()).unwrap();
                assert!(off_gen_stiefel(&r, g) <= 1e-12, "{g:?} at {scale}");
            }
            assert_second_order_error(|t| {
                let step = &pg * (t / fro(pg.view()));
                let r = gen_stiefel_retract_cholqr(x.view(), g, step.view()).unwrap();
                fro((r - &x - &step).view())
            });
        }
        // G = I: (18) is the Stiefel projection and Cholesky QR is the QR retraction.
        let x = orth(uniform(&mut rng, n, p).view());
        let xi = uniform(&mut rng, n, p);
        let pg = gen_stiefel_project(x.view(), &Metric::Identity, xi.view());
        assert!(fro((&pg - &stiefel_project(x.view(), xi.view())).view()) <= 1e-13);
        let step = &pg * 0.3;
        let chol = gen_stiefel_retract_cholqr(x.view(), &Metric::Identity, step.view()).unwrap();
        let qr = stiefel_retract_qr(x.view(), step.view());
        assert!(fro((&chol - &qr).view()) <= 1e-12);
        // A G-null direction cannot be normalised.
        let null = f.slice(ndarray::s![.., ..p]).to_owned();
        assert!(gen_stiefel_normalize(null.view(), &Metric::Complement(f.view())).is_err());
    }
}
