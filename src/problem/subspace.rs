//! The p-dimensional dominant left singular subspace of A (FAPS's problem (1)).
//!
//! The reference is computed by the harness, never by a method, and cached:
//! - n ≤ [`GRAM_MAX_N`]: exact, LAPACK's dsyevd on the n×n Gram matrix G = AAᵀ (formed once,
//!   in parallel sample groups summed in a fixed order). The same G makes every per-round
//!   metric cheap: O(n²p) instead of a pass over A.
//! - larger n (rcv1: 47,236 features): restarted block Krylov on X ↦ A(AᵀX) to a residual of
//!   [`KRYLOV_TOL`]·σ₁², and every metric takes one pass over A. Sparse data stays sparse.

use crate::data::cache::MatrixCache;
use crate::data::matrix::{Block, GRAM_MAX_N};
use crate::linalg::krylov::KRYLOV_TOL;
use crate::linalg::{fro2, sym_eig_desc};
use crate::seed;
use crate::seed::uniform_matrix;
use crate::spec::Kind;
use anyhow::{Context, Result};
use ndarray::{s, Array1, Array2, ArrayView2, Axis};
use std::path::Path;

use super::{Accuracy, Instance, MetricDef};
use crate::data::{matrix::DataMatrix, partition, prepare, synthetic};
use crate::fed::Message;
use crate::linalg::orth;
use crate::progress::Progress;
use crate::spec::{Gen, Generator, Point, Spectrum, Svd};

/// The family's metrics, in CSV column order.
pub const METRICS: &[MetricDef] = &[
    MetricDef {
        name: "objective",
        label: "objective ‖AᵀZ‖²_F",
        short: "objective",
        lower_is_better: false,
        log: false,
    },
    MetricDef {
        name: "kkt",
        label: "scaled KKT violation ‖(I−ZZᵀ)AAᵀZ‖_F / ‖A‖²_F",
        short: "KKT",
        lower_is_better: true,
        log: true,
    },
    MetricDef {
        name: "sv_err",
        label: "relative singular-value error",
        short: "sv error",
        lower_is_better: true,
        log: true,
    },
    MetricDef {
        name: "subspace_dist",
        label: "subspace distance ‖sin Θ‖_F",
        short: "sin Θ",
        lower_is_better: true,
        log: true,
    },
];

/// Exact solution and what the metrics need.
pub struct Reference {
    /// G = AAᵀ, when n ≤ GRAM_MAX_N; otherwise metrics take products with A.
    gram: Option<Array2<f64>>,
    /// ‖A‖²_F = tr(G).
    pub fro2: f64,
    /// Eigenvalues σ_i² of G, descending (all n with the Gram route, the top p otherwise).
    pub values: Array1<f64>,
    /// The matching eigenvectors (left singular vectors), as columns.
    pub vectors: Array2<f64>,
}

/// How the reference for data with n features is computed (for run.json).
pub fn solver_for(n: usize) -> String {
    if n <= GRAM_MAX_N {
        "LAPACK dsyevd on the Gram matrix (exact)".into()
    } else {
        format!("block Krylov on A(AᵀX) to a relative residual of {KRYLOV_TOL:e}")
    }
}

impl Reference {
    /// Exact reference from the Gram matrix (dsyevd).
    pub fn from_gram(gram: Array2<f64>) -> Result<Self> {
        let fro2 = gram.diag().sum();
        let eig = sym_eig_desc(gram.view())?;
        Ok(Self {
            gram: Some(gram),
            fro2,
            values: eig.values,
            vectors: eig.vectors,
        })
    }

    /// The reference for the top `p` of `data`, from the cache or computed: Gram route for
    /// n ≤ GRAM_MAX_N, block Krylov beyond. `key` names the data in the cache.
    pub fn build(data: Block, p: usize, cache: &MatrixCache, key: &str) -> Result<Self> {
        if data.n() <= GRAM_MAX_N {
            let g = cache.get_or_build("gram", &format!("{key}-gram"), || Ok(data.gram()))?;
            return Self::from_gram(g).context("exact reference solution (dsyevd)");
        }
        let key = format!("{key}-krylov-p{p}-tol{KRYLOV_TOL:e}");
        let mut fresh = None;
        let vectors = cache.get_or_build("krylov", &format!("{key}-vectors"), || {
            let eig = data.top_gram_eigs(p)?;
            let v = eig.vectors.clone();
            fresh = Some(eig);
            Ok(v)
        })?;
        let values = cache.get_or_build("krylov", &format!("{key}-values"), || {
            // Computed together with the vectors; recomputed only if this file alone was lost.
            let eig = match fresh.take() {
                Some(eig) => eig,
                None => data.top_gram_eigs(p)?,
            };
            Ok(eig.values.insert_axis(Axis(0)))
        })?;
        Ok(Self::from_top(data, values.row(0).to_owned(), vectors))
    }

    /// A reference from the top eigenpairs of AAᵀ (metrics then take products with `data`).
    pub fn from_top(data: Block, values: Array1<f64>, vectors: Array2<f64>) -> Self {
        Self {
            gram: None,
            fro2: data.fro2(),
            values,
            vectors,
        }
    }

