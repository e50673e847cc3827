//! Sparse PCA (the federated sparse PCA paper; DSSAL1 builds on it): r loadings z (n×r) that
//! keep most of the data's variance with few non-zero weights.
//!
//! Orientation: the paper stores samples as rows (A ∈ R^{N×D}); the harness keeps samples as
//! columns, X = Aᵀ (n = D features × m = N samples). The paper's AᵀA is G = XXᵀ here, its
//! ‖A − A z zᵀ‖_F is ‖X − z zᵀ X‖_F, and its "D" and "N" are our n and m.
//!
//! Metrics are taken at the method's output loadings z (the server's part `z`, n×k with k ≤ r
//! the loadings found so far): with Q an orthonormal basis of span(z) (columns of z that are
//! zero or dependent add nothing),
//! - `recon` = ‖X − QQᵀX‖_F = √(‖X‖²_F − tr(QᵀGQ)). The norm, not its square: the paper's PCA
//!   row (677.3092 on WDBC*) is matched only by the norm (677.36 on z-scored data; its square is
//!   4.6e5), so its table reports ‖·‖_F although the text writes ‖·‖²_F.
//! - `recon_ratio` = recon / PCA's recon with k loadings (scale free);
//! - `l0`, `l0_share`: non-zero weights of z (exact zeros from the soft-threshold) and their
//!   share of n·k (PCA's loadings are dense: share 1);
//! - `recovery` = ‖QQᵀ − VVᵀ‖²_F against the first k planted loadings V (synthetic data only);
//! - `consensus`: mean over client pairs and loadings of |cos| between the clients' local
//!   loadings `w` (revealed through the runner's evaluation channel; 1 with one client);
//! - `share_orig_01`, `share_rand_01`, `share_rand_001`: the share of weights within ±0.1 (±0.01)
//!   among the original features and among the noise features (synthetic data: the planted
//!   support vs the rest); the spectra `share_orig`, `share_rand` give it for ±10⁻ⁱ, i = 1..10
//!   (the paper's figs. 5 and 7);
//! - `objective` = ‖X − QQᵀX‖²_F + λ‖z‖₁ with λ = `[problem] lambda` (problem (3));
//! - `sparsity` = share of weights with |z_ij| ≤ 1e-5 (DSSAL1's count of zeros), and
//!   `explained_variance` = tr(QᵀGQ)/‖X‖²_F.
//!
//! DSSAL1's model (its problem (2)), when `[problem] mu` is set: min over Z ∈ St(n, p) of
//! F(Z) = −½tr(ZᵀGZ) + μ‖Z‖₁. The family then hands μ to every method through the common start
//! (scalar `mu`: the model is public), computes centralised ManPG's solution Z* from the common
//! start as its reference (cached), and adds, at Z (or at its polar factor when a method's
//! loadings are not orthonormal):
//! - `stationarity` = ‖D‖_F/√(np), D the ManPG step at Z for the full gradient −GZ with
//!   t = 1/λ₁(G) (the DSSAL1 paper's stationarity violation ‖D‖_F, footnote 1; divided by √(np)
//!   so that one tolerance, ManPG's 1e-8·√(np), serves every sweep point);
//! - `feasibility` = (1/d)Σ_i ‖X_iX_iᵀ − ZZᵀ‖²_F over the clients' local copies `x` (revealed
//!   through the evaluation channel; 0 for methods whose clients keep none);
//! - `f_mu` = F(Z); `manpg_gap` = (F(Z) − F(Z*))/|F(Z*)|; `manpg_dist` = ‖ZZᵀ − Z*Z*ᵀ‖_F.
//!
//! Reference: PCA by LAPACK's dsyevd on G (n ≤ a few thousand features in this family), and
//! with μ set centralised ManPG (`methods::sparse::manpg::centralised`) to ‖D‖_F ≤ 1e-10·√(np).

