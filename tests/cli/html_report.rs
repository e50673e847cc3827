//! The HTML report (`dpca report`): the committed pages are those the committed results give,
//! and headless Chromium (Debian's chromium; `make deps` installs it) loads every one of them
//! from the file system with every image resolved and the tables present.

use dpca_bench::report::html::{site, site_and_scorecard, SCORECARD_CSV};
use std::path::{Path, PathBuf};
use std::process::Command;

fn results() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("results")
}

#[test]
fn committed_pages_are_current() {
    // results/ never mixes formats: after a re-render, `dpca report` (make report) rewrites them.
    let (pages, card) = site_and_scorecard(&results()).unwrap();
    let mut stale = Vec::new();
    for p in &pages {
        let path = results().join(&p.path);
        if std::fs::read_to_string(&path).ok().as_deref() != Some(p.html.as_str()) {
            stale.push(p.path.display().to_string());
        }
    }
    let csv = card.expect("the repository's papers/").csv().unwrap();
    if std::fs::read_to_string(results().join(SCORECARD_CSV)).ok() != Some(csv) {
        stale.push(SCORECARD_CSV.into());
    }
    assert!(
        stale.is_empty(),
        "{} of {} pages differ from what `dpca report` writes now (run `make report`): {}",
        stale.len(),
        pages.len(),
        stale.join(", ")
    );
}

/// What a page's own check wrote into `data-check` once it had loaded.
#[derive(serde::Deserialize, Debug)]
struct Check {
    images: usize,
    broken: Vec<String>,
    tables: usize,
}

/// Load every page in one headless Chromium, one after another in an iframe of a harness page
/// (file pages may read each other's DOM with --allow-file-access-from-files), and read back
/// each page's check: None for a page that did not load or whose check did not run.
fn load_all(pages: &[PathBuf]) -> Vec<Option<Check>> {
    let tmp = tempfile::tempdir().unwrap();
    let urls: Vec<String> = pages
        .iter()
        .map(|p| format!("file://{}", p.display()))
        .collect();
    let harness = tmp.path().join("harness.html");
    std::fs::write(
        &harness,
        format!(
            "<!DOCTYPE html><html><body><script>\
             var pages={};var out=[];var i=0;\
             function next(){{if(i>=pages.length){{document.body.setAttribute('data-result',\
             JSON.stringify(out));return;}}var f=document.createElement('iframe');f.src=pages[i];\
             f.onload=function(){{var c=null;try{{c=f.contentDocument.body.getAttribute('data-check');}}\
             catch(e){{}}out.push(c);f.remove();i++;next();}};document.body.appendChild(f);}}\
             next();</script></body></html>",
            serde_json::to_string(&urls).unwrap()
        ),
    )
    .unwrap();
    let started = std::time::Instant::now();
    let out = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--allow-file-access-from-files",
            // Virtual time: runs as fast as the pages load, up to this long.
            "--virtual-time-budget=120000",
        ])
        .arg(format!(
            "--user-data-dir={}",
            tmp.path().join("profile").display()
        ))
        .arg("--dump-dom")
        .arg(format!("file://{}", harness.display()))
        .output()
        .expect("cannot start chromium: `make deps` installs it (Debian's chromium package)");
    eprintln!(
        "chromium: {} pages in {:.1} s",
        pages.len(),
        started.elapsed().as_secs_f64()
    );
    let dom = String::from_utf8_lossy(&out.stdout);
    let unescape = |s: &str| {
        s.replace("&quot;", "\"")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&")
    };
    let start = dom.find("data-result=\"").unwrap_or_else(|| {
        panic!(
            "the harness did not finish (status {}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
    }) + "data-result=\"".len();
    let raw = &dom[start..];
    let each: Vec<Option<String>> =
        serde_json::from_str(&unescape(&raw[..raw.find('"').unwrap()])).unwrap();
    each.into_iter()
        .map(|c| c.map(|c| serde_json::from_str(&c).unwrap()))
        .collect()
}

#[test]
fn every_page_loads_in_chromium_with_its_images_and_tables() {
    let root = results();
    let pages = site(&root).unwrap();
    // What each page must show: (path, images, tables).
    let mut expect: Vec<(PathBuf, usize, usize)> = pages
        .iter()
        .map(|p| {
            let images = p.html.matches("<img ").count();
            let tables = p.html.matches("<table").count();
            let path = root.join(&p.path);
            // A folder's page shows every figure its run.json lists.
            if let Ok(text) = std::fs::read_to_string(path.with_file_name("run.json")) {
                let json: serde_json::Value = serde_json::from_str(&text).unwrap();
                let svgs = json["files"]
                    .as_object()
                    .unwrap()
                    .keys()
                    .filter(|k| k.ends_with(".svg"))
                    .count();
                assert_eq!(images, svgs, "{}: figures", p.path.display());
            }
            (path, images, tables)
        })
        .collect();
    assert!(
        expect[0].0.ends_with("index.html") && expect[0].2 >= 5,
        "the index has one table per paper"
    );
    assert!(
        expect[1..].iter().all(|e| e.2 >= 1),
        "every experiment page has a table"
    );
    // The control needs a page with figures.
    let with_figures = expect.iter().position(|e| e.1 > 0).unwrap();
    // A control the check must fail: a page whose figures are not beside it.
    let tmp = tempfile::tempdir().unwrap();
    let lone = tmp.path().join("lone.html");
    std::fs::copy(&expect[with_figures].0, &lone).unwrap();
    expect.push((lone, expect[with_figures].1, expect[with_figures].2));
    let paths: Vec<PathBuf> = expect.iter().map(|e| e.0.clone()).collect();
    let checks = load_all(&paths);
    let (control, checks) = checks.split_last().unwrap();
    let control = control.as_ref().expect("the control page loads");
    assert_eq!(
        control.broken.len(),
        expect[with_figures].1,
        "missing figures are reported"
    );
    let mut failures = Vec::new();
    for ((path, images, tables), check) in expect.iter().zip(checks) {
        match check {
            None => failures.push(format!("{}: did not load", path.display())),
            Some(c) if !c.broken.is_empty() => failures.push(format!(
                "{}: images not loaded: {:?}",
                path.display(),
                c.broken
            )),
            Some(c) if c.images != *images || c.tables != *tables => failures.push(format!(
                "{}: {} images and {} tables shown, {images} and {tables} written",
                path.display(),
                c.images,
                c.tables
            )),
            Some(_) => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