    /// Exact top-p singular values σ*.
    pub fn singular_values(&self, p: usize) -> Array1<f64> {
        self.values.slice(s![..p]).mapv(|v| v.max(0.0).sqrt())
    }

    /// The metrics of an estimate Z (n×p, orthonormal columns) for the data `data`.
    pub fn metrics(&self, data: Block, z: ArrayView2<f64>) -> Result<Metrics> {
        let p = z.ncols();
        let gz = match &self.gram {
            Some(g) => g.dot(&z),
            None => data.gram_times_par(z),
        };
        let ztgz = z.t().dot(&gz);
        // KKT: ‖(I − ZZᵀ)GZ‖_F / ‖A‖²_F.
        let kkt = fro2((&gz - &z.dot(&ztgz)).view()).sqrt() / self.fro2;
        // σ(Z) = singular values of AᵀZ = √eig(ZᵀGZ).
        let sv = sym_eig_desc(ztgz.view())?
            .values
            .mapv(|v| v.max(0.0).sqrt());
        let star = self.singular_values(p);
        let sv_err = fro2((&sv - &star).insert_axis(Axis(0)).view()).sqrt()
            / fro2(star.view().insert_axis(Axis(0))).sqrt();
        // ‖sin Θ‖_F between span(Z) and the exact subspace: ‖(I − U*U*ᵀ)Z‖_F (no cancellation,
        // unlike √(p − ‖U*ᵀZ‖²_F), which bottoms out near 1e-8).
        let ustar = self.vectors.slice(s![.., ..p]);
        let subspace_dist = fro2((&z - &ustar.dot(&ustar.t().dot(&z))).view()).sqrt();
        Ok(Metrics {
            objective: ztgz.diag().sum(),
            kkt,
            sv_err,
            subspace_dist,
        })
    }
}

/// Per-round quality of an estimate, computed by the observer outside the timed section.
#[derive(Clone, Copy, Debug, Default)]
pub struct Metrics {
    /// f(Z) = ‖AᵀZ‖²_F.
    pub objective: f64,
    /// Scaled KKT violation ‖(I − ZZᵀ)AAᵀZ‖_F / ‖A‖²_F.
    pub kkt: f64,
    /// Relative singular-value error ‖σ(Z) − σ*‖₂ / ‖σ*‖₂.
    pub sv_err: f64,
    /// ‖sin Θ(Z, U*)‖_F.
    pub subspace_dist: f64,
}

impl Metrics {
    /// In [`METRICS`] order.
    pub fn values(&self) -> Vec<f64> {
        vec![self.objective, self.kkt, self.sv_err, self.subspace_dist]
    }
}

/// A subspace instance: data (generated or loaded), its exact reference and the common start
/// Z⁽⁰⁾ (`z`, n×p orthonormal).
pub struct SubspaceInstance {
    a: DataMatrix,
    sizes: Vec<usize>,
    reference: Reference,
    start: Message,
}

pub(crate) fn spectrum(s: &Svd) -> synthetic::Spectrum {
    match s.spectrum {
        Spectrum::Geometric => synthetic::Spectrum::Geometric {
            xi: s.xi.expect("validated: a geometric spectrum has xi"),
        },
        Spectrum::Arithmetic => synthetic::Spectrum::Arithmetic {
            kappa: s
                .kappa
                .expect("validated: an arithmetic spectrum has kappa"),
        },
    }
}

impl SubspaceInstance {
    /// Build (or load from the cache) the data and reference of `point` for `run_seed`.
    pub fn build(
        point: &Point,
        run_seed: u64,
        cache: &MatrixCache,
        data_dir: &std::path::Path,
        progress: &Progress,
    ) -> Result<Self> {
        let key = point.data.cache_key();
        let task = progress.task(&format!("data {key} (generated or loaded, then cached)"));
        let (a, sizes) = data(point, run_seed, cache, data_dir)?;
        task.set_message(format!("reference for {key} (computed once, then cached)"));
        let (_, data_seed) = super::data_key(point, run_seed);
        let full_key = format!("{key}-seed{data_seed}");
        let reference = Reference::build(a.view(), point.problem.p, cache, &full_key)?;
        let data = super::data_name(point);
        super::check_rank(
            reference.values.as_slice().unwrap_or(&[]),
            point.problem.p,
            &data,
            "AAᵀ",
        )?;
        task.finish_and_clear();
        Ok(Self {
            a,
            sizes,
            reference,
            start: start(point, run_seed),
        })
    }
}

