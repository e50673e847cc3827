//! Key path → line number. serde only tells us *which* key was wrong; toml_edit's parsed
//! document keeps byte spans, so we walk it along the key path to tell the user *where*.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use toml_edit::{Item, Table, Value};

use super::ManifestError;

/// One step of a key path: `methods[1].params."a.b"` is Key, Index, Key, Key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seg {
    Key(String),
    Index(usize),
}

/// Parse the key-path syntax used in messages: dotted keys, `[i]` indices, `"quoted.keys"`.
pub(crate) fn parse_path(s: &str) -> Vec<Seg> {
    let mut segs = Vec::new();
    let mut chars = s.chars().peekable();
    let mut cur = String::new();
    let mut pending = false; // a key was started (allows empty quoted keys)
    while let Some(c) = chars.next() {
        match c {
            '.' => {
                if pending || !cur.is_empty() {
                    segs.push(Seg::Key(std::mem::take(&mut cur)));
                }
                pending = false;
            }
            '"' => {
                for q in chars.by_ref() {
                    if q == '"' {
                        break;
                    }
                    cur.push(q);
                }
                pending = true;
            }
            '[' => {
                if pending || !cur.is_empty() {
                    segs.push(Seg::Key(std::mem::take(&mut cur)));
                }
                pending = false;
                let mut num = String::new();
                for q in chars.by_ref() {
                    if q == ']' {
                        break;
                    }
                    num.push(q);
                }
                match num.trim().parse() {
                    Ok(i) => segs.push(Seg::Index(i)),
                    Err(_) => segs.push(Seg::Key(num)),
                }
            }
            _ => cur.push(c),
        }
    }
    if pending || !cur.is_empty() {
        segs.push(Seg::Key(cur));
    }
    segs
}

/// Inverse of [`parse_path`]: keys that are not bare TOML keys get quoted.
pub(crate) fn format_path(segs: &[Seg]) -> String {
    let mut out = String::new();
    for seg in segs {
        match seg {
            Seg::Index(i) => {
                let _ = write!(out, "[{i}]");
            }
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                let bare = !k.is_empty()
                    && k.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                if bare {
                    out.push_str(k);
                } else {
                    let _ = write!(out, "\"{k}\"");
                }
            }
        }
    }
    out
}

/// 1-based line and column of a byte offset.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text.as_bytes()[..offset];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    let col = String::from_utf8_lossy(&before[line_start..])
        .chars()
        .count()
        + 1;
    (line, col)
}

