//! From a manifest to an experiment ready to run: the one room where the manifest's types
//! ([`crate::spec`]), the method registry, the problem families, the data catalogue and the
//! attack meet. [`load`] reads a manifest with one profile, resolves its own data files and runs
//! every check that needs more than the schema, so a run never starts on a manifest that cannot
//! finish.

mod validate;

use std::path::Path;

use crate::data::own;
use crate::problem::family;
use crate::spec::{
    self, DataSpec, Experiment, Kind, ManifestError, PlotKind, PlotSpec, Point, Registry, XAxis,
};

/// Load `path` with `profile` overlaid, checked and expanded.
pub fn load(path: &Path, profile: &str) -> Result<Experiment, ManifestError> {
    load_with(path, profile, &[])
}

/// As [`load`], with `--set` entries applied after the profile (checked as the file's own).
pub fn load_with(
    path: &Path,
    profile: &str,
    sets: &[spec::Set],
) -> Result<Experiment, ManifestError> {
    let parsed = spec::parse_with(path, profile, sets)?;
    let (raw, loc) = (&parsed.raw, &parsed.loc);
    validate::check_manifest(raw, path, loc)?;

    // A manifest's own data files lie relative to its folder, not to the working directory;
    // for a link to a manifest, the real file's folder (the folder `paper` is named after).
    let real = std::fs::symlink_metadata(path)
        .is_ok_and(|m| m.file_type().is_symlink())
        .then(|| std::fs::canonicalize(path).ok())
        .flatten();
    let base = real
        .as_deref()
        .unwrap_or(path)
        .parent()
        .unwrap_or(Path::new(""));
    let mut points = Vec::new();
    // Sweep points sharing one file read and hash it once.
    let mut resolved: Vec<(DataSpec, DataSpec)> = Vec::new();
    for swept in parsed.sweep_points()? {
        let (mut pt, at) = (swept.raw, swept.at);
        if pt.data.generator() == spec::Generator::File {
            if let Some((_, done)) = resolved.iter().find(|(raw, _)| *raw == pt.data) {
                pt.data = done.clone();
            } else {
                let raw = pt.data.clone();
                own::resolve(&mut pt.data, base)
                    .map_err(|k| loc.error(k.key, format!("{}{at}", k.message)))?;
                resolved.push((raw, pt.data.clone()));
            }
        }
        // A robust problem's rank bound defaults to the planted rank.
        if let (spec::Gen::Robust(r), 0) = (&pt.data.gen, pt.problem.p) {
            pt.problem.p = r.rank;
        }
        validate::check_point(&pt, loc, &at)?;
        points.push(Point {
            label: swept.label,
            coords: swept.coords,
            data: pt.data,
            partition: pt.partition,
            problem: pt.problem,
        });
    }
    let mut methods = parsed.method_variants()?;
    let kind = validate::check_family(raw, &points, &mut methods, loc)?;
    validate::check_paper_points(raw, &points, profile, loc)?;
    validate::check_placeholders(raw, &points, &methods, kind, profile, loc)?;
    let reg = registry_of(path)?;
    let record = validate::check_paper(raw, reg.as_ref(), loc)?;
    if !raw.looser_tolerances.is_empty() && kind != Kind::Subspace {
        return Err(loc.error(
            "looser_tolerances",
            format!("looser tolerances are read off the subspace family's traces only (this manifest's family: {})", kind.as_str()),
        ));
    }
    let plots = default_plots(kind);
    let stop = family(kind).default_stop();
    let mut exp = parsed.finish(points, kind, methods, plots, stop);
    exp.paper_record = record;
    Ok(exp)
}

/// The experiment a results folder's run.json records: its manifest, profile and `--set`
/// entries (`manifest.set`, absent before there were any).
pub fn load_recorded(run_json: &serde_json::Value) -> anyhow::Result<Experiment> {
    use anyhow::Context;
    let path = run_json["manifest"]["path"]
        .as_str()
        .context("run.json: no manifest.path")?;
    let profile = run_json["profile"]
        .as_str()
        .context("run.json: no profile")?;
    let sets = run_json["manifest"]["set"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|v| {
                    let text = v.as_str().context("run.json: manifest.set holds strings")?;
                    spec::Set::parse(text).map_err(anyhow::Error::msg)
                })
                .collect::<anyhow::Result<Vec<_>>>()
        })
        .transpose()?
        .unwrap_or_default();
    Ok(load_with(Path::new(path), profile, &sets)?)
}

/// The paper registry of `start` (a manifest, or a folder such as the results root), checked:
/// each file on its own (`spec`) and each claim's `study` an experiment. None without one.
pub fn registry_of(start: &Path) -> Result<Option<Registry>, ManifestError> {
    let Some(reg) = Registry::find(start)? else {
        return Ok(None);
    };
    validate::check_studies(&reg)?;
    Ok(Some(reg))
}

/// Figures of a manifest without `[[plots]]`: the family's first lower-is-better metric against
/// rounds and against the bytes sent, the two axes a federated method is judged on.
fn default_plots(kind: Kind) -> Vec<PlotSpec> {
    let Some(m) = family(kind).metrics().iter().find(|m| m.lower_is_better) else {
        return Vec::new();
    };
    [
        (XAxis::Rounds, "convergence", "rounds"),
        (XAxis::Bytes, "communication", "bytes sent"),
    ]
    .into_iter()
    .map(|(x, stem, per)| PlotSpec {
        file: format!("{stem}_{}", m.name),
        kind: PlotKind::Line,
        x,
        y: m.name.to_string(),
        also: Vec::new(),
        target: None,
        log_y: m.log,
        title: Some(format!("{} against {per}", m.short)),
        grid: Vec::new(),
        mark_x: None,
        mark_y: None,
        mark_label: None,
        params: Vec::new(),
    })
    .collect()
}
