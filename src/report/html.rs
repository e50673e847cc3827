//! `dpca report`: results/index.html and one index.html per results folder, readable from the
//! file system (relative links, no scripts or styles fetched from anywhere).
//!
//! A folder's page is its report as `dpca render` builds it — the manifest and the committed
//! CSVs through [`super::markdown::report`] — turned into HTML by pulldown-cmark, with raw HTML in
//! the Markdown escaped as text and figures shown as SVG. The index lists every experiment of
//! every paper with its claims judged by [`super::claims::judge`].

use super::claims::judge;
use super::page::{esc, href, page, safe_url};
use super::placeholders::render;
use super::reload::{folders, load_folder, Folder};
use super::scorecard::Scorecard;
use super::scorecard_html;
use crate::util::atomic_write;
use anyhow::Result;
use pulldown_cmark::{Event, Options, Parser, Tag};
use std::fmt::Write;
use std::path::{Path, PathBuf};

pub use super::page::Page;

/// Markdown to HTML: tables on, raw HTML shown as text, images pointing at the SVG beside a
/// PNG when there is one; a link or image whose URL is not [`safe_url`] is left as its text.
fn markdown_to_html(md: &str, dir: &Path) -> String {
    // Whether each open link or image is kept, to drop its end with it.
    let mut kept: Vec<bool> = Vec::new();
    let events = Parser::new_ext(md, Options::ENABLE_TABLES).filter_map(|e| match e {
        Event::Start(Tag::Link { ref dest_url, .. } | Tag::Image { ref dest_url, .. }) => {
            kept.push(safe_url(dest_url));
            kept.last()
                .copied()
                .unwrap_or(false)
                .then(|| local_image(e, dir))
        }
        Event::End(pulldown_cmark::TagEnd::Link | pulldown_cmark::TagEnd::Image) => {
            kept.pop().unwrap_or(false).then_some(e)
        }
        e => Some(local_image(e, dir)),
    });
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, events);
    out
}

/// An event with raw HTML shown as text and an image pointing at its SVG when there is one.
fn local_image<'a>(e: Event<'a>, dir: &Path) -> Event<'a> {
    match e {
        Event::Html(t) | Event::InlineHtml(t) => Event::Text(t),
        Event::Start(Tag::Image {
            link_type,
            dest_url,
            title,
            id,
        }) => {
            let svg = dest_url
                .strip_suffix(".png")
                .map(|stem| format!("{stem}.svg"))
                .filter(|svg| dir.join(svg).is_file());
            Event::Start(Tag::Image {
                link_type,
                dest_url: svg.map_or(dest_url, Into::into),
                title,
                id,
            })
        }
        e => e,
    }
}

/// The figures' stems in the order the report lists them: the manifest's plots, each one file
/// or its panels.
fn figure_stems(f: &Folder) -> Vec<PathBuf> {
    let svgs: Vec<&str> = f
        .files
        .iter()
        .filter_map(|n| n.strip_suffix(".svg"))
        .collect();
    let mut stems: Vec<&str> = Vec::new();
    for p in &f.exp.plots {
        if svgs.contains(&p.file.as_str()) {
            stems.push(&p.file);
        } else {
            let mut panels: Vec<&str> = svgs
                .iter()
                .copied()
                .filter(|s| s.starts_with(&format!("{}_", p.file)) && !stems.contains(s))
                .collect();
            panels.sort();
            stems.extend(panels);
        }
    }
    for s in &svgs {
        if !stems.contains(s) {
            stems.push(s);
        }
    }
    stems.into_iter().map(|s| f.out.dir.join(s)).collect()
}