use super::{Accuracy, Instance, MetricDef};
use crate::data::cache::MatrixCache;
use crate::data::matrix::DataMatrix;
use crate::data::{augment, partition, prepare, spiked, synthetic};
use crate::fed::Message;
use crate::linalg::manifold::stiefel_retract_polar;
use crate::linalg::stiefel_prox::stiefel_prox;
use crate::linalg::{fro2, orth_with_r, sym_eig_desc};
use crate::progress::Progress;
use crate::seed;
use crate::spec::{Gen, Generator, Noise, Point};
use crate::spec::{Kind, StopSpec};
use anyhow::{bail, Result};
use ndarray::{s, Array1, Array2, ArrayView2, Axis};
use std::path::Path;

pub const REFERENCE: &str = "PCA: LAPACK dsyevd on the Gram matrix XXᵀ (exact)";
pub const REFERENCE_MU: &str = "PCA: LAPACK dsyevd on the Gram matrix XXᵀ (exact); \
     DSSAL1's model: centralised ManPG from the common start to ‖D‖_F ≤ 1e-10·√(np)";

/// Entries with |z_ij| at or below this count as zeros (the DSSAL1 paper's rule).
pub const ZERO_TOL: f64 = 1e-5;
/// Stationarity tolerance of the ManPG reference, per √(np).
pub const MANPG_TOL: f64 = 1e-10;
/// Iteration cap of the ManPG reference.
pub const MANPG_MAX_ITER: usize = 100_000;

/// Largest feature count: the metrics go through the n×n Gram matrix.
pub const MAX_FEATURES: usize = 8192;

/// Thresholds 10⁻ⁱ, i = 1..SHARE_EXPONENTS, of the share spectra.
pub const SHARE_EXPONENTS: i32 = 10;

pub const METRICS: &[MetricDef] = &[
    MetricDef {
        name: "recon",
        label: "reconstruction error ‖A − A z zᵀ‖_F (z orthonormalised)",
        short: "recon. error",
        lower_is_better: true,
        log: false,
    },
    MetricDef {
        name: "recon_ratio",
        label: "reconstruction error / PCA's",
        short: "recon. / PCA",
        lower_is_better: true,
        log: false,
    },
    MetricDef {
        name: "l0",
        label: "ℓ0: non-zero loading weights",
        short: "ℓ0",
        lower_is_better: true,
        log: false,
    },
    MetricDef {
        name: "l0_share",
        label: "share of non-zero loading weights (PCA: 1)",
        short: "ℓ0 share",
        lower_is_better: true,
        log: false,
    },
    MetricDef {
        name: "recovery",
        label: "recovery error ‖zzᵀ − VVᵀ‖²_F against the planted loadings",
        short: "recovery error",
        lower_is_better: true,
        log: true,
    },
    MetricDef {
        name: "consensus",
        label: "mean pairwise |cos| of the clients' loadings",
        short: "consensus",
        lower_is_better: false,
        log: false,
    },
    MetricDef {
        name: "share_orig_01",
        label: "share of original-feature weights within ±0.1",
        short: "orig. |w| ≤ 0.1",
        lower_is_better: false,
        log: false,
    },
    MetricDef {
        name: "share_rand_01",
        label: "share of noise-feature weights within ±0.1",
        short: "noise |w| ≤ 0.1",
        lower_is_better: false,
        log: false,
    },
    MetricDef {
        name: "share_rand_001",
        label: "share of noise-feature weights within ±0.01",
        short: "noise |w| ≤ 0.01",
        lower_is_better: false,
        log: false,
    },
    MetricDef {
        name: "objective",
        label: "objective ‖A − A z zᵀ‖²_F + λ‖z‖₁",
        short: "objective",
        lower_is_better: true,
        log: false,
    },
    MetricDef {
        name: "sparsity",
        label: "share of zero weights (|z_ij| ≤ 1e-5)",
        short: "sparsity",
        lower_is_better: false,
        log: false,
    },
    MetricDef {
        name: "explained_variance",
        label: "explained variance tr(ZᵀAAᵀZ)/‖A‖²_F",
        short: "expl. variance",
        lower_is_better: false,
        log: false,
    },
    MetricDef {
        name: "stationarity",
        label: "stationarity violation ‖D‖_F/√(np) (ManPG step, t = 1/λ₁)",
        short: "stationarity",
        lower_is_better: true,
        log: true,
    },
    MetricDef {
        name: "feasibility",
        label: "feasibility (1/d)Σ‖X_iX_iᵀ − ZZᵀ‖²_F",
        short: "feasibility",
        lower_is_better: true,
        log: true,
    },
    MetricDef {
        name: "f_mu",
        label: "objective −½tr(ZᵀAAᵀZ) + μ‖Z‖₁",
        short: "F(Z)",
        lower_is_better: true,
        log: false,
    },
    MetricDef {
        name: "manpg_gap",
        label: "(F(Z) − F(Z*))/|F(Z*)|, Z* centralised ManPG's",
        short: "gap to ManPG",
        lower_is_better: true,
        log: false,
    },
    MetricDef {
        name: "manpg_dist",
        label: "‖ZZᵀ − Z*Z*ᵀ‖_F to centralised ManPG's Z*",
        short: "dist. to ManPG",
        lower_is_better: true,
        log: true,
    },
];

