//! Semantic checks serde cannot express. They run after the profile overlay (so a profile that
//! breaks a constraint is caught) and once per sweep point (so is a sweep value). Each error names
//! the key to change and says what would be accepted.

use std::collections::HashSet;
use std::path::Path;

use crate::methods::registry;
use crate::problem::{family, Family, FAMILIES};
use crate::spec::{
    plain_name, quoted, ClaimSpec, Dataset, File, Gen, Generator, Kind, Locator, ManifestError,
    MethodSpec, PaperKind, PaperRecord, PaperResult, Point, Preprocess, RawManifest, RawPoint,
    Registry, Scheme, StopSpec, KKT_ABS, LEAK_ABS, LEAK_ERR, RUN_QUANTITIES,
};

type Result<T = ()> = std::result::Result<T, ManifestError>;

/// Checks on everything outside the sweepable sections.
pub(crate) fn check_manifest(raw: &RawManifest, file: &Path, loc: &Locator) -> Result {
    let paper = raw.paper.as_deref().unwrap_or_default();
    for (key, value) in [("paper", paper), ("id", raw.id.as_str())] {
        if let Err(why) = plain_name(value) {
            return Err(loc.error(key, format!("{key} = {value:?}: {why}")));
        }
    }
    // results/<paper>/<id>/ must lead back to exactly one manifest file: the file itself, not
    // a link's name (as `paper` defaults to the real file's folder).
    let real = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
    if let Some(stem) = real.file_stem().and_then(|s| s.to_str()) {
        if raw.id != stem {
            return Err(loc.error("id", format!(
                "id = {:?} differs from the file name {stem:?}: they must match, so results/<paper>/<id>/ leads back to this file",
                raw.id
            )));
        }
    }
    if raw.repeats == 0 || raw.repeats > MAX_REPEATS {
        return Err(loc.error(
            "repeats",
            format!("repeats = {}: need at least 1 run per method (default 1) and at most {MAX_REPEATS}", raw.repeats),
        ));
    }

    // Without [stop] the family's default applies, valid as written; a looser tolerance then
    // asks for the [stop] it loosens.
    let unset = StopSpec {
        objective_tol: None,
        ..StopSpec::objective_default()
    };
    let stop = raw.stop.as_ref().unwrap_or(&unset);
    if stop.max_rounds == 0 || stop.max_rounds > MAX_ROUNDS {
        return Err(loc.error(
            "stop.max_rounds",
            format!("max_rounds = {}: must be >= 1 and <= {MAX_ROUNDS} (a run keeps a trace row per round)", stop.max_rounds),
        ));
    }
    if let Some(v) = stop.objective_tol {
        if !(v.is_finite() && v >= 0.0) {
            return Err(loc.error(
                "stop.objective_tol",
                format!("{v:e} is not a valid tolerance: expected a finite number >= 0"),
            ));
        }
    }
    for (i, &t) in raw.looser_tolerances.iter().enumerate() {
        let key = format!("looser_tolerances[{i}]");
        let Some(tol) = stop.objective_tol else {
            return Err(loc.error(
                &key,
                "a looser tolerance needs the stop rule it loosens: set stop.objective_tol",
            ));
        };
        if !(t.is_finite() && t > tol && t < 1.0) {
            return Err(loc.error(
                &key,
                format!("{t:e} is not a looser tolerance: expected a number above stop.objective_tol = {tol:e} and below 1"),
            ));
        }
    }
    // A target may be negative: the eigvec family's log errors are.
    if let Some(v) = stop.target.as_ref().map(|t| t.value) {
        if !v.is_finite() {
            return Err(loc.error(
                "stop.target.value",
                format!("{v:e} is not a valid target: expected a finite number"),
            ));
        }
    }
    if let Some(t) = stop.time_budget_s {
        if !(t.is_finite() && t > 0.0) {
            return Err(loc.error("stop.time_budget_s", format!("{t} is not a valid time budget: expected seconds > 0 (omit the key for no budget)")));
        }
    }

    if let Some(a) = &raw.attack {
        if a.client == 0 {
            return Err(loc.error("attack.client", "client = 0: clients are numbered from 1"));
        }
        if a.max_rounds == Some(0) {
            return Err(loc.error(
                "attack.max_rounds",
                "max_rounds = 0: must be >= 1 (omit for all rounds)",
            ));
        }
    }
    if raw.methods.is_empty() {
        return Err(loc.error(
            "methods",
            "no methods: add at least one [[methods]] entry with a name",
        ));
    }
    for (i, m) in raw.methods.iter().enumerate() {
        if m.name.trim().is_empty() {
            return Err(loc.error(
                &format!("methods[{i}].name"),
                "empty method name: expected a registered method such as \"ssi\"",
            ));
        }
        if let Some(label) = &m.label {
            if label.chars().count() > MAX_NAME || label.contains(char::is_control) {
                return Err(loc.error(
                    &format!("methods[{i}].label"),
                    format!("a label of at most {MAX_NAME} characters without control characters: it names the run's files and legends"),
                ));
            }
        }
        // Before anything refers to the method by name (paper_results), so a misspelt name is
        // reported where it is misspelt.
        if registry::lookup(&m.name).is_none() && !registry::is_planned(&m.name) {
            return Err(loc.error(&format!("methods[{i}].name"), registry::unknown(&m.name)));
        }
        for (k, v) in &m.params {
            if v.as_array().is_some_and(|a| a.is_empty()) {
                return Err(loc.error(
                    &format!("methods[{i}].params.{k}"),
                    "empty list: a list value sweeps over its elements, so give at least one",
                ));
            }
        }
    }

    let mut stems = HashSet::new();
    for (i, plot) in raw.plots.iter().enumerate() {
        if plot.kind == crate::spec::PlotKind::RoundsToTarget
            && !plot.target.is_some_and(|t| t.is_finite() && t > 0.0)
        {
            return Err(loc.error(
                &format!("plots[{i}].target"),
                "kind = \"rounds_to_target\" needs target = a threshold > 0 (e.g. 1e-5)",
            ));
        }
        let key = format!("plots[{i}].file");
        // `__` is reserved for the per-point panels of a sweep (`<file>__<point>`).
        if plot.file.is_empty()
            || plot.file.chars().count() > MAX_NAME
            || plot.file.contains(['/', '\\'])
            || plot.file.contains(char::is_control)
            || plot.file.starts_with('.')
            || plot.file.contains("__")
        {
            return Err(loc.error(
                &key,
                format!(
                    "{:?} is not a file stem: expected a bare name of at most {MAX_NAME} characters without `/`, control characters, a leading `.` or `__`, such as \"convergence_kkt\"",
                    plot.file
                ),
            ));
        }
        if !stems.insert(plot.file.as_str()) {
            return Err(loc.error(
                &key,
                format!(
                    "{:?} is used by an earlier plot: each plot needs its own file stem",
                    plot.file
                ),
            ));
        }
    }

    Ok(())
}

