//! The leading eigenvector (the CEDRE paper): minimise F(w) = −½ wᵀÂw over the unit sphere,
//! Â = XXᵀ/N the sample covariance of all N samples (columns of X), the mean of the machines'
//! A_k = X_kX_kᵀ/n_k under an even split.
//!
//! Data, as the paper treats every data set (§6.1): centred by the global mean, then rescaled so
//! that λ₁(Â) = 1. Synthetic data (generator "eigengap") keeps its population covariance UΣUᵀ,
//! rescaled by the same factor.
//!
//! Sparse data stays sparse when making it dense would take more than [`MAX_DENSIFIED`] entries
//! (rcv1: 47,236 × 1,231,776): it is centred implicitly ([`DataMatrix::Centred`], X − μ1ᵀ applied
//! as a rank-one correction of the CSR products), so every method's products see the centred
//! data without a dense copy. Smaller sparse sets (a9a) are made dense, as before.
//!
//! Reference. D ≤ [`MAX_FEATURES`] (8192: a 512 MiB covariance): LAPACK dsyevd of Â, every
//! eigenpair. Beyond: restarted block Krylov on w ↦ Âw (never forming Â) for v₁ and λ₁, to a
//! residual ‖Âv − λv‖ ≤ 1e-12·λ₁ ([`KRYLOV_TOL`]), so v₁ is off by at most 1e-12/δ (Davis–Kahan,
//! δ = λ₁ − λ₂ = 0.28 on rcv1: 4e-12). The log error is then evaluated without cancellation as
//! F(w) − F(v₁) = ½ rᵀ(λ₁I − Â)r, r = w − (v₁ᵀw)v₁ (exact for an exact eigenpair; the Ritz
//! pair's residual adds at most 1e-12·‖r‖ ≈ 3e-19 at the paper's −32, where ‖r‖ ≈ 3e-7, and v₁'s
//! error moves ‖r‖² by a factor 1 ± 2·4e-12/3e-7: the log error is good to 1e-4 there). The
//! warm start is then machine 1's v₁ by the same Krylov solver.
//!
//! Metrics at the server's `w` (normalised), with Â = Σ λ_i v_iv_iᵀ from dsyevd:
//! - `log_err` = ln(F(w) − F(v₁)) (natural log, as the paper: −32 ≈ 1e-14). Evaluated as
//!   ln(½ Σ_i (λ₁ − λ_i)(v_iᵀw)²), which keeps its digits where λ₁ − wᵀÂw would cancel;
//! - `sin2` = 1 − (v₁ᵀw)² = Σ_(i≥2) (v_iᵀw)²;
//! - `pop_log_err` = ln(F_pop(w) − F_pop(u₁)), F_pop(w) = −½ wᵀ(UΣUᵀ)w: the error against the
//!   population optimum of the paper's fig. 3(a) (synthetic data only; NaN otherwise).
//!
//! Start (the paper's warm start, §4.3): the leading eigenvector of machine 1's A_1, computed
//! before the run and given to every party (not counted, as in the paper); as part `w`, and as
//! `z` for subspace methods (SSI, LocalPower, FAPS at p = 1), whose estimate `z` is read when
//! there is no `w`.

use super::{Accuracy, Instance, MetricDef};
use crate::data::cache::MatrixCache;
use crate::data::matrix::{Block, DataMatrix};
use crate::data::{eigengap, partition, prepare};
use crate::fed::Message;
use crate::linalg::krylov::KRYLOV_TOL;
use crate::linalg::sym_eig_desc;
use crate::progress::Progress;
use crate::seed;
use crate::spec::Kind;
use crate::spec::{Gen, Generator, Point, RawPoint, StopSpec, Target};
use anyhow::{bail, Result};
use ndarray::{s, Array1, Array2, ArrayView1, Axis, ShapeBuilder};
use std::path::Path;

pub const REFERENCE: &str = "the leading eigenvector of Â = XXᵀ/N by LAPACK dsyevd (exact)";

/// How the reference of D features is computed, for run.json.
pub fn reference(d: usize) -> String {
    if d <= MAX_FEATURES {
        REFERENCE.into()
    } else {
        format!(
            "the leading eigenvector of Â = XXᵀ/N by block Krylov on w ↦ Âw, residual ≤ \
             {KRYLOV_TOL:.0e}·λ₁"
        )
    }
}

