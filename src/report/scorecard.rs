//! The scorecard of each paper, from the committed results: every number the paper states
//! (`[[paper_results]]` of its manifests) beside ours with the ratio and a verdict, every claim
//! of its inventory (papers/<key>.toml) with the verdict of the manifests' tests that stand for
//! it, and every such test. One row per stated value, inventory claim and test, per profile, so a
//! test can check that nothing is dropped; written as results/scorecard.csv and shown as each
//! paper's page and the index's totals ([`super::scorecard_html`]).
//!
//! Ours beside a stated number is what report.md sets beside it ([`super::cells::runs_beside`]):
//! the mean over repeats at its point, or over the points for a sweep's average.

use super::cells::runs_beside;
use super::claims::judge;
use super::quantity::{mean_of, Mean, Quantity};
use super::reload::Folder;
use crate::plan;
use crate::run::{describe, RunRecord};
use crate::spec::{self, Experiment, Gen, PaperKind, PaperRecord, PaperResult, Registry};
use anyhow::{Context, Result};
use std::fmt::Write;
use std::path::Path;

/// A stated number within this factor of ours (either way) agrees.
pub const TOLERANCE: f64 = 0.2;

pub const WITHIN: &str = "within ±20 %";
pub const OUTSIDE: &str = "outside";
pub const LOWER_BOUND: &str = "lower bound";
pub const NOT_RUN: &str = "not run";
/// Seconds: not comparable on 2 shared cores (issue 37's federated clock will make them so).
pub const TIME: &str = "time";
/// A `[[paper_results]]` entry with a note and no value.
pub const NOTE: &str = "note only";
pub const HELD: &str = "held";
pub const NOT_HELD: &str = "not held";
pub const UNTESTABLE: &str = "untestable";
/// An inventory claim with no test and no reason: never in the committed state.
pub const UNTESTED: &str = "untested";
pub const HOLDS: &str = "holds";
pub const FAILS: &str = "fails";
/// A test whose runs are there but none at a point it judges (`Verdict::judged == 0`).
pub const NOT_JUDGED: &str = "not judged";

/// Cause of a miss the inventory does not explain.
pub const UNEXPLAINED: &str = "unexplained";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowKind {
    /// A value of a `[[paper_results]]` entry.
    Number,
    /// A claim of the paper's inventory.
    Claim,
    /// A manifest's `[[claims]]` entry.
    Test,
}

impl RowKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RowKind::Number => "number",
            RowKind::Claim => "claim",
            RowKind::Test => "test",
        }
    }
}

/// One line of the scorecard (a row of results/scorecard.csv).
#[derive(Debug, Clone)]
pub struct Row {
    pub paper: String,
    pub profile: String,
    pub kind: RowKind,
    /// The manifest's id; for a claim, those of its tests (space-separated).
    pub experiment: String,
    /// The inventory claim's id (a claim, a test naming one); for a number, the index of its
    /// `[[paper_results]]` entry as `paper_results[i]`.
    pub id: String,
    /// Where the paper says it (claims).
    pub at: String,
    pub method: String,
    pub point: String,
    /// `rounds`, `time_s` or a metric (numbers, tests), `note` for an entry without a value.
    pub quantity: String,
    pub paper_value: Option<f64>,
    pub ours: Option<f64>,
    pub ratio: Option<f64>,
    /// For a lower bound: `already outside` (ours ≥ a value past +20 %) or `undecided`.
    pub bound: String,
    pub verdict: &'static str,
    /// The claim or test in words; a number's note.
    pub text: String,
    /// Our numbers behind the verdict, or why there are none.
    pub evidence: String,
    pub cause: String,
    pub study: String,
    /// Results folders (relative to the results root) of the experiments, space-separated.
    pub folder: String,
}

impl Row {
    fn new(paper: &str, profile: &str, kind: RowKind) -> Row {
        Row {
            paper: paper.into(),
            profile: profile.into(),
            kind,
            experiment: String::new(),
            id: String::new(),
            at: String::new(),
            method: String::new(),
            point: String::new(),
            quantity: String::new(),
            paper_value: None,
            ours: None,
            ratio: None,
            bound: String::new(),
            verdict: NOT_RUN,
            text: String::new(),
            evidence: String::new(),
            cause: String::new(),
            study: String::new(),
            folder: String::new(),
        }
    }
}

