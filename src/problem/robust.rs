//! Robust PCA (DCF-PCA paper): M = L₀ + S₀ with L₀ low rank and S₀ sparse, split over the
//! clients by columns; recover (L, S).
//!
//! The truth is planted, so it is the reference: L₀ = U₀V₀ᵀ with iid N(0, 1) factors (n×r and
//! m×r), S₀ with round(s·n·m) non-zeros at distinct uniformly random positions. The data is
//! regenerated from its seed on every run rather than cached: drawing it costs less than reading
//! the three n×m matrices back (0.3 s at 5000×5000).
//!
//! Estimates are read in factored form, L = U Vᵀ: U (n×k) is the server's part `u` (DCF-PCA's
//! shared factor) or, for a centralised method, its one client's; each client reveals its rows of
//! V (`v`, m_i×k) and its block of S (`s`, n×m_i) through the evaluation channel. Singular values
//! of L then come from a k×k SVD, never from an n×m one.

use super::{Accuracy, Instance, MetricDef};
use crate::data::cache::MatrixCache;
use crate::data::matrix::DataMatrix;
use crate::fed::Message;
use crate::linalg::{fro2, low_rank::low_rank_product, orth_with_r, svd::thin_svd};
use crate::progress::Progress;
use crate::seed;
use crate::spec::{Gen, Generator, Magnitude, Point, RawPoint};
use crate::spec::{Kind, StopSpec};
use anyhow::{bail, Result};
use ndarray::{concatenate, s, Array1, Array2, ArrayView2, Axis, ShapeBuilder};
use rand::seq::index::sample;
use rand::Rng;
use rand_distr::StandardNormal;
use std::path::Path;

pub const METRICS: &[MetricDef] = &[
    MetricDef {
        name: "err",
        label: "relative error (‖L−L₀‖²_F + ‖S−S₀‖²_F) / (‖L₀‖²_F + ‖S₀‖²_F)",
        short: "err",
        lower_is_better: true,
        log: true,
    },
    MetricDef {
        name: "sv_err",
        label: "relative singular-value error max_i |σ_i(L) − σ_i(L₀)| / σ_r(L₀)",
        short: "sv error",
        lower_is_better: true,
        log: true,
    },
    MetricDef {
        name: "rank",
        label: "rank of L (σ_i > 1e-6·σ_1(L₀))",
        short: "rank",
        lower_is_better: false,
        log: false,
    },
    MetricDef {
        name: "support_f1",
        label: "support recovery of S: F1 of its non-zeros against S₀'s",
        short: "support F1",
        lower_is_better: false,
        log: false,
    },
];

/// Singular values of L at or below this fraction of σ₁(L₀) do not count towards its rank.
pub const RANK_TOL: f64 = 1e-6;

/// The planted problem.
pub struct Planted {
    pub l0: Array2<f64>,
    pub s0: Array2<f64>,
    /// σ(L₀), descending (r values).
    pub sv0: Array1<f64>,
}

/// Draw (L₀, S₀) of size n×m with rank r and round(s·n·m) outliers.
pub fn planted(
    n: usize,
    m: usize,
    r: usize,
    sparsity: f64,
    magnitude: Magnitude,
    rng: &mut impl Rng,
) -> Result<Planted> {
    let (u0, v0) = factors_of_l0(n, m, r, rng);
    let l0 = low_rank_product(u0.view(), v0.view());
    let sv0 = factored_singular_values(u0.view(), v0.view())?;
    let mut s0 = Array2::<f64>::zeros((n, m).f());
    outliers(n, m, sparsity, magnitude, rng, |i, j, v| s0[[i, j]] = v);
    Ok(Planted { l0, s0, sv0 })
}

/// Columns `cols` of M = L₀ + S₀ as [`planted`] draws them from the same `rng`, equal to
/// them bit for bit, holding the factors (n×r, m×r) and those columns only. The outliers'
/// positions are still drawn over all n·m entries, as `planted` draws them: at s ≳ 3% rand
/// shuffles an index buffer of n·m u32 for that (half the f64 matrix, freed once drawn).
pub fn planted_columns(
    n: usize,
    m: usize,
    r: usize,
    sparsity: f64,
    magnitude: Magnitude,
    rng: &mut impl Rng,
    cols: std::ops::Range<usize>,
) -> Array2<f64> {
    let (u0, v0) = factors_of_l0(n, m, r, rng);
    // L₀'s columns by the code that forms the whole L₀: each entry's r-term sum in one fixed
    // order, on any CPU. (M = L₀ + S₀ adds +0.0 where S₀ is 0, which changes nothing: the sums
    // start at +0.0, so no entry is −0.0.)
    let mut part = low_rank_product(u0.view(), v0.slice(s![cols.clone(), ..]));
    outliers(n, m, sparsity, magnitude, rng, |i, j, v| {
        if cols.contains(&j) {
            part[[i, j - cols.start]] += v;
        }
    });
    part
}

