//! report.md: the paper's numbers beside ours, with ratios, settings and figures.

use super::cells::{
    at_least, beside, by_method, md_text, mean, mean_metric, ratio, repeat_groups, sci,
};
use super::provenance::{computed_with, run_json};
use super::tables::{paper_average, paper_for, reported_metrics};
use crate::methods::registry;
use crate::plot::ticks::trim_zeros;
use crate::problem::MetricDef;
use crate::run::{describe, Outcome, RunRecord, Status, StopReason, MIN_GAIN};
use crate::spec::{Experiment, Gen, PaperResult, Point};
use std::fmt::Write;
use std::path::PathBuf;

fn setting(p: &Point) -> String {
    let d = &p.data;
    let steps = |steps: &[crate::spec::Preprocess]| format!("{steps:?}").to_lowercase();
    let source = match &d.gen {
        // The manifest's own file, as the manifest names it (relative to its folder).
        Gen::File(f) => own_file(f),
        Gen::Dataset(ds) => {
            format!(
                "dataset {} ({} split, first m samples), preprocessing: {}",
                ds.dataset,
                ds.split
                    .map_or("train".into(), |s| format!("{s:?}").to_lowercase()),
                if ds.preprocess.is_empty() {
                    "none".into()
                } else {
                    steps(&ds.preprocess)
                }
            ) + &ds.noise_features.map_or(String::new(), |k| {
                format!(
                    ", then {k} {} noise features, then {}",
                    ds.noise.map_or("uniform", |x| x.as_str()),
                    if ds.after_noise.is_empty() {
                        "no preprocessing".into()
                    } else {
                        steps(&ds.after_noise)
                    }
                )
            })
        }
        Gen::Spiked(s) => format!(
            "x ~ N(0, VDVᵀ) with planted sparse loadings, spikes {:?}, support {}{}",
            s.spikes,
            s.support,
            if s.heterogeneous {
                ", each client its own trailing eigenvectors (non-IID)"
            } else {
                ""
            }
        ),
        Gen::Svd(s) => {
            let sp = s.spectrum;
            match (s.xi, s.kappa) {
                (Some(xi), _) => format!("A = UΣVᵀ, {sp} spectrum ξ = {xi}"),
                (_, Some(k)) => format!("A = UΣVᵀ, {sp} spectrum κ = {k}"),
                _ => format!("A = UΣVᵀ, {sp} spectrum"),
            }
        }
        Gen::Gaussian(_) | Gen::Robust(_) | Gen::Eigengap(_) => d.generator().to_string(),
    };
    format!(
        "{source}; n = {}, m = {}; {} clients ({}); {} problem, p = {}",
        d.n, d.m, p.partition.clients, p.partition.scheme, p.problem.kind, p.problem.p
    )
}

/// "file data/x.csv (csv, samples as rows, sha256 0123456789ab), labels …, preprocessing: …".
fn own_file(f: &crate::spec::File) -> String {
    let short = |h: &Option<String>| {
        h.as_deref()
            .map_or("?", |h| &h[..12.min(h.len())])
            .to_string()
    };
    let mut s = format!(
        "file `{}` ({}, samples as {}, sha256 {})",
        f.source,
        f.format.map_or("?", |f| f.as_str()),
        f.orientation.unwrap_or_default(),
        short(&f.sha256)
    );
    if let Some(l) = &f.labels {
        s += &format!(", labels `{l}` (sha256 {})", short(&f.labels_sha256));
    } else if let Some(c) = f.label_column {
        s += &format!(", labels in column {c}");
    }
    s += &format!(
        ", preprocessing: {}",
        if f.preprocess.is_empty() {
            "none".into()
        } else {
            format!("{:?}", f.preprocess).to_lowercase()
        }
    );
    s
}