/// Largest dimension of the dense reference (an eigendecomposition of the D×D covariance);
/// beyond it, block Krylov.
pub const MAX_FEATURES: usize = 8192;

/// Largest sparse data set (entries D·N) made dense for centring: 2 GiB of f64.
pub const MAX_DENSIFIED: usize = 1 << 28;

/// The D×N dense, column-major matrix of sparse samples.
fn densify(c: &crate::data::loaders::Csr) -> Array2<f64> {
    let mut d = Array2::zeros((c.n_features(), c.n_samples()).f());
    let (ptr, idx, val) = (c.indptr(), c.indices(), c.values());
    for j in 0..c.n_samples() {
        for k in ptr[j]..ptr[j + 1] {
            d[[idx[k] as usize, j]] = val[k];
        }
    }
    d
}

/// Gaps below this are reported at it: ln of an exact 0 would be −∞.
const GAP_FLOOR: f64 = 1e-300;

pub const METRICS: &[MetricDef] = &[
    MetricDef {
        name: "log_err",
        label: "log error ln(F(w) − F(v₁))",
        short: "log error",
        lower_is_better: true,
        log: false,
    },
    MetricDef {
        name: "sin2",
        label: "1 − (v₁ᵀw)²",
        short: "sin²θ",
        lower_is_better: true,
        log: true,
    },
    MetricDef {
        name: "pop_log_err",
        label: "log error to the population optimum ln(F_pop(w) − F_pop(u₁))",
        short: "population log error",
        lower_is_better: true,
        log: false,
    },
];

/// Eigenpairs of Â: all of them (dsyevd), or the top one (block Krylov).
enum Reference {
    /// Descending; λ₁ = 1.
    Full {
        values: Array1<f64>,
        vectors: Array2<f64>,
    },
    /// λ₁ (1 up to the rescaling's rounding) and v₁.
    Top { lambda: f64, v: Array1<f64> },
}

/// The population covariance UΣUᵀ (already rescaled with the data).
struct Population {
    u: Array2<f64>,
    sigma: Array1<f64>,
}

pub struct EigvecInstance {
    x: DataMatrix,
    sizes: Vec<usize>,
    reference: Reference,
    population: Option<Population>,
    start: Message,
}

/// ½ Σ_i (top − values_i)·c_i², floored at [`GAP_FLOOR`].
fn gap(values: ArrayView1<f64>, c: ArrayView1<f64>) -> f64 {
    let top = values[0];
    let g: f64 = values
        .iter()
        .zip(c)
        .map(|(l, ci)| (top - l) * ci * ci)
        .sum();
    (0.5 * g).max(GAP_FLOOR)
}

impl EigvecInstance {
    pub fn build(
        point: &Point,
        run_seed: u64,
        data_dir: &std::path::Path,
        progress: &Progress,
    ) -> Result<Self> {
        let spec = &point.data;
        let key = spec.cache_key();
        let data_seed = seed::derive(run_seed, &["data", &key]);
        let task = progress.task(&format!("data {key}"));
        let (x, sizes, population) = match &spec.gen {
            Gen::Eigengap(g) => {
                let sizes = point.partition.client_sizes(spec.m);
                let e =
                    eigengap::eigengap(spec.n, spec.m, g.delta, g.decay.unwrap_or(0.9), data_seed)?;
                let pop = Population {
                    u: e.u,
                    sigma: e.sigma,
                };
                (DataMatrix::Dense(e.x), sizes, Some(pop))
            }
            Gen::Dataset(_) | Gen::File(_) => {
                let (a, labels) = prepare::dataset_matrix(spec, data_dir)?;
                let mut rng = seed::rng(run_seed, &["partition", &key]);
                let (a, sizes) =
                    partition::arrange(a, labels.as_deref(), &point.partition, &mut rng)?;
                let a = match a {
                    // Centring fills in the zeros: a small sparse set (a9a: 123 × 32,561) is
                    // made dense; a large one (rcv1) is centred implicitly.
                    DataMatrix::Sparse(c) if c.n_features() * c.n_samples() <= MAX_DENSIFIED => {
                        DataMatrix::Dense(densify(&c))
                    }
                    other => other,
                };
                (a, sizes, None)
            }
            other => bail!(
                "generator `{}` does not make leading-eigenvector data",
                other.name()
            ),
        };
        task.set_message(format!("reference eigenvector and warm start for {key}"));
        let inst = Self::from_data(x, sizes, population, MAX_FEATURES, &super::data_name(point))?;
        task.finish_and_clear();
        Ok(inst)
    }

