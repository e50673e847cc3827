//! The scorecard in the HTML site: each paper's page (results/<paper>/index.html), which opens
//! with its full table, and the index's totals per paper. Every text from papers/*.toml and the
//! manifests is escaped; links are relative.

use super::page::{esc, href, page, Page};
use super::scorecard::{
    show, Row, RowKind, Scorecard, Totals, FAILS, HELD, HOLDS, LOWER_BOUND, NOT_HELD,
    TOTALS_HEADER, WITHIN,
};
use crate::spec::{PaperKind, PaperRecord};
use std::fmt::Write;
use std::path::PathBuf;

/// "Title" in bold, then "Authors, Venue, Year", then the key and the text's file in small
/// print: how every page names a paper.
pub(super) fn paper_heading(r: &PaperRecord, tag: &str, link: Option<&str>) -> String {
    let title = match link {
        Some(l) => format!("<a href=\"{}\">{}</a>", href(l), esc(&r.title)),
        None => esc(&r.title),
    };
    let mut small = format!("paper key <code>{}</code>", esc(&r.key));
    if !r.file.is_empty() {
        let _ = write!(small, " · text <code>{}</code>", esc(&r.file));
    }
    if r.kind == PaperKind::Comparison {
        let _ = write!(small, " · a comparison of {}", esc(&r.papers.join(", ")));
    }
    format!(
        "<{tag} id=\"{}\">{title}</{tag}>\n<p class=\"byline\">{}<br><small>{small}</small></p>",
        esc(&r.key),
        esc(&r.byline())
    )
}

fn class(verdict: &str) -> &'static str {
    match verdict {
        WITHIN | HELD | HOLDS => "holds",
        FAILS | NOT_HELD | super::scorecard::OUTSIDE => "fails",
        _ => "other",
    }
}

/// Links from a paper's page (results/<paper>/index.html) to the experiments' pages.
fn links(r: &Row) -> String {
    let names: Vec<&str> = r.experiment.split(' ').filter(|s| !s.is_empty()).collect();
    let folders: Vec<&str> = r.folder.split(' ').filter(|s| !s.is_empty()).collect();
    names
        .iter()
        .map(
            |n| match folders.iter().find(|f| f.split('/').nth(1) == Some(*n)) {
                Some(f) => format!(
                    "<a href=\"{}\">{}</a>",
                    href(&format!("../{f}/index.html")),
                    esc(n)
                ),
                None => esc(n),
            },
        )
        .collect::<Vec<_>>()
        .join(" ")
}

fn totals_line(t: &Totals) -> String {
    format!(
        "Stated numbers: <b>{}</b> within ±20 %, {} lower bounds ({} already outside), {} outside, \
         {} not run, {} times (not compared), of {}. Claims: <b>{}</b> held, {} not held, {} \
         untestable here, {} untested, of {}. Manifest tests: {} hold, {} fail, {} not run or not \
         judged.",
        t.within,
        t.bounds,
        t.bounds_outside,
        t.outside,
        t.not_run,
        t.time,
        t.numbers(),
        t.held,
        t.not_held,
        t.untestable,
        t.untested,
        t.claims(),
        t.tests_hold,
        t.tests_fail,
        t.tests_open
    )
}

fn cell(s: &str) -> String {
    format!("<td>{}</td>", esc(s))
}

fn section(body: &mut String, card: &Scorecard, key: &str, profile: &str) {
    let t = card.totals(key, profile);
    let _ = writeln!(body, "<p>{}</p>", totals_line(&t));
    let rows: Vec<&Row> = card.rows_of(key, profile).collect();
    let of = |k: RowKind| rows.iter().copied().filter(move |r| r.kind == k);
    let _ = writeln!(
        body,
        "<h3>Stated numbers beside ours</h3>\n<table class=\"score\">\n<thead><tr><th>experiment</th>\
         <th>method</th><th>point</th><th>quantity</th><th>paper</th><th>ours</th><th>ratio</th>\
         <th>verdict</th><th>note</th><th>ours from</th></tr></thead>\n<tbody>"
    );
    for r in of(RowKind::Number) {
        let ge = if r.verdict == LOWER_BOUND { "≥ " } else { "" };
        let verdict = if r.bound.is_empty() {
            r.verdict.to_string()
        } else {
            format!("{} ({})", r.verdict, r.bound)
        };
        let _ = writeln!(
            body,
            "<tr class=\"{}\"><td>{}</td>{}{}{}{}<td>{ge}{}</td><td>{ge}{}</td>{}{}{}</tr>",
            class(r.verdict),
            links(r),
            cell(&r.method),
            cell(&r.point),
            cell(&r.quantity),
            cell(&show(&r.quantity, r.paper_value)),
            esc(&show(&r.quantity, r.ours)),
            r.ratio.map_or("—".into(), |q| format!("{q:.2}")),
            cell(&verdict),
            cell(&r.text),
            cell(&r.evidence),
        );
    }
    let _ = writeln!(body, "</tbody>\n</table>");
    let _ = writeln!(
        body,
        "<h3>Claims of the paper</h3>\n<table class=\"score\">\n<thead><tr><th>claim</th><th>where</th>\
         <th>the paper says</th><th>tested by</th><th>verdict</th><th>why</th><th>cause of a miss</th>\
         <th>study</th></tr></thead>\n<tbody>"
    );
    for r in of(RowKind::Claim) {
        let _ = writeln!(
            body,
            "<tr class=\"{}\">{}{}{}<td>{}</td>{}{}{}{}</tr>",
            class(r.verdict),
            cell(&r.id),
            cell(&r.at),
            cell(&r.text),
            links(r),
            cell(r.verdict),
            cell(&r.evidence),
            cell(&r.cause),
            study_cell(&r.study, profile),
        );
    }
    let _ = writeln!(body, "</tbody>\n</table>");
    let _ = writeln!(
        body,
        "<h3>Tests of the manifests</h3>\n<table class=\"score\">\n<thead><tr><th>experiment</th>\
         <th>claim</th><th>test</th><th>method</th><th>quantity</th><th>verdict</th><th>evidence</th>\
         <th>cause of a miss</th></tr></thead>\n<tbody>"
    );
    for r in of(RowKind::Test) {
        let _ = writeln!(
            body,
            "<tr class=\"{}\"><td>{}</td>{}{}{}{}{}{}{}</tr>",
            class(r.verdict),
            links(r),
            cell(&r.id),
            cell(&r.text),
            cell(&r.method),
            cell(&r.quantity),
            cell(r.verdict),
            cell(&r.evidence),
            cell(&r.cause),
        );
    }
    let _ = writeln!(body, "</tbody>\n</table>");
}