/// The paper as the registry names it, "*Title*, Authors, Venue, Year (paper key `faps`, text
/// 000_….txt)", escaped; without a record, its file and key as the manifest gives them.
fn paper_by_name(exp: &Experiment) -> String {
    let Some(r) = &exp.paper_record else {
        return format!(
            "{} (paper key {})",
            md_text(&exp.paper_file),
            md_text(&exp.paper)
        );
    };
    let byline = r.byline();
    let file = if exp.paper_file.is_empty() {
        String::new()
    } else {
        format!(", text {}", md_text(&exp.paper_file))
    };
    format!(
        "*{}*{}{} (paper key {}{file})",
        md_text(&r.title),
        if byline.is_empty() { "" } else { ", " },
        md_text(&byline),
        md_text(&r.key),
    )
}

/// The whole report as Markdown.
pub fn report(exp: &Experiment, out: &Outcome, figures: &[PathBuf]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# {}\n", exp.title);
    let plain = !exp.has_paper();
    if plain {
        let _ = writeln!(
            s,
            "Profile **{}**. Manifest `{}` (sha256 `{}`).\n",
            exp.profile,
            exp.path.display(),
            &exp.hash[..12.min(exp.hash.len())]
        );
    } else {
        let _ = writeln!(
            s,
            "Reproduces **{}** of {}, profile **{}**. Manifest `{}` (sha256 `{}`).\n",
            exp.reproduces,
            paper_by_name(exp),
            exp.profile,
            exp.path.display(),
            &exp.hash[..12.min(exp.hash.len())]
        );
    }
    if !exp.sets.is_empty() {
        let sets: Vec<String> = exp.sets.iter().map(|t| format!("`--set {t}`")).collect();
        let _ = writeln!(
            s,
            "A variant: manifest + {} (results folder `{}`).\n",
            sets.join(" "),
            exp.folder
        );
    }
    if !plain && exp.profile != "paper" {
        let _ = writeln!(
            s,
            "> This is a scaled-down profile: the paper's numbers are shown for orientation; only the \
             `paper` profile runs at the paper's sizes.\n"
        );
    }
    if let Some(desc) = &exp.description {
        let desc = super::placeholders::render(exp, &out.records, desc);
        let _ = writeln!(s, "{}\n", desc.trim());
    }
    let _ = writeln!(s, "## Setting\n");
    for p in &exp.points {
        let label = if p.label.is_empty() {
            String::new()
        } else {
            format!("**{}**: ", p.label)
        };
        let _ = writeln!(s, "- {label}{}", setting(p));
    }
    let _ = writeln!(
        s,
        "- stop: {}{}\n",
        if exp.stop_default {
            format!(
                "family default ({}, the manifest has no [stop]): ",
                exp.kind.as_str()
            )
        } else {
            String::new()
        },
        exp.stop.describe()
    );

    s += &super::claims::section(exp, &out.records);
    if plain {
        results_table(&mut s, exp, out);
    } else {
        paper_table(&mut s, exp, out);
    }
    status_legend(&mut s, exp);
    stalled(&mut s, exp, out);
    centralised_note(&mut s, exp);
    failures(&mut s, out);
    chosen(&mut s, out);
    if exp.points.len() > 1 {
        averages(&mut s, exp, out, plain);
    }
    s += &super::stop_study::section(exp, out);
    communication(&mut s, exp, out);
    if !figures.is_empty() {
        let _ = writeln!(s, "\n## Figures\n");
        let mut panels = false;
        for f in figures {
            let name = f
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            // A sweep point's panel (`<plot>__<point>`, see figures::line::small_multiples): small
            // images one after the other, each linking to its SVG.
            if name.contains("__") {
                if !panels {
                    let _ = writeln!(s, "Per sweep point:\n");
                    panels = true;
                }
                let _ = writeln!(s, "[![{name}]({name}.png)]({name}.svg)");
                continue;
            }
            if panels {
                let _ = writeln!(s);
                panels = false;
            }
            let _ = writeln!(s, "![{name}]({name}.png)\n\n[SVG]({name}.svg)\n");
        }
        if panels {
            let _ = writeln!(s);
        }
    }
    let _ = writeln!(s, "## Provenance\n");
    let _ = writeln!(
        s,
        "BLAS: {}; threads: {}; peak memory of the processes that computed these runs: {}. The \
         BLAS kernels and the product kernel decide the last bits, and round counts of runs that \
         stall or hover at their stop rule can move with them (docs/reproducibility.md). Git revision, library versions, \
         seeds and timings are in `run.json`; every number above is a row of `summary.csv`, whose \
         per-round history is in `trace.csv`.",
        computed_with(&run_json(exp, out)),
        out.threads,
        out.peak_rss_mib
            .map_or("not recorded".into(), |m| format!("{m:.0} MiB"))
    );
    s
}

