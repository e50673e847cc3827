//! The paper registry: papers/<key>.toml, one file per paper — its record (title, authors, venue,
//! year, the file name of its text kept as `file`) and the inventory of its claims — or per
//! comparison of several papers' methods (`kind = "comparison"`). Read here with the manifests'
//! file:line: key errors; how manifests must agree with it is checked in `plan` (they meet there).
//!
//! The registry of a manifest is the `papers/` folder of the nearest folder above it that has one
//! holding a .toml file (the repository's, for experiments/<paper>/<id>.toml and for own manifests
//! inside the clone); a manifest with none above it is checked against nothing.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::locate::Locator;
use super::{deserialize, plain_name, quoted, read_limited, ManifestError};

/// A paper of the harness, or a comparison of several papers' methods.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PaperKind {
    #[default]
    Paper,
    /// Not a paper: manifests that set methods of several papers side by side (`papers` names
    /// them); it has no text, authors or claims of its own.
    Comparison,
}

/// `[paper]`: who wrote what, where. Written into run.json as `paper_record`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PaperRecord {
    /// The registry key: the file's stem and the manifests' `paper`.
    pub key: String,
    #[serde(default)]
    pub kind: PaperKind,
    /// The file name of the paper's text in the project's papers folder (its key there); a
    /// manifest's `paper_file` must equal it. Empty for a comparison.
    #[serde(default)]
    pub file: String,
    pub title: String,
    #[serde(default)]
    pub authors: Vec<String>,
    #[serde(default)]
    pub venue: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub year: Option<u32>,
    /// A comparison only: the registry keys of the papers whose methods it compares.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub papers: Vec<String>,
}

impl PaperRecord {
    /// "A, B and C".
    pub fn authors_text(&self) -> String {
        match self.authors.as_slice() {
            [] => String::new(),
            [one] => one.clone(),
            [init @ .., last] => format!("{} and {last}", init.join(", ")),
        }
    }

    /// "Authors, Venue, Year": the line under a title (parts that are empty left out).
    pub fn byline(&self) -> String {
        let mut parts = vec![self.authors_text(), self.venue.clone()];
        parts.extend(self.year.map(|y| y.to_string()));
        parts.retain(|p| !p.is_empty());
        parts.join(", ")
    }
}

/// One `[[claims]]` entry of a paper's inventory: a claim the paper makes about its experiments,
/// tested by manifests' `[[claims]]` with the same `id`, or saying why it cannot be here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InventoryClaim {
    /// Unique within the paper; manifests' `[[claims]] id` names it.
    pub id: String,
    /// Where the paper says it ("Sec. 5.3, Fig. 2").
    #[serde(rename = "where")]
    pub at: String,
    pub text: String,
    /// Why no manifest tests it here (e.g. the data set is absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untestable: Option<String>,
    /// For a claim that does not hold here: what was measured as the cause.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// The experiment (`paper/id`) that measured the cause.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub study: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPaperFile {
    paper: PaperRecord,
    #[serde(default)]
    claims: Vec<InventoryClaim>,
}

/// One file of the registry.
pub struct Paper {
    pub record: PaperRecord,
    pub claims: Vec<InventoryClaim>,
    pub path: PathBuf,
    /// Kept to locate keys of this file in errors found later (a study that is not a manifest).
    loc: Locator,
}

impl Paper {
    pub fn claim(&self, id: &str) -> Option<&InventoryClaim> {
        self.claims.iter().find(|c| c.id == id)
    }

    /// A located error about a key of this file (e.g. "claims[2].study").
    pub fn error(&self, key: &str, msg: impl std::fmt::Display) -> ManifestError {
        self.loc.error(key, msg)
    }
}

/// Every paper of a `papers/` folder, sorted by key.
pub struct Registry {
    /// The folder holding `papers/` (and, in the repository, `experiments/` and `results/`).
    pub root: PathBuf,
    pub papers: Vec<Paper>,
}

/// Largest registry file read: a paper's record and claims are a few kilobytes.
const MAX_BYTES: u64 = 1 << 20;

impl Registry {
    /// The registry of `start` (a manifest or a folder): `papers/` of the nearest folder at or
    /// above it that has one with a .toml file; None when there is none.
    pub fn find(start: &Path) -> Result<Option<Registry>, ManifestError> {
        let abs = std::path::absolute(start).unwrap_or_else(|_| start.to_path_buf());
        for dir in abs.ancestors() {
            let papers = dir.join("papers");
            if toml_files(&papers).is_some_and(|f| !f.is_empty()) {
                return Registry::load(dir).map(Some);
            }
        }
        Ok(None)
    }

    /// Read `<root>/papers/*.toml`.
    pub fn load(root: &Path) -> Result<Registry, ManifestError> {
        let dir = root.join("papers");
        let files = toml_files(&dir).ok_or_else(|| {
            ManifestError::plain(&dir, "cannot read the paper registry's folder".into())
        })?;
        let mut papers: Vec<Paper> = Vec::new();
        for path in files {
            let paper = read_paper(&path)?;
            if let Some(prev) = papers.iter().find(|p| p.record.key == paper.record.key) {
                return Err(paper.error(
                    "paper.key",
                    format!(
                        "key {:?} is already {}'s",
                        paper.record.key,
                        prev.path.display()
                    ),
                ));
            }
            papers.push(paper);
        }
        papers.sort_by(|a, b| a.record.key.cmp(&b.record.key));
        let reg = Registry {
            root: root.to_path_buf(),
            papers,
        };
        reg.check_comparisons()?;
        Ok(reg)
    }

