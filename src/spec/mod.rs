//! Experiment manifests: one TOML file per paper table or figure (experiments/<paper>/<id>.toml),
//! their types and their reading. The lowest floor: nothing here knows a method, a family's
//! metrics or a data file (the checks that need them, and the loading that runs them, are in
//! [`crate::plan`]).
//!
//! Reading = parse → overlay the chosen profile → deserialize (serde, unknown keys rejected) →
//! expand the sweep into points and list-valued method params into variants. Every error names
//! the file, the line and the key, because a manifest is edited by hand and "invalid type" alone
//! sends the user hunting.

mod data;
mod locate;
mod merge;
mod names;
mod overrides;
mod papers;
pub mod placeholder;
mod schema;

use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::Serialize;
use sha2::{Digest, Sha256};

pub(crate) use merge::fmt_value;

use locate::{format_path, parse_path, Seg};

pub use data::{
    fields as generator_fields, DataSpec, Dataset, Eigengap, File, Gaussian, Gen, Real, Robust,
    Spiked, Svd,
};
pub use locate::Locator;
pub use names::{plain_name, quoted};
pub use overrides::{folder_suffix, Set};
pub use papers::{InventoryClaim, Paper, PaperKind, PaperRecord, Registry};
pub use schema::{
    AttackSpec, ClaimSpec, DataSplit, FileFormat, FilePaths, Generator, Kind, Magnitude, Noise,
    Orientation, PaperResult, PartitionSpec, PlotKind, PlotSpec, Preprocess, ProblemSpec, Rate,
    RawManifest, RawPoint, RelativeTo, Scheme, Spectrum, StopSpec, Target, Trend, XAxis, KKT_ABS,
    LEAK_ABS, LEAK_ERR, RUN_QUANTITIES, SWEEPABLE,
};

/// A manifest loaded with one profile, ready to run.
#[derive(Debug, Clone, Serialize)]
pub struct Experiment {
    pub path: PathBuf,
    pub profile: String,
    /// The `--set` entries applied to the manifest, as `KEY=VALUE` (empty: the file as it is).
    pub sets: Vec<String>,
    /// The results folder's name under <paper>/<id>/: the profile, with a hash of `sets`.
    pub folder: String,
    /// sha256 (hex) of the file's bytes: provenance for run.json.
    pub hash: String,
    pub id: String,
    pub paper: String,
    pub paper_file: String,
    /// The registry's record of `paper` (title, authors, venue, year); None for a manifest that
    /// reproduces no paper of the registry (own experiments) or has no registry above it.
    pub paper_record: Option<PaperRecord>,
    pub title: String,
    pub reproduces: String,
    pub description: Option<String>,
    pub seed: u64,
    pub repeats: usize,
    /// One per sweep combination; exactly one when there is no sweep.
    pub points: Vec<Point>,
    /// The problem family of every point.
    pub kind: Kind,
    /// One per method variant (list-valued params expanded), in file order then variant order.
    pub methods: Vec<MethodSpec>,
    pub stop: StopSpec,
    /// Whether `stop` is the family's default (the manifest has no [stop]).
    pub stop_default: bool,
    pub plots: Vec<PlotSpec>,
    pub paper_results: Vec<PaperResult>,
    pub attack: Option<AttackSpec>,
    pub claims: Vec<ClaimSpec>,
    /// Metrics of the report's main table (empty: the default choice, see report::tables).
    pub table_metrics: Vec<String>,
    /// Looser tolerances of rule (27) read off the traces in the report (see report::stop_study).
    pub looser_tolerances: Vec<f64>,
    /// Kept to locate lines for errors found later (e.g. by the method registry).
    #[serde(skip)]
    source: Source,
}

/// One sweep point: the sweepable sections with the sweep's values substituted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    /// e.g. "n=2000", or "" without a sweep. Keys are the last segment of the sweep key.
    pub label: String,
    /// The swept key paths and their values at this point (empty without a sweep).
    pub coords: Vec<(String, toml::Value)>,
    pub data: DataSpec,
    pub partition: PartitionSpec,
    pub problem: ProblemSpec,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MethodSpec {
    /// Position in [[methods]]; for error_at("methods[{index}].params.x", ..).
    pub index: usize,
    pub name: String,
    /// Display label; defaults to the name.
    pub label: String,
    /// Scalar values only after expansion (unless a list was wrapped in a list on purpose).
    pub params: toml::Table,
    /// The swept params of this variant, sorted by key, e.g. "inner_steps=5"; "" if none.
    pub variant: String,
    /// Every parameter the method will use, defaults included (null for a planned method):
    /// a changed default changes the run's fingerprint.
    pub resolved: serde_json::Value,
}