/// Indices of the metrics that need DSSAL1's model (`[problem] mu`).
const MU_METRICS: std::ops::Range<usize> = 12..17;

/// Axis labels of the family's spectra.
pub const SPECTRUM_AXES: (&str, &str) = ("i (weights within ±10⁻ⁱ)", "share of weights");

/// An orthonormal basis of span(z): the Q columns of a QR whose |R_jj| is not negligible.
pub fn span_basis(z: ArrayView2<f64>) -> Array2<f64> {
    if z.ncols() == 0 {
        return Array2::zeros((z.nrows(), 0));
    }
    let (q, r) = orth_with_r(z);
    let big = r.diag().iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let keep: Vec<usize> = (0..r.ncols())
        .filter(|&j| big > 0.0 && r[[j, j]].abs() > 1e-10 * big)
        .collect();
    q.select(Axis(1), &keep)
}

/// Share of `values` within ±`t` (NaN for none).
fn share_within(values: &[f64], t: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.iter().filter(|v| v.abs() <= t).count() as f64 / values.len() as f64
}

/// Mean over pairs of clients and over loadings of |cos(w_i[:, c], w_j[:, c])|.
pub fn consensus(ws: &[&Array2<f64>]) -> f64 {
    if ws.len() < 2 {
        return 1.0;
    }
    let cols = ws.iter().map(|w| w.ncols()).min().unwrap_or(0);
    let (mut sum, mut count) = (0.0, 0usize);
    for i in 0..ws.len() {
        for j in i + 1..ws.len() {
            for c in 0..cols {
                let (a, b) = (ws[i].column(c), ws[j].column(c));
                let denom = (a.dot(&a) * b.dot(&b)).sqrt();
                sum += if denom > 0.0 {
                    a.dot(&b).abs() / denom
                } else {
                    0.0
                };
                count += 1;
            }
        }
    }
    if count == 0 {
        f64::NAN
    } else {
        sum / count as f64
    }
}

pub struct SparseInstance {
    x: DataMatrix,
    sizes: Vec<usize>,
    /// G = XXᵀ.
    gram: Array2<f64>,
    fro2: f64,
    /// Eigenvalues of G, descending.
    values: Array1<f64>,
    /// Planted loadings (synthetic data).
    planted: Option<Array2<f64>>,
    /// Per feature: an original one (true) or noise (false).
    original: Vec<bool>,
    lambda: f64,
    start: Message,
    /// DSSAL1's model, when `[problem] mu` is set.
    model: Option<MuModel>,
}

/// DSSAL1's model min F(Z) = −½tr(ZᵀGZ) + μ‖Z‖₁ over St(n, p), and its ManPG reference.
struct MuModel {
    mu: f64,
    /// ManPG's step for the stationarity measure: 1/λ₁(G).
    t: f64,
    /// Centralised ManPG's solution Z* and F(Z*).
    star: Array2<f64>,
    f_star: f64,
}

/// F(Z) = −½tr(ZᵀGZ) + μ‖Z‖₁.
pub fn f_mu(gram: ArrayView2<f64>, z: ArrayView2<f64>, mu: f64) -> f64 {
    let gz = gram.dot(&z);
    -0.5 * (&z * &gz).sum() + mu * z.iter().map(|v| v.abs()).sum::<f64>()
}

