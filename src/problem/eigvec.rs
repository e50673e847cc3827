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

use super::{Instance, MetricDef};
use crate::data::matrix::{Block, DataMatrix};
use crate::data::{eigengap, partition, prepare};
use crate::fed::Message;
use crate::linalg::sym_eig_desc;
use crate::manifest::{Generator, Point};
use crate::problem::subspace::KRYLOV_TOL;
use crate::run::Progress;
use crate::seed;
use anyhow::{bail, Result};
use ndarray::{s, Array1, Array2, ArrayView1, Axis, ShapeBuilder};

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
        let (x, sizes, population) = match spec.generator {
            Generator::Eigengap => {
                let sizes = point.partition.client_sizes(spec.m);
                let delta = spec.delta.expect("validated: eigengap data has a delta");
                let e = eigengap::eigengap(
                    spec.n,
                    spec.m,
                    delta,
                    spec.decay.unwrap_or(0.9),
                    data_seed,
                )?;
                let pop = Population {
                    u: e.u,
                    sigma: e.sigma,
                };
                (DataMatrix::Dense(e.x), sizes, Some(pop))
            }
            Generator::Dataset | Generator::File => {
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
            other => bail!("generator `{other}` does not make leading-eigenvector data"),
        };
        task.set_message(format!("reference eigenvector for {key}"));
        let (x, reference, top) = centre_and_reference(x)?;
        let population = population.map(|p| Population {
            sigma: p.sigma / top,
            u: p.u,
        });
        task.set_message(format!("warm start for {key}"));
        // Warm start: machine 1's leading eigenvector, its largest entry made positive.
        let mut w0 = local_top(x.view().range(0, sizes[0]))?;
        let big = w0
            .iter()
            .fold(0.0f64, |b, v| if v.abs() > b.abs() { *v } else { b });
        if big < 0.0 {
            w0 *= -1.0;
        }
        task.finish_and_clear();
        Ok(Self {
            x,
            sizes,
            reference,
            population,
            // As `w` for the eigvec methods and `z` (n×1) for subspace methods at p = 1.
            start: Message::new()
                .with("w", w0.clone().insert_axis(Axis(1)))
                .with("z", w0.insert_axis(Axis(1))),
        })
    }
}

/// Centre by the global mean (dense: in place; sparse: implicitly), then rescale so that
/// λ₁(XXᵀ/N) = 1. Returns the data, the reference and the λ₁ it was divided by.
fn centre_and_reference(x: DataMatrix) -> Result<(DataMatrix, Reference, f64)> {
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
    let empty = || anyhow::anyhow!("the centred data is zero: no leading eigenvector");
    if d <= MAX_FEATURES {
        let cov = x.view().gram() / n as f64;
        let eig = sym_eig_desc(cov.view())?;
        let top = eig.values[0];
        if top.is_nan() || top <= 0.0 {
            return Err(empty());
        }
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
    let eig = crate::problem::subspace::krylov(x.view(), 1)?;
    let top = eig.values[0] / n as f64;
    if top.is_nan() || top <= 0.0 {
        return Err(empty());
    }
    x.scale(1.0 / top.sqrt());
    let v = eig.vectors.column(0).to_owned();
    // λ₁ of the rescaled data, as the metrics' products will see it.
    let av = x.view().gram_times_par(v.view().insert_axis(Axis(1))) / n as f64;
    let lambda = v.dot(&av.column(0));
    Ok((x, Reference::Top { lambda, v }, top))
}

/// v₁ of a machine's A_1 = X_1X_1ᵀ/n₁: dsyevd for D ≤ [`MAX_FEATURES`] dense data, block
/// Krylov otherwise.
fn local_top(x1: Block) -> Result<Array1<f64>> {
    if x1.samples() == 0 {
        bail!("machine 1 holds no samples: no warm start");
    }
    if let (Some(a), true) = (x1.as_dense(), x1.n() <= MAX_FEATURES) {
        let a1 = a.dot(&a.t()) / a.ncols() as f64;
        return Ok(sym_eig_desc(a1.view())?.vectors.column(0).to_owned());
    }
    if x1.n() <= MAX_FEATURES {
        let a1 = x1.gram() / x1.samples() as f64;
        return Ok(sym_eig_desc(a1.view())?.vectors.column(0).to_owned());
    }
    Ok(crate::problem::subspace::krylov(x1, 1)?
        .vectors
        .column(0)
        .to_owned())
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

#[cfg(test)]
mod tests {
    use super::*;

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