impl MethodSpec {
    /// "FAPS" or "FAPS (inner_steps=5)": unique within an experiment.
    pub fn full_label(&self) -> String {
        label_with_variant(&self.label, &self.variant)
    }
}

/// [`Experiment::names_run`] over a list of method variants (before the experiment is built).
pub fn names_run(
    methods: &[MethodSpec],
    who: &str,
    method: &str,
    label: &str,
    variant: &str,
) -> bool {
    if methods
        .iter()
        .any(|m| m.full_label() == who && !m.variant.is_empty())
    {
        label_with_variant(label, variant) == who
    } else if methods.iter().any(|m| m.label == who) {
        label == who
    } else {
        method == who
    }
}

/// "FAPS" or "FAPS (inner_steps=5)": how a method variant is named in tables and legends.
pub fn label_with_variant(label: &str, variant: &str) -> String {
    if variant.is_empty() {
        label.to_string()
    } else {
        format!("{label} ({variant})")
    }
}

/// The manifest's text and the key paths `--set` wrote, to locate errors found later.
#[derive(Clone, Default)]
struct Source(String, Vec<(Vec<Seg>, String)>);

impl fmt::Debug for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Source({} bytes)", self.0.len())
    }
}

/// `<file>:<line>: key `k`: message`; the line (or key) is left out when unknown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestError {
    file: PathBuf,
    line: Option<usize>,
    column: Option<usize>,
    key: Option<String>,
    message: String,
    /// The `--set` entry that wrote the key (then the file has no line for it).
    flag: Option<String>,
}