/// The paper's numbers beside ours, one row per run (planned methods keep their row).
fn paper_table(s: &mut String, exp: &Experiment, out: &Outcome) {
    let _ = writeln!(s, "## Paper beside ours\n");
    let _ = writeln!(
        s,
        "Ratios are ours / paper. Rounds = communication rounds (= the paper's iterations). Our \
         time is the method alone on this machine (metrics excluded); the paper's comes from its \
         authors' machine, so compare times only between methods of the same run.\n"
    );
    if exp.paper_results.iter().any(|p| p.reach.is_some()) {
        let _ = writeln!(
            s,
            "Where the paper counts the rounds to a level of a metric (its criterion, not our stop \
             rule), ours beside its count are the rounds to the same level: \"to <metric> ≤ \
             <value>\", a lower bound (≥) where a run never got there.\n"
        );
    }
    if exp.points.len() > 1 && exp.paper_results.iter().any(|p| p.point.is_none()) {
        let _ = writeln!(
            s,
            "The paper reports this sweep's numbers as averages over its points: they stand beside \
             our averages in the next section, not beside any single point.\n"
        );
    }
    let metrics = reported_metrics(exp);
    let mut header = "| point | method | rounds (paper) | rounds (ours) | ratio |".to_string();
    for m in &metrics {
        header += &format!(" {} (paper) | (ours) | ratio |", m.short);
    }
    header += " time s (paper) | (ours) | stop |";
    let _ = writeln!(s, "{header}");
    let _ = writeln!(
        s,
        "|---|---|---:|---:|---:|{}---:|---:|---|",
        "---:|---:|---:|".repeat(metrics.len())
    );
    for group in repeat_groups(&out.records) {
        match group.as_slice() {
            [r] => row(s, exp, &metrics, r),
            runs => mean_row(s, exp, &metrics, runs),
        }
    }
    for m in &out.planned {
        let paper = paper_average(exp, &m.name, &m.label, &m.variant);
        let mut line = format!(
            "|  | {} | {} | **not implemented yet** | |",
            m.label,
            paper
                .and_then(|p| p.rounds)
                .map_or("—".into(), |r| r.to_string()),
        );
        for d in &metrics {
            line += &format!(" {} | | |", sci(paper.and_then(|p| p.metric(d.name))));
        }
        line += &format!(
            " {} | | |",
            paper
                .and_then(|p| p.time_s)
                .map_or("—".into(), |t| format!("{t:.2}"))
        );
        let _ = writeln!(s, "{line}");
    }
    if exp.repeats > 1 {
        let _ = writeln!(
            s,
            "\nEach row is the mean over the {} repeats (data sets and seeds) of one \
             configuration; rounds show the range in brackets, stop the count of each status. \
             Every repeat is a row of `summary.csv`.",
            exp.repeats
        );
    }
}

/// Which methods are centralised, and what their rounds and bytes mean.
fn centralised_note(s: &mut String, exp: &Experiment) {
    let central: Vec<&str> = exp
        .methods
        .iter()
        .filter(|m| registry::lookup(&m.name).is_some_and(|e| e.centralised))
        .map(|m| m.label.as_str())
        .collect();
    if !central.is_empty() {
        let _ = writeln!(
            s,
            "\n{} centralised: one machine holds all the data, so their rounds are iterations, and \
             the bytes counted for them are the exchange between the driver and that one machine, \
             not communication between parties. Times are the method's compute on this machine: \
             clients share its cores, so a federated method's time is its clients' total work \
             divided by the cores, not the slowest client's time as on separate machines.",
            if central.len() == 1 {
                format!("{} is", central[0])
            } else {
                format!("{} are", central.join(", "))
            }
        );
    }
}