/// U₀ (n×r) then V₀ (m×r), iid N(0, 1), column-major.
fn factors_of_l0(n: usize, m: usize, r: usize, rng: &mut impl Rng) -> (Array2<f64>, Array2<f64>) {
    let mut gauss = |rows: usize, cols: usize| {
        let v: Vec<f64> = (0..rows * cols)
            .map(|_| rng.sample::<f64, _>(StandardNormal))
            .collect();
        Array2::from_shape_vec((rows, cols).f(), v).expect("length matches shape")
    };
    let u0 = gauss(n, r);
    (u0, gauss(m, r))
}

/// The round(s·n·m) outliers of S₀, at distinct uniformly random positions: `put(i, j, value)`
/// for each, in the order they are drawn.
fn outliers(
    n: usize,
    m: usize,
    sparsity: f64,
    magnitude: Magnitude,
    rng: &mut impl Rng,
    mut put: impl FnMut(usize, usize, f64),
) {
    let count = (sparsity * (n * m) as f64).round() as usize;
    let scale = ((n * m) as f64).sqrt();
    for idx in sample(rng, n * m, count) {
        let sign = if rng.random::<bool>() { 1.0 } else { -1.0 };
        let size = match magnitude {
            Magnitude::Sign => scale,
            Magnitude::Uniform => rng.random::<f64>() * scale,
        };
        put(idx % n, idx / n, sign * size);
    }
}

/// σ(UVᵀ) from thin QRs of the factors: σ(R_U R_Vᵀ), O((n+m)k²).
pub fn factored_singular_values(u: ArrayView2<f64>, v: ArrayView2<f64>) -> Result<Array1<f64>> {
    let (_, ru) = orth_with_r(u);
    let (_, rv) = orth_with_r(v);
    Ok(thin_svd(ru.dot(&rv.t()).view())?.s)
}

/// The paper's Table 1 error: max_i |σ_i(L) − σ_i(L₀)| / σ_r(L₀), over every singular value
/// of either (those beyond a matrix's rank are 0).
pub fn sv_error(sv: &Array1<f64>, sv0: &Array1<f64>) -> f64 {
    let k = sv.len().max(sv0.len());
    let at = |a: &Array1<f64>, i: usize| a.get(i).copied().unwrap_or(0.0);
    let worst = (0..k)
        .map(|i| (at(sv, i) - at(sv0, i)).abs())
        .fold(0.0, f64::max);
    worst / sv0[sv0.len() - 1]
}

/// F1 score of supp(S) against supp(S₀) (exact non-zeros: soft-thresholding makes exact zeros).
pub fn support_f1(s: ArrayView2<f64>, s0: ArrayView2<f64>) -> f64 {
    let (mut tp, mut fp, mut fn_) = (0usize, 0usize, 0usize);
    for (a, b) in s.iter().zip(s0.iter()) {
        match (*a != 0.0, *b != 0.0) {
            (true, true) => tp += 1,
            (true, false) => fp += 1,
            (false, true) => fn_ += 1,
            _ => {}
        }
    }
    if tp == 0 {
        return 0.0;
    }
    2.0 * tp as f64 / (2 * tp + fp + fn_) as f64
}

/// The stream the planted problem of `point` is drawn from.
/// The manifest's rank, outlier sparsity and magnitude of the planted L₀ + S₀ (validated).
fn planted_params(point: &Point) -> Result<(usize, f64, Magnitude)> {
    match &point.data.gen {
        Gen::Robust(r) => Ok((r.rank, r.sparsity, r.magnitude.unwrap_or_default())),
        other => anyhow::bail!("generator `{}` does not make robust data", other.name()),
    }
}

fn planted_rng(point: &Point, run_seed: u64) -> impl Rng {
    let (_, data_seed) = super::data_key(point, run_seed);
    seed::rng(data_seed, &["planted"])
}

/// The common start of the shared factor: iid N(0, 1), unscaled, as the DCF-PCA authors' code
/// draws it (methods that start elsewhere ignore it).
fn start(point: &Point, run_seed: u64) -> Message {
    let (n, p) = (point.data.n, point.problem.p);
    let key = point.data.cache_key();
    let mut rng = seed::rng(run_seed, &["u0", &key, &p.to_string()]);
    let u0 = Array2::from_shape_fn((n, p).f(), |_| rng.sample::<f64, _>(StandardNormal));
    Message::new().with("u", u0)
}

