//! Damaged and hostile results folders given to `report`, `compare`, `check` and `render`
//! (issue 41): each test is named by the class of failure it guards against — a hang, an abort
//! (an allocation that cannot succeed), an exit 0 on bad input, a leftover file.

use super::hardening::{dpca, files_under, run_args, run_base};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const FOLDER: &str = "res/faps/base/quick";

/// `dpca args` in `cwd`, killed (and the test failed) after `limit`.
fn dpca_within(cwd: &Path, args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dpca"))
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("dpca {args:?} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// A folder with the base manifest's quick results in `res`.
fn base() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    run_base(dir.path());
    dir
}

fn said(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A failure that names every one of `names`, with exit status 1 or 2 (not a panic's 101).
fn fails_naming(o: &Output, names: &[&str]) {
    let text = said(o);
    assert!(
        matches!(o.status.code(), Some(1 | 2)),
        "{:?}: {text}",
        o.status
    );
    assert!(!text.contains("panicked"), "{text}");
    for n in names {
        assert!(text.contains(n), "does not name {n:?}: {text}");
    }
}

/// The CSV's lines (header first) and a writer back.
fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn write_lines(path: &Path, lines: &[String]) {
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

fn column(header: &str, name: &str) -> usize {
    header.split(',').position(|h| h == name).unwrap()
}

#[cfg(unix)]
#[test]
fn hang_symlinks_in_a_results_tree_are_not_followed() {
    use std::os::unix::fs::symlink;
    let dir = base();
    let d = dir.path();
    // Two links back to the root (an exponential walk when followed), a self-link in the
    // folder, and a link to a results tree outside the root that `report` must not write into.
    let res = d.join("res");
    symlink(&res, res.join("a")).unwrap();
    symlink(&res, res.join("b")).unwrap();
    symlink(".", d.join(FOLDER).join("self")).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let copy = outside.path().join("faps/other/quick");
    std::fs::create_dir_all(&copy).unwrap();
    for f in ["summary.csv", "trace.csv", "run.json"] {
        std::fs::copy(d.join(FOLDER).join(f), copy.join(f)).unwrap();
    }
    symlink(outside.path(), res.join("elsewhere")).unwrap();
    let limit = Duration::from_secs(60);

    let out = dpca_within(d, &["report", "--results", "res"], limit);
    assert!(out.status.success(), "{}", said(&out));
    assert!(said(&out).contains("2 pages"), "{}", said(&out));
    let before: Vec<_> = files_under(outside.path());
    assert!(
        !before.iter().any(|f| f.ends_with("index.html")),
        "{before:?}"
    );

    let out = dpca_within(d, &["compare", "res", "res"], limit);
    assert!(out.status.success(), "{}", said(&out));
    let listed = said(&out).matches("faps/base/quick").count();
    assert_eq!(listed, 1, "{}", said(&out));

    // The manifests' walk (`list`, `verify`, `reproduce`) too.
    symlink(d.join("m"), d.join("m/loop")).unwrap();
    let out = dpca_within(d, &["list", "--experiments", "m"], limit);
    assert!(out.status.success(), "{}", said(&out));
    assert_eq!(
        said(&out).matches("m/base.toml").count(),
        1,
        "{}",
        said(&out)
    );
}

#[test]
fn exit0_check_refuses_a_run_json_listing_no_files() {
    let dir = base();
    let d = dir.path();
    let json = d.join(FOLDER).join("run.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    v["files"] = serde_json::json!({});
    std::fs::write(&json, serde_json::to_vec(&v).unwrap()).unwrap();
    fails_naming(
        &dpca(d, &["check", FOLDER]),
        &["run.json", "trace.csv", "does not name"],
    );
}

#[test]
fn exit0_render_refuses_a_trace_shorter_than_the_summary() {
    let dir = base();
    let d = dir.path();
    let trace = d.join(FOLDER).join("trace.csv");
    let mut rows = lines(&trace);
    // The last round of the first run goes: its trace now ends one round early.
    let method = column(&rows[0], "method");
    let first = rows[1].split(',').nth(method).unwrap().to_string();
    let last = rows
        .iter()
        .rposition(|l| l.split(',').nth(method) == Some(first.as_str()))
        .unwrap();
    rows.remove(last);
    write_lines(&trace, &rows);
    fails_naming(
        &dpca(d, &["render", FOLDER]),
        &["trace.csv", "summary.csv", "rounds"],
    );
}

#[test]
fn exit0_render_refuses_byte_counts_whose_sum_overflows() {
    let dir = base();
    let d = dir.path();
    let trace = d.join(FOLDER).join("trace.csv");
    let mut rows = lines(&trace);
    let (up, down) = (column(&rows[0], "bytes_up"), column(&rows[0], "bytes_down"));
    let mut cells: Vec<String> = rows[3].split(',').map(str::to_string).collect();
    cells[up] = u64::MAX.to_string();
    cells[down] = "8".into();
    rows[3] = cells.join(",");
    write_lines(&trace, &rows);
    fails_naming(
        &dpca(d, &["render", FOLDER]),
        &["trace.csv:4", "bytes_up", "bytes_down", "overflow"],
    );
}

#[test]
fn abort_duplicated_summary_rows_are_refused_not_joined_with_every_trace_row() {
    let dir = base();
    let d = dir.path();
    let summary = d.join(FOLDER).join("summary.csv");
    let rows = lines(&summary);
    let mut many = vec![rows[0].clone()];
    many.extend(std::iter::repeat_n(rows[1].clone(), 4000));
    write_lines(&summary, &many);
    let t0 = Instant::now();
    let out = dpca_within(d, &["render", FOLDER], Duration::from_secs(60));
    fails_naming(&out, &["summary.csv", "lines 2 and 3", "the same run"]);
    eprintln!(
        "4,000 duplicated summary rows refused in {:?}",
        t0.elapsed()
    );
    // `report` reads folders the same way.
    fails_naming(
        &dpca_within(d, &["report", "--results", "res"], Duration::from_secs(60)),
        &["summary.csv", "the same run"],
    );
}

/// One manifest that no longer loads costs its own folder only: `report` renders the others and
/// the index (which names the broken one), leaves no temporary file, and exits non-zero naming
/// the manifest, its line and key.
#[test]
fn exit0_report_renders_the_rest_past_an_unloadable_manifest() {
    let dir = base();
    let d = dir.path();
    let base = std::fs::read_to_string(d.join("m/base.toml")).unwrap();
    std::fs::write(
        d.join("m/twin.toml"),
        base.replacen("id = \"base\"", "id = \"twin\"", 1),
    )
    .unwrap();
    let mut args = run_args();
    args[1] = "m/twin.toml".into();
    let out = dpca(d, &args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{}", said(&out));
    std::fs::write(
        d.join("m/base.toml"),
        base.replacen("seed = 5", "seed = 5\nbogus = 1", 1),
    )
    .unwrap();

    let out = dpca(d, &["report", "--results", "res"]);
    fails_naming(
        &out,
        &[
            "faps/base/quick",
            "base.toml:",
            "bogus",
            "1 experiment(s) could not be read",
        ],
    );
    let index = std::fs::read_to_string(d.join("res/index.html")).unwrap();
    assert!(
        index.contains("Not in this report") && index.contains("bogus"),
        "{index}"
    );
    assert!(index.contains("faps/twin/quick/index.html"), "{index}");
    assert!(d.join("res/faps/twin/quick/index.html").is_file());
    assert!(!d.join("res/faps/base/quick/index.html").exists());
    let temps: Vec<_> = files_under(&d.join("res"))
        .into_iter()
        .filter(|f| f.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(temps.is_empty(), "{temps:?}");
}

/// Every URL a page's elements point at, resolved by headless Chromium: the page loads in an
/// iframe of a harness (file pages may read each other's DOM with --allow-file-access-from-files).
fn urls_in_chromium(page: &Path) -> Vec<String> {
    let tmp = tempfile::tempdir().unwrap();
    let harness = tmp.path().join("harness.html");
    std::fs::write(
        &harness,
        format!(
            "<!DOCTYPE html><html><body><script>var f=document.createElement('iframe');\
             f.src={};f.onload=function(){{var d=f.contentDocument;var u=[];\
             d.querySelectorAll('[href],[src]').forEach(function(e){{u.push(e.href||e.src)}});\
             document.body.setAttribute('data-urls',JSON.stringify(u))}};\
             document.body.appendChild(f);</script></body></html>",
            serde_json::to_string(&format!("file://{}", page.display())).unwrap()
        ),
    )
    .unwrap();
    let out = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--allow-file-access-from-files",
            "--virtual-time-budget=20000",
        ])
        .arg(format!(
            "--user-data-dir={}",
            tmp.path().join("p").display()
        ))
        .arg("--dump-dom")
        .arg(format!("file://{}", harness.display()))
        .output()
        .expect("cannot start chromium: `make deps` installs it");
    let dom = String::from_utf8_lossy(&out.stdout);
    let start = dom
        .find("data-urls=\"")
        .expect("the harness did not finish")
        + 11;
    let raw = &dom[start..];
    let json = raw[..raw.find('"').unwrap()]
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    serde_json::from_str(&json).unwrap()
}

/// Hostile text in a manifest, a CSV cell and a run.json error: the page `report` writes has no
/// link or image leaving the results folder's file tree, as parsed and as Chromium resolves it.
#[test]
fn injection_hostile_text_makes_no_live_link_or_remote_image() {
    let dir = base();
    let d = dir.path();
    let evil = "[a](javascript:alert(1)) <javascript:alert(2)> ![](https://evil.example/i.png) \
                [b](JaVaScRiPt:alert(3)) <https://evil.example/> [c](//evil.example/x)";
    let manifest = d.join("m/base.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let text = text
        .replacen(
            "title = \"hardening base\"",
            &format!("title = {evil:?}"),
            1,
        )
        .replacen(
            "reproduces = \"nothing\"",
            &format!("reproduces = {evil:?}"),
            1,
        );
    std::fs::write(&manifest, text).unwrap();
    let summary = d.join(FOLDER).join("summary.csv");
    let mut rows = lines(&summary);
    let stop = column(&rows[0], "stop_reason");
    let mut cells: Vec<String> = rows[1].split(',').map(str::to_string).collect();
    // A stop reason must read as one ("<metric>_target" does for any metric name) to render.
    cells[stop] = "![](https://evil.example/cell.png)[d](javascript:alert(4))_target".into();
    rows[1] = cells.join(",");
    write_lines(&summary, &rows);
    let json = d.join(FOLDER).join("run.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    v["runs"][0]["error"] = evil.into();
    std::fs::write(&json, serde_json::to_vec(&v).unwrap()).unwrap();

    let out = dpca(d, &["report", "--results", "res"]);
    assert!(out.status.success(), "{}", said(&out));
    let page = d.join(FOLDER).join("index.html");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("evil.example"),
        "the hostile text is not shown"
    );
    for attr in ["href=\"", "src=\""] {
        for (at, _) in html.match_indices(attr) {
            let rest = &html[at + attr.len()..];
            let url = rest[..rest.find('"').unwrap()].to_ascii_lowercase();
            assert!(
                !url.contains(':') && !url.starts_with("//"),
                "{attr}{url}\" in the page"
            );
        }
    }
    let urls = urls_in_chromium(&page);
    assert!(!urls.is_empty());
    for u in &urls {
        assert!(u.starts_with("file:///"), "Chromium resolves {u:?}");
        assert!(!u.contains("evil.example"), "{u}");
    }
    eprintln!("{} URLs in the page, every one a local file", urls.len());
}

/// What a SIGINT or kill during a cache write, a stored run's write or the report phase leaves
/// (nothing unwinds: there is no signal handler) is removed by the next run of the same folder
/// and cache.
#[test]
fn leftover_temp_files_of_killed_runs_are_removed_by_the_next_run() {
    let dir = base();
    let d = dir.path();
    let mut child = Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let folder = d.join(FOLDER);
    std::fs::create_dir_all(d.join("cache")).unwrap();
    let planted = [
        folder.join(format!(".trace.csv.{dead}-0.tmp")),
        folder.join(format!(".kkt.svg.{dead}-1.tmp.svg")),
        folder.join("runs").join(format!(".x.json.{dead}-2.tmp")),
        d.join("cache").join(format!(".svd-0123.f64.{dead}-0.tmp")),
    ];
    for p in &planted {
        std::fs::write(p, vec![0u8; 4096]).unwrap();
    }
    // Every run is stored: this run resumes them all and rewrites the report.
    let args = run_args();
    let out = dpca(d, &args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{}", said(&out));
    let left: Vec<_> = planted.iter().filter(|p| p.exists()).collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// Text of a user's file echoed in an error (a data file's field, a compared CSV cell) reaches
/// the terminal with its control characters escaped: no ESC sequence runs.
#[test]
fn escape_file_text_in_errors_is_escaped_for_the_terminal() {
    let dir = base();
    let d = dir.path();
    let esc = "\u{1b}]0;owned\u{7}\u{1b}[2J";
    // A data file's field.
    let mut csv = String::new();
    for i in 0..30 {
        csv += &format!("{i},1,2,3\n");
    }
    csv += &format!("1,{esc},2,3\n");
    std::fs::write(d.join("m/x.csv"), csv).unwrap();
    let text = std::fs::read_to_string(d.join("m/base.toml")).unwrap();
    let (start, end) = (
        text.find("[data]").unwrap(),
        text.find("[partition]").unwrap(),
    );
    let text = format!(
        "{}[data]\nsource = \"x.csv\"\n\n{}",
        &text[..start],
        &text[end..]
    );
    std::fs::write(d.join("m/base.toml"), text).unwrap();
    let args = run_args();
    let out = dpca(d, &args.iter().map(String::as_str).collect::<Vec<_>>());
    fails_naming(&out, &["x.csv", "line 31", "\\u{1b}"]);
    assert!(!said(&out).contains('\u{1b}'), "{}", said(&out));

    // A compared CSV cell.
    let copy = d.join("copy");
    std::fs::create_dir_all(&copy).unwrap();
    for f in ["summary.csv", "trace.csv"] {
        std::fs::copy(d.join(FOLDER).join(f), copy.join(f)).unwrap();
    }
    let summary = copy.join("summary.csv");
    let mut rows = lines(&summary);
    let stop = column(&rows[0], "stop_reason");
    let mut cells: Vec<String> = rows[1].split(',').map(str::to_string).collect();
    cells[stop] = esc.into();
    rows[1] = cells.join(",");
    write_lines(&summary, &rows);
    let out = dpca(d, &["compare", FOLDER, "copy"]);
    assert_eq!(out.status.code(), Some(1), "{}", said(&out));
    assert!(said(&out).contains("\\u{1b}"), "{}", said(&out));
    assert!(!said(&out).contains('\u{1b}'), "{}", said(&out));
}