/// Rounds, bytes and vectors per run, and the fitted linear rate.
fn communication(s: &mut String, exp: &Experiment, out: &Outcome) {
    let _ = writeln!(s, "\n## Communication\n");
    // The CEDRE paper counts vectors with one from every machine as 1: shown for its family.
    let comm = crate::problem::family(exp.kind).counts_communicated_vectors();
    let _ = writeln!(
        s,
        "| point | method | rounds | bytes up | bytes down | n-vectors |{} mean inner steps / client / round | fitted {} rate / round |",
        if comm { " communicated vectors (one from every machine = 1) |" } else { "" },
        rate_metric(exp).map_or("—", |m| m.short)
    );
    let _ = writeln!(
        s,
        "|---|---|---:|---:|---:|---:|{}---:|---:|",
        if comm { "---:|" } else { "" }
    );
    for r in &out.records {
        let l = r.last();
        let inner: f64 = r.trace.iter().skip(1).map(|t| t.inner_iters).sum::<f64>()
            / (r.trace.len().max(2) - 1) as f64;
        let comm_col = if comm {
            let c = super::figures::comm_vectors(l, r.bytes_up_per_client.len());
            format!(" {} |", trim_zeros(&format!("{c:.2}")))
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} |{} {:.2} | {} |",
            r.key.point,
            describe(&r.key),
            r.rounds,
            l.bytes_up,
            l.bytes_down,
            trim_zeros(&format!("{:.2}", l.vectors)),
            comm_col,
            inner,
            rate_metric(exp)
                .and_then(|m| linear_rate(r, m.name))
                .map_or("—".into(), |q| format!("{q:.4}"))
        );
    }
}

/// Without a paper: our numbers only, one row per run.
fn results_table(s: &mut String, exp: &Experiment, out: &Outcome) {
    let _ = writeln!(s, "## Results\n");
    let _ = writeln!(
        s,
        "Rounds = communication rounds. Time is the method alone on this machine (metrics \
         excluded).\n"
    );
    let metrics = reported_metrics(exp);
    let mut header = "| point | method | rounds |".to_string();
    for m in &metrics {
        header += &format!(" {} |", m.short);
    }
    let _ = writeln!(s, "{header} time s | stop |");
    let _ = writeln!(
        s,
        "|---|---|---:|{}---:|---|",
        "---:|".repeat(metrics.len())
    );
    for g in repeat_groups(&out.records) {
        let r = g[0];
        let name = match g.len() {
            1 => describe(&r.key),
            n => format!("{} (mean of {n})", describe(&r.key)),
        };
        let mut line = format!("| {} | {name} | {} |", r.key.point, rounds_cell(&g));
        for m in &metrics {
            line += &format!(" {} |", sci(Some(mean_metric(&g, m.name))));
        }
        let time = mean(g.iter().map(|r| r.last().time_s));
        let _ = writeln!(s, "{line} {time:.2} | {} |", stops(exp, &g));
    }
    for m in &out.planned {
        let _ = writeln!(s, "|  | {} | **not implemented yet** |", m.label);
    }
}

fn row(s: &mut String, exp: &Experiment, metrics: &[&MetricDef], r: &RunRecord) {
    let p = paper_for(exp, &r.key);
    let l = r.last();
    let (ours, ratio) = rounds_beside(&[r], p);
    let mut line = format!(
        "| {} | {} | {} | {ours} | {ratio} |",
        r.key.point,
        describe(&r.key),
        p.and_then(|p| p.rounds)
            .map_or("—".into(), |v| v.to_string()),
    );
    for m in metrics {
        line += &beside(mean_metric(&[r], m.name), p.and_then(|p| p.metric(m.name)));
    }
    line += &format!(
        " {} | {:.2} | {} |",
        p.and_then(|p| p.time_s)
            .map_or("—".into(), |t| format!("{t:.2}")),
        l.time_s,
        stops(exp, &[r]),
    );
    let _ = writeln!(s, "{line}");
}