/// Counts of one paper at one profile.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    pub within: usize,
    pub bounds: usize,
    /// Of the lower bounds, those already past +20 %.
    pub bounds_outside: usize,
    pub outside: usize,
    pub not_run: usize,
    pub time: usize,
    pub notes: usize,
    pub held: usize,
    pub not_held: usize,
    pub untestable: usize,
    pub untested: usize,
    pub tests_hold: usize,
    pub tests_fail: usize,
    /// Tests not run or not judged.
    pub tests_open: usize,
}

impl Totals {
    /// Stated values, times included (notes without a value are not numbers).
    pub fn numbers(&self) -> usize {
        self.within + self.bounds + self.outside + self.not_run + self.time
    }
    pub fn claims(&self) -> usize {
        self.held + self.not_held + self.untestable + self.untested
    }

    /// The cells of a totals table, in the order of [`TOTALS_HEADER`].
    pub fn cells(&self) -> [usize; 11] {
        [
            self.within,
            self.bounds,
            self.outside,
            self.not_run,
            self.time,
            self.numbers(),
            self.held,
            self.not_held,
            self.untestable,
            self.untested,
            self.claims(),
        ]
    }
}

/// The columns of a totals table: numbers, then claims.
pub const TOTALS_HEADER: [&str; 11] = [
    "within ±20 %",
    "lower bound",
    "outside",
    "not run",
    "time",
    "numbers",
    "held",
    "not held",
    "untestable",
    "untested",
    "claims",
];

/// The scorecard of every paper of a registry.
pub struct Scorecard {
    /// In registry order (by key).
    pub papers: Vec<PaperRecord>,
    /// By paper, then profile (`paper`, `quick`, then the others by name), then numbers, claims
    /// and tests.
    pub rows: Vec<Row>,
    /// A line per manifest that could not be loaded ("<file>:<line>: …"): its rows are missing.
    pub errors: Vec<String>,
}

/// One experiment at one profile: its results folder when one is committed.
struct Entry<'a> {
    exp: &'a Experiment,
    folder: Option<&'a Folder>,
    /// Why there is no folder (empty when there is one).
    why: String,
}

/// The profiles in the order the scorecard shows them.
fn profile_rank(p: &str) -> (u8, &str) {
    match p {
        "paper" => (0, p),
        "quick" => (1, p),
        _ => (2, p),
    }
}