/// A rank's share of `point`'s instance ([`super::share`]): its columns of M drawn alone
/// (the partition keeps the sample order), without L₀ and S₀ whole.
pub(super) fn share(point: &Point, run_seed: u64, pick: super::Pick) -> Result<super::Share> {
    let d = &point.data;
    let sizes = point.partition.client_sizes(d.m);
    let cols = pick(&sizes);
    let (r, sparsity, magnitude) = planted_params(point)?;
    let part = planted_columns(
        d.n,
        d.m,
        r,
        sparsity,
        magnitude,
        &mut planted_rng(point, run_seed),
        cols.clone(),
    );
    Ok(super::Share {
        sizes,
        lo: cols.start,
        cols: DataMatrix::Dense(part),
        start: start(point, run_seed),
    })
}

pub struct RobustInstance {
    m: DataMatrix,
    sizes: Vec<usize>,
    truth: Planted,
    start: Message,
}

impl RobustInstance {
    pub fn build(point: &Point, run_seed: u64) -> Result<Self> {
        let d = &point.data;
        let (r, sparsity, magnitude) = planted_params(point)?;
        let truth = planted(
            d.n,
            d.m,
            r,
            sparsity,
            magnitude,
            &mut planted_rng(point, run_seed),
        )?;
        // Column-major, as DataMatrix::Dense is everywhere: clients take contiguous column blocks.
        let mut m = Array2::zeros((d.n, d.m).f());
        m.assign(&truth.l0);
        m += &truth.s0;
        Ok(Self {
            m: DataMatrix::Dense(m),
            sizes: point.partition.client_sizes(d.m),
            truth,
            start: start(point, run_seed),
        })
    }

    pub fn truth(&self) -> &Planted {
        &self.truth
    }
}

impl Instance for RobustInstance {
    fn data(&self) -> &DataMatrix {
        &self.m
    }
    fn sizes(&self) -> &[usize] {
        &self.sizes
    }
    fn start(&self) -> &Message {
        &self.start
    }
    fn dim(&self) -> usize {
        self.m.n()
    }
    fn spectra(
        &self,
        server: &Message,
        clients: &[Message],
    ) -> Result<Vec<(&'static str, Vec<f64>)>> {
        let (u, v) = factors(server, clients)?;
        Ok(vec![
            ("sv", factored_singular_values(u.view(), v.view())?.to_vec()),
            ("sv_truth", self.truth.sv0.to_vec()),
        ])
    }
    fn evaluate(&self, server: &Message, clients: &[Message]) -> Result<Vec<f64>> {
        evaluate_against(&self.truth, server, clients)
    }
}

/// The [`METRICS`] of an estimate (the server's message and every client's revealed one, in
/// client order) against the planted truth: what [`RobustInstance`] reports after each round,
/// callable without a manifest point (tests, benchmarks).
pub fn evaluate_against(
    truth: &Planted,
    server: &Message,
    clients: &[Message],
) -> Result<Vec<f64>> {
    let (u, v) = factors(server, clients)?;
    let ss: Vec<ArrayView2<f64>> = clients
        .iter()
        .map(|c| c.get("s").map(|s| s.view()))
        .collect::<Result<_>>()?;
    let s = concatenate(Axis(1), &ss)?;
    let l = u.dot(&v.t());
    let truth_fro2 = fro2(truth.l0.view()) + fro2(truth.s0.view());
    let err = (fro2((&l - &truth.l0).view()) + fro2((&s - &truth.s0).view())) / truth_fro2;
    let sv = factored_singular_values(u.view(), v.view())?;
    let rank = sv.iter().filter(|&&x| x > RANK_TOL * truth.sv0[0]).count();
    let r = truth.sv0.len();
    let sv = sv.slice(s![..sv.len().min(rank.max(r))]).to_owned();
    Ok(vec![
        err,
        sv_error(&sv, &truth.sv0),
        rank as f64,
        support_f1(s.view(), truth.s0.view()),
    ])
}

/// The factors of L = UVᵀ: U from the server (or the one client of a centralised method), V
/// stacked from the clients' rows in client order.
fn factors(server: &Message, clients: &[Message]) -> Result<(Array2<f64>, Array2<f64>)> {
    let u = match (server.has("u"), clients) {
        (true, _) => server.get("u")?,
        (false, [only]) => only.get("u")?,
        _ => bail!("robust estimate: no factor `u` at the server or a single client"),
    };
    let vs: Vec<ArrayView2<f64>> = clients
        .iter()
        .map(|c| c.get("v").map(|v| v.view()))
        .collect::<Result<_>>()?;
    Ok((u.clone(), concatenate(Axis(0), &vs)?))
}

/// The robust family ([`super::Family`]).
pub struct Robust;

