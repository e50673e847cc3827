//! A paper's claims, checked against our runs: each `[[claims]]` of a manifest names a quantity
//! (`rounds`, `time_s`, a metric of the family, or the attack's `leak_err`), a method, and its
//! tests, evaluated at every sweep point, or at the claim's `points`, (means over repeats) from
//! the stored runs. Per point, every test given must hold:
//! - `less_than = [other methods]` / `greater_than = [...]`: the method's value < (>) `factor` ×
//!   each other's (factor 1 by default; "far fewer" rounds is a smaller factor); `or_equal =
//!   true` makes them ≤ (≥), "no worse than";
//! - `at_most = v` / `at_least = v`: the method's value against a fixed number;
//! - `above = "q"` / `below = "q"`: the value is above (below) another quantity `q` of the same
//!   runs, read the same way (with `reach`: "the attack is exact in fewer rounds than the method
//!   converges"); `or_equal` makes them ≥ (≤). A spectrum of the family (`share_rand`) is
//!   compared with another spectrum entry by entry (means over repeats), every entry must be
//!   above (below): "the random features have the larger share for every i";
//! - `near_paper = 0.2`: within ±20 % of the paper's value for the method at the point
//!   (`[[paper_results]]`: `rounds`, `time_s` or the metric; with `reach` its `rounds`); a point
//!   without one is not judged;
//! - `rate = "linear"` (optional `min_r2`, default 0.9): a least-squares fit of log10(metric)
//!   against round, from the first trace row to the first at or below `reach` (or the whole
//!   trace), non-finite and non-positive values dropped, has slope < 0 and R² ≥ `min_r2`; the
//!   evidence prints the factor per round (10^slope) and R²; fewer than 5 rows fail.
//!
//! Or, alone, `trend = "increasing" | "decreasing" | "flat"` along a swept key (`along = "kappa"`
//! or "data.kappa", required when the sweep has several keys): the points in sweep order,
//! grouped by the other keys' values, each group of ≥ 2 points with runs judged; a step of
//! "increasing"/"decreasing" may go the wrong way by at most `tolerance` × the previous value
//! (default 0), "flat" holds when max/min ≤ 1 + `tolerance` (default 0.2).
//!
//! The quantity, as [`super::quantity::value`] reads it: a metric's value at the last row of the
//! trace that records it (the attack's error after its last attacked round; none when it is not
//! finite); with `reach = v` the first round at which the metric is ≤ v; with `relative_to =
//! "start"` the metric divided by its first finite value (and `reach` applies to that ratio);
//! with `divided_by = "M"` every method's value divided by M's at the same point. `rounds`,
//! `vectors` and `comm_vectors` are the run's rounds and communication until it stopped. A run
//! that stopped without meeting its accuracy criterion (stalled, round cap, time budget), or
//! never reached `reach`, shows "≥ rounds": its count is a
//! lower bound, and a test is judged on what the bound proves: it holds or fails only if it does
//! so whatever the true value, else it is "undetermined" and does not hold. A ratio over a
//! bound is undetermined.

use super::placeholders;
use super::quantity::{mean, mean_of, runs_at, show, start, Mean, Quantity};
use super::tables::paper_for;
use crate::run::RunRecord;
use crate::spec::{fmt_value, label_names, ClaimSpec, Experiment, Point, Trend};
use std::fmt::Write;

/// One claim's verdict and the numbers behind it.
pub struct Verdict {
    pub holds: bool,
    /// Points judged (0: no runs to judge it on, so it does not hold).
    pub judged: usize,
    /// Per point: "point: method value vs others' values".
    pub evidence: Vec<String>,
}

/// A test's outcome on values that may be bounds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Check {
    Holds,
    Fails,
    /// The bounds allow either.
    Undetermined,
}

impl Check {
    fn and(self, o: Check) -> Check {
        use Check::*;
        match (self, o) {
            (Fails, _) | (_, Fails) => Fails,
            (Undetermined, _) | (_, Undetermined) => Undetermined,
            _ => Holds,
        }
    }

    /// Holds if `proved`, fails if `refuted`, else undetermined.
    fn of(proved: bool, refuted: bool) -> Check {
        if proved {
            Check::Holds
        } else if refuted {
            Check::Fails
        } else {
            Check::Undetermined
        }
    }

    fn mark(self) -> &'static str {
        match self {
            Check::Holds => " ✔",
            Check::Fails => " ✘",
            Check::Undetermined => " ✘ (undetermined: a bound allows either)",
        }
    }
}

type Range = (f64, f64);

/// a < b (a ≤ b if `or_equal`) for values known to lie in the ranges.
fn less(a: Range, b: Range, or_equal: bool) -> Check {
    if or_equal {
        Check::of(a.1 <= b.0, a.0 > b.1)
    } else {
        Check::of(a.1 < b.0, a.0 >= b.1)
    }
}

fn scaled(r: Range, f: f64) -> Range {
    (r.0 * f, r.1 * f)
}

fn exact(v: f64) -> Range {
    (v, v)
}

/// The claim's quantity as the method's runs give it.
fn quantity(c: &ClaimSpec) -> Quantity<'_> {
    Quantity {
        relative: c.relative_to.is_some(),
        ratio: c.divided_by.is_some(),
        ..Quantity::of(&c.quantity, c.reach)
    }
}

/// `who`'s value at `point` under the claim: its mean, divided by `divided_by`'s (None
/// without runs of either).
fn at_point(
    exp: &Experiment,
    c: &ClaimSpec,
    records: &[RunRecord],
    point: &str,
    who: &str,
) -> Option<Mean> {
    // Each method's own value first: the ratio is taken of the means.
    let q = Quantity {
        ratio: false,
        ..quantity(c)
    };
    let num = mean(exp, records, point, who, q)?;
    match &c.divided_by {
        Some(d) => Some(num.over(mean(exp, records, point, d, q)?)),
        None => Some(num),
    }
}

