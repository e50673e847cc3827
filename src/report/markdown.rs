//! report.md: the paper's numbers beside ours, with ratios, settings and figures.

use super::provenance::blas_backend;
use super::tables::{paper_average, paper_for};
use crate::manifest::{Experiment, Point};
use crate::run::{describe, Outcome, RunRecord};
use std::fmt::Write;
use std::path::PathBuf;

fn sci(v: Option<f64>) -> String {
    v.map_or("—".into(), |v| format!("{v:.2e}"))
}

fn ratio(ours: f64, paper: Option<f64>) -> String {
    match paper {
        Some(p) if p != 0.0 && (ours / p).abs() < 0.1 => format!("{:.1e}", ours / p),
        Some(p) if p != 0.0 => format!("{:.2}", ours / p),
        _ => "—".into(),
    }
}

fn setting(p: &Point) -> String {
    let d = &p.data;
    let source = match (&d.dataset, d.spectrum) {
        (Some(name), _) => format!(
            "dataset {name} ({} split, first m samples), preprocessing: {}",
            d.split
                .map_or("train".into(), |s| format!("{s:?}").to_lowercase()),
            if d.preprocess.is_empty() {
                "none".into()
            } else {
                format!("{:?}", d.preprocess).to_lowercase()
            }
        ),
        (None, Some(sp)) => match (d.xi, d.kappa) {
            (Some(xi), _) => format!("A = UΣVᵀ, {sp} spectrum ξ = {xi}"),
            (_, Some(k)) => format!("A = UΣVᵀ, {sp} spectrum κ = {k}"),
            _ => format!("A = UΣVᵀ, {sp} spectrum"),
        },
        (None, None) => d.generator.to_string(),
    };
    format!(
        "{source}; n = {}, m = {}; {} clients ({}); p = {}",
        d.n, d.m, p.partition.clients, p.partition.scheme, p.problem.p
    )
}

/// The whole report as Markdown.
pub fn report(exp: &Experiment, out: &Outcome, figures: &[PathBuf]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# {}\n", exp.title);
    let _ = writeln!(
        s,
        "Reproduces **{}** of `{}` (paper key `{}`), profile **{}**. Manifest `{}` (sha256 `{}`).\n",
        exp.reproduces,
        exp.paper_file,
        exp.paper,
        exp.profile,
        exp.path.display(),
        &exp.hash[..12.min(exp.hash.len())]
    );
    if exp.profile != "paper" {
        let _ = writeln!(
            s,
            "> This is a scaled-down profile: the paper's numbers are shown for orientation; only the \
             `paper` profile runs at the paper's sizes.\n"
        );
    }
    if let Some(desc) = &exp.description {
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
    let st = &exp.stop;
    let _ = writeln!(
        s,
        "- stop: {}max {} rounds{}{}\n",
        st.objective_tol.map_or(String::new(), |t| format!(
            "|f_k − f_(k−1)| ≤ {t:e}·f_k (eq. 27) or "
        )),
        st.max_rounds,
        st.kkt_target
            .map_or(String::new(), |t| format!(", KKT ≤ {t:e}")),
        st.time_budget_s
            .map_or(String::new(), |t| format!(", {t} s budget")),
    );

    let _ = writeln!(s, "## Paper beside ours\n");
    let _ = writeln!(
        s,
        "Ratios are ours / paper. Rounds = communication rounds (= the paper's iterations). Our \
         time is the method alone on this machine (metrics excluded); the paper's comes from an MPI \
         cluster, so compare times only between methods of the same run.\n"
    );
    if exp.points.len() > 1 && exp.paper_results.iter().any(|p| p.point.is_none()) {
        let _ = writeln!(
            s,
            "The paper reports this sweep's numbers as averages over its points: they stand beside \
             our averages in the next section, not beside any single point.\n"
        );
    }
    let _ = writeln!(
        s,
        "| point | method | rounds (paper) | rounds (ours) | ratio | rel. sv error (paper) | (ours) | ratio | scaled KKT (paper) | (ours) | time s (paper) | (ours) | stop |"
    );
    let _ = writeln!(
        s,
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    );
    for r in &out.records {
        row(&mut s, exp, r);
    }
    for m in &out.planned {
        let paper = paper_average(exp, &m.name, &m.label);
        let _ = writeln!(
            s,
            "|  | {} | {} | **not implemented yet** | | {} | | | {} | | {} | | |",
            m.label,
            paper
                .and_then(|p| p.rounds)
                .map_or("—".into(), |r| r.to_string()),
            sci(paper.and_then(|p| p.sv_err)),
            sci(paper.and_then(|p| p.kkt)),
            paper
                .and_then(|p| p.time_s)
                .map_or("—".into(), |t| format!("{t:.2}")),
        );
    }

    if exp.points.len() > 1 {
        averages(&mut s, exp, out);
    }

    let _ = writeln!(s, "\n## Communication\n");
    let _ = writeln!(
        s,
        "| point | method | rounds | bytes up | bytes down | n-vectors | mean inner steps / client / round | fitted KKT rate / round |"
    );
    let _ = writeln!(s, "|---|---|---:|---:|---:|---:|---:|---:|");
    for r in &out.records {
        let l = r.last();
        let inner: f64 = r.trace.iter().skip(1).map(|t| t.inner_iters).sum::<f64>()
            / (r.trace.len().max(2) - 1) as f64;
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {:.2} | {} |",
            r.key.point,
            describe(&r.key),
            r.rounds,
            l.bytes_up,
            l.bytes_down,
            l.vectors,
            inner,
            linear_rate(r).map_or("—".into(), |q| format!("{q:.4}"))
        );
    }

    if !figures.is_empty() {
        let _ = writeln!(s, "\n## Figures\n");
        for f in figures {
            let name = f
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            let _ = writeln!(s, "![{name}]({name}.png)\n\n[SVG]({name}.svg)\n");
        }
    }
    let _ = writeln!(s, "## Provenance\n");
    let _ = writeln!(
        s,
        "BLAS: {}; threads: {}; peak memory of the processes that computed these runs: {}. Git revision, library versions, \
         seeds and timings are in `run.json`; every number above is a row of `summary.csv`, whose \
         per-round history is in `trace.csv`.",
        blas_backend(),
        out.threads,
        out.peak_rss_mib
            .map_or("not recorded".into(), |m| format!("{m:.0} MiB"))
    );
    s
}

