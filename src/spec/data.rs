//! `[data]`: the sizes every generator shares, then one struct per generator behind
//! `generator`, so a key that does not belong to the chosen generator is refused by its type
//! (`deny_unknown_fields`) and named with the generators that do take it.
//!
//! The checks here need nothing beyond the section itself (ranges, one key needing another);
//! those that involve the partition, the problem or files are in [`crate::plan`].

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::schema::{
    DataSplit, FileFormat, FilePaths, Generator, Magnitude, Noise, Orientation, Preprocess,
    Spectrum,
};
use super::{Locator, ManifestError};

/// A manifest's `[data]` at one sweep point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DataSpec {
    /// Rows = features. File data: optional, taken from the file (checked when given).
    pub n: usize,
    /// Columns = samples. File data: optional, as n.
    pub m: usize,
    /// The generator and its own keys.
    #[serde(flatten)]
    pub gen: Gen,
}

/// The generator (`generator = "..."`) with its keys. The JSON form (run.json, fingerprints) is
/// the flat `[data]` table, as the manifest writes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "generator", rename_all = "snake_case")]
pub enum Gen {
    Svd(Svd),
    Gaussian(Gaussian),
    Dataset(Dataset),
    Robust(Robust),
    Spiked(Spiked),
    Eigengap(Eigengap),
    File(File),
}

/// A = U Σ Vᵀ with random orthonormal U, V (FAPS eq. 23); m ≥ n.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Svd {
    /// Σ's shape: "geometric" (Σ_ii = xi^(1−i), needs xi > 1) or "arithmetic" (Σ_ii falls
    /// linearly from 1 to 1/kappa, needs kappa ≥ 1).
    pub spectrum: Spectrum,
    /// Spectrum "geometric": the decay ξ > 1 (FAPS eq. 24).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xi: Option<f64>,
    /// Spectrum "arithmetic": the condition number κ = σ_1/σ_n ≥ 1 (FAPS fig. 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kappa: Option<f64>,
}

/// A with iid N(0, 1) entries: FAPS fig. 1's "randomly generated" test matrix. Takes only n
/// and m.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Gaussian {}

/// A real dataset from datasets/raw/ (`dpca data list`), samples as columns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Dataset {
    /// Its name in `dpca data list`, e.g. "mnist".
    pub dataset: String,
    /// Which samples: "train" (default), "test" or "all".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<DataSplit>,
    /// Preprocessing steps, applied in order (scale01, center, standardize, zscore, unit_top).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preprocess: Vec<Preprocess>,
    /// Sparse PCA: random features appended after the dataset's own (WDBC*: 800).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_features: Option<usize>,
    /// How the appended features are drawn: "uniform" (default) or "client_blocks".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<Noise>,
    /// Preprocessing of the whole matrix after the noise features are appended (`preprocess`
    /// acts on the dataset's own features before).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after_noise: Vec<Preprocess>,
}

/// Low rank plus sparse, M = L₀ + S₀ (DCF-PCA paper §5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Robust {
    /// r, the rank of L₀, in 1..=min(n, m).
    pub rank: usize,
    /// s in [0, 1), the fraction of entries of S₀ that are non-zero (corrupted).
    pub sparsity: f64,
    /// Outlier magnitudes: "sign" (±√(nm), default) or "uniform".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub magnitude: Option<Magnitude>,
}

/// Samples x ~ N(0, V D Vᵀ) whose leading eigenvectors are sparse and planted (the federated
/// sparse PCA paper §IV.A, after Journée et al.).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Spiked {
    /// The leading eigenvalues of Σ (each > 1), one per planted sparse loading; the others are
    /// 1 (the paper: [400.0, 300.0]).
    pub spikes: Vec<f64>,
    /// Non-zero entries per planted loading, each 1/√support, on disjoint consecutive features
    /// (the paper: 10).
    pub support: usize,
    /// Each client draws its own eigenvectors beyond the planted ones (non-IID, §IV.C);
    /// otherwise all share one Σ.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub heterogeneous: bool,
    /// Divide each client's samples by √m_i, so that its X_iX_iᵀ estimates Σ at every client
    /// count (the scale at which the paper's λ and ρ behave as it reports).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub covariance_scale: bool,
}