/// Judge one claim on the runs at every point that has them (or at the claim's `points`). A
/// point without the method's runs (or its peers') is listed and does not count; a claim with no
/// judged point fails.
pub fn judge(exp: &Experiment, claim: &ClaimSpec, records: &[RunRecord]) -> Verdict {
    if let Some(t) = claim.trend {
        return judge_trend(exp, claim, records, t);
    }
    let q = quantity(claim);
    let mut holds = true;
    let mut judged = 0;
    let mut evidence = Vec::new();
    let subject = match &claim.divided_by {
        Some(d) => format!("{} / {d}", claim.method),
        None => claim.method.clone(),
    };
    for p in chosen(exp, claim) {
        let at = if p.label.is_empty() { "—" } else { &p.label };
        if is_spectrum(exp.kind, &claim.quantity) {
            let Some((ok, text)) = entries(exp, claim, records, &p.label) else {
                evidence.push(format!("{at}: no runs of {}", claim.method));
                continue;
            };
            holds &= ok == Check::Holds;
            judged += 1;
            evidence.push(format!("{at}: {} {text}{}", claim.method, ok.mark()));
            continue;
        }
        let Some(mine) = at_point(exp, claim, records, &p.label, &claim.method) else {
            let who = claim
                .divided_by
                .as_deref()
                .map_or(String::new(), |d| format!(" or {d}"));
            evidence.push(format!("{at}: no runs of {}{who}", claim.method));
            continue;
        };
        let mut line = format!("{at}: {subject} {}", show(mine, q));
        let mut ok = Check::Holds;
        let factor = claim.factor.unwrap_or(1.0);
        for (list, greater) in [(&claim.less_than, false), (&claim.greater_than, true)] {
            if list.is_empty() {
                continue;
            }
            let mut others = Vec::new();
            for o in list {
                match at_point(exp, claim, records, &p.label, o) {
                    Some(v) => {
                        let theirs = scaled(v.range(), factor);
                        ok = ok.and(if greater {
                            less(theirs, mine.range(), claim.or_equal)
                        } else {
                            less(mine.range(), theirs, claim.or_equal)
                        });
                        others.push(format!("{o} {}", show(v, q)));
                    }
                    None => others.push(format!("{o}: no runs")),
                }
            }
            line += &format!(" vs {}", others.join(", "));
        }
        if let Some(v) = claim.at_most {
            ok = ok.and(less(mine.range(), exact(v), true));
        }
        if let Some(v) = claim.at_least {
            ok = ok.and(less(exact(v), mine.range(), true));
        }
        if let Some((other, above)) = versus(claim) {
            let oq = Quantity {
                name: other,
                ..quantity(claim)
            };
            match mean(exp, records, &p.label, &claim.method, oq) {
                // Bounds on either side are judged as intervals, as `less_than`: a count known
                // only to exceed the rounds the attack read can be neither first nor second.
                Some(v) => {
                    ok = ok.and(ordered(mine.range(), v.range(), above, claim.or_equal));
                    line += &format!(" vs {} {}", oq.text(), show(v, oq));
                }
                None => {
                    ok = ok.and(Check::Fails);
                    line += &format!(" ({other}: no value in the runs)");
                }
            }
        }
        if let Some(share) = claim.near_paper {
            match paper_value(exp, claim, records, &p.label) {
                Some(paper) => {
                    let (lo, hi) = (paper - share * paper.abs(), paper + share * paper.abs());
                    let (a, b) = mine.range();
                    ok = ok.and(Check::of(a >= lo && b <= hi, b < lo || a > hi));
                    line += &format!(
                        " vs paper {} (ours/paper {:.2}, ±{:.0} % allowed)",
                        show_paper(paper, q),
                        mine.value / paper,
                        100.0 * share
                    );
                }
                // Without the paper's number only this test is skipped: the claim's other
                // tests still judge the point.
                None => {
                    let others = !claim.less_than.is_empty()
                        || !claim.greater_than.is_empty()
                        || claim.at_most.is_some()
                        || claim.at_least.is_some()
                        || versus(claim).is_some()
                        || claim.rate.is_some();
                    if !others {
                        evidence.push(format!("{line}: no paper value, not judged"));
                        continue;
                    }
                    line += " (no paper value: ± not judged)";
                }
            }
        }
        if claim.rate.is_some() {
            let (check, text) = rate(exp, claim, records, &p.label);
            ok = ok.and(check);
            line += &text;
        }
        line += ok.mark();
        holds &= ok == Check::Holds;
        judged += 1;
        evidence.push(line);
    }
    Verdict {
        holds: holds && judged > 0,
        judged,
        evidence,
    }
}

/// The other quantity of `above` / `below`, and whether the claim's value is above it.
fn versus(c: &ClaimSpec) -> Option<(&str, bool)> {
    match (&c.above, &c.below) {
        (Some(o), _) => Some((o, true)),
        (None, Some(o)) => Some((o, false)),
        (None, None) => None,
    }
}

/// `a` above `b` (a > b, ≥ with `or_equal`), or below it.
fn ordered(a: Range, b: Range, above: bool, or_equal: bool) -> Check {
    if above {
        less(b, a, or_equal)
    } else {
        less(a, b, or_equal)
    }
}

/// Whether `name` is a spectrum the family records (spectra.csv), not a metric.
fn is_spectrum(kind: crate::spec::Kind, name: &str) -> bool {
    crate::problem::family(kind).spectra().contains(&name)
}

/// `above` / `below` on a spectrum at `point`: the means over the method's runs of each entry of
/// the claim's spectrum against the same entry of the other, over the entries both record; the
/// check and its evidence (None without runs).
fn entries(
    exp: &Experiment,
    c: &ClaimSpec,
    records: &[RunRecord],
    point: &str,
) -> Option<(Check, String)> {
    let (other, above) = versus(c)?;
    let runs: Vec<&RunRecord> = runs_at(exp, records, point, &c.method).collect();
    let len = |r: &RunRecord, s: &str| r.spectra.get(s).map_or(0, Vec::len);
    let n = runs
        .iter()
        .map(|r| len(r, &c.quantity).min(len(r, other)))
        .min()?;
    if n == 0 {
        let text = format!("records no {} or {other}", c.quantity);
        return Some((Check::Fails, text));
    }
    let mut ok = Check::Holds;
    let mut pairs = Vec::new();
    for i in 0..n {
        let q = Quantity {
            entry: Some(i),
            ..Quantity::of(&c.quantity, None)
        };
        let o = Quantity { name: other, ..q };
        let (a, b) = (
            mean_of(runs.iter().copied(), q)?,
            mean_of(runs.iter().copied(), o)?,
        );
        let check = ordered(a.range(), b.range(), above, c.or_equal);
        ok = ok.and(check);
        let mark = if check == Check::Holds { "" } else { " ✘" };
        pairs.push(format!("{} vs {}{mark}", show(a, q), show(b, o)));
    }
    let text = format!(
        "{} vs {other}, entry by entry (i = 1…{n}): {}",
        c.quantity,
        pairs.join(", ")
    );
    Some((ok, text))
}

/// The points a claim is judged at: its `points`, or all, in sweep order.
fn chosen<'e>(exp: &'e Experiment, claim: &ClaimSpec) -> Vec<&'e Point> {
    exp.points
        .iter()
        .filter(|p| claim.points.is_empty() || claim.points.contains(&p.label))
        .collect()
}