/// `name` must be a metric of the family (or, where `leak_ok`, of the attack).
fn check_metric(
    raw: &RawManifest,
    kind: Kind,
    key: &str,
    name: &str,
    leak_ok: bool,
    loc: &Locator,
) -> Result {
    match not_a_metric(raw, kind, name, leak_ok) {
        Some(why) => Err(loc.error(key, why)),
        None => Ok(()),
    }
}

/// Why `name` is no metric of the family (or, where `leak_ok`, of the attack); None if it is.
fn not_a_metric(raw: &RawManifest, kind: Kind, name: &str, leak_ok: bool) -> Option<String> {
    let names: Vec<&str> = family(kind).metrics().iter().map(|m| m.name).collect();
    let attack_names: &[&str] = if raw.attack.as_ref().is_some_and(|a| a.unscaled) {
        &[LEAK_ERR, KKT_ABS, LEAK_ABS]
    } else {
        &[LEAK_ERR]
    };
    if names.contains(&name) || (leak_ok && attack_names.contains(&name)) {
        return None;
    }
    let extra = if leak_ok {
        format!(", {}", quoted(attack_names))
    } else {
        String::new()
    };
    Some(format!(
        "{name:?} is not a metric of the `{kind}` family: expected one of {}{extra}",
        quoted(&names)
    ))
}

/// Why `reach` may not count the rounds to a value of `metric`: every reader of `reach` counts
/// the rounds until the metric is at or below the value, which for a higher-is-better metric
/// (`consensus`, `explained_variance`) means moving away from its best. None: it may.
fn reach_refused(kind: Kind, metric: &str) -> Option<String> {
    let m = crate::problem::metric(kind, metric)?;
    (!m.lower_is_better).then(|| {
        format!(
            "`{metric}` is higher-is-better, and reach counts the rounds until a metric is at or \
             below a value: name a lower-is-better metric, or test `{metric}`'s value (at_least)"
        )
    })
}

/// Whether `profile` holds the paper's own points: `paper`, or the one profile of a manifest
/// without profiles. Only there must a sweep point named by a paper result, a claim or a
/// placeholder exist; a scaled-down profile has other points, where what names them has no
/// number.
fn holds_paper_points(profile: &str) -> bool {
    profile == "paper" || profile == crate::spec::DEFAULT_PROFILE
}

/// The method variants `who` names (see `Experiment::names_run`), by position.
fn named(methods: &[MethodSpec], who: &str) -> Vec<usize> {
    (0..methods.len())
        .filter(|&k| {
            let m = &methods[k];
            crate::spec::names_run(methods, who, &m.name, &m.label, &m.variant)
        })
        .collect()
}