/// The data of `point` for `run_seed`, arranged for its partition, and the client sizes.
fn data(
    point: &Point,
    run_seed: u64,
    cache: &MatrixCache,
    data_dir: &std::path::Path,
) -> Result<(DataMatrix, Vec<usize>)> {
    let spec = &point.data;
    let (key, data_seed) = super::data_key(point, run_seed);
    let full_key = format!("{key}-seed{data_seed}");
    let (a, labels) = match &spec.gen {
        Gen::Svd(s) => {
            let a = cache.get_or_build("svd", &full_key, || {
                synthetic::svd_matrix(spec.n, spec.m, spectrum(s), data_seed)
            })?;
            (DataMatrix::Dense(a), None)
        }
        // Cheaper to draw again than to read back: not cached.
        Gen::Gaussian(_) => (
            DataMatrix::Dense(synthetic::gaussian_matrix(spec.n, spec.m, data_seed)?),
            None,
        ),
        // Real data is read (and its checksums verified) on every run, not cached.
        Gen::Dataset(_) | Gen::File(_) => prepare::dataset_matrix(spec, data_dir)?,
        other => anyhow::bail!("generator `{}` does not make subspace data", other.name()),
    };
    // The sample order does not change AAᵀ, so the cached reference stays valid.
    let mut rng = seed::rng(run_seed, &["partition", &key]);
    partition::arrange(a, labels.as_deref(), &point.partition, &mut rng)
}

/// The common start Z⁽⁰⁾: random orthonormal n×p from the run's seed.
fn start(point: &Point, run_seed: u64) -> Message {
    let (n, p) = (point.data.n, point.problem.p);
    let key = point.data.cache_key();
    let z0 = orth(
        uniform_matrix(
            n,
            p,
            &mut seed::rng(run_seed, &["z0", &key, &p.to_string()]),
        )
        .view(),
    );
    Message::new().with("z", z0)
}

/// A rank's share of `point`'s instance ([`super::share`]): synthetic columns are generated
/// (or read from the cache) alone; a dataset of byte values with entrywise preprocessing, or a
/// LIBSVM file without preprocessing, is read keeping only the rank's samples
/// ([`super::dataset_share`]); any other dataset or file is loaded whole, arranged and sliced
/// (`standardize`, `zscore` and `unit_top` take statistics whose sums a rank cannot replay
/// sample by sample with the same bits).
pub(super) fn share(
    point: &Point,
    run_seed: u64,
    cache: &MatrixCache,
    data_dir: &std::path::Path,
    pick: super::Pick,
) -> Result<super::Share> {
    let spec = &point.data;
    match spec.generator() {
        Generator::Svd => super::svd_share(point, run_seed, cache, pick, start(point, run_seed)),
        Generator::Gaussian => {
            let (wanted, lo, sizes) = super::wanted_samples(point, run_seed, None, pick)?;
            let (_, data_seed) = super::data_key(point, run_seed);
            let cols = synthetic::gaussian_columns(spec.n, spec.m, data_seed, &wanted)?;
            Ok(super::Share {
                sizes,
                lo,
                cols: DataMatrix::Dense(cols),
                start: start(point, run_seed),
            })
        }
        _ => {
            let start = start(point, run_seed);
            if let Some(share) = super::dataset_share(point, run_seed, data_dir, pick, &start)? {
                return Ok(share);
            }
            let (a, sizes) = data(point, run_seed, cache, data_dir)?;
            Ok(super::Share::slice(&a, sizes, start, pick))
        }
    }
}

impl Instance for SubspaceInstance {
    fn data(&self) -> &DataMatrix {
        &self.a
    }
    fn sizes(&self) -> &[usize] {
        &self.sizes
    }
    fn start(&self) -> &Message {
        &self.start
    }
    fn dim(&self) -> usize {
        self.a.n()
    }
    fn evaluate(&self, server: &Message, _clients: &[Message]) -> Result<Vec<f64>> {
        let z = server.get("z")?;
        Ok(self.reference.metrics(self.a.view(), z.view())?.values())
    }
}

/// The subspace family ([`super::Family`]).
pub struct Subspace;

impl super::Family for Subspace {
    fn kind(&self) -> Kind {
        Kind::Subspace
    }
    fn metrics(&self) -> &'static [MetricDef] {
        METRICS
    }
    /// Stalled or converged (see `run::Status`): the scaled KKT violation measures the distance
    /// to a stationary point, and at 1e-12 it is at round-off, where no further gain is possible.
    fn accuracy(&self) -> &'static [Accuracy] {
        &[Accuracy {
            metric: "kkt",
            solved: 1e-12,
        }]
    }
    fn takes_methods_of(&self) -> &'static [Kind] {
        &[Kind::Subspace]
    }
    fn generators(&self) -> &'static [Generator] {
        &[
            Generator::Svd,
            Generator::Gaussian,
            Generator::Dataset,
            Generator::File,
        ]
    }
    fn attackable(&self) -> bool {
        true
    }
    fn unscaled(&self) -> Option<(&'static str, &'static str)> {
        Some(("kkt", crate::spec::KKT_ABS))
    }
    fn example(&self) -> &'static str {
        "[data]\ngenerator = \"svd\"\nspectrum = \"geometric\"\nn = 24\nm = 120\nxi = 1.1\n[problem]\nkind = \"subspace\"\np = 3\n"
    }
    fn reference_note(&self, point: &Point) -> String {
        solver_for(point.data.n)
    }
    fn build(
        &self,
        point: &Point,
        run_seed: u64,
        cache: &MatrixCache,
        data_dir: &Path,
        progress: &Progress,
    ) -> Result<Box<dyn Instance>> {
        Ok(Box::new(SubspaceInstance::build(
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