impl Scorecard {
    /// The scorecard of `reg`'s papers from the results `folders` and the manifests under
    /// `<registry root>/experiments` (each with every profile it defines): a manifest of a
    /// profile without a folder contributes its rows as not run.
    pub fn build(reg: &Registry, folders: &[Folder]) -> Result<Scorecard> {
        let mut manifests: Vec<Experiment> = Vec::new();
        let dir = reg.root.join("experiments");
        let paths = if dir.is_dir() {
            spec::manifests_under(&dir)
                .with_context(|| format!("cannot read folder {}", dir.display()))?
        } else {
            Vec::new()
        };
        // A `--set` variant's folder is a user's experiment, not the manifest's profile: it
        // neither scores the paper nor stands for the manifest's own folder.
        let plain: Vec<&Folder> = folders.iter().filter(|f| f.exp.sets.is_empty()).collect();
        let mut errors = Vec::new();
        for path in paths {
            let profiles = match spec::profile_names(&path) {
                Ok(p) => p,
                Err(e) => {
                    errors.push(e.to_string());
                    continue;
                }
            };
            for profile in profiles {
                let exp = match plan::load(&path, &profile) {
                    Ok(exp) => exp,
                    Err(e) => {
                        errors.push(format!("{e} (profile {profile})"));
                        continue;
                    }
                };
                let in_folder = plain.iter().any(|f| {
                    (&f.exp.paper, &f.exp.id, &f.exp.profile) == (&exp.paper, &exp.id, &profile)
                });
                if !in_folder && reg.get(&exp.paper).is_some() {
                    manifests.push(exp);
                }
            }
        }
        let mut entries: Vec<Entry> = plain
            .iter()
            .map(|f| Entry {
                exp: &f.exp,
                folder: Some(f),
                why: String::new(),
            })
            .chain(manifests.iter().map(|exp| Entry {
                exp,
                folder: None,
                why: not_run_reason(exp),
            }))
            .filter(|e| reg.get(&e.exp.paper).is_some())
            .collect();
        entries.sort_by(|a, b| {
            (&a.exp.paper, profile_rank(&a.exp.profile), &a.exp.id).cmp(&(
                &b.exp.paper,
                profile_rank(&b.exp.profile),
                &b.exp.id,
            ))
        });
        let mut rows = Vec::new();
        for paper in &reg.papers {
            let key = &paper.record.key;
            let of: Vec<&Entry> = entries.iter().filter(|e| &e.exp.paper == key).collect();
            let mut profiles: Vec<&str> = of.iter().map(|e| e.exp.profile.as_str()).collect();
            profiles.dedup();
            if profiles.is_empty() && paper.record.kind == PaperKind::Paper {
                profiles.push("paper");
            }
            for profile in profiles {
                let at: Vec<&Entry> = of
                    .iter()
                    .copied()
                    .filter(|e| e.exp.profile == profile)
                    .collect();
                for e in &at {
                    number_rows(&mut rows, e);
                }
                claim_rows(&mut rows, paper, profile, &at);
                for e in &at {
                    test_rows(&mut rows, paper, e);
                }
            }
        }
        Ok(Scorecard {
            papers: reg.papers.iter().map(|p| p.record.clone()).collect(),
            rows,
            errors,
        })
    }

    /// The scorecard of the results under `root` with its registry (found above `root`), as
    /// `dpca report` computes it; None without a registry.
    pub fn of_results(root: &Path, folders: &[Folder]) -> Result<Option<Self>> {
        match plan::registry_of(root)? {
            None => Ok(None),
            Some(reg) => Scorecard::build(&reg, folders).map(Some),
        }
    }

    /// The profiles of `paper` with rows, in order.
    pub fn profiles(&self, paper: &str) -> Vec<&str> {
        let mut out: Vec<&str> = self
            .rows
            .iter()
            .filter(|r| r.paper == paper)
            .map(|r| r.profile.as_str())
            .collect();
        out.dedup();
        out
    }