#[derive(Clone, Copy)]
enum Node<'a> {
    Item(&'a Item),
    Table(&'a Table),
    Value(&'a Value),
}

/// Knows the file, its parsed (spanned) document and the active profile; turns key paths into
/// located errors. Every error the module emits goes through here.
pub struct Locator {
    file: PathBuf,
    text: String,
    doc: toml_edit::Document<String>,
    profile: String,
    /// `--set` entries: the key path each wrote and its text (later entries win).
    flags: Vec<(Vec<Seg>, String)>,
}

/// Where a key's effective value came from; lower wins when blaming one of several keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Origin {
    Flag,
    Sweep,
    Profile,
    Base,
    Nowhere,
}

impl Locator {
    pub fn parse(file: &Path, text: String, profile: &str) -> Result<Self, ManifestError> {
        match toml_edit::Document::parse(text.clone()) {
            Ok(doc) => Ok(Locator {
                file: file.to_path_buf(),
                text,
                doc,
                profile: profile.to_string(),
                flags: Vec::new(),
            }),
            Err(e) => {
                let (line, col) = e.span().map_or((None, None), |s| {
                    let (l, c) = line_col(&text, s.start);
                    (Some(l), Some(c))
                });
                Err(ManifestError {
                    file: file.to_path_buf(),
                    line,
                    column: col,
                    key: None,
                    message: format!("invalid TOML: {}", e.message().trim_end()),
                    flag: None,
                })
            }
        }
    }

    pub fn doc(&self) -> &toml_edit::Document<String> {
        &self.doc
    }

    /// Errors about keys these `--set` entries wrote name the flag instead of a line.
    pub(crate) fn with_flags(mut self, flags: Vec<(Vec<Seg>, String)>) -> Self {
        self.flags = flags;
        self
    }

    pub(crate) fn flags(&self) -> &[(Vec<Seg>, String)] {
        &self.flags
    }

    /// The last `--set` that wrote `path`, a table holding it, a key beside it (a flag that
    /// sets `partition.scheme = "dirichlet"` is why `partition.alpha` is missing) or a sweep of
    /// it.
    fn flag_for(&self, path: &[Seg]) -> Option<&str> {
        self.flags.iter().rev().find_map(|(written, text)| {
            let swept = match &written[..] {
                [Seg::Key(s), Seg::Key(k)] if s == "sweep" => path.starts_with(&parse_path(k)),
                _ => false,
            };
            let beside = written.len() >= 2
                && path.len() == written.len()
                && path[..path.len() - 1] == written[..written.len() - 1];
            (path.starts_with(written) || swept || beside).then_some(text.as_str())
        })
    }

    /// Walk `path`; returns how many segments matched and the byte offset of the deepest
    /// matched node that has a span (key spans preferred: they sit on the key's own line).
    fn walk(&self, path: &[Seg]) -> (usize, Option<usize>) {
        let mut node = Node::Item(self.doc.as_item());
        let mut offset = None;
        for (depth, seg) in path.iter().enumerate() {
            let next = match (seg, node) {
                (Seg::Key(k), Node::Item(Item::Table(t))) | (Seg::Key(k), Node::Table(t)) => t
                    .get_key_value(k)
                    .map(|(key, item)| (Node::Item(item), key.span().or(item.span()))),
                (Seg::Key(k), Node::Item(Item::Value(Value::InlineTable(t))))
                | (Seg::Key(k), Node::Value(Value::InlineTable(t))) => t
                    .get_key_value(k)
                    .map(|(key, item)| (Node::Item(item), key.span().or(item.span()))),
                (Seg::Index(i), Node::Item(Item::ArrayOfTables(a))) => {
                    a.get(*i).map(|t| (Node::Table(t), t.span()))
                }
                (Seg::Index(i), Node::Item(Item::Value(Value::Array(a))))
                | (Seg::Index(i), Node::Value(Value::Array(a))) => {
                    a.get(*i).map(|v| (Node::Value(v), v.span()))
                }
                _ => None,
            };
            match next {
                Some((n, span)) => {
                    node = n;
                    if let Some(s) = span {
                        offset = Some(s.start);
                    }
                }
                None => return (depth, offset),
            }
        }
        (path.len(), offset)
    }

    fn line_at(&self, offset: Option<usize>) -> Option<usize> {
        offset.map(|o| line_col(&self.text, o).0)
    }

    fn profile_path(&self, path: &[Seg]) -> Vec<Seg> {
        let mut p = vec![Seg::Key("profiles".into()), Seg::Key(self.profile.clone())];
        p.extend_from_slice(path);
        p
    }

    /// The places that can define a key's effective value, highest precedence first: a sweep
    /// entry overrides the profile, which overrides the base document.
    fn candidates(&self, path: &[Seg]) -> Vec<(Origin, Vec<Seg>)> {
        let mut out = Vec::new();
        if path.iter().all(|s| matches!(s, Seg::Key(_))) {
            // `sweep."data.n"`, or a whole section swept as tables: `sweep.partition`.
            for len in (1..=path.len()).rev() {
                let sweep = vec![
                    Seg::Key("sweep".into()),
                    Seg::Key(format_path(&path[..len])),
                ];
                out.push((Origin::Sweep, self.profile_path(&sweep)));
                out.push((Origin::Sweep, sweep));
            }
        }
        out.push((Origin::Profile, self.profile_path(path)));
        out.push((Origin::Base, path.to_vec()));
        out
    }

    /// Line of a key: exact match in precedence order; otherwise the line of the deepest
    /// enclosing table that exists (e.g. `[data]` for a missing `data.xi`).
    fn locate(&self, path: &[Seg]) -> (Origin, Option<usize>) {
        if self.flag_for(path).is_some() {
            return (Origin::Flag, None);
        }
        let mut best: Option<(usize, Origin, Option<usize>)> = None;
        for (origin, cand) in self.candidates(path) {
            let (matched, offset) = self.walk(&cand);
            if matched == cand.len() && offset.is_some() {
                return (origin, self.line_at(offset));
            }
            // Depth matched within the key path itself (not the profiles./sweep. prefix).
            let own = matched.saturating_sub(cand.len() - path.len());
            if origin != Origin::Sweep && own > 0 && best.as_ref().is_none_or(|b| own > b.0) {
                best = Some((own, Origin::Nowhere, self.line_at(offset)));
            }
        }
        best.map_or((Origin::Nowhere, None), |(_, o, l)| (o, l))
    }

    /// A located error about `key_path`.
    pub fn error(&self, key_path: &str, msg: impl std::fmt::Display) -> ManifestError {
        let segs = parse_path(key_path);
        let (_, line) = self.locate(&segs);
        ManifestError {
            file: self.file.clone(),
            line,
            column: None,
            key: Some(key_path.to_string()),
            message: msg.to_string(),
            flag: self.flag_for(&segs).map(str::to_string),
        }
    }

    /// An error about a relation between keys (e.g. p <= n): name the key whose value was set
    /// last (sweep, then profile, then base), since that is the one the user just changed.
    pub fn blame(&self, keys: &[&str], msg: impl std::fmt::Display) -> ManifestError {
        let key = keys
            .iter()
            .min_by_key(|k| self.locate(&parse_path(k)).0)
            .copied()
            .unwrap_or("");
        self.error(key, msg)
    }

    /// An error that concerns the file as a whole.
    pub fn file_error(&self, msg: impl std::fmt::Display) -> ManifestError {
        ManifestError {
            file: self.file.clone(),
            line: None,
            column: None,
            key: None,
            message: msg.to_string(),
            flag: None,
        }
    }
}