    /// The instance of the (uncentred) data `x` over machines of `sizes`: centred, rescaled,
    /// its reference by dsyevd up to `dense_max` features and block Krylov beyond, and the warm
    /// start. `dense_max` is [`MAX_FEATURES`]; tests lower it to reach the Krylov path.
    fn from_data(
        x: DataMatrix,
        sizes: Vec<usize>,
        population: Option<Population>,
        dense_max: usize,
        data: &str,
    ) -> Result<Self> {
        let (x, reference, top) = centre_and_reference(x, dense_max, data)?;
        let population = population.map(|p| Population {
            sigma: p.sigma / top,
            u: p.u,
        });
        let start = warm_start(local_top(x.view().range(0, sizes[0]), dense_max)?);
        Ok(Self {
            x,
            sizes,
            reference,
            population,
            start,
        })
    }
}

/// λ₁ of the centred data's covariance (eigenvalues descending), which must be positive: the
/// rank rule of every family ([`super::check_rank`]) at p = 1. `data` names the data.
fn checked_top(values: &Array1<f64>, data: &str) -> Result<f64> {
    let top = values[0];
    if top.is_nan() {
        bail!("{data}: the covariance's largest eigenvalue is NaN");
    }
    super::check_rank(&values.to_vec(), 1, data, "the centred covariance")?;
    Ok(top)
}

/// The warm start from machine 1's leading eigenvector `w0` ([`local_top`]), its largest entry
/// made positive; as `w` for the eigvec methods and `z` (n×1) for subspace methods at p = 1.
fn warm_start(mut w0: Array1<f64>) -> Message {
    let big = w0
        .iter()
        .fold(0.0f64, |b, v| if v.abs() > b.abs() { *v } else { b });
    if big < 0.0 {
        w0 *= -1.0;
    }
    Message::new()
        .with("w", w0.clone().insert_axis(Axis(1)))
        .with("z", w0.insert_axis(Axis(1)))
}

/// A rank's share of `point`'s instance ([`super::share`]). A dataset of byte values with
/// entrywise preprocessing ([`prepare::ByteSamples`]) is read as bytes: the mean (summed in
/// the partition's order, as [`prepare::center`] sums the arranged matrix), the covariance's
/// Gram matrix (summed block by block as [`Block::gram`] sums it), λ₁ and machine 1's warm
/// start are computed from it one block of samples at a time, and only the rank's samples and
/// machine 1's are held in f64. Other data (the `eigengap` generator, whose samples come from
/// one product over all of them; sparse or other datasets) is built whole and sliced.
pub(super) fn share(
    point: &Point,
    run_seed: u64,
    cache: &crate::data::cache::MatrixCache,
    data_dir: &std::path::Path,
    pick: super::Pick,
) -> Result<super::Share> {
    let spec = &point.data;
    let samples = match spec.generator() {
        Generator::Dataset => prepare::ByteSamples::open(spec, data_dir)?,
        _ => None,
    };
    // Beyond MAX_FEATURES the reference is by Krylov over the whole data: built whole.
    let samples = samples.filter(|b| b.n() <= MAX_FEATURES);
    let Some(samples) = samples else {
        let inst = super::Family::build(
            &Eigvec,
            point,
            run_seed,
            cache,
            data_dir,
            &Progress::hidden(),
        )?;
        let sizes = inst.sizes().to_vec();
        return Ok(super::Share::slice(
            inst.data(),
            sizes,
            inst.start().clone(),
            pick,
        ));
    };
    let (n, m) = (samples.n(), samples.m());
    let (key, _) = super::data_key(point, run_seed);
    let mut rng = seed::rng(run_seed, &["partition", &key]);
    let (order, sizes) = partition::order(m, Some(samples.labels()), &point.partition, &mut rng)?;
    let order = order.unwrap_or_else(|| (0..m).collect());
    let mut sum = Array1::<f64>::zeros(n);
    for &j in &order {
        sum += &samples.column(j);
    }
    let mean = (sum / m as f64).insert_axis(Axis(1));
    // Columns `range` of the arranged, centred matrix.
    let centred = |range: std::ops::Range<usize>| -> Result<Array2<f64>> {
        Ok(samples.columns(&order[range])? - &mean)
    };
    let gram = crate::data::matrix::dense_gram_by_blocks(n, m, centred)?;
    let eig = sym_eig_desc((gram / m as f64).view())?;
    let scale = checked_top(&eig.values, &super::data_name(point))?.sqrt();
    let scaled = |range| -> Result<Array2<f64>> { Ok(centred(range)? / scale) };
    let start = warm_start(local_top(
        Block::Dense(scaled(0..sizes[0])?.view()),
        MAX_FEATURES,
    )?);
    let cols = pick(&sizes);
    Ok(super::Share {
        lo: cols.start,
        cols: DataMatrix::Dense(scaled(cols)?),
        sizes,
        start,
    })
}