/// Samples x ~ N(0, UΣUᵀ), U random orthogonal, Σ = diag(1, 1 − δ, (1 − δ)·decay, …) (the CEDRE
/// paper §6.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Eigengap {
    /// δ in (0, 1), the gap between Σ's first two eigenvalues 1 and 1 − δ, e.g. 0.2.
    pub delta: f64,
    /// Σ_jj = decay·Σ_(j−1)(j−1) for j ≥ 3, in (0, 1) (default 0.9, the paper's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decay: Option<f64>,
}

/// The researcher's own data file, `source = "x.csv"` (implied by `source`): CSV, LIBSVM, IDX
/// or NumPy .npy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct File {
    /// The data file, relative to the manifest's folder (or absolute).
    pub source: String,
    /// Its format: "csv", "libsvm", "idx" or "npy" (default: from the extension, after any .gz
    /// or .bz2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<FileFormat>,
    /// "rows" (one sample per row, the default, as numpy and pandas) or "columns".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub orientation: Option<Orientation>,
    /// The file's SHA-256, checked when given; filled in with the file's digest when the
    /// manifest loads, so that records and cache keys change with the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// CSV: whether the first line names the columns (default: detected).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<bool>,
    /// CSV: the column holding each sample's label, numbered from 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_column: Option<usize>,
    /// A labels file, one integer per line or a .npy vector, one per sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<String>,
    /// The labels file's SHA-256, as `sha256`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels_sha256: Option<String>,
    /// Preprocessing steps, applied in order (scale01, center, standardize, zscore, unit_top).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preprocess: Vec<Preprocess>,
    /// Sparse PCA: random features appended after the file's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_features: Option<usize>,
    /// How the appended features are drawn: "uniform" (default) or "client_blocks".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<Noise>,
    /// Preprocessing of the whole matrix after the noise features are appended.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after_noise: Vec<Preprocess>,
    /// Set when the manifest loads (not a manifest key): SHA-256 of the matrix as read and of
    /// its labels, whatever the format, orientation or path. It keys the data's seeds and
    /// cached reference, so the same matrix gives the same runs from a CSV or a .npy file, and
    /// a changed one gets new ones.
    #[serde(skip_deserializing, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub content_sha256: Option<String>,
    /// Where `source` and `labels` were found (set when the manifest loads).
    #[serde(skip)]
    #[schemars(skip)]
    pub paths: Option<FilePaths>,
}

/// The keys a real matrix (a registered dataset or a file) shares: its preprocessing and the
/// noise features the sparse family may append.
pub struct Real<'a> {
    pub preprocess: &'a [Preprocess],
    pub noise_features: Option<usize>,
    pub noise: Option<Noise>,
    pub after_noise: &'a [Preprocess],
}

impl Gen {
    /// The generator's name, as `generator = "..."` writes it.
    pub fn name(&self) -> Generator {
        match self {
            Gen::Svd(_) => Generator::Svd,
            Gen::Gaussian(_) => Generator::Gaussian,
            Gen::Dataset(_) => Generator::Dataset,
            Gen::Robust(_) => Generator::Robust,
            Gen::Spiked(_) => Generator::Spiked,
            Gen::Eigengap(_) => Generator::Eigengap,
            Gen::File(_) => Generator::File,
        }
    }
}

impl DataSpec {
    pub fn generator(&self) -> Generator {
        self.gen.name()
    }