/// Our rounds beside the paper's, and their ratio: the runs' rounds, or where the paper's entry
/// counts the rounds to a level (`reach`, its criterion), ours to the same level, said so
/// ("4 to pop_log_err ≤ -7e0"); a lower bound where a run did not converge or never got there.
fn rounds_beside(runs: &[&RunRecord], p: Option<&PaperResult>) -> (String, String) {
    let paper = p.and_then(|p| p.rounds).map(|v| v as f64);
    let Some(t) = p.and_then(|p| p.reach.as_ref()) else {
        let rounds = mean(runs.iter().map(|r| r.rounds as f64));
        let bound = runs.iter().any(|r| !r.converged);
        return (rounds_cell(runs), at_least(ratio(rounds, paper), bound));
    };
    let q = super::quantity::Quantity::of(&t.metric, Some(t.value));
    match super::quantity::mean_of(runs.iter().copied(), q) {
        Some(m) => (
            format!(
                "{} to {} ≤ {:e}",
                super::quantity::show(m, q),
                t.metric,
                t.value
            ),
            at_least(ratio(m.value, paper), m.bound()),
        ),
        None => (format!("— ({} not recorded)", t.metric), "—".into()),
    }
}

/// One row for the repeats of a configuration: mean rounds (min–max), mean metrics and time,
/// stop reasons counted ("3× max_rounds, 2× kkt_target").
fn mean_row(s: &mut String, exp: &Experiment, metrics: &[&MetricDef], runs: &[&RunRecord]) {
    let r0 = runs[0];
    let p = paper_for(exp, &r0.key);
    let (ours, ratio) = rounds_beside(runs, p);
    let mut line = format!(
        "| {} | {} (mean of {}) | {} | {ours} | {ratio} |",
        r0.key.point,
        describe(&r0.key),
        runs.len(),
        p.and_then(|p| p.rounds)
            .map_or("—".into(), |v| v.to_string()),
    );
    for m in metrics {
        line += &beside(mean_metric(runs, m.name), p.and_then(|p| p.metric(m.name)));
    }
    line += &format!(
        " {} | {:.2} | {} |",
        p.and_then(|p| p.time_s)
            .map_or("—".into(), |t| format!("{t:.2}")),
        mean(runs.iter().map(|r| r.last().time_s)),
        stops(exp, runs),
    );
    let _ = writeln!(s, "{line}");
}

/// A run's rounds, or for repeats their mean with the range: "258.8 (159–372)"; a lower bound
/// ("≥ 3000") when a run did not converge, repeats saying how many did.
fn rounds_cell(runs: &[&RunRecord]) -> String {
    let converged = runs.iter().filter(|r| r.converged).count();
    let bound = converged < runs.len();
    if let [r] = runs {
        return at_least(r.rounds.to_string(), bound);
    }
    let lo = runs.iter().map(|r| r.rounds).min().unwrap_or(0);
    let hi = runs.iter().map(|r| r.rounds).max().unwrap_or(0);
    let cell = at_least(
        format!(
            "{:.1} ({lo}–{hi})",
            mean(runs.iter().map(|r| r.rounds as f64))
        ),
        bound,
    );
    if bound {
        format!("{cell}, {converged} of {} converged", runs.len())
    } else {
        cell
    }
}

