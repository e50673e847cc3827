//! The frame of every page of the HTML site: escaping, safe relative links, the head with its
//! style, and the script that reports what a page shows (for the Chromium test).

use pulldown_cmark_escape::{escape_href, escape_html};
use std::path::PathBuf;

/// A page of the site: its path relative to the results root, and its HTML.
pub struct Page {
    pub path: PathBuf,
    pub html: String,
}

/// `s` as HTML text or attribute value.
pub(super) fn esc(s: &str) -> String {
    let mut out = String::new();
    let _ = escape_html(&mut out, s);
    out
}

/// An attribute value for a link to `s`, a path relative to the page: one that a folder's name
/// would turn into a scheme (`javascript:x/…`) is made `./javascript:x/…`.
pub(super) fn href(s: &str) -> String {
    let s = if safe_url(s) {
        s.to_string()
    } else {
        format!("./{s}")
    };
    let mut out = String::new();
    let _ = escape_href(&mut out, &s);
    esc(&out)
}

const STYLE: &str = "body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1200px;\
padding:1em 2em;color:#222}table{border-collapse:collapse;margin:.6em 0;font-size:13px;\
display:block;overflow-x:auto}th,td{border:1px solid #ccc;padding:2px 6px}th{background:#f2f2f2}\
td{white-space:nowrap}img{max-width:100%;height:auto;display:block;margin:.5em 0}\
code{background:#f4f4f4;padding:0 3px}nav{margin:.5em 0 1em;font-size:14px}\
blockquote{border-left:3px solid #ccc;margin-left:0;padding-left:1em;color:#555}\
.holds{color:#176d2c}.fails{color:#b3261e}ul.claims{margin:0;padding-left:1.2em;white-space:normal}\
table.index td{white-space:normal}td.claims{min-width:24em}";

/// Writes what the page shows into the DOM once it has loaded: how many images, which did not
/// load, how many tables (the Chromium test reads it from `data-check`).
const CHECK: &str = "addEventListener('load',function(){var i=Array.prototype.slice.call(\
document.images);document.body.setAttribute('data-check',JSON.stringify({images:i.length,\
broken:i.filter(function(x){return !(x.complete&&x.naturalWidth>0)}).map(function(x){return \
x.getAttribute('src')}),tables:document.getElementsByTagName('table').length}))});";

pub(super) fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}\n\
         <script>{CHECK}</script>\n</body>\n</html>\n",
        esc(title)
    )
}

/// Whether `url` may become a link or an image in a page: a relative path or a `#fragment` of
/// this site. Text of manifests, CSV cells and run.json errors reaches the Markdown, so any
/// scheme (`javascript:`, `data:`, `https:`: the pages need no network), a `//host` or a `\`
/// (which browsers read as `/`) is refused; so is any control character or space, which URL
/// parsers strip (`java\tscript:` is `javascript:` to them).
pub(super) fn safe_url(url: &str) -> bool {
    let before_path = url.split(['/', '?', '#']).next().unwrap_or_default();
    !url.starts_with("//")
        && !before_path.contains(':')
        && !url.contains('\\')
        && !url.chars().any(|c| c.is_control() || c.is_whitespace())
}