/// A study `paper/id` links to its page at `profile`.
fn study_cell(study: &str, profile: &str) -> String {
    if study.is_empty() {
        return "<td></td>".into();
    }
    format!(
        "<td><a href=\"{}\">{}</a></td>",
        href(&format!("../{study}/{profile}/index.html")),
        esc(study)
    )
}

/// results/<paper>/index.html of every paper with rows.
pub(super) fn paper_pages(card: &Scorecard) -> Vec<Page> {
    let mut pages = Vec::new();
    for p in &card.papers {
        let profiles = card.profiles(&p.key);
        if profiles.is_empty() {
            continue;
        }
        let mut body = format!(
            "<nav><a href=\"../index.html\">All papers</a></nav>\n<main>\n{}\n",
            paper_heading(p, "h1", None)
        );
        let _ = writeln!(
            body,
            "<p>The scorecard of this paper from the committed results: every number it states \
             beside ours (ratio ours / paper; within ±20 % agrees; a count of a run that did not \
             converge is a lower bound), every claim of its inventory with the tests that stand \
             for it, and each test. Each experiment links to its report. Also in \
             <a href=\"../scorecard.csv\">scorecard.csv</a>.</p>"
        );
        for profile in profiles {
            let _ = writeln!(body, "<h2>Profile {}</h2>", esc(profile));
            if profile != "paper" {
                let _ = writeln!(
                    body,
                    "<p>Scaled down: the paper's numbers are shown for orientation only.</p>"
                );
            }
            section(&mut body, card, &p.key, profile);
        }
        body += "</main>";
        pages.push(Page {
            path: PathBuf::from(&p.key).join("index.html"),
            html: page(&format!("{} — scorecard", p.title), &body),
        });
    }
    pages
}

/// The index's table of every paper's totals at `profile`.
pub(super) fn totals_table(card: &Scorecard, profile: &str) -> String {
    let head: String = TOTALS_HEADER
        .iter()
        .map(|h| format!("<th>{}</th>", esc(h)))
        .collect();
    let mut s =
        format!("<table class=\"index\">\n<thead><tr><th>paper</th>{head}</tr></thead>\n<tbody>\n");
    for p in &card.papers {
        if !card.profiles(&p.key).contains(&profile) {
            continue;
        }
        let cells: String = card
            .totals(&p.key, profile)
            .cells()
            .iter()
            .map(|c| format!("<td>{c}</td>"))
            .collect();
        let _ = writeln!(
            s,
            "<tr><td><a href=\"{}\">{}</a><br><small>{} · <code>{}</code></small></td>{cells}</tr>",
            href(&format!("{}/index.html", p.key)),
            esc(&p.title),
            esc(&p.byline()),
            esc(&p.key),
        );
    }
    s += "</tbody>\n</table>\n";
    s
}

/// The index's opening: every paper's totals (profile `paper`, then `quick` apart).
pub(super) fn index_section(card: &Scorecard) -> String {
    let mut s = String::from(
        "<h2 id=\"scorecard\">Scorecard</h2>\n<p>Per paper, from the committed runs at the \
         paper's sizes: the numbers it states within ±20 % of ours, those where ours is only a \
         lower bound (a run that did not converge), outside, not run; times are counted apart \
         (not comparable on 2 shared cores); its claims held, not held and untestable here. Each \
         paper's page has the full table; all of it is in <a href=\"scorecard.csv\">scorecard.csv</a>.</p>\n",
    );
    s += &totals_table(card, "paper");
    if card
        .papers
        .iter()
        .any(|p| card.profiles(&p.key).contains(&"quick"))
    {
        s += "<p>Profile <code>quick</code> (scaled down: the paper's numbers for orientation only):</p>\n";
        s += &totals_table(card, "quick");
    }
    s
}