/// Centre by the global mean (dense: in place; sparse: implicitly), then rescale so that
/// λ₁(XXᵀ/N) = 1. Returns the data, the reference and the λ₁ it was divided by.
fn centre_and_reference(
    x: DataMatrix,
    dense_max: usize,
    data: &str,
) -> Result<(DataMatrix, Reference, f64)> {
    let (d, n) = (x.n(), x.m());
    let mut x = match x {
        DataMatrix::Dense(mut a) => {
            prepare::center(&mut a);
            DataMatrix::Dense(a)
        }
        DataMatrix::Sparse(c) => {
            let mean = c.view().sum() / n as f64;
            DataMatrix::Centred { x: c, mean }
        }
        DataMatrix::Centred { .. } => bail!("the eigvec family centres its data itself"),
    };
    if d <= dense_max {
        let cov = x.view().gram() / n as f64;
        let eig = sym_eig_desc(cov.view())?;
        let top = checked_top(&eig.values, data)?;
        match &mut x {
            // As the family always did (results are fixed to these bits).
            DataMatrix::Dense(a) => *a /= top.sqrt(),
            other => other.scale(1.0 / top.sqrt()),
        }
        let reference = Reference::Full {
            values: eig.values / top,
            vectors: eig.vectors,
        };
        return Ok((x, reference, top));
    }
    let eig = x.view().top_gram_eigs(1)?;
    let top = checked_top(&(&eig.values / n as f64), data)?;
    x.scale(1.0 / top.sqrt());
    let v = eig.vectors.column(0).to_owned();
    // λ₁ of the rescaled data, as the metrics' products will see it.
    let av = x.view().gram_times_par(v.view().insert_axis(Axis(1))) / n as f64;
    let lambda = v.dot(&av.column(0));
    Ok((x, Reference::Top { lambda, v }, top))
}

/// v₁ of a machine's A_1 = X_1X_1ᵀ/n₁: dsyevd for D ≤ `dense_max`, block Krylov otherwise.
fn local_top(x1: Block, dense_max: usize) -> Result<Array1<f64>> {
    if x1.samples() == 0 {
        bail!("machine 1 holds no samples: no warm start");
    }
    if let (Some(a), true) = (x1.as_dense(), x1.n() <= dense_max) {
        let a1 = a.dot(&a.t()) / a.ncols() as f64;
        return Ok(sym_eig_desc(a1.view())?.vectors.column(0).to_owned());
    }
    if x1.n() <= dense_max {
        let a1 = x1.gram() / x1.samples() as f64;
        return Ok(sym_eig_desc(a1.view())?.vectors.column(0).to_owned());
    }
    Ok(x1.top_gram_eigs(1)?.vectors.column(0).to_owned())
}

impl Instance for EigvecInstance {
    fn data(&self) -> &DataMatrix {
        &self.x
    }
    fn sizes(&self) -> &[usize] {
        &self.sizes
    }
    fn start(&self) -> &Message {
        &self.start
    }
    fn dim(&self) -> usize {
        self.x.n()
    }