impl ManifestError {
    pub fn file(&self) -> &Path {
        &self.file
    }
    /// 1-based.
    pub fn line(&self) -> Option<usize> {
        self.line
    }
    pub fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }
    pub fn message(&self) -> &str {
        &self.message
    }
    /// The `--set` entry the error is about, `KEY=VALUE`.
    pub fn flag(&self) -> Option<&str> {
        self.flag.as_deref()
    }
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(flag) = &self.flag {
            write!(f, "--set {flag}: {}", self.message.trim_end())?;
            // The key in the manifest, unless the flag spells it so.
            return match self
                .key
                .as_deref()
                .filter(|k| !flag.starts_with(&format!("{k}=")))
            {
                Some(k) => write!(f, " (key `{k}` of {})", self.file.display()),
                None => write!(f, " ({})", self.file.display()),
            };
        }
        write!(f, "{}", self.file.display())?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
            if let Some(c) = self.column {
                write!(f, ":{c}")?;
            }
        }
        if let Some(k) = &self.key {
            write!(f, ": key `{k}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ManifestError {}

impl Experiment {
    /// How a manifest names a method in `paper_results` and `claims`: a full label
    /// "FAPS fixed (inner_steps=5)" names one variant, a label one `[[methods]]` entry with all its
    /// variants, a method name the one entry of that method (a name shared by several entries is
    /// refused when the manifest loads, see [`validate`]). So the paper's numbers attach to the
    /// configuration the paper ran, never to a variant of it.
    pub fn names_run(&self, who: &str, method: &str, label: &str, variant: &str) -> bool {
        names_run(&self.methods, who, method, label, variant)
    }

    /// Whether the manifest reproduces a paper (names its file or gives its numbers); without
    /// one the report is plain: our numbers only.
    pub fn has_paper(&self) -> bool {
        !self.paper_file.is_empty() || !self.paper_results.is_empty()
    }

    /// Error for a key path inside the manifest (e.g. "methods[1].params.inner_steps",
    /// "data.n"), located at its line: the sweep entry, the active profile's overlay, then the
    /// base document, whichever sets the value in effect.
    pub fn error_at(&self, key_path: &str, msg: impl fmt::Display) -> ManifestError {
        match Locator::parse(&self.path, self.source.0.clone(), &self.profile) {
            Ok(loc) => loc.with_flags(self.source.1.clone()).error(key_path, msg),
            Err(_) => ManifestError {
                file: self.path.clone(),
                line: None,
                column: None,
                key: Some(key_path.to_string()),
                message: msg.to_string(),
                flag: None,
            },
        }
    }
}

fn read(path: &Path) -> Result<(String, String), ManifestError> {
    read_limited(path, "manifest", MAX_MANIFEST_BYTES)
}

impl ManifestError {
    /// An error about the file as a whole (no line, no key).
    pub(crate) fn plain(file: &Path, message: String) -> ManifestError {
        ManifestError {
            file: file.to_path_buf(),
            line: None,
            column: None,
            key: None,
            message,
            flag: None,
        }
    }
}

/// The text of a hand-written .toml file (`what` names it in errors) and its sha256 (hex).
fn read_limited(path: &Path, what: &str, max: u64) -> Result<(String, String), ManifestError> {
    let plain = |message: String| ManifestError::plain(path, message);
    // A FIFO or device would block or never end: only regular files of sane size are read.
    let meta = std::fs::metadata(path).map_err(|e| plain(format!("cannot read {what}: {e}")))?;
    if !meta.is_file() {
        return Err(plain(format!(
            "not a regular file: a {what} is a .toml file"
        )));
    }
    if meta.len() > max {
        return Err(plain(format!(
            "{} bytes: a {what} is at most {max} bytes",
            meta.len()
        )));
    }
    let bytes = std::fs::read(path).map_err(|e| plain(format!("cannot read {what}: {e}")))?;
    let hash = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let text = String::from_utf8(bytes).map_err(|e| plain(format!("not UTF-8 text: {e}")))?;
    Ok((text, hash))
}

const MAX_MANIFEST_BYTES: u64 = 4 << 20;

/// The profile used when none is asked for: `paper` for a manifest with [profiles], else its
/// one profile `default` (so a minimal manifest's results never land in a folder "paper").
pub fn default_profile(path: &Path) -> Result<&'static str, ManifestError> {
    let (text, _) = read(path)?;
    let loc = Locator::parse(path, text, "")?;
    Ok(if loc.doc().get("profiles").is_some() {
        "paper"
    } else {
        DEFAULT_PROFILE
    })
}

/// `paper` of a manifest that does not say: its folder's name, as experiments/<paper>/<id>.toml
/// has it, when that is a plain name; else "own". The folder the file is in, however the path
/// is spelt (`digits.toml`, `mywork/digits.toml`, `./mywork/../mywork/digits.toml`, or a link
/// to it): the results folder must not depend on the spelling.
fn default_paper(path: &Path) -> String {
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    real.parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .filter(|n| plain_name(n).is_ok())
        .unwrap_or("own")
        .to_string()
}

/// Every *.toml under `dir`, sorted. Links to folders are not followed (a link back up would
/// list the same manifests again, or never end).
pub fn manifests_under(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d)? {
            let e = e?;
            let path = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "toml") {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

/// The one profile of a manifest without [profiles].
pub const DEFAULT_PROFILE: &str = "default";

/// Profile names in file order (`default` alone if the manifest has no [profiles]).
pub fn profile_names(path: &Path) -> Result<Vec<String>, ManifestError> {
    let (text, _) = read(path)?;
    let loc = Locator::parse(path, text, "")?;
    match loc.doc().get("profiles") {
        None => Ok(vec![DEFAULT_PROFILE.to_string()]),
        Some(item) => match item.as_table_like() {
            Some(t) => Ok(t.iter().map(|(k, _)| k.to_string()).collect()),
            None => Err(loc.error(
                "profiles",
                "expected a table of profiles, e.g. [profiles.quick]",
            )),
        },
    }
}

/// A manifest read with one profile overlaid and deserialized: what [`crate::plan`] checks and
/// expands into an [`Experiment`].
pub struct Parsed {
    pub path: PathBuf,
    pub profile: String,
    hash: String,
    text: String,
    pub loc: Locator,
    pub raw: RawManifest,
    sets: Vec<Set>,
}

/// Read `path` with `profile` overlaid.
pub fn parse(path: &Path, profile: &str) -> Result<Parsed, ManifestError> {
    parse_with(path, profile, &[])
}

/// Read `path` with `profile` overlaid, then the `--set` entries `sets` in order.
pub fn parse_with(path: &Path, profile: &str, sets: &[Set]) -> Result<Parsed, ManifestError> {
    let (text, hash) = read(path)?;
    let loc = Locator::parse(path, text.clone(), profile)?;
    let mut base: toml::Table = toml::from_str(&text)
        .map_err(|e| loc.file_error(format!("invalid TOML: {}", e.message())))?;

    // Profile overlay.
    let profiles = match base.remove("profiles") {
        None => toml::Table::new(),
        Some(toml::Value::Table(t)) => t,
        Some(_) => {
            return Err(loc.error(
                "profiles",
                "expected a table of profiles, e.g. [profiles.quick]",
            ))
        }
    };
    // Without [profiles] a manifest has one profile, `default`, with nothing to overlay.
    let none = toml::Value::Table(toml::Table::new());
    let overlay = match profiles.get(profile) {
        None if profiles.is_empty() && profile == DEFAULT_PROFILE => Some(&none),
        found => found,
    };
    let Some(overlay) = overlay else {
        // File order, as profile_names() gives.
        let names: Vec<String> = loc
            .doc()
            .get("profiles")
            .and_then(|p| p.as_table_like())
            .map(|t| t.iter().map(|(k, _)| k.to_string()).collect())
            .unwrap_or_default();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let msg = if names.is_empty() {
            format!("unknown profile `{profile}`: this manifest defines no profiles, so its one profile is `{DEFAULT_PROFILE}`; add a [profiles.{profile}] table (it may be empty)")
        } else {
            format!(
                "unknown profile `{profile}`: this manifest defines {}",
                quoted(&names)
            )
        };
        return Err(loc.error("profiles", msg));
    };
    let pkey = format_path(&[Seg::Key("profiles".into()), Seg::Key(profile.into())]);
    if let Err(why) = plain_name(profile) {
        return Err(loc.error(&pkey, format!("profile name {profile:?}: {why}")));
    }
    let Some(overlay) = overlay.as_table() else {
        return Err(loc.error(
            &pkey,
            "a profile must be a table of overrides, e.g. [profiles.quick] data = { n = 400 }",
        ));
    };
    if overlay.contains_key("profiles") {
        return Err(loc.error(
            &format!("{pkey}.profiles"),
            "profiles cannot be nested inside a profile",
        ));
    }
    merge::deep_merge(&mut base, overlay);
    let flags = overrides::apply(&mut base, sets, path)?;
    let loc = loc.with_flags(flags);

    let mut raw: RawManifest = deserialize(base, &loc, "")?;
    raw.paper.get_or_insert_with(|| default_paper(path));
    Ok(Parsed {
        path: path.to_path_buf(),
        profile: profile.to_string(),
        hash,
        text,
        loc,
        raw,
        sets: sets.to_vec(),
    })
}

impl Parsed {
    /// The experiment of checked and expanded parts.
    pub fn finish(
        self,
        points: Vec<Point>,
        kind: Kind,
        methods: Vec<MethodSpec>,
        default_plots: Vec<PlotSpec>,
        default_stop: StopSpec,
    ) -> Experiment {
        let raw = self.raw;
        Experiment {
            path: self.path,
            folder: format!("{}{}", self.profile, folder_suffix(&self.sets)),
            sets: self.sets.iter().map(Set::text).collect(),
            profile: self.profile,
            hash: self.hash,
            id: raw.id.clone(),
            paper: raw.paper.unwrap_or_default(),
            paper_file: raw.paper_file,
            paper_record: None,
            title: raw.title.clone().unwrap_or_else(|| raw.id.clone()),
            reproduces: raw.reproduces,
            description: raw.description,
            seed: raw.seed,
            repeats: raw.repeats,
            points,
            kind,
            methods,
            stop_default: raw.stop.is_none(),
            stop: raw.stop.unwrap_or(default_stop),
            plots: if raw.plots.is_empty() {
                default_plots
            } else {
                raw.plots
            },
            paper_results: raw.paper_results,
            attack: raw.attack,
            claims: raw.claims,
            table_metrics: raw.table_metrics,
            looser_tolerances: raw.looser_tolerances,
            source: Source(self.text, self.loc.flags().to_vec()),
        }
    }
}

/// serde with the failing key path recovered (serde_path_to_error) and located in the file.
pub(super) fn deserialize<T: DeserializeOwned>(
    table: toml::Table,
    loc: &Locator,
    at: &str,
) -> Result<T, ManifestError> {
    serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|e| {
        let mut segs: Vec<Seg> = e
            .path()
            .iter()
            .filter_map(|s| match s {
                serde_path_to_error::Segment::Seq { index } => Some(Seg::Index(*index)),
                serde_path_to_error::Segment::Map { key } => Some(Seg::Key(key.clone())),
                serde_path_to_error::Segment::Enum { variant } => Some(Seg::Key(variant.clone())),
                _ => None,
            })
            .collect();
        let msg = e.inner().message().trim_end().to_string();
        // serde reports unknown/missing fields at the enclosing table; point at the key itself.
        for prefix in ["unknown field `", "missing field `"] {
            if let Some(field) = msg.strip_prefix(prefix).and_then(|r| r.split('`').next()) {
                if segs.last() != Some(&Seg::Key(field.to_string())) {
                    segs.push(Seg::Key(field.to_string()));
                }
            }
        }
        let key = if segs.is_empty() {
            ".".to_string()
        } else {
            format_path(&segs)
        };
        loc.error(&key, format!("{msg}{at}"))
    })
}

/// The names sweep keys go by in point labels: the last segment ("n"), unless two keys share it.
pub(crate) fn label_names<S: AsRef<str>>(keys: &[S]) -> Vec<String> {
    let short: Vec<&str> = keys
        .iter()
        .map(|k| k.as_ref().rsplit('.').next().unwrap_or(k.as_ref()))
        .collect();
    let unique = short.iter().collect::<std::collections::HashSet<_>>().len() == short.len();
    keys.iter()
        .zip(short)
        .map(|(k, s)| if unique { s } else { k.as_ref() }.to_string())
        .collect()
}

/// One sweep point as deserialized, before [`crate::plan`] resolves its own data file and checks
/// it.
pub struct SweptPoint {
    /// As [`Point::label`].
    pub label: String,
    /// As [`Point::coords`].
    pub coords: Vec<(String, toml::Value)>,
    pub raw: RawPoint,
    /// " (sweep point <label>)", or "" without a sweep: the suffix of this point's errors.
    pub at: String,
}

impl Parsed {
    /// One point per combination of the (merged) sweep; sweep keys sorted, first key outermost.
    pub fn sweep_points(&self) -> Result<Vec<SweptPoint>, ManifestError> {
        expand_points(&self.raw, &self.loc)
    }

    /// One MethodSpec per parameter variant.
    pub fn method_variants(&self) -> Result<Vec<MethodSpec>, ManifestError> {
        expand_methods(&self.raw, &self.loc)
    }
}

fn expand_points(raw: &RawManifest, loc: &Locator) -> Result<Vec<SweptPoint>, ManifestError> {
    // The sweepable sections as they stand after the profile overlay.
    let mut section = toml::Table::new();
    for (s, t) in SWEEPABLE
        .iter()
        .zip([&raw.data, &raw.partition, &raw.problem])
    {
        section.insert(s.to_string(), toml::Value::Table(t.clone()));
    }

    let mut keys: Vec<&String> = raw.sweep.keys().collect();
    keys.sort();
    let mut paths = Vec::new();
    let mut lists = Vec::new();
    for k in &keys {
        let skey = format_path(&[Seg::Key("sweep".into()), Seg::Key((*k).clone())]);
        let segs = parse_path(k);
        let sweepable = matches!(segs.len(), 1 | 2)
            && matches!(&segs[0], Seg::Key(s) if SWEEPABLE.contains(&s.as_str()));
        if !sweepable {
            return Err(loc.error(&skey, format!(
                "`{k}` cannot be swept: sweep keys are `section.key` with section one of {} (e.g. \"data.n\"), or a section whose values are tables (e.g. \"partition\" = [{{ scheme = \"even\" }}, {{ scheme = \"dirichlet\", alpha = 0.1 }}])",
                quoted(&SWEEPABLE)
            )));
        }
        let Some(list) = raw.sweep[*k].as_array() else {
            return Err(loc.error(
                &skey,
                format!(
                    "expected a list of values, e.g. \"{k}\" = [{}]",
                    merge::fmt_value(&raw.sweep[*k])
                ),
            ));
        };
        if list.is_empty() {
            return Err(loc.error(&skey, "empty list: a sweep needs at least one value"));
        }
        if let (1, Some(bad)) = (segs.len(), list.iter().find(|v| !v.is_table())) {
            return Err(loc.error(
                &skey,
                format!(
                    "sweeping the section `{k}` takes tables laid over it key by key, e.g. {{ scheme = \"even\" }}; got {}",
                    merge::fmt_value(bad)
                ),
            ));
        }
        // The key must exist in the schema: try it with its first value.
        let mut probe = section.clone();
        merge::sweep_into(&mut probe, &segs, list[0].clone());
        if let Err(e) = read_point(probe, loc, "") {
            if e.key() == Some(format_path(&segs).as_str())
                && e.message().starts_with("unknown field")
            {
                return Err(loc.error(
                    &skey,
                    format!("`{k}` does not exist in the schema: {}", e.message()),
                ));
            }
        }
        paths.push(segs);
        lists.push(list.clone());
    }

    let names = label_names(&keys);

    let combos = if raw.zip_sweep {
        if let Some((k, l)) = keys
            .iter()
            .zip(&lists)
            .find(|(_, l)| l.len() != lists[0].len())
        {
            return Err(loc.error(
                &format_path(&[Seg::Key("sweep".into()), Seg::Key((*k).clone())]),
                format!(
                    "zip_sweep = true pairs the lists element by element, so they need one length: this one has {}, `{}` has {}",
                    l.len(),
                    keys[0],
                    lists[0].len()
                ),
            ));
        }
        (0..lists.first().map_or(1, Vec::len))
            .map(|i| lists.iter().map(|l| l[i].clone()).collect())
            .collect()
    } else {
        merge::product(&lists)
    };
    let mut points = Vec::new();
    for combo in combos {
        let mut table = section.clone();
        for (segs, v) in paths.iter().zip(&combo) {
            merge::sweep_into(&mut table, segs, v.clone());
        }
        let label = merge::label(
            &names
                .iter()
                .cloned()
                .zip(combo.iter().cloned())
                .collect::<Vec<_>>(),
        );
        let at = if label.is_empty() {
            String::new()
        } else {
            format!(" (sweep point {label})")
        };
        let raw = read_point(table, loc, &at)?;
        points.push(SweptPoint {
            label,
            coords: keys.iter().map(|k| (*k).clone()).zip(combo).collect(),
            raw,
            at,
        });
    }
    Ok(points)
}

/// One sweep point's sections (`[data]`, `[partition]`, `[problem]`), read and checked as far
/// as they can be on their own.
fn read_point(table: toml::Table, loc: &Locator, at: &str) -> Result<RawPoint, ManifestError> {
    let sections: schema::Sections = deserialize(table, loc, at)?;
    Ok(RawPoint {
        data: DataSpec::from_table(sections.data, loc, at)?,
        partition: sections.partition,
        problem: sections.problem,
    })
}

/// One MethodSpec per parameter variant; (label, variant) must be unique so reports can tell
/// runs apart.
fn expand_methods(raw: &RawManifest, loc: &Locator) -> Result<Vec<MethodSpec>, ManifestError> {
    let mut out: Vec<MethodSpec> = Vec::new();
    for (index, m) in raw.methods.iter().enumerate() {
        let label = m.label.clone().unwrap_or_else(|| m.name.clone());
        if let Some(prev) = out.iter().find(|o| o.label == label) {
            let key = if m.label.is_some() {
                format!("methods[{index}].label")
            } else {
                format!("methods[{index}].name")
            };
            return Err(loc.error(&key, format!(
                "label {label:?} is already used by methods[{}]: give each [[methods]] entry a distinct label",
                prev.index
            )));
        }
        for (variant, params) in merge::expand_params(&m.params) {
            out.push(MethodSpec {
                index,
                name: m.name.clone(),
                label: label.clone(),
                params,
                variant,
                resolved: serde_json::Value::Null,
            });
        }
    }
    Ok(out)
}