impl super::Family for Robust {
    fn kind(&self) -> Kind {
        Kind::Robust
    }
    fn metrics(&self) -> &'static [MetricDef] {
        METRICS
    }
    /// Stalled or converged (see `run::Status`): the relative error to the planted (L₀, S₀), the
    /// solution where recovery succeeds; 1e-12 is round-off.
    fn accuracy(&self) -> &'static [Accuracy] {
        &[Accuracy {
            metric: "err",
            solved: 1e-12,
        }]
    }
    fn takes_methods_of(&self) -> &'static [Kind] {
        &[Kind::Robust]
    }
    fn generators(&self) -> &'static [Generator] {
        &[Generator::Robust]
    }
    /// The rank bound p of the factor U lies in rank..=min(n, m) (it defaults to the rank).
    fn check_point(&self, pt: &RawPoint) -> std::result::Result<(), (Vec<&'static str>, String)> {
        let d = &pt.data;
        let (Gen::Robust(r), p) = (&d.gen, pt.problem.p) else {
            return Ok(());
        };
        if p < r.rank || p > d.n.min(d.m) {
            return Err((
                vec!["problem.p", "data.rank"],
                format!(
                    "problem.p = {p}: the rank bound must lie in rank..=min(n, m) = {}..={}",
                    r.rank,
                    d.n.min(d.m)
                ),
            ));
        }
        Ok(())
    }
    fn spectra(&self) -> &'static [&'static str] {
        &["sv"]
    }
    fn spectrum_short(&self, name: &str) -> Option<&'static str> {
        (name == "sv").then_some("σ(L)")
    }
    fn p_axis(&self) -> &'static str {
        "p (rank bound of U)"
    }
    /// DCF-PCA, CF-PCA and IALM stop by their papers' criteria (as every robust manifest here
    /// does); none reports an objective for rule (27).
    fn default_stop(&self) -> StopSpec {
        StopSpec::own_criterion(1000)
    }
    fn example(&self) -> &'static str {
        "[data]\ngenerator = \"robust\"\nn = 30\nm = 60\nrank = 2\nsparsity = 0.05\nmagnitude = \"sign\"\n[problem]\nkind = \"robust\"\n"
    }
    fn reference_note(&self, _point: &Point) -> String {
        "the planted truth (L₀, S₀)".into()
    }
    fn build(
        &self,
        point: &Point,
        run_seed: u64,
        _cache: &MatrixCache,
        _data_dir: &Path,
        _progress: &Progress,
    ) -> Result<Box<dyn Instance>> {
        Ok(Box::new(RobustInstance::build(point, run_seed)?))
    }
    fn share(
        &self,
        point: &Point,
        run_seed: u64,
        _cache: &MatrixCache,
        _data_dir: &Path,
        pick: super::Pick,
    ) -> Result<super::Share> {
        share(point, run_seed, pick)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn planted_has_the_asked_rank_and_outliers() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let p = planted(60, 40, 3, 0.05, Magnitude::Sign, &mut rng).unwrap();
        assert_eq!(p.s0.iter().filter(|v| **v != 0.0).count(), 120);
        assert!(p
            .s0
            .iter()
            .all(|v| *v == 0.0 || v.abs() == (2400f64).sqrt()));
        // σ(L₀) from the factors equals the full SVD's top 3, and σ₄ of L₀ is rounding noise.
        let full = thin_svd(p.l0.view()).unwrap().s;
        for i in 0..3 {
            assert!((full[i] - p.sv0[i]).abs() <= 1e-10 * full[0]);
        }
        assert!(full[3] <= 1e-12 * full[0]);
    }

    /// Any column range of M drawn alone equals those columns of L₀ + S₀ bit for bit: the
    /// sub-GEMM sums as the whole one (widths 1 up to all, at sizes where OpenBLAS threads).
    #[test]
    fn planted_columns_equal_the_whole_matrix_columns() {
        let (n, m, r) = (600, 700, 7);
        let draw = || rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let p = planted(n, m, r, 0.05, Magnitude::Uniform, &mut draw()).unwrap();
        let whole = &p.l0 + &p.s0;
        for cols in [0..1, 5..6, 3..10, 0..m, 17..m, 350..351, 699..700, 8..8] {
            let part =
                planted_columns(n, m, r, 0.05, Magnitude::Uniform, &mut draw(), cols.clone());
            let want = whole.slice(s![.., cols.clone()]);
            assert!(
                part.iter()
                    .zip(want.iter())
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "columns {cols:?}"
            );
            assert_eq!(part.dim(), want.dim());
        }
    }

    #[test]
    fn sv_error_and_support_follow_their_definitions() {
        let sv0 = Array1::from(vec![4.0, 2.0]);
        assert_eq!(sv_error(&Array1::from(vec![4.5, 2.0, 0.2]), &sv0), 0.25);
        let s0 = ndarray::arr2(&[[1.0, 0.0], [0.0, 2.0]]);
        let s = ndarray::arr2(&[[3.0, 1.0], [0.0, 0.0]]);
        // tp = 1, fp = 1, fn = 1.
        assert!((support_f1(s.view(), s0.view()) - 0.5).abs() < 1e-15);
    }
}