    pub fn rows_of<'a>(
        &'a self,
        paper: &'a str,
        profile: &'a str,
    ) -> impl Iterator<Item = &'a Row> {
        self.rows
            .iter()
            .filter(move |r| r.paper == paper && r.profile == profile)
    }

    pub fn totals(&self, paper: &str, profile: &str) -> Totals {
        let mut t = Totals::default();
        for r in self.rows_of(paper, profile) {
            match (r.kind, r.verdict) {
                (RowKind::Number, WITHIN) => t.within += 1,
                (RowKind::Number, LOWER_BOUND) => {
                    t.bounds += 1;
                    t.bounds_outside += usize::from(r.bound == ALREADY_OUTSIDE);
                }
                (RowKind::Number, OUTSIDE) => t.outside += 1,
                (RowKind::Number, TIME) => t.time += 1,
                (RowKind::Number, NOTE) => t.notes += 1,
                (RowKind::Number, _) => t.not_run += 1,
                (RowKind::Claim, HELD) => t.held += 1,
                (RowKind::Claim, NOT_HELD) => t.not_held += 1,
                (RowKind::Claim, UNTESTABLE) => t.untestable += 1,
                (RowKind::Claim, _) => t.untested += 1,
                (RowKind::Test, HOLDS) => t.tests_hold += 1,
                (RowKind::Test, FAILS) => t.tests_fail += 1,
                (RowKind::Test, _) => t.tests_open += 1,
            }
        }
        t
    }

    /// results/scorecard.csv: a header and one line per row, floats in shortest round-trip form.
    pub fn csv(&self) -> Result<String> {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(COLUMNS)?;
        let num = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:?}"));
        for r in &self.rows {
            w.write_record([
                r.paper.as_str(),
                &r.profile,
                r.kind.as_str(),
                &r.experiment,
                &r.id,
                &r.at,
                &r.method,
                &r.point,
                &r.quantity,
                &num(r.paper_value),
                &num(r.ours),
                &num(r.ratio),
                &r.bound,
                r.verdict,
                &r.text,
                &r.evidence,
                &r.cause,
                &r.study,
                &r.folder,
            ])?;
        }
        Ok(String::from_utf8(w.into_inner()?)?)
    }

    /// The totals of every paper at `profile`, as a plain-text table (`dpca scorecard`).
    pub fn totals_text(&self, profile: &str, only: Option<&str>) -> String {
        let line = |first: &str, cells: Vec<String>| {
            let (numbers, claims) = cells.split_at(6);
            // Each column as wide as its header.
            let pad = |c: &[String], heads: &[&str]| {
                c.iter()
                    .zip(heads)
                    .map(|(x, h)| format!("{x:>w$}", w = h.chars().count()))
                    .collect::<Vec<_>>()
                    .join("  ")
            };
            let (hn, hc) = TOTALS_HEADER.split_at(6);
            format!("{first:<8} {} | {}\n", pad(numbers, hn), pad(claims, hc))
        };
        let mut s = line(
            "paper",
            TOTALS_HEADER.iter().map(|h| h.to_string()).collect(),
        );
        for p in &self.papers {
            if only.is_some_and(|o| o != p.key) || !self.profiles(&p.key).contains(&profile) {
                continue;
            }
            let t = self.totals(&p.key, profile);
            s += &line(&p.key, t.cells().iter().map(|c| c.to_string()).collect());
        }
        s
    }

    /// Every row of `paper` at `profile` as text, one line each (`dpca scorecard --paper`).
    pub fn rows_text(&self, paper: &str, profile: &str) -> String {
        let mut s = String::new();
        for r in self.rows_of(paper, profile) {
            let what = match r.kind {
                RowKind::Number => format!(
                    "{} {} {} {}: paper {} ours {}{}",
                    r.experiment,
                    r.method,
                    r.point,
                    r.quantity,
                    show(&r.quantity, r.paper_value),
                    if r.verdict == LOWER_BOUND { "≥ " } else { "" },
                    show(&r.quantity, r.ours),
                ),
                RowKind::Claim => {
                    format!("{} ({}): {} [tests: {}]", r.id, r.at, r.text, r.experiment)
                }
                RowKind::Test => format!("{} {}: {}", r.experiment, r.id, r.text),
            };
            let ratio = r.ratio.map_or(String::new(), |q| format!(" ratio {q:.3}"));
            let why = if r.evidence.is_empty() {
                String::new()
            } else {
                format!(" — {}", r.evidence)
            };
            let _ = writeln!(
                s,
                "{:<6} {:<13} {}{ratio}{why}",
                r.kind.as_str(),
                r.verdict,
                crate::util::escape_controls(&what)
            );
        }
        s
    }
}

const ALREADY_OUTSIDE: &str = "already outside";

/// The columns of results/scorecard.csv.
pub const COLUMNS: [&str; 19] = [
    "paper",
    "profile",
    "kind",
    "experiment",
    "id",
    "where",
    "method",
    "point",
    "quantity",
    "paper_value",
    "ours",
    "ratio",
    "bound",
    "verdict",
    "text",
    "evidence",
    "cause",
    "study",
    "folder",
];

/// A value as the pages print it: rounds as counts, seconds with two decimals, metrics in
/// scientific notation; "—" for none.
pub fn show(quantity: &str, v: Option<f64>) -> String {
    match v {
        None => "—".into(),
        Some(v) if !v.is_finite() => format!("{v}"),
        Some(v) if quantity == "rounds" && v.fract() == 0.0 => format!("{v:.0}"),
        Some(v) if quantity == "rounds" => format!("{v:.1}"),
        Some(v) if quantity == "time_s" => format!("{v:.2}"),
        Some(v) => format!("{v:.3e}"),
    }
}