/// Links to the folder's data files, relative to `prefix` (the way from the page to the folder).
fn file_links(f: &Folder, prefix: &str) -> String {
    let mut names: Vec<&str> = ["report.md", "summary.csv", "trace.csv", "spectra.csv"]
        .into_iter()
        .filter(|n| f.files.iter().any(|x| x == n))
        .collect();
    names.push("run.json");
    names
        .iter()
        .map(|n| {
            format!(
                "<a href=\"{}\">{}</a>",
                href(&format!("{prefix}{n}")),
                esc(n)
            )
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

/// A folder's page; `scored`: its paper has a scorecard page to link to.
fn folder_page(f: &Folder, scored: bool) -> Page {
    let up = "../".repeat(f.rel.components().count());
    let md = super::markdown::report(&f.exp, &f.out, &figure_stems(f));
    let paper = if scored {
        format!(
            " · <a href=\"{}\">the paper's scorecard</a>",
            href(&format!("{up}{}/index.html", f.exp.paper))
        )
    } else {
        String::new()
    };
    let body = format!(
        "<nav><a href=\"{}index.html\">All experiments</a>{paper} · {} · files: {}</nav>\n<main>\n{}</main>",
        href(&up),
        esc(&f.rel.display().to_string()),
        file_links(f, ""),
        markdown_to_html(&md, &f.out.dir)
    );
    Page {
        path: f.rel.join("index.html"),
        html: page(&format!("{} — {}", f.exp.title, f.rel.display()), &body),
    }
}

fn index_page(folders: &[Folder], card: Option<&Scorecard>, errors: &[String]) -> Page {
    let mut body = String::from("<main>\n<h1>dpca-bench results</h1>\n");
    if !errors.is_empty() {
        let items: String = errors
            .iter()
            .map(|e| format!("<li><pre>{}</pre></li>", esc(e)))
            .collect();
        let _ = writeln!(
            body,
            "<h2 id=\"unreadable\">Not in this report</h2>\n<p>These results folders or \
             manifests could not be read; everything else is rendered.</p>\n<ul>{items}</ul>"
        );
    }
    if let Some(card) = card {
        body += &scorecard_html::index_section(card);
    }
    let _ = writeln!(
        body,
        "<p>Every committed results folder: what it reproduces, whether the paper's claims hold \
         in our runs (✔ holds, ✘ does not), and links to its page (claims with the numbers behind \
         them, the paper's numbers beside ours, figures), its CSVs and run.json. Rebuilt by \
         <code>dpca report</code> from the CSVs, run.json and manifests.</p>"
    );
    let mut papers: Vec<&str> = folders.iter().map(|f| f.exp.paper.as_str()).collect();
    papers.dedup();
    let _ = writeln!(
        body,
        "<nav>{}</nav>",
        papers
            .iter()
            .map(|p| format!("<a href=\"#{}\">{}</a>", href(p), esc(p)))
            .collect::<Vec<_>>()
            .join(" · ")
    );
    for paper in papers {
        let of: Vec<&Folder> = folders.iter().filter(|f| f.exp.paper == paper).collect();
        let file = &of[0].exp.paper_file;
        // The paper by name when the registry knows it, its scorecard page linked.
        match &of[0].exp.paper_record {
            Some(r) => {
                let scored = card.is_some_and(|c| !c.profiles(paper).is_empty());
                let link = format!("{paper}/index.html");
                let _ = writeln!(
                    body,
                    "{}",
                    scorecard_html::paper_heading(r, "h2", scored.then_some(link.as_str()))
                );
            }
            None => {
                let _ = writeln!(
                    body,
                    "<h2 id=\"{}\">{}</h2>\n{}",
                    esc(paper),
                    esc(paper),
                    if file.is_empty() {
                        String::new()
                    } else {
                        format!("<p>Paper: <code>{}</code></p>", esc(file))
                    }
                );
            }
        }
        let _ = writeln!(
            body,
            "<table class=\"index\">\n<thead><tr><th>experiment</th><th>profile</th><th>reproduces</th>\
             <th>runs</th><th>claims</th><th>files</th></tr></thead>\n<tbody>"
        );
        for f in of {
            let page = format!("{}/index.html", f.rel.display());
            let claims = if f.exp.claims.is_empty() {
                "—".to_string()
            } else {
                let items: String = f
                    .exp
                    .claims
                    .iter()
                    .map(|c| {
                        let holds = judge(&f.exp, c, &f.out.records).holds;
                        format!(
                            "<li class=\"{}\">{} {}</li>",
                            if holds { "holds" } else { "fails" },
                            if holds { "✔" } else { "✘" },
                            esc(&render(&f.exp, &f.out.records, &c.text))
                        )
                    })
                    .collect();
                format!("<ul class=\"claims\">{items}</ul>")
            };
            let reproduces = if f.exp.reproduces.is_empty() {
                &f.exp.title
            } else {
                &f.exp.reproduces
            };
            let _ = writeln!(
                body,
                "<tr><td><a href=\"{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td>\
                 <td class=\"claims\">{claims}</td><td>{}</td></tr>",
                href(&page),
                esc(&f.exp.id),
                esc(&f.exp.profile),
                esc(reproduces),
                f.out.records.len(),
                file_links(f, &format!("{}/", f.rel.display())),
            );
        }
        let _ = writeln!(body, "</tbody>\n</table>");
    }
    body += "</main>";
    Page {
        path: "index.html".into(),
        html: page("dpca-bench results", &body),
    }
}

/// Every page of the site over the results under `root`: the index first, then each paper's
/// scorecard page, then each folder's page.
pub fn site(root: &Path) -> Result<Vec<Page>> {
    Ok(site_and_scorecard(root)?.0)
}

/// The pages of [`site`] and the scorecard (None without a paper registry above `root`); an
/// error if any folder or manifest could not be read.
pub fn site_and_scorecard(root: &Path) -> Result<(Vec<Page>, Option<Scorecard>)> {
    let site = build(root)?;
    unreadable(&site.errors)?;
    Ok((site.pages, site.card))
}

/// The site with whatever could be read, and a line per results folder or manifest that could
/// not: one broken experiment neither hides the others nor stops the report.
struct Site {
    pages: Vec<Page>,
    card: Option<Scorecard>,
    errors: Vec<String>,
}

fn build(root: &Path) -> Result<Site> {
    let (loaded, mut errors) = load_all(root)?;
    if loaded.is_empty() && errors.is_empty() {
        anyhow::bail!("{}: no results folders (with a run.json)", root.display());
    }
    let card = Scorecard::of_results(root, &loaded)?;
    errors.extend(card.iter().flat_map(|c| c.errors.iter().cloned()));
    let mut pages = vec![index_page(&loaded, card.as_ref(), &errors)];
    if let Some(card) = &card {
        pages.extend(scorecard_html::paper_pages(card));
    }
    pages.extend(loaded.iter().map(|f| {
        let scored = card
            .as_ref()
            .is_some_and(|c| !c.profiles(&f.exp.paper).is_empty());
        folder_page(f, scored)
    }));
    Ok(Site {
        pages,
        card,
        errors,
    })
}

/// The results folders under `root` that load, and an error line for each that does not
/// ("<folder>: why").
pub fn load_all(root: &Path) -> Result<(Vec<Folder>, Vec<String>)> {
    let (mut loaded, mut errors) = (Vec::new(), Vec::new());
    for rel in folders(root)? {
        match load_folder(root, &rel) {
            Ok(f) => loaded.push(f),
            Err(e) => errors.push(format!("{}: {e:#}", root.join(&rel).display())),
        }
    }
    Ok((loaded, errors))
}

/// An error listing `errors`, if any.
pub fn unreadable(errors: &[String]) -> Result<()> {
    if errors.is_empty() {
        return Ok(());
    }
    anyhow::bail!(
        "{} experiment(s) could not be read, and are missing from the report:\n{}",
        errors.len(),
        errors.join("\n")
    )
}

/// Write every page of [`site`] and results/scorecard.csv (with a registry), each atomically;
/// the number of pages and whether the scorecard was written. A folder or manifest that cannot
/// be read is left out (its old page stays as it was) and named in the index; after writing the
/// rest, the result is an error naming each.
pub fn write_site(root: &Path) -> Result<(usize, bool)> {
    let site = build(root)?;
    for p in &site.pages {
        atomic_write(&root.join(&p.path), p.html.as_bytes())?;
    }
    if let Some(card) = &site.card {
        atomic_write(&root.join(SCORECARD_CSV), card.csv()?.as_bytes())?;
    }
    unreadable(&site.errors)?;
    Ok((site.pages.len(), site.card.is_some()))
}

/// The scorecard's file under the results root.
pub const SCORECARD_CSV: &str = "scorecard.csv";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_html_is_escaped_and_figures_are_their_svg() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.svg"), "<svg/>").unwrap();
        let md = "x <script>alert(1)</script> & <b>y</b>\n\n<div onclick=\"z\">\n\n\
                  ![a](a.png) ![b](b.png)\n\n| h |\n|---|\n| <i>c</i> |\n";
        let html = markdown_to_html(md, dir.path());
        assert!(!html.contains("<script>") && !html.contains("<b>") && !html.contains("<div"));
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp;"),
            "{html}"
        );
        assert!(
            html.contains("src=\"a.svg\"") && html.contains("src=\"b.png\""),
            "{html}"
        );
        assert!(
            html.contains("<table>") && html.contains("&lt;i&gt;c&lt;/i&gt;"),
            "{html}"
        );
        assert_eq!(esc("\"<&>"), "&quot;&lt;&amp;&gt;");
    }

    /// Every `href="…"` and `src="…"` value of `html`, its entities decoded.
    pub(crate) fn urls(html: &str) -> Vec<String> {
        let mut out = Vec::new();
        for attr in ["href=\"", "src=\""] {
            for (at, _) in html.match_indices(attr) {
                let rest = &html[at + attr.len()..];
                let value = &rest[..rest.find('"').unwrap_or(rest.len())];
                out.push(
                    value
                        .replace("&amp;", "&")
                        .replace("&#x27;", "'")
                        .replace("&quot;", "\""),
                );
            }
        }
        out
    }

    /// Hostile text from a manifest, a CSV cell or a run.json error becomes no live link to a
    /// scheme and no remote image: links and images with such URLs are left as their text.
    #[test]
    fn injection_links_and_images_are_relative_only() {
        let dir = tempfile::tempdir().unwrap();
        let hostile = [
            "[x](javascript:alert(1))",
            "[x](JaVaScRiPt:alert(1))",
            "[x](java&#9;script:alert(1))",
            "[x](&#106;avascript:alert(1))",
            "[x]( javascript:alert(1) )",
            "<javascript:alert(1)>",
            "<JAVASCRIPT:alert(1)>",
            "[x](data:text/html,<script>alert(1)</script>)",
            "[x](vbscript:msgbox)",
            "[x](//evil.example/x)",
            "[x](\\\\evil.example\\x)",
            "[x](https://evil.example/)",
            "<https://evil.example/>",
            "![](https://evil.example/x.png)",
            "![a](//evil.example/x.png)",
            "![a](file:///etc/passwd)",
            "[![a](https://evil.example/i.png)](javascript:alert(1))",
            "[x][r]\n\n[r]: javascript:alert(1)",
            "| a |\n|---|\n| [c](javascript:alert(1)) ![](http://e.example/p.png) |",
        ];
        for md in hostile {
            let html = markdown_to_html(md, dir.path());
            for url in urls(&html) {
                assert!(safe_url(&url), "{md:?} gave {url:?}: {html}");
                let lower = url.to_ascii_lowercase();
                assert!(
                    !lower.contains("script:") && !lower.contains("//"),
                    "{md:?}: {html}"
                );
            }
            assert!(!html.contains("<img"), "{md:?}: {html}");
        }
        // What is relative still links and shows.
        let html = markdown_to_html("[a](b/c.csv) [d](#e) ![f](g.png) [h](i:j/../k)", dir.path());
        assert_eq!(urls(&html), ["b/c.csv", "#e", "g.png"], "{html}");
        assert!(html.contains(">h</p>") || html.contains(" h</p>"), "{html}");
        assert_eq!(
            href("javascript:x/y/index.html"),
            "./javascript:x/y/index.html"
        );
        assert_eq!(href("../../index.html"), "../../index.html");
    }
}