/// ‖XXᵀ − ZZᵀ‖²_F for Z orthonormal and any X of the same shape, without cancellation: with
/// B = ZᵀX and E = X − ZB (the part of X outside span Z) the three pieces are orthogonal,
/// ‖BBᵀ − I‖²_F + 2‖BEᵀ‖²_F + ‖EᵀE‖²_F.
pub fn projection_dist2(x: ArrayView2<f64>, z: ArrayView2<f64>) -> f64 {
    let b = z.t().dot(&x);
    let e = &x - &z.dot(&b);
    let ete = e.t().dot(&e);
    let bbt = b.dot(&b.t()) - Array2::<f64>::eye(b.nrows());
    fro2(bbt.view()) + 2.0 * (&b.dot(&ete) * &b).sum() + fro2(ete.view())
}

/// Data of the family: the matrix, client sizes, planted loadings (synthetic data) and which
/// features are original (not appended noise).
type Data = (DataMatrix, Vec<usize>, Option<Array2<f64>>, Vec<bool>);

/// The data of `point` for `run_seed`, arranged for its partition.
fn data(
    point: &Point,
    run_seed: u64,
    cache: &MatrixCache,
    data_dir: &std::path::Path,
) -> Result<Data> {
    let spec = &point.data;
    let (key, data_seed) = super::data_key(point, run_seed);
    Ok(match &spec.gen {
        Gen::Spiked(s) => {
            let sizes = point.partition.client_sizes(spec.m);
            let loadings = spiked::planted_loadings(spec.n, s.spikes.len(), s.support)?;
            let x = spiked_clients(point, data_seed, &sizes, 0..sizes.len())?;
            let original = (0..spec.n)
                .map(|f| loadings.row(f).iter().any(|v| *v != 0.0))
                .collect();
            (DataMatrix::Dense(x), sizes, Some(loadings), original)
        }
        // FAPS's test matrices (23), shared with the subspace family through the cache.
        Gen::Svd(s) => {
            let a = cache.get_or_build("svd", &format!("{key}-seed{data_seed}"), || {
                synthetic::svd_matrix(spec.n, spec.m, super::subspace::spectrum(s), data_seed)
            })?;
            let mut rng = seed::rng(run_seed, &["partition", &key]);
            let (a, sizes) =
                partition::arrange(DataMatrix::Dense(a), None, &point.partition, &mut rng)?;
            (a, sizes, None, vec![true; spec.n])
        }
        Gen::Dataset(_) | Gen::File(_) => {
            let real = spec.real().expect("a dataset or a file");
            let (a, labels) = prepare::dataset_matrix(spec, data_dir)?;
            let n0 = a.n();
            let mut rng = seed::rng(run_seed, &["partition", &key]);
            let (a, sizes) = partition::arrange(a, labels.as_deref(), &point.partition, &mut rng)?;
            let mut a = match (a, real.noise_features) {
                (DataMatrix::Dense(d), Some(count)) => DataMatrix::Dense(augment::append_noise(
                    &d,
                    count,
                    real.noise.unwrap_or(Noise::Uniform),
                    &sizes,
                    data_seed,
                )),
                (DataMatrix::Sparse(_) | DataMatrix::Centred { .. }, Some(_)) => {
                    bail!("noise features are appended to dense datasets only")
                }
                (a, None) => a,
            };
            let name = spec.real_name().unwrap_or("dataset");
            prepare::preprocess(&mut a, real.after_noise, name)?;
            let original = (0..a.n()).map(|f| f < n0).collect();
            (a, sizes, None, original)
        }
        other => bail!("generator `{}` does not make sparse-PCA data", other.name()),
    })
}