fn row(s: &mut String, exp: &Experiment, r: &RunRecord) {
    let p = paper_for(exp, &r.key);
    let l = r.last();
    let paper_rounds = p.and_then(|p| p.rounds);
    let _ = writeln!(
        s,
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.2} | {} |",
        r.key.point,
        describe(&r.key),
        paper_rounds.map_or("—".into(), |v| v.to_string()),
        r.rounds,
        ratio(r.rounds as f64, paper_rounds.map(|v| v as f64)),
        sci(p.and_then(|p| p.sv_err)),
        sci(Some(l.sv_err)),
        ratio(l.sv_err, p.and_then(|p| p.sv_err)),
        sci(p.and_then(|p| p.kkt)),
        sci(Some(l.kkt)),
        p.and_then(|p| p.time_s)
            .map_or("—".into(), |t| format!("{t:.2}")),
        l.time_s,
        r.stop_reason,
    );
}

/// Linear convergence rate of the KKT violation: e^slope of a least-squares fit of ln(kkt)
/// against the round, over the second half of the run (past the initial transient).
pub fn linear_rate(r: &RunRecord) -> Option<f64> {
    let pts: Vec<(f64, f64)> = r
        .trace
        .iter()
        .filter(|t| t.round * 2 >= r.rounds && t.kkt > 0.0)
        .map(|t| (t.round as f64, t.kkt.ln()))
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

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    s / n.max(1) as f64
}

/// Per method, the averages over the sweep points (the paper's Table 2 reports averages).
fn averages(s: &mut String, exp: &Experiment, out: &Outcome) {
    let _ = writeln!(
        s,
        "\n## Averages over the {} sweep points\n",
        exp.points.len()
    );
    let _ = writeln!(
        s,
        "| method | mean rounds | mean time s | mean scaled KKT (paper) | (ours) | ratio | mean rel. sv error (paper) | (ours) | ratio |"
    );
    let _ = writeln!(s, "|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut names: Vec<String> = Vec::new();
    for r in &out.records {
        let d = describe(&r.key);
        if !names.contains(&d) {
            names.push(d);
        }
    }
    for name in names {
        let runs: Vec<&RunRecord> = out
            .records
            .iter()
            .filter(|r| describe(&r.key) == name)
            .collect();
        let p = paper_average(exp, &runs[0].key.method, &runs[0].key.label);
        let kkt = mean(runs.iter().map(|r| r.last().kkt));
        let sv = mean(runs.iter().map(|r| r.last().sv_err));
        let _ = writeln!(
            s,
            "| {name} | {:.1} | {:.2} | {} | {} | {} | {} | {} | {} |",
            mean(runs.iter().map(|r| r.rounds as f64)),
            mean(runs.iter().map(|r| r.last().time_s)),
            sci(p.and_then(|p| p.kkt)),
            sci(Some(kkt)),
            ratio(kkt, p.and_then(|p| p.kkt)),
            sci(p.and_then(|p| p.sv_err)),
            sci(Some(sv)),
            ratio(sv, p.and_then(|p| p.sv_err)),
        );
    }
}
