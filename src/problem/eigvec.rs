//! The leading eigenvector (the CEDRE paper): minimise F(w) = −½ wᵀÂw over the unit sphere,
//! Â = XXᵀ/N the sample covariance of all N samples (columns of X), the mean of the machines'
//! A_k = X_kX_kᵀ/n_k under an even split.
//!
//! Data, as the paper treats every data set (§6.1): centred by the global mean, then rescaled so
//! that λ₁(Â) = 1. Synthetic data (generator "eigengap") keeps its population covariance UΣUᵀ,
//! rescaled by the same factor.
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
use crate::run::Progress;
use crate::seed;
use anyhow::{bail, Result};
use ndarray::{s, Array1, Array2, ArrayView1, ArrayView2, Axis, ShapeBuilder};

pub const REFERENCE: &str = "the leading eigenvector of Â = XXᵀ/N by LAPACK dsyevd (exact)";

/// Largest dimension: the reference is a dense eigendecomposition of the D×D covariance.
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

/// The population covariance UΣUᵀ (already rescaled with the data).
struct Population {
    u: Array2<f64>,
    sigma: Array1<f64>,
}

pub struct EigvecInstance {
    x: DataMatrix,
    sizes: Vec<usize>,
    /// Eigenpairs of Â, descending; λ₁ = 1.
    values: Array1<f64>,
    vectors: Array2<f64>,
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
        let (mut x, sizes, population) = match spec.generator {
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
                (e.x, sizes, Some(pop))
            }
            Generator::Dataset | Generator::File => {
                let (a, labels) = prepare::dataset_matrix(spec, data_dir)?;
                let mut rng = seed::rng(run_seed, &["partition", &key]);
                let (a, sizes) =
                    partition::arrange(a, labels.as_deref(), &point.partition, &mut rng)?;
                match a {
                    DataMatrix::Dense(d) => (d, sizes, None),
                    // Centring fills in the zeros: a small sparse set (a9a: 123 × 32,561) is
                    // made dense; a large one (rcv1) would need implicit centring.
                    DataMatrix::Sparse(c) if c.n_features() * c.n_samples() <= MAX_DENSIFIED => {
                        (densify(&c), sizes, None)
                    }
                    DataMatrix::Sparse(c) => bail!(
                        "the eigvec family centres its data; the sparse dataset {} ({} × {}) \
                         is too large to make dense (at most {MAX_DENSIFIED} entries), and \
                         implicit centring is not implemented yet",
                        spec.dataset
                            .as_deref()
                            .or(spec.source.as_deref())
                            .unwrap_or("?"),
                        c.n_features(),
                        c.n_samples()
                    ),
                }
            }
            other => bail!("generator `{other}` does not make leading-eigenvector data"),
        };
        let (d, n) = x.dim();
        if d > MAX_FEATURES {
            bail!("{d} features: the eigvec reference is a dense D×D eigendecomposition, D <= {MAX_FEATURES}");
        }
        // Centre by the global mean, then rescale so that λ₁(XXᵀ/N) = 1.
        prepare::center(&mut x);
        task.set_message(format!("reference eigenvector for {key}"));
        let cov = Block::Dense(x.view()).gram() / n as f64;
        let eig = sym_eig_desc(cov.view())?;
        let top = checked_top(&eig.values)?;
        x /= top.sqrt();
        let values = eig.values / top;
        let population = population.map(|p| Population {
            sigma: p.sigma / top,
            u: p.u,
        });
        let start = warm_start(x.slice(s![.., ..sizes[0]]))?;
        task.finish_and_clear();
        Ok(Self {
            x: DataMatrix::Dense(x),
            sizes,
            values,
            vectors: eig.vectors,
            population,
            start,
        })
    }
}

/// λ₁ of the centred data's covariance (eigenvalues descending), which must be positive.
fn checked_top(values: &Array1<f64>) -> Result<f64> {
    let top = values[0];
    if top.is_nan() || top <= 0.0 {
        bail!("the centred data is zero: no leading eigenvector");
    }
    Ok(top)
}

/// The warm start: the leading eigenvector of machine 1's A_1 (its samples `x1`, centred and
/// rescaled), its largest entry made positive; as `w` for the eigvec methods and `z` (n×1)
/// for subspace methods at p = 1.
fn warm_start(x1: ArrayView2<f64>) -> Result<Message> {
    let a1 = x1.dot(&x1.t()) / x1.ncols() as f64;
    let mut w0 = sym_eig_desc(a1.view())?.vectors.column(0).to_owned();
    let big = w0
        .iter()
        .fold(0.0f64, |b, v| if v.abs() > b.abs() { *v } else { b });
    if big < 0.0 {
        w0 *= -1.0;
    }
    Ok(Message::new()
        .with("w", w0.clone().insert_axis(Axis(1)))
        .with("z", w0.insert_axis(Axis(1))))
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
    let samples = match spec.generator {
        Generator::Dataset => prepare::ByteSamples::open(spec, data_dir)?,
        _ => None,
    };
    let Some(samples) = samples else {
        let inst = super::build(point, run_seed, cache, data_dir, &Progress::hidden())?;
        let sizes = inst.sizes().to_vec();
        return Ok(super::Share::slice(
            inst.data(),
            sizes,
            inst.start().clone(),
            pick,
        ));
    };
    let (n, m) = (samples.n(), samples.m());
    if n > MAX_FEATURES {
        bail!("{n} features: the eigvec reference is a dense D×D eigendecomposition, D <= {MAX_FEATURES}");
    }
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
    let scale = checked_top(&eig.values)?.sqrt();
    let scaled = |range| -> Result<Array2<f64>> { Ok(centred(range)? / scale) };
    let start = warm_start(scaled(0..sizes[0])?.view())?;
    let cols = pick(&sizes);
    Ok(super::Share {
        lo: cols.start,
        cols: DataMatrix::Dense(scaled(cols)?),
        sizes,
        start,
    })
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
        let c = self.vectors.t().dot(&w);
        let sin2 = c.slice(s![1..]).dot(&c.slice(s![1..]));
        let pop = match &self.population {
            Some(p) => gap(p.sigma.view(), p.u.t().dot(&w).view()).ln(),
            None => f64::NAN,
        };
        Ok(vec![gap(self.values.view(), c.view()).ln(), sin2, pop])
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