/// Why a manifest has no results folder at a profile, and the data sets it reads with the command
/// that fetches them. Whether they are on this machine is not asked: the committed scorecard
/// must read the same on every machine.
fn not_run_reason(exp: &Experiment) -> String {
    let mut sets: Vec<&str> = Vec::new();
    for p in &exp.points {
        if let Gen::Dataset(d) = &p.data.gen {
            if !sets.contains(&d.dataset.as_str()) {
                sets.push(&d.dataset);
            }
        }
    }
    let folder = format!("{}/{}/{}", exp.paper, exp.id, exp.profile);
    if sets.is_empty() {
        format!("no results folder {folder}: not run")
    } else {
        let fetch: Vec<String> = sets
            .iter()
            .map(|s| format!("`dpca data fetch {s}`"))
            .collect();
        format!(
            "no results folder {folder}: not run; it reads the data set {} ({})",
            sets.join(", "),
            fetch.join(", ")
        )
    }
}

/// The verdict of our value beside a stated one.
pub fn number_verdict(
    quantity: &str,
    paper: f64,
    ours: f64,
    bound: bool,
) -> (&'static str, String) {
    if quantity == "time_s" {
        return (TIME, String::new());
    }
    if !ours.is_finite() {
        return (NOT_RUN, String::new());
    }
    let q = ours / paper;
    let within = if paper == 0.0 {
        ours == 0.0
    } else {
        (q - 1.0).abs() <= TOLERANCE
    };
    match (bound, within) {
        (true, _) if paper != 0.0 && q > 1.0 + TOLERANCE => (LOWER_BOUND, ALREADY_OUTSIDE.into()),
        (true, _) => (LOWER_BOUND, "undecided".into()),
        (false, true) => (WITHIN, String::new()),
        (false, false) => (OUTSIDE, String::new()),
    }
}

/// The stated values of a `[[paper_results]]` entry: rounds, time, then its metrics by name.
fn stated(pr: &PaperResult) -> Vec<(String, f64)> {
    let mut v: Vec<(String, f64)> = Vec::new();
    v.extend(pr.rounds.map(|r| ("rounds".to_string(), r as f64)));
    v.extend(pr.time_s.map(|t| ("time_s".to_string(), t)));
    v.extend(pr.metrics.iter().map(|(k, &x)| (k.clone(), x)));
    v
}

/// What our runs give for a stated value named `quantity` (a key of [`stated`]): its quantity
/// as the claims read it, the paper's `rounds` counted to the entry's `reach` where it has one.
fn quantity_of<'a>(pr: &'a PaperResult, quantity: &'a str) -> Quantity<'a> {
    match (&pr.reach, quantity) {
        (Some(t), "rounds") => Quantity::of(&t.metric, Some(t.value)),
        _ => Quantity::of(quantity, None),
    }
}