/// One `[[claims]]` entry: the quantity and methods it names, and each key of its tests where
/// it belongs (the keys are described on [`crate::spec::ClaimSpec`]).
fn check_claim(
    raw: &RawManifest,
    points: &[Point],
    methods: &[MethodSpec],
    kind: Kind,
    i: usize,
    c: &ClaimSpec,
    loc: &Locator,
) -> Result {
    let key = |k: &str| format!("claims[{i}].{k}");
    let err = |k: &str, msg: String| Err(loc.error(&key(k), msg));
    let leak_ok = raw.attack.is_some();
    let counted = RUN_QUANTITIES.contains(&c.quantity.as_str());
    let spectra = family(kind).spectra();
    let spectrum = spectra.contains(&c.quantity.as_str());
    if !counted && !spectrum {
        check_metric(raw, kind, &key("quantity"), &c.quantity, leak_ok, loc)?;
    }
    if let Some(v) = c.reach {
        if counted || spectrum {
            return err("reach", format!("reach counts the rounds until a metric is ≤ {v}: quantity must be a metric, not `{}`", c.quantity));
        }
        if !v.is_finite() {
            return err("reach", format!("reach = {v}: must be finite"));
        }
        if let Some(why) = reach_refused(kind, &c.quantity) {
            return err("reach", why);
        }
    }
    let versus = match (&c.above, &c.below) {
        (Some(_), Some(_)) => {
            return err("below", "above and below together: a claim's value is above one quantity or below it, write two claims".into());
        }
        (Some(o), None) => Some(("above", o)),
        (None, Some(o)) => Some(("below", o)),
        (None, None) => None,
    };
    if let Some((k, other)) = versus {
        if spectrum {
            if !spectra.contains(&other.as_str()) || other == &c.quantity {
                return err(k, format!("{other:?}: a spectrum is compared entry by entry with another spectrum of the same runs: expected one of {}", quoted(spectra)));
            }
        } else if counted {
            return err(k, format!("{k} compares two metrics of the same runs: quantity must be a metric, not `{}`", c.quantity));
        } else {
            check_metric(raw, kind, &key(k), other, leak_ok, loc)?;
            if c.reach.is_some() {
                if let Some(why) = reach_refused(kind, other) {
                    return err(k, why);
                }
            }
        }
    }
    let others = |list: &'static str, v: &[String]| -> Vec<(String, String)> {
        v.iter()
            .enumerate()
            .map(|(j, o)| (format!("{list}[{j}]"), o.clone()))
            .collect()
    };
    let mut refs = vec![("method".to_string(), c.method.clone())];
    refs.extend(others("less_than", &c.less_than));
    refs.extend(others("greater_than", &c.greater_than));
    refs.extend(
        c.divided_by
            .iter()
            .map(|d| ("divided_by".to_string(), d.clone())),
    );
    for (k, who) in &refs {
        check_method_ref(methods, who, &key(k), true, loc)?;
    }

    let per_point: Vec<&str> = [
        ("less_than", !c.less_than.is_empty()),
        ("greater_than", !c.greater_than.is_empty()),
        ("at_most", c.at_most.is_some()),
        ("at_least", c.at_least.is_some()),
        ("above", c.above.is_some()),
        ("below", c.below.is_some()),
        ("near_paper", c.near_paper.is_some()),
        ("rate", c.rate.is_some()),
    ]
    .into_iter()
    .filter_map(|(k, set)| set.then_some(k))
    .collect();
    match (per_point.first(), c.trend) {
        (None, None) => {
            return err("text", "a claim needs a test: less_than or greater_than (with an optional factor), above or below (these four with an optional or_equal), at_most, at_least, near_paper, rate or trend".into());
        }
        (Some(first), Some(_)) => {
            return err("trend", format!("trend judges the values along the sweep, `{first}` each point: write them as two claims"));
        }
        _ => {}
    }
    if spectrum {
        let what = format!("`{}` is a spectrum of the `{kind}` family, compared entry by entry with another spectrum of the same runs", c.quantity);
        if versus.is_none() {
            return err(
                "quantity",
                format!("{what}: give above or below = one of {}", quoted(spectra)),
            );
        }
        if let Some(k) = per_point.iter().find(|k| !["above", "below"].contains(k)) {
            return err(k, format!("{what}, by above or below alone: remove `{k}`"));
        }
        for (k, set) in [
            ("trend", c.trend.is_some()),
            ("relative_to", c.relative_to.is_some()),
            ("divided_by", c.divided_by.is_some()),
        ] {
            if set {
                return err(k, format!("{what}, by above or below alone: remove `{k}`"));
            }
        }
    }
    let compares = !c.less_than.is_empty() || !c.greater_than.is_empty();
    if c.factor.is_some() && !compares {
        return err(
            "factor",
            "factor goes with less_than or greater_than: remove it".into(),
        );
    }
    if c.or_equal && !compares && versus.is_none() {
        return err(
            "or_equal",
            "or_equal goes with less_than, greater_than, above or below: remove it".into(),
        );
    }
    if let Some(f) = c.factor {
        if !(f.is_finite() && f > 0.0) {
            return err("factor", format!("factor = {f}: must be > 0"));
        }
    }
    if c.trend.is_none() {
        for (k, set) in [
            ("along", c.along.is_some()),
            ("tolerance", c.tolerance.is_some()),
        ] {
            if set {
                return err(k, format!("{k} goes with trend: remove it"));
            }
        }
    }
    if let Some(t) = c.trend {
        let swept: Vec<&str> = points
            .first()
            .map(|p| p.coords.iter().map(|(k, _)| k.as_str()).collect())
            .unwrap_or_default();
        if raw.sweep.is_empty() || swept.is_empty() {
            return err("trend", format!("trend = \"{t}\" reads the values along a sweep, and this manifest has no [sweep]"));
        }
        match &c.along {
            None if swept.len() > 1 => {
                return err(
                    "trend",
                    format!(
                        "the sweep has {} keys ({}): say along which one, along = one of them",
                        swept.len(),
                        quoted(&swept)
                    ),
                );
            }
            Some(a)
                if !swept
                    .iter()
                    .any(|k| k == a || k.rsplit('.').next() == Some(a.as_str())) =>
            {
                return err(
                    "along",
                    format!(
                        "{a:?} is not a swept key: expected one of {}",
                        quoted(&swept)
                    ),
                );
            }
            _ => {}
        }
        if let Some(tol) = c.tolerance {
            if !(tol.is_finite() && tol >= 0.0) {
                return err("tolerance", format!("tolerance = {tol}: must be a finite number >= 0 (a share of the previous value)"));
            }
        }
    }
    if c.divided_by.is_some() {
        if let Some(k) = ["above", "below", "near_paper", "rate"]
            .into_iter()
            .find(|k| per_point.contains(k))
        {
            return err("divided_by", format!("a ratio of two methods goes with at_most, at_least, less_than, greater_than or trend, not with `{k}`"));
        }
    }
    if c.relative_to.is_some() && (counted || spectrum) {
        return err("relative_to", format!("relative_to = \"start\" divides a metric by its first value: quantity must be a metric, not `{}`", c.quantity));
    }
    if let Some(share) = c.near_paper {
        if !(share.is_finite() && share > 0.0) {
            return err(
                "near_paper",
                format!("near_paper = {share}: must be a share > 0 (0.2 is ±20 %)"),
            );
        }
        if c.relative_to.is_some() {
            return err(
                "near_paper",
                "the paper's values are absolute: near_paper cannot go with relative_to".into(),
            );
        }
        let mine = named(methods, &c.method);
        let theirs: Vec<&PaperResult> = raw
            .paper_results
            .iter()
            .filter(|r| named(methods, &r.method).iter().any(|k| mine.contains(k)))
            .collect();
        if theirs.is_empty() {
            return err(
                "near_paper",
                format!(
                    "no [[paper_results]] give {:?}'s numbers: near_paper compares with them",
                    c.method
                ),
            );
        }
        let field = if c.reach.is_some() {
            "rounds"
        } else {
            c.quantity.as_str()
        };
        // The paper's rounds count the run's length, or with their own `reach` the rounds to a
        // level: the claim must count the same.
        let counts_as_claim = |r: &PaperResult| match (&r.reach, c.reach) {
            (None, None) => true,
            (Some(t), Some(v)) => t.metric == c.quantity && t.value == v,
            _ => false,
        };
        let gives = |r: &PaperResult| match field {
            "rounds" => r.rounds.is_some() && counts_as_claim(r),
            "time_s" => r.time_s.is_some(),
            m => r.metric(m).is_some(),
        };
        if !theirs.iter().any(|r| gives(r)) {
            let counted_otherwise = theirs
                .iter()
                .find(|r| field == "rounds" && r.rounds.is_some())
                .map(|r| match &r.reach {
                    Some(t) => format!(
                        " (theirs count the rounds to {} ≤ {:e}: give quantity = {:?} and reach = {:e})",
                        t.metric, t.value, t.metric, t.value
                    ),
                    None => " (theirs count the run's length: drop reach, or give the paper result the claim's reach)".to_string(),
                })
                .unwrap_or_default();
            return err(
                "near_paper",
                format!(
                    "none of {:?}'s [[paper_results]] gives `{field}` counted as this claim counts it: near_paper compares with it{counted_otherwise}",
                    c.method
                ),
            );
        }
    }
    if c.rate.is_some() && (counted || spectrum) {
        return err(
            "rate",
            format!(
                "rate fits the decay of a metric in rounds: quantity must be a metric, not `{}`",
                c.quantity
            ),
        );
    }
    match (c.rate, c.min_r2) {
        (None, Some(_)) => return err("min_r2", "min_r2 goes with rate: remove it".into()),
        (_, Some(r)) if !(r > 0.0 && r <= 1.0) => {
            return err("min_r2", format!("min_r2 = {r}: must be in (0, 1]"));
        }
        _ => {}
    }
    Ok(())
}