/// The spiked samples of clients `clients` (of `sizes`), side by side, each client's block
/// divided by √m_c under `covariance_scale`.
fn spiked_clients(
    point: &Point,
    data_seed: u64,
    sizes: &[usize],
    clients: std::ops::Range<usize>,
) -> Result<Array2<f64>> {
    let Gen::Spiked(spec) = &point.data.gen else {
        bail!(
            "internal error: spiked samples of generator `{}`",
            point.data.generator()
        );
    };
    let mut x = spiked::samples(
        point.data.n,
        sizes,
        &spec.spikes,
        spec.support,
        spec.heterogeneous,
        data_seed,
        clients.clone(),
    )?;
    if spec.covariance_scale {
        let mut at = 0;
        for &mc in &sizes[clients] {
            let mut block = x.slice_mut(s![.., at..at + mc]);
            block /= (mc as f64).sqrt();
            at += mc;
        }
    }
    Ok(x)
}

/// The common start (public, from the run's seed): random orthonormal n×r, and μ when DSSAL1's
/// model is set. The paper's methods draw their own per-client starts and use only its shape.
fn start(point: &Point, run_seed: u64) -> Message {
    let (n, r) = (point.data.n, point.problem.p);
    let key = point.data.cache_key();
    let z0 = crate::linalg::orth(
        crate::seed::uniform_matrix(
            n,
            r,
            &mut seed::rng(run_seed, &["z0", &key, &r.to_string()]),
        )
        .view(),
    );
    let start = Message::new().with("z", z0);
    match point.problem.mu {
        Some(mu) => start.with_scalar("mu", mu),
        None => start,
    }
}

/// A rank's share of `point`'s instance ([`super::share`]): spiked samples of its clients
/// alone, FAPS's matrix by columns, a dataset as the subspace family reads it when no noise
/// features are appended; otherwise the data is built whole, arranged and sliced.
pub(super) fn share(
    point: &Point,
    run_seed: u64,
    cache: &MatrixCache,
    data_dir: &std::path::Path,
    pick: super::Pick,
) -> Result<super::Share> {
    let spec = &point.data;
    match spec.generator() {
        Generator::Spiked => {
            let sizes = point.partition.client_sizes(spec.m);
            let cols = pick(&sizes);
            // The clients whose samples overlap the columns asked for, and where they start.
            let ends: Vec<usize> = sizes
                .iter()
                .scan(0, |at, &mc| {
                    *at += mc;
                    Some(*at)
                })
                .collect();
            let first = ends.partition_point(|&e| e <= cols.start);
            let last = ends.partition_point(|&e| e < cols.end).min(sizes.len());
            let clients = first..if cols.is_empty() { first } else { last + 1 };
            let from = ends[..first].last().copied().unwrap_or(0);
            let (_, data_seed) = super::data_key(point, run_seed);
            let x = spiked_clients(point, data_seed, &sizes, clients)?;
            let part = x
                .slice(s![.., cols.start - from..cols.end - from])
                .to_owned();
            Ok(super::Share {
                sizes,
                lo: cols.start,
                cols: DataMatrix::Dense(part),
                start: start(point, run_seed),
            })
        }
        Generator::Svd => super::svd_share(point, run_seed, cache, pick, start(point, run_seed)),
        _ => {
            let start = start(point, run_seed);
            // Appended noise and the steps after it are not read sample by sample.
            if spec
                .real()
                .is_some_and(|r| r.noise_features.is_none() && r.after_noise.is_empty())
            {
                if let Some(share) = super::dataset_share(point, run_seed, data_dir, pick, &start)?
                {
                    return Ok(share);
                }
            }
            let (a, sizes, ..) = data(point, run_seed, cache, data_dir)?;
            Ok(super::Share::slice(&a, sizes, start, pick))
        }
    }
}