/// The paper's value of the claim's quantity for its method at `point` (with `reach`: the
/// paper's rounds to the same level), found as the report's tables find it for the method's
/// runs.
fn paper_value(exp: &Experiment, c: &ClaimSpec, records: &[RunRecord], point: &str) -> Option<f64> {
    let run = records.iter().find(|r| {
        r.key.point == point && exp.names_run(&c.method, &r.key.method, &r.key.label, &r.key.params)
    })?;
    let p = paper_for(exp, &run.key)?;
    match (c.quantity.as_str(), c.reach) {
        // The paper's rounds count what the claim counts: the run's length, or the rounds to
        // the same level of the same metric.
        ("rounds", _) | (_, Some(_)) => {
            let same = match (&p.reach, c.reach) {
                (None, None) => true,
                (Some(t), Some(v)) => t.metric == c.quantity && t.value == v,
                _ => false,
            };
            p.rounds.filter(|_| same).map(|r| r as f64)
        }
        ("time_s", _) => p.time_s,
        (m, None) => p.metric(m),
    }
}

fn show_paper(v: f64, q: Quantity) -> String {
    show(
        Mean {
            value: v,
            bounds: 0,
            runs: 1,
            undetermined: false,
        },
        q,
    )
}

/// Least rows a rate is fitted on.
const MIN_RATE_ROWS: usize = 5;