/// Every `{{...}}` of the description and the claims' texts (see [`crate::spec::placeholder`])
/// must parse and name a quantity, methods and a point of the manifest. A point of another
/// profile's sweep is refused only where the paper's points must be ([`holds_paper_points`]):
/// elsewhere it renders as absent.
pub(crate) fn check_placeholders(
    raw: &RawManifest,
    points: &[Point],
    methods: &[MethodSpec],
    kind: Kind,
    profile: &str,
    loc: &Locator,
) -> Result {
    let texts = raw
        .description
        .iter()
        .map(|d| ("description".to_string(), d))
        .chain(
            raw.claims
                .iter()
                .enumerate()
                .map(|(i, c)| (format!("claims[{i}].text"), &c.text)),
        );
    let strict = holds_paper_points(profile);
    let labels: Vec<&str> = points.iter().map(|p| p.label.as_str()).collect();
    for (key, text) in texts {
        let shown = |t: &str| crate::util::excerpt(t.as_bytes());
        let found = crate::spec::placeholder::scan(text)
            .map_err(|b| loc.error(&key, format!("placeholder `{}`: {}", shown(&b.text), b.why)))?;
        for p in found {
            let whole = shown(&text[p.span.clone()]);
            let bad = |why: String| Err(loc.error(&key, format!("placeholder `{whole}`: {why}")));
            let counted = RUN_QUANTITIES.contains(&p.quantity.as_str());
            if !counted {
                if let Some(why) = not_a_metric(raw, kind, &p.quantity, raw.attack.is_some()) {
                    return bad(format!("{why} or {}", quoted(&RUN_QUANTITIES)));
                }
            } else if p.reach.is_some() {
                return bad(format!(
                    "`<= value` counts the rounds until a metric reaches it: `{}` is not a metric",
                    p.quantity
                ));
            }
            if p.reach.is_some() {
                if let Some(why) = reach_refused(kind, &p.quantity) {
                    return bad(format!("`<= value`: {why}"));
                }
            }
            for who in std::iter::once(&p.method).chain(&p.divided_by) {
                if let Err(e) = check_method_ref(methods, who, &key, true, loc) {
                    return bad(e.message().to_string());
                }
            }
            match &p.at {
                Some(_) if raw.sweep.is_empty() => {
                    return bad(
                        "this manifest has no [sweep], so its one point needs no `at`: drop it"
                            .into(),
                    );
                }
                Some(a) if strict && !labels.contains(&a.as_str()) => {
                    return bad(format!(
                        "{a:?} is not a sweep point: expected one of {}",
                        quoted(&labels)
                    ));
                }
                None if points.len() > 1 => {
                    return bad(format!(
                        "the sweep has {} points: say which, `at` one of {}",
                        points.len(),
                        quoted(&labels)
                    ));
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// A method named by `paper_results` or a claim must pick out the runs it means (see
/// `Experiment::names_run`): a full label "Label (variant)", a label, or the name of a method with
/// one `[[methods]]` entry. A claim compares single configurations, so it may not name an entry
/// with several variants as a whole; the paper's numbers may (a sweep the paper itself ran).
fn check_method_ref(
    methods: &[MethodSpec],
    who: &str,
    key: &str,
    one_variant: bool,
    loc: &Locator,
) -> Result {
    if methods.iter().any(|m| m.full_label() == who) {
        return Ok(());
    }
    let mut entries: Vec<&MethodSpec> = methods
        .iter()
        .filter(|m| m.label == who || m.name == who)
        .collect();
    let variants: Vec<String> = entries.iter().map(|m| m.full_label()).collect();
    entries.dedup_by_key(|m| m.index);
    let labels: Vec<&str> = entries.iter().map(|m| m.label.as_str()).collect();
    let by_label = methods.iter().any(|m| m.label == who);
    if entries.is_empty() {
        let mut known: Vec<&str> = Vec::new();
        for m in methods {
            for n in [m.name.as_str(), m.label.as_str()] {
                if !known.contains(&n) {
                    known.push(n);
                }
            }
        }
        return Err(loc.error(
            key,
            format!(
                "{who:?} is not a method of this manifest: expected a label, a method name or \"Label (variant)\": {}",
                quoted(&known)
            ),
        ));
    }
    if !by_label && entries.len() > 1 {
        return Err(loc.error(
            key,
            format!(
                "{who:?} has {} [[methods]] entries ({}): name the one you mean by its label, so that numbers and claims never attach to a variant",
                entries.len(),
                quoted(&labels)
            ),
        ));
    }
    if one_variant && variants.len() > 1 {
        let v: Vec<&str> = variants.iter().map(|s| s.as_str()).collect();
        return Err(loc.error(
            key,
            format!(
                "{who:?} has {} parameter variants: a claim compares one configuration, so name one of {}",
                v.len(),
                quoted(&v)
            ),
        ));
    }
    Ok(())
}

/// The manifest against the paper registry (see [`crate::spec::Registry`]): its `paper` is a
/// registry key whose `file` its `paper_file` names (a comparison's: empty or the file of a paper
/// it compares), and each claim's `id` a claim of that paper's inventory that is not marked
/// untestable. A manifest that names no paper text and no claim id (an own experiment: `paper`
/// is only its results folder) is left alone, as is one with no registry above it. The record
/// of the paper, if any.
pub(crate) fn check_paper(
    raw: &RawManifest,
    reg: Option<&Registry>,
    loc: &Locator,
) -> Result<Option<PaperRecord>> {
    let Some(reg) = reg else { return Ok(None) };
    let key = raw.paper.as_deref().unwrap_or_default();
    let ids = || {
        raw.claims
            .iter()
            .enumerate()
            .find_map(|(i, c)| c.id.as_ref().map(|_| i))
    };
    let Some(paper) = reg.get(key) else {
        // Stated numbers or claim ids belong to a paper of the registry: they must not drop
        // off the scorecard silently.
        if raw.paper_file.is_empty() && ids().is_none() && raw.paper_results.is_empty() {
            return Ok(None);
        }
        let at = match ids() {
            Some(i) if raw.paper_file.is_empty() => format!("claims[{i}].id"),
            _ => "paper".to_string(),
        };
        return Err(loc.error(
            &at,
            format!(
                "paper {key:?} is not in the paper registry {}: expected one of {} (a manifest of your own names no paper_file, no claim id and no [[paper_results]])",
                reg.root.join("papers").display(),
                quoted(&reg.keys())
            ),
        ));
    };
    let r = &paper.record;
    match r.kind {
        PaperKind::Paper if raw.paper_file != r.file => {
            return Err(loc.error(
                if raw.paper_file.is_empty() { "paper" } else { "paper_file" },
                format!(
                    "paper_file = {:?}, but {} gives the text of paper {key:?} as {:?}: set paper_file = {:?}",
                    raw.paper_file,
                    paper.path.display(),
                    r.file,
                    r.file
                ),
            ));
        }
        PaperKind::Comparison if !raw.paper_file.is_empty() => {
            let files: Vec<&str> = r
                .papers
                .iter()
                .filter_map(|k| reg.get(k))
                .map(|p| p.record.file.as_str())
                .collect();
            if !files.contains(&raw.paper_file.as_str()) {
                return Err(loc.error(
                    "paper_file",
                    format!(
                        "paper_file = {:?}: {key:?} compares {}, so paper_file is empty or the text of one of them: {}",
                        raw.paper_file,
                        quoted(&r.papers.iter().map(String::as_str).collect::<Vec<_>>()),
                        quoted(&files)
                    ),
                ));
            }
        }
        _ => {}
    }
    for (i, c) in raw.claims.iter().enumerate() {
        let Some(id) = &c.id else { continue };
        let key = format!("claims[{i}].id");
        match paper.claim(id) {
            None => {
                let known: Vec<&str> = paper.claims.iter().map(|c| c.id.as_str()).collect();
                return Err(loc.error(
                    &key,
                    if known.is_empty() {
                        format!("{id:?} is not a claim of {}: its inventory is empty (add the claim there first)", paper.path.display())
                    } else {
                        format!("{id:?} is not a claim of {}: expected one of {}", paper.path.display(), quoted(&known))
                    },
                ));
            }
            Some(claim) => {
                if let Some(why) = &claim.untestable {
                    return Err(loc.error(
                        &key,
                        format!(
                            "{} says claim {id:?} is untestable here ({why}): drop `untestable` there, or this test",
                            paper.path.display()
                        ),
                    ));
                }
            }
        }
    }
    Ok(Some(r.clone()))
}

/// Each inventory claim's `study` names a manifest of the registry's experiments:
/// `<root>/experiments/<paper>/<id>.toml`.
pub(crate) fn check_studies(reg: &Registry) -> Result {
    for p in &reg.papers {
        for (i, c) in p.claims.iter().enumerate() {
            let Some(study) = &c.study else { continue };
            let file = reg.root.join("experiments").join(format!("{study}.toml"));
            if !file.is_file() {
                return Err(p.error(
                    &format!("claims[{i}].study"),
                    format!(
                        "{study:?} is not an experiment: no manifest {}",
                        file.display()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A paper result or a claim tied to sweep points must name expanded points where the paper's
/// points are ([`holds_paper_points`]), as a placeholder's `at` must.
pub(crate) fn check_paper_points(
    raw: &RawManifest,
    points: &[Point],
    profile: &str,
    loc: &Locator,
) -> Result {
    let strict = holds_paper_points(profile);
    let labels: Vec<&str> = points.iter().map(|p| p.label.as_str()).collect();
    for (i, r) in raw.paper_results.iter().enumerate() {
        let Some(pt) = &r.point else { continue };
        let key = format!("paper_results[{i}].point");
        if raw.sweep.is_empty() {
            return Err(loc.error(
                &key,
                "this manifest has no [sweep], so a paper result belongs to its one point: drop `point`",
            ));
        }
        if strict && !labels.contains(&pt.as_str()) {
            return Err(loc.error(
                &key,
                format!(
                    "{pt:?} is not a sweep point of the {profile} profile: expected one of {}",
                    quoted(&labels)
                ),
            ));
        }
    }
    for (i, c) in raw.claims.iter().enumerate() {
        for (j, pt) in c.points.iter().enumerate() {
            if strict && !labels.contains(&pt.as_str()) {
                return Err(loc.error(
                    &format!("claims[{i}].points[{j}]"),
                    format!(
                        "{pt:?} is not a sweep point of the {profile} profile: expected one of {}",
                        quoted(&labels)
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Checks on one sweep point's data, partition and problem. `at` is appended to messages
/// (e.g. " (sweep point n=5000)") so the user knows which combination failed.
/// Most repeats of a manifest: each is a run per method and point.
const MAX_REPEATS: usize = 10_000;
/// Most rounds of a run: its trace keeps a row per round.
const MAX_ROUNDS: usize = 1_000_000;
/// Longest method label or plot file stem, in characters: they name files (255 bytes at most on
/// common file systems, with the point, parameters and seed beside the label).
const MAX_NAME: usize = 100;

/// Largest n or m: 2³² rows or columns is far beyond any data set this harness can hold, and
/// keeps every size product below 2⁶⁴.
pub(crate) const MAX_DIM: usize = 1 << 32;
/// Largest n·m: 2⁴⁰ entries are 8 TiB of f64.
pub(crate) const MAX_ENTRIES: u128 = 1 << 40;

pub(crate) fn check_point(pt: &RawPoint, loc: &Locator, at: &str) -> Result {
    let d = &pt.data;
    let (n, m) = (d.n, d.m);
    for (key, v) in [
        ("data.n", n),
        ("data.m", m),
        ("partition.clients", pt.partition.clients),
    ] {
        if v > MAX_DIM {
            return Err(loc.error(
                key,
                format!("{v} exceeds the largest size the harness handles, {MAX_DIM}{at}"),
            ));
        }
    }
    if (n as u128) * (m as u128) > MAX_ENTRIES {
        return Err(loc.blame(&["data.n", "data.m"], format!(
            "n·m = {n}·{m} entries exceeds {MAX_ENTRIES} (8 TiB of f64): no machine holds this matrix{at}"
        )));
    }
    check_generator_fits(pt, loc, at)?;
    let fam = family(pt.problem.kind);
    let kind = pt.problem.kind;
    for (key, set) in [
        ("problem.lambda", pt.problem.lambda.is_some()),
        ("problem.mu", pt.problem.mu.is_some()),
    ] {
        let name = key.trim_start_matches("problem.");
        if set && !fam.problem_keys().contains(&name) {
            let owners = owners(|f| f.problem_keys().contains(&name));
            return Err(loc.error(
                key,
                format!("only used with kind = {owners}, not \"{kind}\": remove it{at}"),
            ));
        }
    }
    if let Some(real) = d.real() {
        let set = [
            ("data.noise_features", real.noise_features.is_some()),
            ("data.noise", real.noise.is_some()),
            ("data.after_noise", !real.after_noise.is_empty()),
        ];
        if let Some((key, _)) = set.iter().find(|(_, s)| *s) {
            if !fam.takes_noise_features() {
                let owners = owners(|f| f.takes_noise_features());
                return Err(loc.error(
                    key,
                    format!(
                        "only used with kind = {owners} (features the loadings should leave out), not \"{kind}\": remove it{at}"
                    ),
                ));
            }
        }
    }
    for (key, value) in [
        ("problem.lambda", pt.problem.lambda),
        ("problem.mu", pt.problem.mu),
    ] {
        if let Some(l) = value {
            if !(l.is_finite() && l >= 0.0) {
                let name = key.trim_start_matches("problem.");
                return Err(loc.error(
                    key,
                    format!("{name} = {l}: must be a finite number >= 0{at}"),
                ));
            }
        }
    }
    fam.check_point(pt)
        .map_err(|(keys, msg)| loc.blame(&keys, format!("{msg}{at}")))?;
    match &d.gen {
        Gen::Dataset(ds) => check_dataset(ds, loc, at)?,
        Gen::File(f) => check_file(f, loc, at)?,
        // Drawn client by client in contiguous blocks (spiked), or a planted truth whose
        // columns must keep their order (robust); eigengap samples are i.i.d.
        Gen::Spiked(_) | Gen::Robust(_) | Gen::Eigengap(_) => {
            if !matches!(pt.partition.scheme, Scheme::Even | Scheme::Uneven) {
                let why = match d.generator() {
                    Generator::Spiked => "spiked data is drawn per client in contiguous blocks",
                    Generator::Robust => "robust data is split by contiguous columns",
                    _ => "eigengap samples are i.i.d.",
                };
                return Err(loc.error(
                    "partition.scheme",
                    format!("{why}: scheme must be \"even\" or \"uneven\"{at}"),
                ));
            }
        }
        Gen::Svd(_) | Gen::Gaussian(_) => {}
    }
    check_partition_and_problem(pt, loc, at)
}

/// The kinds of the families for which `pred` holds, as a message lists them.
fn owners(pred: impl Fn(&dyn Family) -> bool) -> String {
    let names: Vec<String> = FAMILIES
        .iter()
        .filter(|f| pred(**f))
        .map(|f| format!("\"{}\"", f.kind()))
        .collect();
    names.join(" or ")
}

/// The point's generator must make data of its problem's family. The key blamed is the one the
/// user more likely got wrong: the kind, when the generator makes one family's data only.
fn check_generator_fits(pt: &RawPoint, loc: &Locator, at: &str) -> Result {
    let (kind, gen) = (pt.problem.kind, pt.data.generator());
    let fam = family(kind);
    if fam.generators().contains(&gen) {
        return Ok(());
    }
    let takes = fam
        .generators()
        .iter()
        .map(|g| format!("\"{g}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let makes = owners(|f| f.generators().contains(&gen));
    let only_one = FAMILIES
        .iter()
        .filter(|f| f.generators().contains(&gen))
        .count()
        == 1;
    Err(loc.error(
        if only_one { "problem.kind" } else { "data.generator" },
        format!(
            "kind = \"{kind}\" does not fit generator = \"{gen}\": kind = \"{kind}\" takes generator = {takes}, and \"{gen}\" makes kind = {makes} problems{at}"
        ),
    ))
}

/// Checks shared by every data source: sizes, the client split and p.
fn check_partition_and_problem(pt: &RawPoint, loc: &Locator, at: &str) -> Result {
    let (d, pa, pr) = (&pt.data, &pt.partition, &pt.problem);
    let (n, m) = (d.n, d.m);
    if n == 0 {
        return Err(loc.error("data.n", format!("n = 0: need at least 1 feature{at}")));
    }
    let c = pa.clients;
    if c == 0 {
        return Err(loc.error(
            "partition.clients",
            format!("clients = 0: need at least 1 client{at}"),
        ));
    }
    match (pa.scheme, pa.alpha) {
        (Scheme::Dirichlet, None) => {
            return Err(loc.error(
                "partition.alpha",
                format!("missing: scheme = \"dirichlet\" needs alpha > 0{at}"),
            ))
        }
        (Scheme::Dirichlet, Some(a)) if !(a.is_finite() && a > 0.0) => {
            return Err(loc.error(
                "partition.alpha",
                format!("alpha = {a}: must be a finite number > 0{at}"),
            ))
        }
        (Scheme::Dirichlet, _) => match &d.gen {
            Gen::File(f) if !crate::data::own::labelled(f) => {
                return Err(loc.error(
                    "partition.scheme",
                    format!(
                        "scheme = \"dirichlet\" splits by label, and this data file has none: give `label_column` (CSV) or `labels` = a labels file{at}"
                    ),
                ))
            }
            Gen::File(_) | Gen::Dataset(_) => {}
            _ => {
                return Err(loc.error(
                    "partition.scheme",
                    format!(
                        "scheme = \"dirichlet\" splits by label: it needs generator = \"dataset\" or a labelled data file{at}"
                    ),
                ))
            }
        },
        (_, Some(_)) => {
            return Err(loc.error(
                "partition.alpha",
                format!("alpha is only used by scheme = \"dirichlet\": remove it{at}"),
            ))
        }
        _ => {}
    }
    match pa.scheme {
        Scheme::Even | Scheme::Iid | Scheme::Dirichlet => {
            if c > m {
                return Err(loc.blame(&["partition.clients", "data.m"], format!(
                    "partition.clients = {c} exceeds data.m = {m}: every client needs at least one sample{at}"
                )));
            }
            if pa.unit.is_some() {
                return Err(loc.error(
                    "partition.unit",
                    format!("unit is only used by scheme = \"uneven\": remove it{at}"),
                ));
            }
        }
        Scheme::Uneven => {
            let t = c * (c + 1) / 2; // m = unit·(1 + 2 + … + d); c ≤ MAX_DIM, so no overflow
            match pa.unit {
                Some(0) => {
                    return Err(loc.error(
                        "partition.unit",
                        format!(
                            "unit = 0: client i holds unit·i samples, so unit must be >= 1{at}"
                        ),
                    ))
                }
                Some(u) if u.checked_mul(t) != Some(m) => {
                    return Err(loc.blame(&["data.m", "partition.unit", "partition.clients"], format!(
                        "scheme = \"uneven\" with unit = {u} and clients = {c} needs data.m = unit·d(d+1)/2 = {}, not {m}{at}",
                        (u as u128) * (t as u128)
                    )));
                }
                Some(_) => {}
                None if m % t != 0 || m < t => {
                    let lo = (m / t).max(1);
                    return Err(loc.blame(&["data.m", "partition.clients"], format!(
                        "scheme = \"uneven\" with clients = {c} needs data.m = unit·d(d+1)/2 = unit·{t}, not {m}: e.g. m = {} (unit {lo}) or m = {} (unit {}){at}",
                        lo * t, (lo + 1) * t, lo + 1
                    )));
                }
                None => {}
            }
        }
    }

    let p = pr.p;
    if p == 0 {
        let what = family(pr.kind).p_axis();
        return Err(loc.error(
            "problem.p",
            format!("p missing or 0: {what} must be >= 1{at}"),
        ));
    }
    if p > n {
        return Err(loc.blame(
            &["problem.p", "data.n"],
            format!("problem.p = {p} exceeds data.n = {n}: p must be <= n{at}"),
        ));
    }
    // m samples span at most m directions: beyond them the reference and every method's
    // estimate are arbitrary.
    if p > m {
        return Err(loc.blame(
            &["problem.p", "data.m"],
            format!("problem.p = {p} exceeds data.m = {m} samples, which span at most {m} directions: p must be <= m{at}"),
        ));
    }
    Ok(())
}

/// A dataset point: the name must be known; sparse data only rescaled. n and m are checked
/// against the file when it is loaded.
fn check_dataset(d: &Dataset, loc: &Locator, at: &str) -> Result {
    let ds = match crate::data::datasets::find(&d.dataset) {
        Ok(ds) => ds,
        Err(e) => return Err(loc.error("data.dataset", format!("{e}{at}"))),
    };
    // Sparse data stays sparse: only rescaling keeps the zeros.
    if matches!(ds.format, crate::data::datasets::Format::Libsvm { .. }) {
        if let Some(step) = d.preprocess.iter().find(|s| **s != Preprocess::UnitTop) {
            return Err(loc.error(
                "data.preprocess",
                format!(
                    "`{}` would densify the sparse dataset {}; only \"unit_top\" keeps it sparse{at}",
                    step.name(),
                    d.dataset
                ),
            ));
        }
    }
    Ok(())
}

/// A point on the manifest's own data file (already read by data::own::resolve, which checked
/// its own keys, n and m): sparse data only rescaled.
fn check_file(f: &File, loc: &Locator, at: &str) -> Result {
    if crate::data::own::file_format(f) == Some(crate::spec::FileFormat::Libsvm) {
        if let Some(step) = f.preprocess.iter().find(|s| **s != Preprocess::UnitTop) {
            return Err(loc.error(
                "data.preprocess",
                format!(
                    "`{}` would densify the sparse LIBSVM data; only \"unit_top\" keeps it sparse{at}",
                    step.name()
                ),
            ));
        }
        if f.noise_features.is_some() {
            return Err(loc.error(
                "data.noise_features",
                format!("noise features are appended to dense data only, not to a LIBSVM file{at}"),
            ));
        }
    }
    Ok(())
}

/// Everything that names the family's metrics or methods, once the points are known: one
/// family per manifest; methods registered for it (or planned), with valid parameters; stop
/// targets, plot axes and the paper's numbers naming the family's metrics.
pub(crate) fn check_family(
    raw: &RawManifest,
    points: &[Point],
    methods: &mut [MethodSpec],
    loc: &Locator,
) -> Result<Kind> {
    let kind = points[0].problem.kind;
    if let Some(pt) = points.iter().find(|p| p.problem.kind != kind) {
        return Err(loc.error(
            "problem.kind",
            format!(
                "one family per manifest: sweep point {} is `{}`, the first `{kind}`",
                pt.label, pt.problem.kind
            ),
        ));
    }
    // A run's files are named by point, label, variant and seed (`RunKey::file_stem`): refuse
    // names no file system takes before anything runs, not after.
    let longest_point = points
        .iter()
        .map(|p| p.label.chars().count())
        .max()
        .unwrap_or(0);
    for m in methods.iter() {
        let stem = longest_point + m.label.chars().count() + m.variant.chars().count() + 30;
        if stem > 240 {
            return Err(loc.blame(
                &["sweep", &format!("methods[{}].params", m.index)],
                format!(
                    "{}'s runs would be named by {stem} characters (sweep point, label, parameter variant and seed; at most 240): sweep fewer keys or shorten values",
                    m.full_label()
                ),
            ));
        }
    }
    for m in methods.iter_mut() {
        let at = |k: &str| format!("methods[{}].{k}", m.index);
        let Some(entry) = registry::lookup(&m.name) else {
            // Planned (unknown names were rejected by check_manifest).
            if let Some(k) = m.params.keys().next() {
                return Err(loc.error(
                    &at(&format!("params.{k}")),
                    format!(
                        "`{}` is not implemented yet, so it takes no parameters",
                        m.name
                    ),
                ));
            }
            continue;
        };
        if !crate::problem::family(kind)
            .takes_methods_of()
            .contains(&entry.family)
        {
            return Err(loc.error(
                &at("name"),
                format!(
                    "`{}` solves `{}` problems, but this manifest's problem.kind is `{kind}`",
                    m.name, entry.family
                ),
            ));
        }
        if entry.needs_mu {
            if let Some(pt) = points.iter().find(|p| p.problem.mu.is_none()) {
                let at_point = if pt.label.is_empty() {
                    String::new()
                } else {
                    format!(" (sweep point {})", pt.label)
                };
                return Err(loc.error(
                    "problem.mu",
                    format!(
                        "missing: `{}` solves DSSAL1's model min −½tr(ZᵀAAᵀZ) + μ‖Z‖₁, so \
                         [problem] needs mu (>= 0){at_point}",
                        m.name
                    ),
                ));
            }
        }
        m.resolved = (entry.check)(&m.params)
            .map_err(|e| loc.error(&at(&format!("params.{}", e.key)), e.msg))?;
    }
    let unscaled = raw.attack.as_ref().is_some_and(|a| a.unscaled);
    let metric =
        |key: &str, name: &str, leak_ok: bool| check_metric(raw, kind, key, name, leak_ok, loc);
    if let Some(t) = raw.stop.as_ref().and_then(|s| s.target.as_ref()) {
        metric("stop.target.metric", &t.metric, false)?;
        // Metrics drawn on a log scale are positive: a target below 0 is never reached.
        if crate::problem::metric(kind, &t.metric).is_some_and(|m| m.log) && t.value < 0.0 {
            return Err(loc.error(
                "stop.target.value",
                format!(
                    "{:e}: `{}` is positive, so the target must be a finite number >= 0",
                    t.value, t.metric
                ),
            ));
        }
    }
    for (i, plot) in raw.plots.iter().enumerate() {
        if plot.kind == crate::spec::PlotKind::Final && plot.params.is_empty() {
            return Err(loc.error(
                &format!("plots[{i}].params"),
                "kind = \"final\" needs params = [the method parameters on the x axis]".to_string(),
            ));
        }
        if plot.kind == crate::spec::PlotKind::Spectrum {
            if let Some((j, bad)) = plot
                .also
                .iter()
                .enumerate()
                .find(|(_, a)| !crate::problem::family(kind).spectra().contains(&a.as_str()))
            {
                return Err(loc.error(
                    &format!("plots[{i}].also[{j}]"),
                    format!(
                        "{bad:?} is not a spectrum of the `{kind}` family: expected one of {}",
                        quoted(crate::problem::family(kind).spectra())
                    ),
                ));
            }
            if !crate::problem::family(kind)
                .spectra()
                .contains(&plot.y.as_str())
            {
                return Err(loc.error(
                    &format!("plots[{i}].y"),
                    format!(
                        "kind = \"spectrum\" draws a spectrum of the `{kind}` family: expected one of {}",
                        quoted(crate::problem::family(kind).spectra())
                    ),
                ));
            }
            continue;
        }
        if plot.kind == crate::spec::PlotKind::Heatmap {
            let swept: Vec<&String> = raw.sweep.keys().collect();
            if plot.grid.len() != 2 || plot.grid.iter().any(|g| !swept.contains(&g)) {
                return Err(loc.error(
                    &format!("plots[{i}].grid"),
                    format!(
                        "kind = \"heatmap\" needs grid = [x key, y key], two keys of [sweep] ({})",
                        quoted(&swept.iter().map(|s| s.as_str()).collect::<Vec<_>>())
                    ),
                ));
            }
        }
        metric(&format!("plots[{i}].y"), &plot.y, raw.attack.is_some())?;
        for (j, a) in plot.also.iter().enumerate() {
            metric(&format!("plots[{i}].also[{j}]"), a, raw.attack.is_some())?;
        }
    }
    for (i, r) in raw.paper_results.iter().enumerate() {
        check_method_ref(
            methods,
            &r.method,
            &format!("paper_results[{i}].method"),
            false,
            loc,
        )?;
        for name in r.metrics.keys() {
            metric(&format!("paper_results[{i}].{name}"), name, false)?;
        }
        if let Some(t) = &r.reach {
            let key = format!("paper_results[{i}].reach");
            metric(&format!("{key}.metric"), &t.metric, raw.attack.is_some())?;
            if !t.value.is_finite() {
                return Err(loc.error(
                    &format!("{key}.value"),
                    format!("{}: must be a finite number", t.value),
                ));
            }
            if let Some(why) = reach_refused(kind, &t.metric) {
                return Err(loc.error(&format!("{key}.metric"), why));
            }
            if r.rounds.is_none() {
                return Err(loc.error(
                    &key,
                    "reach says what the paper's rounds count (the rounds until the metric is at or below the value): give rounds = the paper's count",
                ));
            }
        }
    }
    for (i, name) in raw.table_metrics.iter().enumerate() {
        metric(&format!("table_metrics[{i}]"), name, false)?;
    }
    for (i, c) in raw.claims.iter().enumerate() {
        check_claim(raw, points, methods, kind, i, c, loc)?;
    }
    if unscaled && crate::problem::family(kind).unscaled().is_none() {
        return Err(loc.error(
            "attack.unscaled",
            format!("the unscaled KKT violation is the subspace family's; kind = \"{kind}\" has none: remove it"),
        ));
    }
    if raw.attack.is_some() {
        let attackable = crate::problem::family(kind).attackable();
        let readable = |e: &registry::Entry| attackable && crate::attack::reads(e.transcript);
        if let Some((i, m)) = raw
            .methods
            .iter()
            .enumerate()
            .find(|(_, m)| registry::lookup(&m.name).is_none_or(|e| !readable(e)))
        {
            let readable: Vec<&str> = registry::METHODS
                .iter()
                .filter(|e| readable(e))
                .map(|e| e.name)
                .collect();
            return Err(loc.error(
                &format!("methods[{i}].name"),
                format!(
                    "the leakage attack cannot read `{}`'s transcript in a {kind} manifest (it \
                     reads {}); drop [attack] or the method",
                    m.name,
                    if readable.is_empty() {
                        "none of this family's".to_string()
                    } else {
                        quoted(&readable)
                    }
                ),
            ));
        }
    }
    Ok(kind)
}