impl SparseInstance {
    pub fn build(
        point: &Point,
        run_seed: u64,
        cache: &MatrixCache,
        data_dir: &std::path::Path,
        progress: &Progress,
    ) -> Result<Self> {
        let key = point.data.cache_key();
        let task = progress.task(&format!("data {key}"));
        let (x, sizes, planted, original) = data(point, run_seed, cache, data_dir)?;
        if x.n() > MAX_FEATURES {
            bail!(
                "{} features: the sparse family's metrics use the n×n Gram matrix, n <= {MAX_FEATURES}",
                x.n()
            );
        }
        task.set_message(format!("PCA reference for {key}"));
        let gram = x.view().gram();
        let eig = sym_eig_desc(gram.view())?;
        // PCA's r loadings are the reference of recon_ratio: the same rank rule as every family.
        let data = super::data_name(point);
        super::check_rank(&eig.values.to_vec(), point.problem.p, &data, "XXᵀ")?;
        let start = start(point, run_seed);
        let z0 = start.get("z")?.clone();
        let model = match point.problem.mu {
            Some(mu) => {
                task.set_message(format!("centralised ManPG reference for {key}, μ = {mu}"));
                // ManPG's step is 1/λ₁(AAᵀ): zero data (or non-finite values) has none.
                let top = eig.values[0];
                if !(top.is_finite() && top > 0.0) {
                    bail!(
                        "{key}: the data matrix's largest eigenvalue λ₁(AAᵀ) is {top} (the data is \
                         zero or not finite): sparse PCA with μ has no reference solution; check \
                         the data file or generator"
                    );
                }
                let t = 1.0 / top;
                let star = manpg_reference(cache, gram.view(), z0.view(), mu, t)?;
                Some(MuModel {
                    mu,
                    t,
                    f_star: f_mu(gram.view(), star.view(), mu),
                    star,
                })
            }
            None => None,
        };
        task.finish_and_clear();
        Ok(Self {
            fro2: gram.diag().sum(),
            gram,
            values: eig.values,
            x,
            sizes,
            planted,
            original,
            lambda: point.problem.lambda.unwrap_or(0.0),
            start,
            model,
        })
    }

    /// DSSAL1's metrics at z (see the module doc), in [`MU_METRICS`] order.
    fn mu_metrics(&self, m: &MuModel, z: ArrayView2<f64>, clients: &[Message]) -> Result<Vec<f64>> {
        let (n, p) = z.dim();
        if p != m.star.ncols() {
            bail!(
                "the estimate has {p} loadings, DSSAL1's model p = {}: its metrics need all \
                 loadings at once",
                m.star.ncols()
            );
        }
        let gap = fro2((z.t().dot(&z) - Array2::<f64>::eye(p)).view()).sqrt();
        let z = if gap > 1e-10 {
            stiefel_retract_polar(z, Array2::zeros((n, p)).view())?
        } else {
            z.to_owned()
        };
        let grad = -self.gram.dot(&z);
        let step = stiefel_prox(z.view(), grad.view(), m.t, m.mu, None, 1e-13)?;
        let stationarity = fro2(step.d.view()).sqrt() / ((n * p) as f64).sqrt();
        let xs: Vec<&Array2<f64>> = clients.iter().filter_map(|c| c.get("x").ok()).collect();
        let feasibility = if xs.is_empty() {
            0.0
        } else {
            xs.iter()
                .map(|x| projection_dist2(x.view(), z.view()))
                .sum::<f64>()
                / xs.len() as f64
        };
        // grad = −GZ, so −½tr(ZᵀGZ) = ½⟨Z, grad⟩.
        let f = 0.5 * (&z * &grad).sum() + m.mu * z.iter().map(|v| v.abs()).sum::<f64>();
        let outside = &z - &m.star.dot(&m.star.t().dot(&z));
        Ok(vec![
            stationarity,
            feasibility,
            f,
            (f - m.f_star) / m.f_star.abs(),
            (2.0 * fro2(outside.view())).sqrt(),
        ])
    }

    /// PCA's reconstruction error ‖X − U_kU_kᵀX‖_F with k loadings.
    pub fn pca_recon(&self, k: usize) -> f64 {
        let kept: f64 = self.values.iter().take(k).sum();
        (self.fro2 - kept).max(0.0).sqrt()
    }

    /// Shares of weights within ±10⁻ⁱ, i = 1..SHARE_EXPONENTS, for original (true) or noise
    /// features.
    fn shares(&self, z: ArrayView2<f64>, original: bool) -> Vec<f64> {
        let weights = self.group(z, original);
        (1..=SHARE_EXPONENTS)
            .map(|i| share_within(&weights, 10f64.powi(-i)))
            .collect()
    }