    pub fn get(&self, key: &str) -> Option<&Paper> {
        self.papers.iter().find(|p| p.record.key == key)
    }

    pub fn keys(&self) -> Vec<&str> {
        self.papers.iter().map(|p| p.record.key.as_str()).collect()
    }

    /// A comparison names papers of the registry.
    fn check_comparisons(&self) -> Result<(), ManifestError> {
        for p in &self.papers {
            for (i, k) in p.record.papers.iter().enumerate() {
                if !self
                    .get(k)
                    .is_some_and(|q| q.record.kind == PaperKind::Paper)
                {
                    let papers: Vec<&str> = self
                        .papers
                        .iter()
                        .filter(|q| q.record.kind == PaperKind::Paper)
                        .map(|q| q.record.key.as_str())
                        .collect();
                    return Err(p.error(
                        &format!("paper.papers[{i}]"),
                        format!(
                            "{k:?} is not a paper of the registry: expected one of {}",
                            quoted(&papers)
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// The .toml files of `dir`, sorted (None: not a readable folder).
fn toml_files(dir: &Path) -> Option<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    out.sort();
    Some(out)
}

fn read_paper(path: &Path) -> Result<Paper, ManifestError> {
    let (text, _) = read_limited(path, "paper's file", MAX_BYTES)?;
    let loc = Locator::parse(path, text.clone(), "")?;
    let table: toml::Table = toml::from_str(&text)
        .map_err(|e| loc.file_error(format!("invalid TOML: {}", e.message())))?;
    let raw: RawPaperFile = deserialize(table, &loc, "")?;
    let paper = Paper {
        record: raw.paper,
        claims: raw.claims,
        path: path.to_path_buf(),
        loc,
    };
    check_paper(&paper)?;
    Ok(paper)
}

/// What one file must say on its own.
fn check_paper(p: &Paper) -> Result<(), ManifestError> {
    let r = &p.record;
    if let Err(why) = plain_name(&r.key) {
        return Err(p.error("paper.key", format!("key {:?}: {why}", r.key)));
    }
    let stem = p.path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    if r.key != stem {
        return Err(p.error(
            "paper.key",
            format!(
                "key {:?} differs from the file name {stem:?}: they must match, so a manifest's `paper` leads to papers/<key>.toml",
                r.key
            ),
        ));
    }
    let line = |s: &str| !s.trim().is_empty() && !s.contains(char::is_control);
    if !line(&r.title) {
        return Err(p.error(
            "paper.title",
            "a title of one line without control characters",
        ));
    }
    match r.kind {
        PaperKind::Paper => {
            // The text's file name: a plain name, as the shared papers folder has it.
            if r.file.contains(['/', '\\']) || r.file.starts_with('.') || !line(&r.file) {
                return Err(p.error(
                    "paper.file",
                    format!("{:?}: expected the file name of the paper's text, e.g. \"000_87ac87c3d542a13b.txt\"", r.file),
                ));
            }
            if r.authors.is_empty() || !r.authors.iter().all(|a| line(a)) {
                return Err(p.error(
                    "paper.authors",
                    "a list of the authors' names, e.g. [\"Lei Wang\", \"Xin Liu\"]",
                ));
            }
            if !line(&r.venue) {
                return Err(p.error(
                    "paper.venue",
                    "the journal, conference or series, on one line",
                ));
            }
            if r.year.is_none_or(|y| !(1900..=2100).contains(&y)) {
                return Err(p.error("paper.year", "the year of publication, e.g. 2024"));
            }
            if !r.papers.is_empty() {
                return Err(p.error(
                    "paper.papers",
                    "only a comparison (kind = \"comparison\") names the papers it compares",
                ));
            }
        }
        PaperKind::Comparison => {
            if !r.file.is_empty() {
                return Err(p.error(
                    "paper.file",
                    "a comparison has no text of its own: leave `file` out",
                ));
            }
            if r.papers.is_empty() {
                return Err(p.error(
                    "paper.papers",
                    "a comparison names the papers whose methods it compares, e.g. [\"faps\", \"cedre\"]",
                ));
            }
            if !p.claims.is_empty() {
                return Err(p.error(
                    "claims",
                    "a comparison makes no claims of its own: claims belong to the papers",
                ));
            }
        }
    }
    for (i, c) in p.claims.iter().enumerate() {
        let at = |k: &str| format!("claims[{i}].{k}");
        if c.id.is_empty()
            || c.id.len() > 100
            || !c
                .id
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || "_-.".contains(ch))
        {
            return Err(p.error(
                &at("id"),
                format!("id {:?}: expected 1 to 100 ASCII letters, digits, `_`, `-` or `.`, e.g. \"fig2.fewer_rounds\"", c.id),
            ));
        }
        if let Some(j) = p.claims[..i].iter().position(|d| d.id == c.id) {
            return Err(p.error(
                &at("id"),
                format!("id {:?} is already claims[{j}]'s: each claim of the inventory needs its own id", c.id),
            ));
        }
        for (k, v) in [("where", &c.at), ("text", &c.text)] {
            if v.trim().is_empty() {
                return Err(p.error(&at(k), "empty: say it as the paper does"));
            }
        }
        if let Some(s) = &c.study {
            let ok = s
                .split_once('/')
                .is_some_and(|(a, b)| plain_name(a).is_ok() && plain_name(b).is_ok());
            if !ok {
                return Err(p.error(
                    &at("study"),
                    format!("{s:?}: expected an experiment as paper/id, e.g. \"faps/fig4_penalty_study\""),
                ));
            }
        }
    }
    Ok(())
}