/// Slope and R² of the least-squares line through `(x, y)`.
fn fit(xy: &[(f64, f64)]) -> (f64, f64) {
    let n = xy.len() as f64;
    let (mx, my) = (
        xy.iter().map(|p| p.0).sum::<f64>() / n,
        xy.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let sxx: f64 = xy.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = xy.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let syy: f64 = xy.iter().map(|p| (p.1 - my).powi(2)).sum();
    if sxx == 0.0 {
        return (0.0, 0.0);
    }
    let slope = sxy / sxx;
    let r2 = if syy == 0.0 {
        0.0
    } else {
        (sxy * sxy) / (sxx * syy)
    };
    (slope, r2)
}

/// `rate = "linear"` on every run of the claim's method at `point`: the check and its evidence
/// (mean factor per round, least R²).
fn rate(exp: &Experiment, c: &ClaimSpec, records: &[RunRecord], point: &str) -> (Check, String) {
    let min_r2 = c.min_r2.unwrap_or(0.9);
    let mut fits = Vec::new();
    for r in runs_at(exp, records, point, &c.method) {
        let scale = match c.relative_to {
            Some(_) => start(r, &c.quantity).unwrap_or(1.0),
            None => 1.0,
        };
        let mut xy = Vec::new();
        for t in &r.trace {
            let Some(v) = t.metric(&c.quantity).map(|v| v / scale) else {
                continue;
            };
            if v.is_finite() && v > 0.0 {
                xy.push((t.round as f64, v.log10()));
            }
            if c.reach.is_some_and(|reach| v <= reach) {
                break;
            }
        }
        if xy.len() < MIN_RATE_ROWS {
            return (
                Check::Fails,
                format!(
                    "; rate: {} usable rows, fewer than {MIN_RATE_ROWS} to fit",
                    xy.len()
                ),
            );
        }
        fits.push((fit(&xy), xy.len()));
    }
    if fits.is_empty() {
        return (Check::Fails, "; rate: no runs".into());
    }
    let ok = fits.iter().all(|((s, r2), _)| *s < 0.0 && *r2 >= min_r2);
    let per_round = fits.iter().map(|((s, _), _)| 10f64.powf(*s)).sum::<f64>() / fits.len() as f64;
    let r2 = fits
        .iter()
        .map(|((_, r2), _)| *r2)
        .fold(f64::INFINITY, f64::min);
    let rows = fits.iter().map(|(_, n)| *n).max().unwrap_or(0);
    (
        if ok { Check::Holds } else { Check::Fails },
        format!(
            "; rate ×{per_round:.4} per round, R² {r2:.3} over {rows} rows (R² ≥ {min_r2} asked)"
        ),
    )
}

/// `trend`: the values along the sweep key, per group of the other keys' values.
fn judge_trend(exp: &Experiment, c: &ClaimSpec, records: &[RunRecord], t: Trend) -> Verdict {
    let q = quantity(c);
    let keys: Vec<&str> = exp
        .points
        .first()
        .map(|p| p.coords.iter().map(|(k, _)| k.as_str()).collect())
        .unwrap_or_default();
    let names = label_names(&keys);
    let along = match &c.along {
        Some(a) => keys
            .iter()
            .position(|k| k == a || k.rsplit('.').next() == Some(a.as_str())),
        None if keys.len() == 1 => Some(0),
        None => None,
    };
    let Some(j) = along else {
        return Verdict {
            holds: false,
            judged: 0,
            evidence: vec!["no swept key to follow".into()],
        };
    };
    let coord = |p: &Point, k: usize| format!("{}={}", names[k], fmt_value(&p.coords[k].1));
    // Groups in order of first appearance, each its points in sweep order.
    let mut groups: Vec<(String, Vec<&Point>)> = Vec::new();
    for p in chosen(exp, c) {
        let g: Vec<String> = (0..keys.len())
            .filter(|&k| k != j)
            .map(|k| coord(p, k))
            .collect();
        let g = g.join(",");
        match groups.iter_mut().find(|(k, _)| *k == g) {
            Some((_, ps)) => ps.push(p),
            None => groups.push((g, vec![p])),
        }
    }
    let tol = c
        .tolerance
        .unwrap_or(if t == Trend::Flat { 0.2 } else { 0.0 });
    let (mut holds, mut judged, mut evidence) = (true, 0, Vec::new());
    for (g, ps) in groups {
        let mut seq: Vec<(String, Mean)> = Vec::new();
        for p in ps {
            match at_point(exp, c, records, &p.label, &c.method) {
                Some(m) => seq.push((coord(p, j), m)),
                None => evidence.push(format!("{}: no runs of {}", p.label, c.method)),
            }
        }
        let head = if g.is_empty() {
            format!("along {}", names[j])
        } else {
            format!("{g}, along {}", names[j])
        };
        if seq.len() < 2 {
            evidence.push(format!("{head}: fewer than 2 points with runs, not judged"));
            continue;
        }
        let ok = trend_check(
            &seq.iter().map(|(_, m)| m.range()).collect::<Vec<_>>(),
            t,
            tol,
        );
        let values: Vec<String> = seq
            .iter()
            .map(|(x, m)| format!("{} ({x})", show(*m, q)))
            .collect();
        evidence.push(format!(
            "{head}: {} {} — {t}{}",
            c.method,
            values.join(" → "),
            ok.mark()
        ));
        holds &= ok == Check::Holds;
        judged += seq.len();
    }
    Verdict {
        holds: holds && judged > 0,
        judged,
        evidence,
    }
}

/// Whether values (ranges, in order) follow `t` within relative tolerance `tol`.
fn trend_check(v: &[Range], t: Trend, tol: f64) -> Check {
    let slack = |x: f64| tol * x.abs();
    match t {
        Trend::Increasing => v.windows(2).fold(Check::Holds, |ok, w| {
            let (prev, next) = (w[0], w[1]);
            ok.and(Check::of(
                prev.1.is_finite() && next.0 >= prev.1 - slack(prev.1),
                next.1 < prev.0 - slack(prev.0),
            ))
        }),
        Trend::Decreasing => v.windows(2).fold(Check::Holds, |ok, w| {
            let (prev, next) = (w[0], w[1]);
            ok.and(Check::of(
                next.1 <= prev.0 + slack(prev.0),
                prev.1.is_finite() && next.0 > prev.1 + slack(prev.1),
            ))
        }),
        // max − min ≤ tol·min|v|: for positive values, max/min ≤ 1 + tol.
        Trend::Flat => {
            let max_hi = v.iter().map(|r| r.1).fold(f64::NEG_INFINITY, f64::max);
            let min_lo = v.iter().map(|r| r.0).fold(f64::INFINITY, f64::min);
            let max_lo = v.iter().map(|r| r.0).fold(f64::NEG_INFINITY, f64::max);
            let min_hi = v.iter().map(|r| r.1).fold(f64::INFINITY, f64::min);
            let least = v.iter().map(|r| r.0.abs()).fold(f64::INFINITY, f64::min);
            Check::of(
                max_hi - min_lo <= tol * least,
                min_hi.is_finite() && max_lo - min_hi > tol * min_hi.abs(),
            )
        }
    }
}

/// The test a claim states, in words.
fn test_text(kind: crate::spec::Kind, c: &ClaimSpec) -> String {
    let quantity = quantity(c);
    let q = quantity.text();
    let subject = match &c.divided_by {
        Some(d) => format!("{q} of {} / {q} of {d}", c.method),
        None => format!("{q} of {}", c.method),
    };
    let each = c
        .divided_by
        .as_ref()
        .map_or(String::new(), |d| format!(" (each over {d})"));
    let mut parts = Vec::new();
    let f = c.factor.map_or(String::new(), |f| format!("{f} × "));
    for (list, op) in [
        (&c.less_than, if c.or_equal { "≤" } else { "<" }),
        (&c.greater_than, if c.or_equal { "≥" } else { ">" }),
    ] {
        if !list.is_empty() {
            parts.push(format!(
                "{subject} {op} {f}that of {}{each}",
                list.join(", ")
            ));
        }
    }
    let num = |v: f64| {
        if quantity.counts_rounds() || quantity.ratio {
            format!("{v}")
        } else {
            format!("{v:e}")
        }
    };
    if let Some(v) = c.at_most {
        parts.push(format!("{subject} ≤ {}", num(v)));
    }
    if let Some(v) = c.at_least {
        parts.push(format!("{subject} ≥ {}", num(v)));
    }
    if let Some((other, above)) = versus(c) {
        let o = Quantity {
            name: other,
            ..quantity
        }
        .text();
        let op = match (above, c.or_equal) {
            (true, false) => ">",
            (true, true) => "≥",
            (false, false) => "<",
            (false, true) => "≤",
        };
        let each = if is_spectrum(kind, &c.quantity) {
            " at every entry"
        } else {
            ""
        };
        parts.push(format!("{q} of {} {op} its {o}{each}", c.method));
    }
    if let Some(share) = c.near_paper {
        parts.push(format!(
            "{subject} within ±{:.0} % of the paper's value",
            100.0 * share
        ));
    }
    if c.rate.is_some() {
        let upto = c
            .reach
            .map_or(String::new(), |v| format!(" until it is ≤ {v:e}"));
        let name = Quantity {
            reach: None,
            ..quantity
        }
        .text();
        parts.push(format!(
            "{name} of {} falls linearly in rounds on a log scale{upto} (least-squares fit of \
             log10: slope < 0, R² ≥ {})",
            c.method,
            c.min_r2.unwrap_or(0.9)
        ));
    }
    if let Some(t) = c.trend {
        let along = c.along.as_deref().unwrap_or("the sweep");
        let how = match (t, c.tolerance) {
            (Trend::Flat, tol) => format!(" (max/min ≤ {})", 1.0 + tol.unwrap_or(0.2)),
            (_, Some(tol)) if tol > 0.0 => {
                format!(
                    " (a step may go back by {:.0} % of the previous)",
                    100.0 * tol
                )
            }
            _ => String::new(),
        };
        parts.push(format!("{subject} {t} along {along}{how}"));
    }
    let at = if c.points.is_empty() {
        if c.trend.is_some() {
            "over every point".to_string()
        } else {
            "at every point".to_string()
        }
    } else {
        format!("at {}", c.points.join(", "))
    };
    format!("{}, {at}", parts.join(" and "))
}

/// The report's "Claims" section (empty without claims).
pub fn section(exp: &Experiment, records: &[RunRecord]) -> String {
    let mut s = String::new();
    if exp.claims.is_empty() {
        return s;
    }
    let _ = writeln!(s, "## Claims\n");
    let _ = writeln!(
        s,
        "Each claim of the paper, the test that stands for it here, and whether our runs of this \
         profile support it (✔) or not (✘), with the numbers behind the verdict.\n"
    );
    for c in &exp.claims {
        let v = judge(exp, c, records);
        let _ = writeln!(
            s,
            "- {} **{}** — test: {}.",
            if v.holds { "✔" } else { "✘" },
            placeholders::render(exp, records, &c.text),
            test_text(exp.kind, c)
        );
        for e in &v.evidence {
            let _ = writeln!(s, "  - {e}");
        }
    }
    let _ = writeln!(s);
    s
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::run::TraceRow;
    use std::collections::BTreeMap;

    pub(crate) fn record(
        point: &str,
        label: &str,
        rounds: u64,
        converged: bool,
        stat: f64,
    ) -> RunRecord {
        traced(point, label, converged, &[(rounds, stat, f64::NAN)])
    }

    /// A run whose trace rows are (round, stationarity, leak_err), with time_s = round / 10.
    pub(crate) fn traced(
        point: &str,
        label: &str,
        converged: bool,
        rows: &[(u64, f64, f64)],
    ) -> RunRecord {
        let trace = rows
            .iter()
            .map(|&(round, stat, leak)| TraceRow {
                round,
                inner_iters: 0.0,
                time_s: round as f64 / 10.0,
                bytes_up: 0,
                bytes_down: 0,
                vectors: 0.0,
                metrics: BTreeMap::from([("stationarity".to_string(), stat)]),
                leak_err: Some(leak),
            })
            .collect::<Vec<_>>();
        // The label is no label or name of the test manifest: the claims name it as a method.
        RunRecord::crafted(point, label, converged, "", trace)
    }

    fn claim(text: &str) -> ClaimSpec {
        toml::from_str(text).unwrap()
    }

    /// experiments/dssal1/leakage.toml (one point), its point copied under `points`' labels.
    pub(crate) fn experiment(points: &[&str]) -> Experiment {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("experiments/dssal1/leakage.toml");
        let mut exp = crate::plan::load(&path, "quick").unwrap();
        exp.points = points
            .iter()
            .map(|l| {
                let mut p = exp.points[0].clone();
                p.label = l.to_string();
                p
            })
            .collect();
        exp
    }

    #[test]
    fn less_than_must_hold_at_every_point_and_factor_scales_it() {
        let exp = experiment(&["n=1", "n=2"]);
        let runs = vec![
            record("n=1", "A", 10, true, 1e-9),
            record("n=1", "B", 30, true, 1e-9),
            record("n=2", "A", 20, true, 1e-9),
            record("n=2", "B", 30, false, 1e-3),
        ];
        let c = claim("text = 't'\nquantity = 'rounds'\nmethod = 'A'\nless_than = ['B']");
        let v = judge(&exp, &c, &runs);
        assert!(v.holds, "{:?}", v.evidence);
        assert!(
            v.evidence[1].contains("≥ 30"),
            "a capped run is a lower bound"
        );
        let half =
            claim("text = 't'\nquantity = 'rounds'\nmethod = 'A'\nless_than = ['B']\nfactor = 0.5");
        let v = judge(&exp, &half, &runs);
        assert!(!v.holds, "20 < 15 fails at n=2: {:?}", v.evidence);
    }

    #[test]
    fn thresholds_read_the_last_finite_value_and_missing_runs_fail() {
        let exp = experiment(&["x"]);
        let runs = vec![record("x", "A", 5, true, 2e-6)];
        let ok = claim("text = 't'\nquantity = 'stationarity'\nmethod = 'A'\nat_most = 1e-5");
        assert!(judge(&exp, &ok, &runs).holds);
        let bad = claim("text = 't'\nquantity = 'stationarity'\nmethod = 'A'\nat_least = 1e-5");
        assert!(!judge(&exp, &bad, &runs).holds);
        let none = claim("text = 't'\nquantity = 'stationarity'\nmethod = 'C'\nat_most = 1.0");
        assert!(
            !judge(&exp, &none, &runs).holds,
            "no judged point: not supported"
        );
    }

    #[test]
    fn a_metric_read_in_the_first_rounds_only_bounds_from_its_last_reading() {
        // The attack reads rounds 1-2 (NaN after), never reaching 1e-5; the run goes on to 155,
        // where stationarity reaches it. "≥ 155" would claim more than the attack saw: ≥ 2 is
        // what is known, so "below" is undetermined, neither shown nor refuted.
        let exp = experiment(&["x"]);
        let runs = vec![traced(
            "x",
            "A",
            true,
            &[(1, 1e-2, 1e-3), (2, 1e-3, 1e-4), (155, 1e-6, f64::NAN)],
        )];
        let before = claim(
            "text = 't'\nquantity = 'leak_err'\nreach = 1e-5\nmethod = 'A'\nbelow = 'stationarity'",
        );
        let v = judge(&exp, &before, &runs);
        assert!(!v.holds);
        assert!(
            v.evidence[0].contains("A ≥ 2 vs") && v.evidence[0].contains("undetermined"),
            "{:?}",
            v.evidence
        );
    }

    #[test]
    fn reach_counts_rounds_to_a_value_and_below_compares_two_metrics() {
        let exp = experiment(&["x", "y"]);
        let runs = vec![
            // At x the attack (leak_err) is exact at round 2, stationarity gets there at 3.
            traced(
                "x",
                "A",
                true,
                &[(1, 1e-2, 1e-3), (2, 1e-4, 1e-7), (3, 1e-7, 1e-8)],
            ),
            traced(
                "x",
                "B",
                true,
                &[(1, 1e-2, 1e-3), (2, 1e-3, 1e-3), (4, 1e-4, 1e-3)],
            ),
            // At y it never gets there: a lower bound.
            traced("y", "A", false, &[(1, 1e-2, 1e-3), (2, 1e-3, 1e-3)]),
        ];
        let to = claim(
            "text = 't'\nquantity = 'stationarity'\nreach = 1e-5\nmethod = 'A'\nless_than = ['B']\npoints = ['x']",
        );
        let v = judge(&exp, &to, &runs);
        assert!(v.holds, "3 < ≥ 4 at x only: {:?}", v.evidence);
        assert_eq!(v.evidence.len(), 1, "judged at x only");
        assert!(v.evidence[0].contains("A 3 vs B ≥ 4"), "{:?}", v.evidence);
        // Never reached by round 2: "≤ 5 rounds" may or may not hold.
        let cap =
            claim("text = 't'\nquantity = 'stationarity'\nreach = 1e-5\nmethod = 'A'\nat_most = 5");
        let v = judge(&exp, &cap, &runs);
        assert!(!v.holds, "{:?}", v.evidence);
        assert!(
            v.evidence[1].contains("≥ 2") && v.evidence[1].contains("undetermined"),
            "{:?}",
            v.evidence
        );
        let refuted =
            claim("text = 't'\nquantity = 'stationarity'\nreach = 1e-5\nmethod = 'A'\nat_most = 1\npoints = ['y']");
        let v = judge(&exp, &refuted, &runs);
        assert!(v.evidence[0].ends_with("✘"), "≥ 2 > 1: {:?}", v.evidence);
        let before = claim(
            "text = 't'\nquantity = 'leak_err'\nreach = 1e-5\nmethod = 'A'\nbelow = 'stationarity'",
        );
        let v = judge(&exp, &before, &runs);
        assert!(
            v.evidence[0].ends_with("✔"),
            "2 before 3 at x: {:?}",
            v.evidence
        );
        assert!(
            v.evidence[1].contains("✘ (undetermined"),
            "neither reached at y: {:?}",
            v.evidence
        );
        assert!(!v.holds);
        let time =
            claim("text = 't'\nquantity = 'time_s'\nmethod = 'A'\nat_most = 0.3\npoints = ['x']");
        let v = judge(&exp, &time, &runs);
        assert!(
            v.holds && v.evidence[0].contains("0.30 s"),
            "{:?}",
            v.evidence
        );
    }

    /// A sweep over two keys, n (along) and clients, each point labelled as the sweep does.
    fn two_keys(ns: &[i64], clients: &[i64]) -> Experiment {
        let mut exp = experiment(&["x"]);
        let p0 = exp.points[0].clone();
        exp.points = clients
            .iter()
            .flat_map(|&c| ns.iter().map(move |&n| (n, c)))
            .map(|(n, c)| {
                let mut p = p0.clone();
                p.label = format!("n={n},clients={c}");
                p.coords = vec![
                    ("data.n".into(), toml::Value::Integer(n)),
                    ("partition.clients".into(), toml::Value::Integer(c)),
                ];
                p
            })
            .collect();
        exp
    }

    /// A run of `clients` machines that sent `up` n-vectors in all (every machine's upload
    /// counted) and `down` broadcast ones, converged or not.
    fn sent(label: &str, converged: bool, up: f64, down: f64, clients: usize) -> RunRecord {
        let mut r = record("x", label, 10, converged, 1e-9);
        // 8 bytes a coordinate of an n = 10 vector: bytes in the ratio of the vectors.
        let last = r.trace.last_mut().unwrap();
        (last.vectors, last.bytes_up, last.bytes_down) =
            (up + down, (80.0 * up) as u64, (80.0 * down) as u64);
        r.bytes_up_per_client = vec![0; clients];
        r
    }

    #[test]
    fn vectors_count_the_runs_communication_and_comm_vectors_the_papers() {
        let exp = experiment(&["x"]);
        // A sends 2 uploads from each of 10 machines and 2 broadcasts (22 n-vectors, 4 in the
        // CEDRE paper's count); B one upload from one machine and 8 broadcasts (9, 8.1).
        let runs = vec![
            sent("A", true, 20.0, 2.0, 10),
            sent("B", true, 1.0, 8.0, 10),
        ];
        let c = |q: &str, test: &str| {
            judge(
                &exp,
                &claim(&format!(
                    "text = 't'\nquantity = '{q}'\nmethod = 'A'\n{test}"
                )),
                &runs,
            )
        };
        let v = c("vectors", "less_than = ['B']");
        assert!(
            !v.holds && v.evidence[0].contains("A 22.0 vs B 9.0"),
            "{:?}",
            v.evidence
        );
        let v = c("comm_vectors", "less_than = ['B']");
        assert!(
            v.holds && v.evidence[0].contains("A 4.0 vs B 8.1"),
            "{:?}",
            v.evidence
        );
        // A run that did not converge spent at least this much: a lower bound.
        let capped = vec![
            sent("A", false, 20.0, 2.0, 10),
            sent("B", true, 100.0, 8.0, 10),
        ];
        let v = judge(
            &exp,
            &claim("text = 't'\nquantity = 'vectors'\nmethod = 'A'\nless_than = ['B']"),
            &capped,
        );
        assert!(
            !v.holds && v.evidence[0].contains("≥ 22.0") && v.evidence[0].contains("undetermined"),
            "{:?}",
            v.evidence
        );
    }

    #[test]
    fn above_compares_two_spectra_of_the_same_runs_entry_by_entry() {
        let mut exp = experiment(&["x"]);
        exp.kind = crate::spec::Kind::Sparse;
        let shares = |label: &str, rand: &[f64], orig: &[f64]| {
            let mut r = record("x", label, 10, true, 1e-9);
            r.spectra.insert("share_rand".into(), rand.to_vec());
            r.spectra.insert("share_orig".into(), orig.to_vec());
            r
        };
        let c = claim("text = 't'\nquantity = 'share_rand'\nmethod = 'A'\nabove = 'share_orig'");
        let v = judge(&exp, &c, &[shares("A", &[1.0, 0.5, 0.3], &[0.6, 0.2, 0.0])]);
        assert!(v.holds && v.judged == 1, "{:?}", v.evidence);
        assert!(
            v.evidence[0].contains("share_rand vs share_orig, entry by entry (i = 1…3): 1.000 vs 0.600, 0.500 vs 0.200, 0.300 vs 0.000 ✔"),
            "{:?}",
            v.evidence
        );
        // One entry equal: not above there (unless or_equal); the entry is marked.
        let tie = [shares("A", &[1.0, 0.5, 0.3], &[0.6, 0.5, 0.0])];
        let v = judge(&exp, &c, &tie);
        assert!(
            !v.holds && v.evidence[0].contains("0.500 vs 0.500 ✘"),
            "{:?}",
            v.evidence
        );
        let or_equal = claim("text = 't'\nquantity = 'share_rand'\nmethod = 'A'\nabove = 'share_orig'\nor_equal = true");
        assert!(judge(&exp, &or_equal, &tie).holds);
        // Means over repeats, entry by entry.
        let two = [
            shares("A", &[1.0, 0.1], &[0.6, 0.2]),
            shares("A", &[1.0, 0.5], &[0.6, 0.2]),
        ];
        assert!(judge(&exp, &c, &two).holds, "mean 0.3 > 0.2");
        assert_eq!(
            test_text(crate::spec::Kind::Sparse, &c),
            "share_rand of A > its share_orig at every entry, at every point"
        );
    }

    #[test]
    fn below_compares_two_metrics_of_the_same_runs() {
        let exp = experiment(&["x"]);
        let runs = vec![traced("x", "A", true, &[(1, 1e-3, 1e-3), (2, 1e-4, 1e-4)])];
        let c = |extra: &str| {
            judge(
                &exp,
                &claim(&format!(
                    "text = 't'\nquantity = 'leak_err'\nmethod = 'A'\n{extra}"
                )),
                &runs,
            )
        };
        // Final values: 1e-4 is not below 1e-4, but at most it.
        assert!(!c("below = 'stationarity'").holds);
        assert!(c("below = 'stationarity'\nor_equal = true").holds);
        assert!(!c("above = 'stationarity'").holds);
        // A metric the runs lack: not judged as holding.
        let v = c("below = 'kkt'");
        assert!(
            !v.holds && v.evidence[0].contains("kkt: no value"),
            "{:?}",
            v.evidence
        );
    }

    #[test]
    fn greater_than_scales_by_factor_and_or_equal_allows_ties() {
        let exp = experiment(&["x"]);
        let runs = vec![
            record("x", "A", 30, true, 1e-9),
            record("x", "B", 20, true, 1e-9),
            record("x", "C", 30, true, 1e-9),
        ];
        let gt = |extra: &str| {
            judge(
                &exp,
                &claim(&format!(
                    "text = 't'\nquantity = 'rounds'\nmethod = 'A'\n{extra}"
                )),
                &runs,
            )
        };
        let v = gt("greater_than = ['B']");
        assert!(
            v.holds && v.evidence[0].contains("A 30 vs B 20"),
            "{:?}",
            v.evidence
        );
        assert!(
            !gt("greater_than = ['B']\nfactor = 2").holds,
            "30 > 40 fails"
        );
        assert!(!gt("greater_than = ['C']").holds, "30 > 30 fails");
        assert!(gt("greater_than = ['C']\nor_equal = true").holds, "30 ≥ 30");
        assert!(gt("less_than = ['C']\nor_equal = true").holds, "30 ≤ 30");
        assert!(
            !gt("less_than = ['B']\nor_equal = true").holds,
            "30 ≤ 20 fails"
        );
    }

    #[test]
    fn divided_by_is_a_ratio_and_a_capped_numerator_a_lower_bound() {
        let exp = experiment(&["x", "y"]);
        let runs = vec![
            // x: A capped at 40 rounds, B exact 20: A / B ≥ 2.
            record("x", "A", 40, false, 1e-3),
            record("x", "B", 20, true, 1e-9),
            // y: A exact 20, B capped at 40: A / B is ≤ 0.5, which the ratio does not claim.
            record("y", "A", 20, true, 1e-9),
            record("y", "B", 40, false, 1e-3),
        ];
        let at = |test: &str, point: &str| {
            judge(
                &exp,
                &claim(&format!(
                    "text = 't'\nquantity = 'rounds'\nmethod = 'A'\ndivided_by = 'B'\n{test}\npoints = ['{point}']"
                )),
                &runs,
            )
        };
        let v = at("at_least = 1.5", "x");
        assert!(v.holds, "≥ 2 ≥ 1.5: {:?}", v.evidence);
        assert!(v.evidence[0].contains("A / B ≥ 2.00"), "{:?}", v.evidence);
        let v = at("at_most = 1.5", "x");
        assert!(
            !v.holds && !v.evidence[0].contains("undetermined"),
            "≥ 2 > 1.5: {:?}",
            v.evidence
        );
        let v = at("at_most = 3", "x");
        assert!(
            !v.holds && v.evidence[0].contains("undetermined"),
            "{:?}",
            v.evidence
        );
        let v = at("at_most = 1", "y");
        assert!(!v.holds, "{:?}", v.evidence);
        assert!(v.evidence[0].contains("undetermined"), "{:?}", v.evidence);
        // Exact over exact: a plain ratio, and each other method divided too.
        let exact = vec![
            record("x", "A", 10, true, 1e-9),
            record("x", "B", 20, true, 1e-9),
            record("x", "C", 40, true, 1e-9),
        ];
        let c = claim("text = 't'\nquantity = 'rounds'\nmethod = 'A'\ndivided_by = 'B'\nless_than = ['C']\npoints = ['x']");
        let v = judge(&exp, &c, &exact);
        assert!(v.holds, "0.5 < 2: {:?}", v.evidence);
        assert!(
            v.evidence[0].contains("A / B 0.50 vs C 2.00"),
            "{:?}",
            v.evidence
        );
    }

    #[test]
    fn trend_follows_along_within_each_group_of_the_other_key() {
        let exp = two_keys(&[1, 2, 3], &[4, 8]);
        let runs = |eight: [u64; 3]| -> Vec<RunRecord> {
            let mut r = Vec::new();
            for (n, (four, eight)) in [10u64, 20, 30].iter().zip(eight).enumerate() {
                r.push(record(
                    &format!("n={},clients=4", n + 1),
                    "A",
                    *four,
                    true,
                    1e-9,
                ));
                r.push(record(
                    &format!("n={},clients=8", n + 1),
                    "A",
                    eight,
                    true,
                    1e-9,
                ));
            }
            r
        };
        let rising = runs([12, 22, 32]);
        let t = |extra: &str| {
            claim(&format!(
                "text = 't'\nquantity = 'rounds'\nmethod = 'A'\nalong = 'n'\n{extra}"
            ))
        };
        let v = judge(&exp, &t("trend = 'increasing'"), &rising);
        assert!(v.holds && v.judged == 6, "{:?}", v.evidence);
        assert_eq!(v.evidence.len(), 2, "one line per group: {:?}", v.evidence);
        assert!(
            v.evidence[0].starts_with("clients=4, along n: A 10 (n=1) → 20 (n=2) → 30 (n=3)"),
            "{:?}",
            v.evidence
        );
        assert!(!judge(&exp, &t("trend = 'decreasing'"), &rising).holds);
        // One group goes back from 12 to 6: not increasing, unless half a step back is allowed.
        let dip = runs([12, 6, 32]);
        let v = judge(&exp, &t("trend = 'increasing'"), &dip);
        assert!(!v.holds, "{:?}", v.evidence);
        assert!(v.evidence[0].ends_with("✔") && v.evidence[1].ends_with("✘"));
        assert!(judge(&exp, &t("trend = 'increasing'\ntolerance = 0.5"), &dip).holds);
        // Flat: max/min ≤ 1.2 by default.
        let flat = runs([10, 11, 12]);
        let f = claim("text = 't'\nquantity = 'rounds'\nmethod = 'A'\nalong = 'data.n'\ntrend = 'flat'\npoints = ['n=1,clients=8', 'n=2,clients=8', 'n=3,clients=8']");
        assert!(judge(&exp, &f, &flat).holds);
        assert!(!judge(&exp, &f, &rising).holds, "12 → 32 is not flat");
        // A capped count that keeps rising proves nothing about "decreasing" beyond its bound.
        let capped = vec![
            record("n=1,clients=4", "A", 10, true, 1e-9),
            record("n=2,clients=4", "A", 5, false, 1e-3),
        ];
        let v = judge(&exp, &t("trend = 'decreasing'"), &capped);
        assert!(!v.holds, "{:?}", v.evidence);
        assert!(
            v.evidence
                .iter()
                .any(|e| e.contains("A 10 (n=1) → ≥ 5 (n=2)") && e.contains("undetermined")),
            "{:?}",
            v.evidence
        );
        // One point with runs per group: nothing judged.
        let lone = vec![record("n=1,clients=4", "A", 10, true, 1e-9)];
        let v = judge(&exp, &t("trend = 'increasing'"), &lone);
        assert!(!v.holds && v.judged == 0, "{:?}", v.evidence);
    }

    #[test]
    fn a_point_without_a_paper_value_is_still_judged_by_the_other_tests() {
        let mut exp = experiment(&["x", "y"]);
        exp.paper_results =
            vec![toml::from_str("method = 'A'\npoint = 'x'\nrounds = 100").unwrap()];
        let c =
            claim("text = 't'\nquantity = 'rounds'\nmethod = 'A'\nnear_paper = 0.2\nat_most = 50");
        // At y, A's 60 rounds break at_most although the paper gives no number there.
        let v = judge(
            &exp,
            &c,
            &[
                record("x", "A", 45, true, 1e-9),
                record("y", "A", 60, true, 1e-9),
            ],
        );
        assert!(!v.holds && v.judged == 2, "{:?}", v.evidence);
        assert!(
            v.evidence[1].contains("no paper value") && v.evidence[1].ends_with("✘"),
            "{:?}",
            v.evidence
        );
    }

    #[test]
    fn near_paper_allows_the_share_and_reads_bounds() {
        let mut exp = experiment(&["x", "y"]);
        exp.paper_results =
            vec![toml::from_str("method = 'A'\npoint = 'x'\nrounds = 100").unwrap()];
        let c = claim("text = 't'\nquantity = 'rounds'\nmethod = 'A'\nnear_paper = 0.2");
        let with = |rounds: u64, converged: bool| {
            judge(
                &exp,
                &c,
                &[
                    record("x", "A", rounds, converged, 1e-9),
                    record("y", "A", 5, true, 1e-9),
                ],
            )
        };
        let v = with(110, true);
        assert!(
            v.holds && v.judged == 1,
            "y has no paper value: {:?}",
            v.evidence
        );
        assert!(
            v.evidence[0].contains("vs paper 100 (ours/paper 1.10"),
            "{:?}",
            v.evidence
        );
        assert!(
            v.evidence[1].contains("no paper value, not judged"),
            "{:?}",
            v.evidence
        );
        assert!(!with(130, true).holds, "30 % off");
        let v = with(130, false);
        assert!(
            !v.holds && !v.evidence[0].contains("undetermined"),
            "≥ 130 is off: {:?}",
            v.evidence
        );
        let v = with(50, false);
        assert!(
            !v.holds && v.evidence[0].contains("undetermined"),
            "≥ 50: {:?}",
            v.evidence
        );
    }

    #[test]
    fn rate_fits_a_geometric_trace_and_refuses_a_plateau() {
        let exp = experiment(&["x"]);
        let rows = |f: &dyn Fn(u64) -> f64| -> Vec<(u64, f64, f64)> {
            (0..20).map(|k| (k, f(k), f64::NAN)).collect()
        };
        let geometric = traced("x", "A", true, &rows(&|k| 1e-2 * 0.5f64.powi(k as i32)));
        let plateau = traced(
            "x",
            "A",
            true,
            &rows(&|k| 1e-2 * 0.5f64.powi(k.min(3) as i32)),
        );
        let c = claim("text = 't'\nquantity = 'stationarity'\nmethod = 'A'\nrate = 'linear'");
        let v = judge(&exp, &c, &[geometric]);
        assert!(v.holds, "{:?}", v.evidence);
        assert!(
            v.evidence[0].contains("rate ×0.5000 per round, R² 1.000"),
            "{:?}",
            v.evidence
        );
        let v = judge(&exp, &c, std::slice::from_ref(&plateau));
        assert!(!v.holds, "{:?}", v.evidence);
        // Up to `reach` only: the fall before the plateau is linear.
        let to = claim(
            "text = 't'\nquantity = 'stationarity'\nmethod = 'A'\nrate = 'linear'\nreach = 1.25e-3",
        );
        let v = judge(&exp, &to, std::slice::from_ref(&plateau));
        assert!(
            !v.holds && v.evidence[0].contains("fewer than 5"),
            "4 rows: {:?}",
            v.evidence
        );
        let longer = traced(
            "x",
            "A",
            true,
            &rows(&|k| 1e-2 * 0.5f64.powi(k.min(8) as i32)),
        );
        let to = claim(
            "text = 't'\nquantity = 'stationarity'\nmethod = 'A'\nrate = 'linear'\nreach = 1e-4",
        );
        assert!(judge(&exp, &to, &[longer]).holds);
    }

    #[test]
    fn relative_to_start_divides_by_the_first_value() {
        let exp = experiment(&["x"]);
        let runs = vec![traced(
            "x",
            "A",
            true,
            &[
                (0, 100.0, f64::NAN),
                (1, 1.0, f64::NAN),
                (2, 1e-4, f64::NAN),
            ],
        )];
        let c = |extra: &str| {
            claim(&format!(
                "text = 't'\nquantity = 'stationarity'\nmethod = 'A'\n{extra}"
            ))
        };
        assert!(
            !judge(&exp, &c("at_most = 1e-5"), &runs).holds,
            "1e-4 absolute"
        );
        let v = judge(&exp, &c("at_most = 1e-5\nrelative_to = 'start'"), &runs);
        assert!(
            v.holds && v.evidence[0].contains("1.000e-6"),
            "{:?}",
            v.evidence
        );
        // Rounds until 1 % of the start: round 1.
        let v = judge(
            &exp,
            &c("relative_to = 'start'\nreach = 1e-2\nat_most = 1"),
            &runs,
        );
        assert!(v.holds && v.evidence[0].contains("A 1"), "{:?}", v.evidence);
    }

    #[test]
    fn every_test_is_said_in_words() {
        let c = claim("text = 't'\nquantity = 'rounds'\nmethod = 'A'\ndivided_by = 'B'\ngreater_than = ['C']\nor_equal = true\nat_most = 2");
        assert_eq!(
            test_text(crate::spec::Kind::Sparse, &c),
            "rounds of A / rounds of B ≥ that of C (each over B) and rounds of A / rounds of B ≤ 2, at every point"
        );
        let c = claim("text = 't'\nquantity = 'kkt'\nmethod = 'A'\nrate = 'linear'\nrelative_to = 'start'\nreach = 1e-5");
        assert!(test_text(crate::spec::Kind::Sparse, &c).contains(
            "kkt / its start of A falls linearly in rounds on a log scale until it is ≤ 1e-5"
        ));
        let c =
            claim("text = 't'\nquantity = 'rounds'\nmethod = 'A'\ntrend = 'flat'\nalong = 'kappa'");
        assert_eq!(
            test_text(crate::spec::Kind::Sparse, &c),
            "rounds of A flat along kappa (max/min ≤ 1.2), over every point"
        );
        let c = claim("text = 't'\nquantity = 'rounds'\nmethod = 'A'\nnear_paper = 0.2");
        assert!(
            test_text(crate::spec::Kind::Sparse, &c).contains("within ±20 % of the paper's value")
        );
    }

    #[test]
    fn a_claim_names_the_entry_and_never_its_variants() {
        // inner_study: four entries of method faps; a paper number names one of them.
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("experiments/faps/inner_study.toml");
        let exp = crate::plan::load(&path, "paper").unwrap();
        assert!(exp.names_run("FAPS rule (26)", "faps", "FAPS rule (26)", ""));
        assert!(!exp.names_run("FAPS rule (26)", "faps", "FAPS fixed", "inner_steps=5"));
        assert!(exp.names_run(
            "FAPS fixed (inner_steps=5)",
            "faps",
            "FAPS fixed",
            "inner_steps=5"
        ));
        assert!(!exp.names_run(
            "FAPS fixed (inner_steps=5)",
            "faps",
            "FAPS fixed",
            "inner_steps=3"
        ));
        assert!(exp.names_run("FAPS fixed", "faps", "FAPS fixed", "inner_steps=3"));
        assert!(exp.names_run("ssi", "ssi", "SSI", ""));
    }
}