    fn group(&self, z: ArrayView2<f64>, original: bool) -> Vec<f64> {
        z.outer_iter()
            .zip(&self.original)
            .filter(|(_, o)| **o == original)
            .flat_map(|(row, _)| row.to_vec())
            .collect()
    }
}

/// Centralised ManPG's solution of DSSAL1's model from the common start, computed once per
/// (data, start, μ) and cached: the key hashes G and Z⁽⁰⁾ themselves, so any change of the data
/// or of the partition's scaling makes a new entry.
fn manpg_reference(
    cache: &MatrixCache,
    gram: ArrayView2<f64>,
    z0: ArrayView2<f64>,
    mu: f64,
    t: f64,
) -> Result<Array2<f64>> {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for v in gram.iter().chain(z0.iter()) {
        h.update(v.to_le_bytes());
    }
    let digest: String = h.finalize()[..12]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let key = format!(
        "manpg-{digest}-n{}-p{}-mu{mu:e}-t{t:e}-tol{MANPG_TOL:e}-max{MANPG_MAX_ITER}",
        z0.nrows(),
        z0.ncols()
    );
    cache.get_or_build("manpg", &key, || {
        crate::methods::sparse::manpg::centralised(gram, z0, mu, t, MANPG_TOL, MANPG_MAX_ITER)
    })
}

impl Instance for SparseInstance {
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

    fn evaluate(&self, server: &Message, clients: &[Message]) -> Result<Vec<f64>> {
        let z = server.get("z")?;
        let (n, k) = z.dim();
        if n != self.x.n() {
            bail!("loadings have {n} rows, the data {} features", self.x.n());
        }
        let q = span_basis(z.view());
        let captured = q.t().dot(&self.gram.dot(&q)).diag().sum();
        let resid2 = (self.fro2 - captured).max(0.0);
        let recon = resid2.sqrt();
        let l0 = z.iter().filter(|v| **v != 0.0).count() as f64;
        let recovery = match &self.planted {
            Some(v) => {
                let v = v.slice(s![.., ..k.min(v.ncols())]);
                let vq = v.t().dot(&q);
                q.ncols() as f64 + v.ncols() as f64 - 2.0 * fro2(vq.view())
            }
            None => f64::NAN,
        };
        let ws: Vec<&Array2<f64>> = clients.iter().filter_map(|c| c.get("w").ok()).collect();
        let orig = self.group(z.view(), true);
        let rand = self.group(z.view(), false);
        let l1: f64 = z.iter().map(|v| v.abs()).sum();
        let zeros = z.iter().filter(|v| v.abs() <= ZERO_TOL).count() as f64;
        let mu_metrics = match &self.model {
            Some(m) => self.mu_metrics(m, z.view(), clients)?,
            None => vec![f64::NAN; MU_METRICS.len()],
        };
        let mut values = vec![
            recon,
            recon / self.pca_recon(k),
            l0,
            l0 / (n * k.max(1)) as f64,
            recovery,
            consensus(&ws),
            share_within(&orig, 0.1),
            share_within(&rand, 0.1),
            share_within(&rand, 0.01),
            resid2 + self.lambda * l1,
            zeros / (n * k.max(1)) as f64,
            captured / self.fro2,
        ];
        values.extend(mu_metrics);
        Ok(values)
    }

    fn applicable(&self) -> Option<Vec<bool>> {
        let has_orig = self.original.iter().any(|o| *o);
        let has_rand = self.original.iter().any(|o| !*o);
        let mu = self.model.is_some();
        Some(vec![
            true,
            true,
            true,
            true,
            self.planted.is_some(),
            true,
            has_orig,
            has_rand,
            has_rand,
            true,
            true,
            true,
            mu,
            mu,
            mu,
            mu,
            mu,
        ])
    }

    fn spectra(
        &self,
        server: &Message,
        _clients: &[Message],
    ) -> Result<Vec<(&'static str, Vec<f64>)>> {
        let z = server.get("z")?;
        Ok(vec![
            ("share_orig", self.shares(z.view(), true)),
            ("share_rand", self.shares(z.view(), false)),
        ])
    }
}