fn number_rows(rows: &mut Vec<Row>, e: &Entry) {
    let exp = e.exp;
    for (i, pr) in exp.paper_results.iter().enumerate() {
        let base = || {
            let mut r = Row::new(&exp.paper, &exp.profile, RowKind::Number);
            r.experiment = exp.id.clone();
            r.id = format!("paper_results[{i}]");
            r.method = pr.method.clone();
            r.point = pr.point.clone().unwrap_or_default();
            r.text = pr.note.clone().unwrap_or_default();
            r.folder = e.folder.map(folder_of).unwrap_or_default();
            r
        };
        let values = stated(pr);
        if values.is_empty() {
            let mut r = base();
            r.quantity = "note".into();
            r.verdict = NOTE;
            rows.push(r);
            continue;
        }
        let groups = e
            .folder
            .map(|f| runs_beside(exp, &f.out.records, pr))
            .unwrap_or_default();
        for (quantity, paper) in values {
            let q = quantity_of(pr, &quantity);
            let mut one = base();
            // `rounds` still: what they count (with `reach`) the evidence says.
            one.quantity = quantity.clone();
            one.paper_value = Some(paper);
            if groups.is_empty() {
                one.verdict = if quantity == "time_s" { TIME } else { NOT_RUN };
                one.evidence = match e.folder {
                    None => e.why.clone(),
                    Some(f)
                        if f.out
                            .planned
                            .iter()
                            .any(|m| exp.names_run(&pr.method, &m.name, &m.label, &m.variant)) =>
                    {
                        format!("{} is not implemented yet", pr.method)
                    }
                    Some(_) => format!(
                        "no run of {}{} in this profile",
                        pr.method,
                        pr.point
                            .as_ref()
                            .map_or(String::new(), |p| format!(" at {p}"))
                    ),
                };
                rows.push(one);
                continue;
            }
            for runs in &groups {
                let mut r = one.clone();
                if groups.len() > 1 {
                    r.method = describe(&runs[0].key);
                }
                let mean = mean_of(runs.iter().copied(), q);
                let ours = mean.map_or(f64::NAN, |m| m.value);
                let bound = mean.is_some_and(|m| m.bound());
                r.ours = Some(ours);
                r.ratio = (paper != 0.0 && ours.is_finite()).then(|| ours / paper);
                let (verdict, b) = number_verdict(&quantity, paper, ours, bound);
                r.verdict = verdict;
                r.bound = b;
                r.evidence = runs_text(exp, runs, mean, q);
                if verdict == OUTSIDE || r.bound == ALREADY_OUTSIDE {
                    r.cause = UNEXPLAINED.into();
                }
                rows.push(r);
            }
        }
    }
}

/// "mean of 5 runs (2 not converged: rounds are a lower bound), over 4 points"; with the
/// paper's criterion, "rounds to err ≤ 1e-6: one run (it never reached it: a lower bound)".
fn runs_text(exp: &Experiment, runs: &[&RunRecord], mean: Option<Mean>, q: Quantity) -> String {
    let mut points: Vec<&str> = runs.iter().map(|r| r.key.point.as_str()).collect();
    points.sort();
    points.dedup();
    let mut s = match runs.len() {
        1 => "one run".to_string(),
        n => format!("mean of {n} runs"),
    };
    if q.reach.is_some() {
        s = format!("{}: {s}", q.text());
    }
    match mean {
        None => s += " (none gives a value)",
        Some(m) if m.bound() && q.reach.is_some() => {
            let _ = write!(s, " ({} never reached it: a lower bound)", m.bounds);
        }
        Some(m) if m.bound() => {
            let _ = write!(s, " ({} not converged: rounds are a lower bound)", m.bounds);
        }
        Some(_) => {}
    }
    if exp.points.len() > 1 && points.len() > 1 {
        let _ = write!(s, ", over {} points", points.len());
    }
    s
}