/// A run's status and stop reason ("stalled (objective_change)"), or for repeats each counted:
/// "3× capped (max_rounds), 2× converged (kkt_target)".
fn stops(exp: &Experiment, runs: &[&RunRecord]) -> String {
    let mut stops: Vec<(String, usize)> = Vec::new();
    for r in runs {
        let k = format!(
            "{} ({})",
            r.status(&exp.stop, exp.kind).as_str(),
            r.stop_reason
        );
        match stops.iter_mut().find(|(s, _)| *s == k) {
            Some((_, n)) => *n += 1,
            None => stops.push((k, 1)),
        }
    }
    match stops.as_slice() {
        [(k, 1)] => k.clone(),
        _ => stops
            .iter()
            .map(|(k, n)| format!("{n}× {k}"))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// What the statuses mean under this experiment's stop rule (after the main table).
fn status_legend(s: &mut String, exp: &Experiment) {
    let st = &exp.stop;
    let rule27 = match (&st.objective_tol, &st.target, accuracy(exp)) {
        (Some(_), None, Some(m)) => format!(
            " Here no target is set, so a run stopped by rule (27), |f_k − f_(k−1)| ≤ τ·f_k, as the \
             paper stops, is *converged* while its {m} was still improving, and *stalled* when \
             the metric stopped improving: less than {:.0} % better over the last quarter of its \
             trace (unless at round-off).",
            100.0 * MIN_GAIN
        ),
        (Some(_), None, None) => " Here no target is set, so \"converged (objective_change)\" means \
             stopped by rule (27) alone, |f_k − f_(k−1)| ≤ τ·f_k, as the paper stops: no accuracy \
             was checked."
            .to_string(),
        _ => String::new(),
    };
    let own = match (st.own_criterion, accuracy(exp)) {
        (true, Some(m)) => format!(
            " A run whose own criterion held is *stalled* when its {m} ended no better than at its \
             start (less than {:.0} % below its first value): a fixed point of the method that \
             is not the solution.",
            100.0 * MIN_GAIN
        ),
        _ => String::new(),
    };
    let _ = writeln!(
        s,
        "\nStop: *converged* = the stop rule's target or the method's own criterion was met (a \
         one-shot method: its answer computed); *stalled* = the relative objective change (eq. 27) \
         stopped it with its target metric short of the target, or with its accuracy metric no \
         longer improving; *capped* = it reached max \
         rounds, the time budget or the method's own iteration cap first; *diverged*, *failed*: \
         a value not finite, an error.{rule27}{own} Rounds of a run that did not converge, and \
         ratios computed from them, are lower bounds (≥)."
    );
}

/// The accuracy metrics the family judges its runs by, as text ("stationarity or recovery":
/// each run by the first it defines); None without one.
fn accuracy(exp: &Experiment) -> Option<String> {
    let names: Vec<&str> = crate::problem::family(exp.kind)
        .accuracy()
        .iter()
        .map(|a| a.metric)
        .collect();
    (!names.is_empty())
        .then(|| names.join(" (or, where a run lacks it, ") + &")".repeat(names.len() - 1))
}

/// Runs that stalled: rule (27) stopped them short of the target, or with the accuracy metric
/// no longer improving; or their own criterion held with it no better than at their start.
fn stalled(s: &mut String, exp: &Experiment, out: &Outcome) {
    let (own, rule27): (Vec<&RunRecord>, Vec<&RunRecord>) = out
        .records
        .iter()
        .filter(|r| r.status(&exp.stop, exp.kind) == Status::Stalled)
        .partition(|r| r.stop_reason == StopReason::OwnCriterion.as_str());
    // Each run's own accuracy metric, its last value and (for `own`) its first.
    let judged = |r: &RunRecord, start: bool| match Status::judged_by(exp.kind, &r.trace) {
        Some(a) => {
            let first = r.trace.iter().find_map(|t| t.metric(a.metric));
            let from = if start {
                format!(", {} at its start", sci(first))
            } else {
                String::new()
            };
            format!("{} = {}{from}", a.metric, sci(r.last().metric(a.metric)))
        }
        None => String::new(),
    };
    if !rule27.is_empty() {
        match &exp.stop.target {
            Some(t) => listed(
                s,
                &format!(
                    "stalled**: the relative objective change stopped them with {} short of its \
                     target {:e}.",
                    t.metric, t.value
                ),
                &rule27,
                |r| format!("{} = {}", t.metric, sci(r.last().metric(&t.metric))),
            ),
            None => listed(
                s,
                &format!(
                    "stalled**: the relative objective change stopped them after their {} \
                     stopped improving (metric stopped improving: less than {:.0} % better over \
                     the last quarter of the trace).",
                    accuracy(exp).unwrap_or_default(),
                    100.0 * MIN_GAIN
                ),
                &rule27,
                |r| judged(r, false),
            ),
        }
    }
    if !own.is_empty() {
        listed(
            s,
            &format!(
                "stalled**: their own criterion held with their {} no better than at their start \
                 (less than {:.0} % below its first value): a fixed point of the method that is \
                 not the solution.",
                accuracy(exp).unwrap_or_default(),
                100.0 * MIN_GAIN
            ),
            &own,
            |r| judged(r, true),
        );
    }
}

/// Runs that stopped on an error or panic of their method, with its message.
fn failures(s: &mut String, out: &Outcome) {
    let failed: Vec<&RunRecord> = out.records.iter().filter(|r| r.error.is_some()).collect();
    if failed.is_empty() {
        return;
    }
    listed(
        s,
        "failed**: the method stopped with an error; its rounds and metrics above are those \
         before the failure.",
        &failed,
        |r| r.error.clone().unwrap_or_default(),
    );
}

/// "**N run(s) <what>" then a line per run: where, which, after how many rounds, `detail`.
fn listed(s: &mut String, what: &str, runs: &[&RunRecord], detail: impl Fn(&RunRecord) -> String) {
    let _ = writeln!(s, "\n**{} run(s) {what}\n", runs.len());
    for r in runs {
        let _ = writeln!(
            s,
            "- {} {} (seed {}), after {} rounds: {}",
            r.key.point,
            describe(&r.key),
            r.key.seed,
            r.rounds,
            detail(r)
        );
    }
}

/// Values methods chose while running (a searched step size, a shift), per configuration:
/// each value with the number of repeats that chose it, or their mean and range when they
/// differ more than three ways.
fn chosen(s: &mut String, out: &Outcome) {
    let groups: Vec<Vec<&RunRecord>> = repeat_groups(&out.records)
        .into_iter()
        .filter(|g| g.iter().any(|r| !r.chosen.is_empty()))
        .collect();
    if groups.is_empty() {
        return;
    }
    let num = |v: f64| {
        if (1e-3..1e4).contains(&v.abs()) {
            trim_zeros(&format!("{v:.6}")).to_string()
        } else {
            format!("{v:.4e}")
        }
    };
    let _ = writeln!(s, "\n### Chosen while running\n");
    for g in groups {
        let mut keys: Vec<&String> = g.iter().flat_map(|r| r.chosen.keys()).collect();
        keys.sort();
        keys.dedup();
        let values = keys
            .iter()
            .map(|k| {
                let vs: Vec<f64> = g.iter().filter_map(|r| r.chosen.get(*k).copied()).collect();
                let mut distinct: Vec<(f64, usize)> = Vec::new();
                for &v in &vs {
                    match distinct.iter_mut().find(|(d, _)| *d == v) {
                        Some((_, n)) => *n += 1,
                        None => distinct.push((v, 1)),
                    }
                }
                if g.len() == 1 {
                    format!("{k} = {}", num(vs[0]))
                } else if distinct.len() <= 3 {
                    let each: Vec<String> = distinct
                        .iter()
                        .map(|(v, n)| format!("{} (×{n})", num(*v)))
                        .collect();
                    format!("{k} = {}", each.join(", "))
                } else {
                    let lo = vs.iter().copied().fold(f64::INFINITY, f64::min);
                    let hi = vs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    let m = mean(vs.iter().copied());
                    format!(
                        "{k}: mean {} ({}–{}) over {} runs",
                        num(m),
                        num(lo),
                        num(hi),
                        vs.len()
                    )
                }
            })
            .collect::<Vec<_>>()
            .join("; ");
        let _ = writeln!(s, "- {} {}: {values}", g[0].key.point, describe(&g[0].key));
    }
}

/// The metric whose linear rate the communication table fits: the family's first
/// lower-is-better metric shown on a log scale.
fn rate_metric(exp: &Experiment) -> Option<&'static MetricDef> {
    crate::problem::family(exp.kind)
        .metrics()
        .iter()
        .find(|m| m.lower_is_better && m.log)
}

/// Linear convergence rate of `metric`: e^slope of a least-squares fit of its log against the
/// round, over the second half of the run (past the initial transient).
pub fn linear_rate(r: &RunRecord, metric: &str) -> Option<f64> {
    let pts: Vec<(f64, f64)> = r
        .trace
        .iter()
        .filter_map(|t| Some((t, t.metric(metric)?)))
        .filter(|(t, v)| t.round * 2 >= r.rounds && *v > 0.0)
        .map(|(t, v)| (t.round as f64, v.ln()))
        .collect();
    if pts.len() < 3 {
        return None;
    }
    let n = pts.len() as f64;
    let (mx, my) = (
        pts.iter().map(|p| p.0).sum::<f64>() / n,
        pts.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    Some((sxy / sxx).exp())
}

/// Per method, the averages over the sweep points (the paper's Table 2 reports averages).
fn averages(s: &mut String, exp: &Experiment, out: &Outcome, plain: bool) {
    let _ = writeln!(
        s,
        "\n## Averages over the {} sweep points\n",
        exp.points.len()
    );
    let metrics = reported_metrics(exp);
    let mut header = "| method | mean rounds | mean time s |".to_string();
    for m in &metrics {
        header += &if plain {
            format!(" mean {} |", m.short)
        } else {
            format!(" mean {} (paper) | (ours) | ratio |", m.short)
        };
    }
    let _ = writeln!(s, "{header}");
    let cells = if plain { "---:|" } else { "---:|---:|---:|" };
    let _ = writeln!(s, "|---|---:|---:|{}", cells.repeat(metrics.len()));
    for (name, runs) in by_method(&out.records) {
        let p = paper_average(
            exp,
            &runs[0].key.method,
            &runs[0].key.label,
            &runs[0].key.params,
        );
        let mut line = format!(
            "| {name} | {} | {:.2} |",
            at_least(
                format!("{:.1}", mean(runs.iter().map(|r| r.rounds as f64))),
                runs.iter().any(|r| !r.converged)
            ),
            mean(runs.iter().map(|r| r.last().time_s)),
        );
        for m in &metrics {
            let ours = mean_metric(&runs, m.name);
            line += &if plain {
                format!(" {} |", sci(Some(ours)))
            } else {
                beside(ours, p.and_then(|p| p.metric(m.name)))
            };
        }
        let _ = writeln!(s, "{line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::claims::tests::traced;

    /// Beside a paper count with `reach`, our cell is the rounds to that level, said so, and
    /// the ratio a lower bound where a run never got there; without it, the run's rounds.
    #[test]
    fn rounds_beside_the_paper_count_what_it_counts() {
        let pr = |reach: &str| -> PaperResult {
            toml::from_str(&format!("method = 'A'\nrounds = 4\n{reach}")).unwrap()
        };
        let to = pr("reach = { metric = 'stationarity', value = 1e-5 }");
        let rows = [
            (1, 1e-3, f64::NAN),
            (2, 1e-5, f64::NAN),
            (30, 1e-9, f64::NAN),
        ];
        let r = traced("x", "A", true, &rows);
        assert_eq!(
            rounds_beside(&[&r], Some(&to)),
            ("2 to stationarity ≤ 1e-5".to_string(), "0.50".to_string())
        );
        assert_eq!(
            rounds_beside(&[&r], Some(&pr(""))),
            ("30".to_string(), "7.50".to_string())
        );
        let short = traced("x", "A", false, &rows[..1]);
        assert_eq!(
            rounds_beside(&[&short], Some(&to)),
            (
                "≥ 1 to stationarity ≤ 1e-5".to_string(),
                "≥ 0.25".to_string()
            )
        );
    }
}