    /// The real-matrix keys of a dataset or file point; None for a synthetic generator.
    pub fn real(&self) -> Option<Real<'_>> {
        match &self.gen {
            Gen::Dataset(d) => Some(Real {
                preprocess: &d.preprocess,
                noise_features: d.noise_features,
                noise: d.noise,
                after_noise: &d.after_noise,
            }),
            Gen::File(f) => Some(Real {
                preprocess: &f.preprocess,
                noise_features: f.noise_features,
                noise: f.noise,
                after_noise: &f.after_noise,
            }),
            _ => None,
        }
    }

    /// The preprocessing steps (empty for a synthetic generator).
    pub fn preprocess(&self) -> &[Preprocess] {
        self.real().map_or(&[], |r| r.preprocess)
    }

    /// The count of appended noise features (0 without).
    pub fn noise_features(&self) -> usize {
        self.real().and_then(|r| r.noise_features).unwrap_or(0)
    }

    /// The registered dataset's or the file's name, for messages.
    pub fn real_name(&self) -> Option<&str> {
        match &self.gen {
            Gen::Dataset(d) => Some(&d.dataset),
            Gen::File(f) => Some(&f.source),
            _ => None,
        }
    }

    /// Canonical, file-name-safe text of every field, to name cached matrices. It does not
    /// contain the seed: the caller appends the data seed it derived. The key also seeds the
    /// data, so its text must never change: required keys keep the `Some(..)` form they had
    /// when every key was optional.
    pub fn cache_key(&self) -> String {
        let (n, m) = (self.n, self.m);
        let gen = self.generator();
        let mut key = match &self.gen {
            Gen::Svd(s) => format!("{gen}-{}-n{n}-m{m}", s.spectrum),
            _ => format!("{gen}-n{n}-m{m}"),
        };
        match &self.gen {
            Gen::Svd(s) => {
                if let Some(xi) = s.xi {
                    key.push_str(&format!("-xi{xi:?}"));
                }
                if let Some(kappa) = s.kappa {
                    key.push_str(&format!("-kappa{kappa:?}"));
                }
            }
            Gen::Gaussian(_) => {}
            Gen::Dataset(d) => {
                key.push_str(&format!("-{}-{:?}-{:?}", d.dataset, d.split, d.preprocess));
            }
            // A data file by the content it was read as, not by its path or bytes: the same
            // matrix shares seeds and cache from a CSV or a .npy file, and an edited one gets
            // new ones.
            Gen::File(f) => {
                let content = f.content_sha256.as_deref().unwrap_or("unresolved");
                key.push_str(&format!(
                    "-{}-{:?}",
                    &content[..16.min(content.len())],
                    f.preprocess
                ));
            }
            Gen::Spiked(s) => key.push_str(&format!(
                "-spikes{:?}-support{:?}-het{}-cov{}",
                s.spikes,
                Some(s.support),
                s.heterogeneous,
                s.covariance_scale
            )),
            Gen::Eigengap(e) => {
                key.push_str(&format!("-delta{:?}-decay{:?}", e.delta, e.decay));
            }
            Gen::Robust(r) => key.push_str(&format!(
                "-r{}-s{:?}-{}",
                r.rank,
                r.sparsity,
                r.magnitude.unwrap_or_default()
            )),
        }
        if let Some(real) = self.real() {
            if let Some(k) = real.noise_features {
                key.push_str(&format!(
                    "-noise{k}-{:?}-{:?}",
                    real.noise.unwrap_or(Noise::Uniform),
                    real.after_noise
                ));
            }
        }
        key
    }

    /// Read `[data]` (`table`, after the sweep and the profile): `generator` picks the struct,
    /// `source` implies generator = "file", every other generator needs n and m. `at` ends each
    /// message (the sweep point).
    pub(crate) fn from_table(
        mut table: toml::Table,
        loc: &Locator,
        at: &str,
    ) -> Result<DataSpec, ManifestError> {
        if table.contains_key("source") && !table.contains_key("generator") {
            table.insert("generator".into(), toml::Value::String("file".into()));
        }
        let Some(name) = table.remove("generator") else {
            return Err(loc.error("data.generator", format!("missing field `generator`{at}")));
        };
        let generator: Generator = key_value(name, "generator", loc, at)?;
        let mut size = |key: &str| match table.remove(key) {
            Some(v) => key_value::<usize>(v, key, loc, at),
            None if generator == Generator::File => Ok(0),
            None => Err(loc.error(&format!("data.{key}"), format!("missing field `{key}`{at}"))),
        };
        let (n, m) = (size("n")?, size("m")?);
        let gen = match generator {
            Generator::Svd => Gen::Svd(keys(table, generator, loc, at)?),
            Generator::Gaussian => Gen::Gaussian(keys(table, generator, loc, at)?),
            Generator::Dataset => Gen::Dataset(keys(table, generator, loc, at)?),
            Generator::Robust => Gen::Robust(keys(table, generator, loc, at)?),
            Generator::Spiked => Gen::Spiked(keys(table, generator, loc, at)?),
            Generator::Eigengap => Gen::Eigengap(keys(table, generator, loc, at)?),
            Generator::File => Gen::File(keys(table, generator, loc, at)?),
        };
        let spec = DataSpec { n, m, gen };
        spec.check()
            .map_err(|(keys, msg)| loc.blame(&keys, format!("{msg}{at}")))?;
        Ok(spec)
    }

    /// The rules within `[data]`: ranges, and keys that need each other. Err names the keys to
    /// blame (the first is located) and the message.
    fn check(&self) -> Result<(), (Vec<&'static str>, String)> {
        let (n, m) = (self.n, self.m);
        let fail = |keys: &[&'static str], msg: String| Err((keys.to_vec(), msg));
        match &self.gen {
            Gen::Svd(s) => {
                if n > m {
                    return fail(&["data.n", "data.m"], format!(
                        "data.n = {n} exceeds data.m = {m}: the svd generator needs m >= n (V is m×n with orthonormal columns)"
                    ));
                }
                // (the key it needs, what it needs, the other spectrum's key)
                let (needed, needs, unused) = match s.spectrum {
                    Spectrum::Geometric => ("data.xi", "xi > 1 (Σ_ii = xi^(1-i))", "data.kappa"),
                    Spectrum::Arithmetic => (
                        "data.kappa",
                        "kappa >= 1 (condition number σ_1/σ_n)",
                        "data.xi",
                    ),
                };
                let name = |key: &'static str| key.trim_start_matches("data.");
                let (value, ok) = match s.spectrum {
                    Spectrum::Geometric => (s.xi, s.xi.is_some_and(|x| x.is_finite() && x > 1.0)),
                    Spectrum::Arithmetic => {
                        (s.kappa, s.kappa.is_some_and(|k| k.is_finite() && k >= 1.0))
                    }
                };
                let spectrum = s.spectrum;
                match value {
                    None => {
                        return fail(
                            &[needed],
                            format!("missing: spectrum = \"{spectrum}\" needs {needs}"),
                        )
                    }
                    Some(v) if !ok => {
                        return fail(
                            &[needed],
                            format!(
                                "{} = {v}: spectrum = \"{spectrum}\" needs a finite {needs}",
                                name(needed)
                            ),
                        )
                    }
                    _ => {}
                }
                let other = match s.spectrum {
                    Spectrum::Geometric => s.kappa.is_some(),
                    Spectrum::Arithmetic => s.xi.is_some(),
                };
                if other {
                    let owner = match s.spectrum {
                        Spectrum::Geometric => Spectrum::Arithmetic,
                        Spectrum::Arithmetic => Spectrum::Geometric,
                    };
                    return fail(&[unused], format!(
                        "{} is only used by spectrum = \"{owner}\": remove it, or it would label runs it does not affect",
                        name(unused)
                    ));
                }
            }
            Gen::Gaussian(_) | Gen::Dataset(_) | Gen::File(_) => {}
            Gen::Robust(r) => {
                if r.rank == 0 || r.rank > n.min(m) {
                    return fail(
                        &["data.rank", "data.n", "data.m"],
                        format!(
                            "rank = {}: must lie in 1..=min(n, m) = {}",
                            r.rank,
                            n.min(m)
                        ),
                    );
                }
                if !(0.0..1.0).contains(&r.sparsity) {
                    return fail(
                        &["data.sparsity"],
                        format!("sparsity = {}: must lie in [0, 1)", r.sparsity),
                    );
                }
            }
            Gen::Spiked(s) => {
                if s.spikes.is_empty() {
                    return fail(&["data.spikes"], "missing: generator = \"spiked\" needs spikes = [eigenvalues > 1 of the planted loadings], e.g. [400.0, 300.0]".into());
                }
                if let Some(v) = s.spikes.iter().find(|v| !(v.is_finite() && **v > 1.0)) {
                    return fail(&["data.spikes"],
                        format!("spike {v}: every spike must be a finite eigenvalue > 1 (the others are 1)"),
                    );
                }
                if s.support == 0 || s.support.saturating_mul(s.spikes.len()) > n {
                    return fail(
                        &["data.support", "data.spikes", "data.n"],
                        format!(
                            "support = {} with {} spikes needs 1 <= support·spikes <= n = {n}",
                            s.support,
                            s.spikes.len()
                        ),
                    );
                }
            }
            Gen::Eigengap(e) => {
                if !(e.delta > 0.0 && e.delta < 1.0) {
                    return fail(
                        &["data.delta"],
                        format!("delta = {}: must lie in (0, 1)", e.delta),
                    );
                }
                if let Some(decay) = e.decay {
                    if !(decay > 0.0 && decay < 1.0) {
                        return fail(
                            &["data.decay"],
                            format!("decay = {decay}: must lie in (0, 1)"),
                        );
                    }
                }
            }
        }
        if let Some(real) = self.real() {
            if real.noise.is_some() && real.noise_features.is_none() {
                return fail(&["data.noise_features"],
                    "missing: data.noise says how noise features are drawn, noise_features how many".into(),
                );
            }
        }
        Ok(())
    }
}