fn folder_of(f: &Folder) -> String {
    f.rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// A manifest test's outcome: (verdict, evidence).
fn test_verdict(e: &Entry, c: &spec::ClaimSpec) -> (&'static str, String) {
    let Some(f) = e.folder else {
        return (NOT_RUN, e.why.clone());
    };
    let v = judge(&f.exp, c, &f.out.records);
    let verdict = match (v.judged, v.holds) {
        (0, _) => NOT_JUDGED,
        (_, true) => HOLDS,
        (_, false) => FAILS,
    };
    (verdict, v.evidence.join("; "))
}

fn test_rows(rows: &mut Vec<Row>, paper: &spec::Paper, e: &Entry) {
    for (i, c) in e.exp.claims.iter().enumerate() {
        let mut r = Row::new(&e.exp.paper, &e.exp.profile, RowKind::Test);
        r.experiment = e.exp.id.clone();
        r.id = c.id.clone().unwrap_or_else(|| format!("claims[{i}]"));
        r.method = c.method.clone();
        r.point = c.points.join(" ");
        r.quantity = c.quantity.clone();
        // A test's text may quote the runs' numbers ({{...}}): from this folder's runs.
        r.text = match e.folder {
            Some(f) => super::placeholders::render(e.exp, &f.out.records, &c.text),
            None => c.text.clone(),
        };
        r.folder = e.folder.map(folder_of).unwrap_or_default();
        let (verdict, evidence) = test_verdict(e, c);
        r.verdict = verdict;
        r.evidence = evidence;
        if verdict == FAILS {
            let inv = c.id.as_deref().and_then(|id| paper.claim(id));
            r.cause = inv
                .and_then(|c| c.cause.clone())
                .unwrap_or_else(|| UNEXPLAINED.into());
            r.study = inv.and_then(|c| c.study.clone()).unwrap_or_default();
        }
        rows.push(r);
    }
}

/// One row per inventory claim: held when every test that could be judged holds (and one
/// could), not held when one judged fails, untestable when the inventory says why or none of its
/// tests could be judged here, untested when it has no test and no reason.
fn claim_rows(rows: &mut Vec<Row>, paper: &spec::Paper, profile: &str, at: &[&Entry]) {
    for c in &paper.claims {
        let mut r = Row::new(&paper.record.key, profile, RowKind::Claim);
        r.id = c.id.clone();
        r.at = c.at.clone();
        r.text = c.text.clone();
        r.study = c.study.clone().unwrap_or_default();
        let mut tests: Vec<(String, &'static str, String)> = Vec::new();
        let mut ids: Vec<&str> = Vec::new();
        let mut folders: Vec<String> = Vec::new();
        for e in at {
            for (i, t) in e.exp.claims.iter().enumerate() {
                if t.id.as_deref() != Some(c.id.as_str()) {
                    continue;
                }
                let (verdict, evidence) = test_verdict(e, t);
                tests.push((format!("{} claims[{i}]", e.exp.id), verdict, evidence));
                if !ids.contains(&e.exp.id.as_str()) {
                    ids.push(&e.exp.id);
                    folders.extend(e.folder.map(folder_of));
                }
            }
        }
        r.experiment = ids.join(" ");
        r.folder = folders.join(" ");
        let judged = tests
            .iter()
            .filter(|t| t.1 == HOLDS || t.1 == FAILS)
            .count();
        let failing: Vec<&(String, &str, String)> = tests.iter().filter(|t| t.1 == FAILS).collect();
        let list = |ts: &[&(String, &str, String)]| {
            ts.iter()
                .map(|t| format!("{} {}", t.0, t.1))
                .collect::<Vec<_>>()
                .join("; ")
        };
        let all: Vec<&(String, &str, String)> = tests.iter().collect();
        (r.verdict, r.evidence) = if let Some(why) = &c.untestable {
            (UNTESTABLE, why.clone())
        } else if tests.is_empty() {
            (
                UNTESTED,
                "no manifest tests it and the inventory gives no reason".into(),
            )
        } else if !failing.is_empty() {
            (NOT_HELD, format!("fails: {}", list(&failing)))
        } else if judged > 0 {
            let mut s = format!("{judged} of {} tests judged, all hold", tests.len());
            if judged < tests.len() {
                let _ = write!(s, " ({})", list(&all));
            }
            (HELD, s)
        } else {
            let whys: Vec<String> = tests
                .iter()
                .map(|t| format!("{}: {}", t.0, if t.2.is_empty() { t.1 } else { &t.2 }))
                .collect();
            (
                UNTESTABLE,
                format!("its experiments are not run here: {}", whys.join("; ")),
            )
        };
        if r.verdict == NOT_HELD {
            r.cause = c.cause.clone().unwrap_or_else(|| UNEXPLAINED.into());
        } else {
            r.cause = c.cause.clone().unwrap_or_default();
        }
        rows.push(r);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::claims::tests::{experiment, traced};

    /// A folder of `exp`'s runs `records`, as `dpca report` loads one.
    fn folder(exp: Experiment, records: Vec<RunRecord>) -> Folder {
        Folder {
            rel: "p/x/paper".into(),
            exp,
            out: crate::run::Outcome {
                dir: "p/x/paper".into(),
                records,
                planned: Vec::new(),
                started_unix: 0,
                finished_unix: 0,
                threads: 1,
                peak_rss_mib: None,
                computed_by: None,
            },
            files: Vec::new(),
        }
    }

    /// The paper's rounds with `reach` stand beside our rounds to that level, not the run's
    /// length; a level never reached is a lower bound; a value is read as the claims read it.
    #[test]
    fn a_stated_count_with_reach_is_ours_to_that_level() {
        let mut exp = experiment(&["x", "y"]);
        let reach = "reach = { metric = 'stationarity', value = 1e-5 }";
        exp.paper_results = ["x", "y"]
            .iter()
            .map(|p| {
                toml::from_str(&format!("method = 'A'\npoint = '{p}'\nrounds = 3\n{reach}"))
                    .unwrap()
            })
            .collect();
        // At x stationarity is 1e-5 at round 3 and the run goes on to round 40; at y it never
        // gets there in its 2 rounds.
        let runs = vec![
            traced(
                "x",
                "A",
                true,
                &[
                    (1, 1e-3, f64::NAN),
                    (3, 1e-5, f64::NAN),
                    (40, 1e-9, f64::NAN),
                ],
            ),
            traced("y", "A", false, &[(1, 1e-3, f64::NAN), (2, 1e-4, f64::NAN)]),
        ];
        let f = folder(exp, runs);
        let e = Entry {
            exp: &f.exp,
            folder: Some(&f),
            why: String::new(),
        };
        let mut rows = Vec::new();
        number_rows(&mut rows, &e);
        let at = |p: &str| rows.iter().find(|r| r.point == p).unwrap();
        let x = at("x");
        assert_eq!(x.quantity, "rounds");
        assert_eq!((x.ours, x.verdict), (Some(3.0), WITHIN), "{x:?}");
        assert!(
            x.evidence
                .starts_with("rounds to stationarity ≤ 1e-5: one run"),
            "{x:?}"
        );
        let y = at("y");
        assert_eq!(
            (y.ours, y.verdict, y.bound.as_str()),
            (Some(2.0), LOWER_BOUND, "undecided"),
            "{y:?}"
        );
        assert!(y.evidence.contains("1 never reached it"), "{y:?}");
        assert_eq!(show(&y.quantity, y.ours), "2");
    }

    /// Within ±20 % either way; a lower bound past +20 % is already outside, one below is
    /// undecided; seconds are never compared; no value of ours is not run.
    #[test]
    fn number_verdicts() {
        let v = |q, paper, ours, bound| number_verdict(q, paper, ours, bound);
        assert_eq!(v("rounds", 100.0, 120.0, false).0, WITHIN);
        assert_eq!(v("rounds", 100.0, 80.0, false).0, WITHIN);
        assert_eq!(v("rounds", 100.0, 121.0, false).0, OUTSIDE);
        assert_eq!(v("kkt", 1e-6, 7.9e-7, false).0, OUTSIDE);
        assert_eq!(v("kkt", 0.0, 0.0, false).0, WITHIN);
        assert_eq!(v("kkt", 0.0, 1e-9, false).0, OUTSIDE);
        assert_eq!(
            v("rounds", 100.0, 130.0, true),
            (LOWER_BOUND, ALREADY_OUTSIDE.to_string())
        );
        assert_eq!(
            v("rounds", 100.0, 90.0, true),
            (LOWER_BOUND, "undecided".into())
        );
        assert_eq!(v("rounds", 100.0, 10.0, true).0, LOWER_BOUND);
        assert_eq!(v("time_s", 10.0, 10.0, false).0, TIME);
        assert_eq!(v("kkt", 1e-6, f64::NAN, false).0, NOT_RUN);
    }

    #[test]
    fn values_print_by_quantity() {
        assert_eq!(show("rounds", Some(42.0)), "42");
        assert_eq!(show("rounds", Some(258.75)), "258.8");
        assert_eq!(show("time_s", Some(3.456)), "3.46");
        assert_eq!(show("kkt", Some(1.95e-6)), "1.950e-6");
        assert_eq!(show("kkt", None), "—");
    }
}