/// The sparse family ([`super::Family`]).
pub struct Sparse;

impl super::Family for Sparse {
    fn kind(&self) -> Kind {
        Kind::Sparse
    }
    fn metrics(&self) -> &'static [MetricDef] {
        METRICS
    }
    /// Stalled or converged (see `run::Status`): DSSAL1's stationarity violation, the distance
    /// to a stationary point of its model (with `mu`); without it, on data with planted loadings,
    /// the recovery error ‖zzᵀ − VVᵀ‖²_F, the distance to them (NaN on real data, where no run
    /// is judged on it). 1e-12 is round-off.
    fn accuracy(&self) -> &'static [Accuracy] {
        &[
            Accuracy {
                metric: "stationarity",
                solved: 1e-12,
            },
            Accuracy {
                metric: "recovery",
                solved: 1e-12,
            },
        ]
    }
    fn takes_methods_of(&self) -> &'static [Kind] {
        &[Kind::Sparse]
    }
    fn generators(&self) -> &'static [Generator] {
        &[
            Generator::Spiked,
            Generator::Svd,
            Generator::Dataset,
            Generator::File,
        ]
    }
    fn problem_keys(&self) -> &'static [&'static str] {
        &["lambda", "mu"]
    }
    fn takes_noise_features(&self) -> bool {
        true
    }
    fn spectra(&self) -> &'static [&'static str] {
        &["share_orig", "share_rand"]
    }
    fn spectrum_short(&self, name: &str) -> Option<&'static str> {
        match name {
            "share_orig" => Some("original features"),
            "share_rand" => Some("random features"),
            _ => None,
        }
    }
    fn spectrum_axes(&self) -> (&'static str, &'static str) {
        SPECTRUM_AXES
    }
    fn p_axis(&self) -> &'static str {
        "r (loadings)"
    }
    fn attackable(&self) -> bool {
        true
    }
    /// FSSPCA, FASPCA, DSSAL1 and ManPG stop by their own criteria (as the FSSPCA
    /// manifests do, 2000 rounds at most); none reports an objective for rule (27).
    fn default_stop(&self) -> StopSpec {
        StopSpec::own_criterion(2000)
    }
    fn example(&self) -> &'static str {
        "[data]\ngenerator = \"spiked\"\nn = 24\nm = 120\nspikes = [400.0, 300.0]\nsupport = 4\ncovariance_scale = true\n[problem]\nkind = \"sparse\"\np = 2\n"
    }
    fn reference_note(&self, point: &Point) -> String {
        match point.problem.mu {
            Some(_) => REFERENCE_MU.into(),
            None => REFERENCE.into(),
        }
    }
    fn build(
        &self,
        point: &Point,
        run_seed: u64,
        cache: &MatrixCache,
        data_dir: &Path,
        progress: &Progress,
    ) -> Result<Box<dyn Instance>> {
        Ok(Box::new(SparseInstance::build(
            point, run_seed, cache, data_dir, progress,
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
    use ndarray::array;

    #[test]
    fn span_basis_drops_zero_and_dependent_columns() {
        let z = array![[1.0, 0.0, 2.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]];
        assert_eq!(span_basis(z.view()).ncols(), 1);
        assert_eq!(span_basis(Array2::<f64>::zeros((4, 2)).view()).ncols(), 0);
    }

    #[test]
    fn consensus_is_one_for_equal_loadings_up_to_sign() {
        let a = array![[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]];
        let b = -&a;
        assert!((consensus(&[&a, &b]) - 1.0).abs() < 1e-15);
        let c = array![[0.0, 0.0], [1.0, 1.0], [0.0, 0.0]];
        // Loading 1: cos 0; loading 2: cos 1.
        assert!((consensus(&[&a, &c]) - 0.5).abs() < 1e-15);
        assert_eq!(consensus(&[&a]), 1.0);
    }

    #[test]
    fn shares_count_weights_within_the_threshold() {
        assert_eq!(share_within(&[0.05, -0.1, 0.2, 0.0], 0.1), 0.75);
        assert!(share_within(&[], 0.1).is_nan());
    }
}