/// One value of `[data]`, with serde's message at `data.<key>`.
fn key_value<T: DeserializeOwned>(
    value: toml::Value,
    key: &str,
    loc: &Locator,
    at: &str,
) -> Result<T, ManifestError> {
    T::deserialize(value).map_err(|e| {
        loc.error(
            &format!("data.{key}"),
            format!("{}{at}", e.message().trim_end()),
        )
    })
}

/// The generator's own keys (`table` without generator, n and m) as its struct `T`. A key of
/// another generator is named with the generators that take it; a missing key with its meaning.
fn keys<T: DeserializeOwned>(
    table: toml::Table,
    generator: Generator,
    loc: &Locator,
    at: &str,
) -> Result<T, ManifestError> {
    let wrapped = toml::Table::from_iter([("data".to_string(), toml::Value::Table(table))]);
    super::deserialize::<Wrapped<T>>(wrapped, loc, at)
        .map(|w| w.data)
        .map_err(|e| {
            let Some(field) = e.key().and_then(|k| k.strip_prefix("data.")) else {
                return e;
            };
            let field = field.to_string();
            let msg = e.message();
            if msg.starts_with("unknown field") {
                let owners: Vec<String> = Generator::ALL
                    .iter()
                    .filter(|g| fields(**g).iter().any(|(f, _)| *f == field))
                    .map(|g| format!("\"{g}\""))
                    .collect();
                if !owners.is_empty() {
                    let owners = match owners.split_last() {
                        Some((last, [])) => last.clone(),
                        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
                        None => unreachable!("not empty"),
                    };
                    return loc.error(
                        &format!("data.{field}"),
                        format!("only used with generator = {owners}, not \"{generator}\": remove it{at}"),
                    );
                }
            } else if msg.starts_with("missing field") {
                if let Some((_, meaning)) = fields(generator).into_iter().find(|(f, _)| *f == field) {
                    return loc.error(
                        &format!("data.{field}"),
                        format!("missing field `{field}`: generator = \"{generator}\" needs it: {meaning}{at}"),
                    );
                }
            }
            e
        })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Wrapped<T> {
    data: T,
}

/// The keys of a generator's struct and their meanings (doc comments), from its JSON schema.
pub fn fields(generator: Generator) -> Vec<(String, String)> {
    let schema = match generator {
        Generator::Svd => schemars::schema_for!(Svd),
        Generator::Gaussian => schemars::schema_for!(Gaussian),
        Generator::Dataset => schemars::schema_for!(Dataset),
        Generator::Robust => schemars::schema_for!(Robust),
        Generator::Spiked => schemars::schema_for!(Spiked),
        Generator::Eigengap => schemars::schema_for!(Eigengap),
        Generator::File => schemars::schema_for!(File),
    };
    let Some(props) = schema.get("properties").and_then(|p| p.as_object()) else {
        return Vec::new();
    };
    props
        .iter()
        .map(|(k, v)| {
            let doc = v.get("description").and_then(|d| d.as_str()).unwrap_or("");
            (
                k.clone(),
                doc.split_whitespace().collect::<Vec<_>>().join(" "),
            )
        })
        .collect()
}