    fn evaluate(&self, server: &Message, _clients: &[Message]) -> Result<Vec<f64>> {
        // Eigvec methods report `w`; subspace methods at p = 1 their basis `z`.
        let w = if server.has("w") {
            server.get("w")?
        } else {
            server.get("z")?
        };
        if w.dim() != (self.x.n(), 1) {
            bail!("w is {:?}, expected {}×1", w.dim(), self.x.n());
        }
        let w = w.column(0);
        let norm = w.dot(&w).sqrt();
        if !(norm > 0.0 && norm.is_finite()) {
            return Ok(vec![f64::NAN; METRICS.len()]);
        }
        let w = &w / norm;
        let (log_err, sin2) = match &self.reference {
            Reference::Full { values, vectors } => {
                let c = vectors.t().dot(&w);
                let sin2 = c.slice(s![1..]).dot(&c.slice(s![1..]));
                (gap(values.view(), c.view()).ln(), sin2)
            }
            Reference::Top { lambda, v } => {
                // r = w − (v₁ᵀw)v₁; F(w) − F(v₁) = ½ rᵀ(λ₁I − Â)r, one pass over the data.
                let r = &w - &(v * v.dot(&w));
                let r2 = r.dot(&r);
                let ar = self.x.view().gram_times_par(r.view().insert_axis(Axis(1)));
                let rar = r.dot(&ar.column(0)) / self.x.m() as f64;
                ((0.5 * (lambda * r2 - rar)).max(GAP_FLOOR).ln(), r2)
            }
        };
        let pop = match &self.population {
            Some(p) => gap(p.sigma.view(), p.u.t().dot(&w).view()).ln(),
            None => f64::NAN,
        };
        Ok(vec![log_err, sin2, pop])
    }

    fn applicable(&self) -> Option<Vec<bool>> {
        Some(vec![true, true, self.population.is_some()])
    }
}

/// The eigvec family ([`super::Family`]).
pub struct Eigvec;

impl super::Family for Eigvec {
    fn kind(&self) -> Kind {
        Kind::Eigvec
    }
    fn metrics(&self) -> &'static [MetricDef] {
        METRICS
    }
    /// Stalled or converged (see `run::Status`): 1 − (v₁ᵀw)², the distance to the leading
    /// eigenvector (the log errors can be negative, so no share of them is a gain); 1e-12 is
    /// round-off of the square.
    fn accuracy(&self) -> &'static [Accuracy] {
        &[Accuracy {
            metric: "sin2",
            solved: 1e-12,
        }]
    }
    fn takes_methods_of(&self) -> &'static [Kind] {
        &[Kind::Eigvec, Kind::Subspace]
    }
    fn generators(&self) -> &'static [Generator] {
        &[Generator::Eigengap, Generator::Dataset, Generator::File]
    }
    fn check_point(&self, pt: &RawPoint) -> std::result::Result<(), (Vec<&'static str>, String)> {
        match pt.problem.p {
            1 => Ok(()),
            p => Err((
                vec!["problem.p"],
                format!("p = {p}: kind = \"eigvec\" seeks the leading eigenvector, p = 1"),
            )),
        }
    }
    fn counts_communicated_vectors(&self) -> bool {
        true
    }
    /// sin²θ ≤ 1e-20 (θ ≈ 1e-10): double precision of a leading eigenvector whose relative
    /// eigengap is above about 1e-6, and scale-free, unlike the log error; CEDRE reports no
    /// objective, so rule (27) cannot end its runs.
    fn default_stop(&self) -> StopSpec {
        StopSpec {
            max_rounds: 1000,
            objective_tol: None,
            target: Some(Target {
                metric: "sin2".into(),
                value: 1e-20,
            }),
            own_criterion: false,
            time_budget_s: None,
        }
    }
    fn example(&self) -> &'static str {
        "[data]\ngenerator = \"eigengap\"\nn = 20\nm = 400\ndelta = 0.2\n[problem]\nkind = \"eigvec\"\np = 1\n"
    }
    fn reference_note(&self, point: &Point) -> String {
        reference(point.data.n)
    }
    fn build(
        &self,
        point: &Point,
        run_seed: u64,
        _cache: &MatrixCache,
        data_dir: &Path,
        progress: &Progress,
    ) -> Result<Box<dyn Instance>> {
        Ok(Box::new(EigvecInstance::build(
            point, run_seed, data_dir, progress,
        )?))
    }
    fn share(
        &self,
        point: &Point,
        run_seed: u64,
        cache: &MatrixCache,
        data_dir: &Path,
        pick: super::Pick,
    ) -> Result<super::Share> {
        share(point, run_seed, cache, data_dir, pick)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::loaders::Csr;
    use crate::linalg::max_rel_diff as rel;
    use crate::methods::registry::Running;
    use rand::Rng;

    const D: usize = 300;
    const N: usize = 4000;
    const SIZES: [usize; 4] = [1000; 4];

    /// A crafted sparse set, D = 300 features × 4000 samples, about 2 % non-zero and
    /// non-negative like tf-idf (so the mean is far from 0 and centring matters): background
    /// entries at 1 % with feature-dependent scales, and two overlapping planted "topics"
    /// (features 0..16 in 20 % of the samples, 10..40 in 15 %) that set λ₁ and λ₂.
    fn crafted() -> Csr {
        let mut rng = seed::rng(12, &["eigvec-sparse-test"]);
        let (mut indptr, mut indices, mut values) = (vec![0], Vec::new(), Vec::new());
        for _ in 0..N {
            let a = rng.random::<f64>() < 0.2;
            let b = rng.random::<f64>() < 0.15;
            for i in 0..D {
                let mut v = 0.0;
                if rng.random::<f64>() < 0.01 {
                    v += rng.random::<f64>() * (1.0 + (i % 7) as f64 / 7.0);
                }
                if a && i < 16 {
                    v += 0.6 + 0.2 * rng.random::<f64>() + (i % 3) as f64 * 0.1;
                }
                if b && (10..40).contains(&i) {
                    v += 0.4 + 0.3 * rng.random::<f64>();
                }
                if v != 0.0 {
                    indices.push(i as u32);
                    values.push(v);
                }
            }
            indptr.push(indices.len());
        }
        Csr::new(D, indptr, indices, values).unwrap()
    }

    /// The crafted set made dense and centred explicitly (its own mean, column by column).
    fn dense_centred(c: &Csr) -> Array2<f64> {
        let mut x = densify(c);
        let mean = x.sum_axis(Axis(1)) / N as f64;
        for mut col in x.columns_mut() {
            col -= &mean;
        }
        x
    }

    /// X − μ1ᵀ applied implicitly gives the dense centred matrix's products to 1e-12 relative,
    /// on the whole matrix and on a machine's block (whose mean is still the global one).
    #[test]
    fn implicit_centring_gives_the_dense_products() {
        let c = crafted();
        let nnz = c.nnz() as f64 / (D * N) as f64;
        assert!(nnz > 0.01 && nnz < 0.05, "density {nnz}");
        let dense = dense_centred(&c);
        let mean = c.view().sum() / N as f64;
        let sparse = DataMatrix::Centred { x: c.clone(), mean };
        let mut rng = seed::rng(13, &["eigvec-sparse-test-z"]);
        let z = crate::seed::uniform_matrix(D, 3, &mut rng);
        for (lo, hi) in [(0, N), (1000, 2000)] {
            let s = sparse.view().range(lo, hi);
            let d = Block::Dense(dense.view()).range(lo, hi);
            let x = d.as_dense().unwrap();
            let want = x.dot(&x.t().dot(&z));
            for (what, got) in [
                ("gram_times", s.gram_times(z.view())),
                ("gram_times_par", s.gram_times_par(z.view())),
                ("gram", s.gram().dot(&z)),
            ] {
                let e = rel(&got, &want);
                assert!(e <= 1e-12, "{what} on {lo}..{hi}: {e:e}");
            }
            let e = rel(&s.t_dot(z.view()), &x.t().dot(&z));
            assert!(e <= 1e-12, "t_dot on {lo}..{hi}: {e:e}");
            // (Against the column sums of squares: the dense fro2 is one sequential sum over
            // 1.2M squares, itself off by ~1e-12 here.)
            let (fs, fd) = (s.fro2(), d.sample_norms2().iter().sum::<f64>());
            assert!((fs - fd).abs() <= 1e-12 * fd, "fro2: {fs} vs {fd}");
            let (fs, fd) = (s.fro2_at(z.view()), d.fro2_at(z.view()));
            assert!((fs - fd).abs() <= 1e-12 * fd, "fro2_at: {fs} vs {fd}");
            let norms = Array1::from(s.sample_norms2()).insert_axis(Axis(0));
            let want = Array1::from(d.sample_norms2()).insert_axis(Axis(0));
            assert!(rel(&norms, &want) <= 1e-12);
            let mut col = vec![0.0; D];
            for j in [0, 7, hi - lo - 1] {
                s.sample_into(j, &mut col);
                let got = Array1::from(col.clone()).insert_axis(Axis(1));
                let want = x.column(j).to_owned().insert_axis(Axis(1));
                assert!(rel(&got, &want) <= 1e-12, "sample {j}");
            }
        }
    }

    /// The dense instance (dsyevd) and the sparse one (implicit centring, reference by block
    /// Krylov at dense_max = 0).
    fn instances() -> (EigvecInstance, EigvecInstance, f64, f64) {
        let c = crafted();
        let (xd, rd, top_d) =
            centre_and_reference(DataMatrix::Dense(densify(&c)), MAX_FEATURES, "test").unwrap();
        let (xs, rs, top_s) =
            centre_and_reference(DataMatrix::Sparse(c.clone()), 0, "test").unwrap();
        drop((xd, rd, xs, rs));
        let dense = EigvecInstance::from_data(
            DataMatrix::Dense(densify(&c)),
            SIZES.to_vec(),
            None,
            MAX_FEATURES,
            "test",
        )
        .unwrap();
        let sparse =
            EigvecInstance::from_data(DataMatrix::Sparse(c), SIZES.to_vec(), None, 0, "test")
                .unwrap();
        (dense, sparse, top_d, top_s)
    }

    fn v1(inst: &EigvecInstance) -> Array1<f64> {
        match &inst.reference {
            Reference::Full { vectors, .. } => vectors.column(0).to_owned(),
            Reference::Top { v, .. } => v.clone(),
        }
    }

    fn sin2(w: &Array1<f64>, v: &Array1<f64>) -> f64 {
        let c = w.dot(v) / (w.dot(w) * v.dot(v)).sqrt();
        1.0 - c * c
    }

    /// The Krylov reference equals LAPACK's: v₁ to 1 − (wᵀv)² ≤ 1e-12, λ₁ (the rescaling) to
    /// 1e-12, the warm start too; and the log error evaluated through it (½rᵀ(λ₁I − Â)r) agrees
    /// with dsyevd's eigen-expansion down to the paper's −32 and below.
    #[test]
    fn the_krylov_reference_matches_dsyevd() {
        let (dense, sparse, top_d, top_s) = instances();
        assert!(matches!(dense.reference, Reference::Full { .. }));
        let Reference::Top { lambda, .. } = sparse.reference else {
            panic!("the sparse instance at dense_max = 0 uses Krylov");
        };
        assert!(
            (lambda - 1.0).abs() <= 1e-12,
            "λ₁ after rescaling: {lambda}"
        );
        assert!((top_s - top_d).abs() <= 1e-12 * top_d, "{top_s} vs {top_d}");
        let (vd, vs) = (v1(&dense), v1(&sparse));
        let e = sin2(&vs, &vd);
        assert!(e <= 1e-12, "1 − (wᵀv)² = {e:e}");
        let start = |i: &EigvecInstance| i.start.get("w").unwrap().column(0).to_owned();
        let e = sin2(&start(&sparse), &start(&dense));
        assert!(e <= 1e-12, "warm starts: 1 − (wᵀv)² = {e:e}");
        // w = v₁ tilted by ε towards a fixed direction: log errors from ≈ −9 to ≈ −37.
        let dir = Array1::from_shape_fn(D, |i| ((i * 5 + 1) as f64).sin());
        let dir = &dir - &(&vd * vd.dot(&dir));
        let dir = &dir / dir.dot(&dir).sqrt();
        let mut seen_deep = false;
        for eps in [1e-2, 1e-4, 1e-6, 1e-7, 1e-8] {
            let w = (&vd + &(&dir * eps)).insert_axis(Axis(1));
            let msg = Message::new().with("w", w);
            let md = dense.evaluate(&msg, &[]).unwrap();
            let ms = sparse.evaluate(&msg, &[]).unwrap();
            assert!(
                (md[0] - ms[0]).abs() <= 1e-3,
                "ε = {eps}: log error {} (dsyevd) vs {} (Krylov)",
                md[0],
                ms[0]
            );
            assert!(
                (md[1] - ms[1]).abs() <= 1e-6 * md[1],
                "ε = {eps}: sin² {} vs {}",
                md[1],
                ms[1]
            );
            seen_deep |= md[0] < -32.0;
        }
        assert!(seen_deep, "the tilts reach below the paper's −32");
    }

    /// `method` with `params` over the instance's machines from its warm start, `steps` steps;
    /// the server's estimate.
    fn run(inst: &EigvecInstance, method: &str, params: &str, steps: usize) -> Array1<f64> {
        let params: toml::Table = toml::from_str(params).unwrap();
        let blocks = inst.x.view().split(&inst.sizes);
        let mut r = Running::named(method, &params, &inst.start, 5, blocks, D).unwrap();
        for _ in 0..steps {
            r.step().unwrap();
        }
        r.server.estimate().get("w").unwrap().column(0).to_owned()
    }

    /// Every eigvec method runs on the implicitly centred sparse data and converges to the
    /// leading eigenvector as on the dense data: the iterative ones to 1 − (wᵀv)² ≤ 1e-10
    /// (v from dsyevd), the one-shot ones to the dense run's own answer (same t, same Ω).
    #[test]
    fn every_method_converges_on_sparse_data_as_on_dense() {
        let (dense, sparse, ..) = instances();
        let v = v1(&dense);
        for (method, params, steps) in [
            ("cedre", "", 30),
            (
                "cedre",
                "stochastic = false\nsteps_per_sample = 0.02\neta = 0.5",
                30,
            ),
            ("rgd", "", 300),
            ("dsi", "", 30),
            ("dsi", "solver = \"cg\"", 30),
            ("ilea", "", 20),
        ] {
            for (what, inst) in [("dense", &dense), ("sparse", &sparse)] {
                let w = run(inst, method, params, steps);
                let e = sin2(&w, &v);
                assert!(
                    e <= 1e-10,
                    "{method} {params:?} on {what} data: 1 − (wᵀv)² = {e:e}"
                );
            }
        }
        for (method, params) in [("dispca_l", "t = 3"), ("dispca_b", "xi = 5")] {
            let wd = run(&dense, method, params, 1);
            let ws = run(&sparse, method, params, 1);
            let e = sin2(&ws, &wd);
            assert!(e <= 1e-10, "{method}: sparse vs dense 1 − (wᵀv)² = {e:e}");
            assert!(
                sin2(&wd, &v) > 1e-10,
                "{method} {params}: a truncated answer, not v₁"
            );
        }
    }

    /// A crafted sparse matrix is made dense entry by entry.
    #[test]
    fn densify_places_every_entry() {
        let c = crate::data::loaders::Csr::new(
            3,
            vec![0, 2, 2, 3],
            vec![0, 2, 1],
            vec![1.5, -2.0, 4.0],
        )
        .unwrap();
        let d = densify(&c);
        let want = ndarray::array![[1.5, 0.0, 0.0], [0.0, 0.0, 4.0], [-2.0, 0.0, 0.0]];
        assert_eq!(d, want);
    }

    /// The gap formula equals λ₁ − wᵀÂw over 2 where that does not cancel.
    #[test]
    fn gap_is_the_objective_difference() {
        let values = Array1::from(vec![1.0, 0.7, 0.2]);
        let c = Array1::from(vec![0.6, 0.64f64.sqrt(), 0.0]);
        let wtaw = 0.36 * 1.0 + 0.64 * 0.7;
        let want = 0.5 * (1.0 - wtaw);
        assert!((gap(values.view(), c.view()) - want).abs() < 1e-15);
        // exact optimum: floored, not −∞
        let v1 = Array1::from(vec![1.0, 0.0, 0.0]);
        assert_eq!(gap(values.view(), v1.view()), GAP_FLOOR);
    }
}
