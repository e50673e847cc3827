//! `--set KEY=VALUE`: a manifest entry given on the command line. It is applied to the
//! manifest's table after the profile overlay and before anything is read from it, so it is
//! checked exactly as the same entry in the file would be; its errors name the flag, since it
//! has no line.

use std::path::Path;

use sha2::{Digest, Sha256};
use toml::{Table, Value};

use super::locate::{format_path, parse_path, Seg};
use super::ManifestError;

/// One `--set`: a key path (a manifest key such as `data.n` or `sweep."data.n"`, or
/// `METHOD.PARAM` for a `[[methods]]` entry's parameter) and a TOML value.
#[derive(Debug, Clone, PartialEq)]
pub struct Set {
    pub key: String,
    pub value: Value,
}

/// The manifest's top-level keys (RawManifest's fields; a test keeps the two equal). A first
/// segment outside them names a `[[methods]]` entry.
pub(crate) const MANIFEST_KEYS: &[&str] = &[
    "id",
    "paper",
    "paper_file",
    "title",
    "reproduces",
    "description",
    "seed",
    "repeats",
    "data",
    "partition",
    "problem",
    "stop",
    "methods",
    "plots",
    "paper_results",
    "attack",
    "claims",
    "table_metrics",
    "looser_tolerances",
    "sweep",
    "zip_sweep",
];

impl Set {
    /// `KEY=VALUE`; the value is TOML (`0.1`, `[1, 3]`, `"even"`, `{ scheme = "even" }`), or a
    /// bare word (`even`) taken as a string.
    pub fn parse(arg: &str) -> Result<Set, String> {
        let bad = |why: String| format!("--set {arg}: {why}");
        let mut quoted = false;
        let eq = arg.char_indices().find_map(|(i, c)| match c {
            '"' => {
                quoted = !quoted;
                None
            }
            '=' if !quoted => Some(i),
            _ => None,
        });
        let Some(eq) = eq else {
            return Err(bad(
                "expected KEY=VALUE, e.g. --set data.n=500 or --set faps.beta0=0.1".into(),
            ));
        };
        let (key, text) = (arg[..eq].trim(), arg[eq + 1..].trim());
        let segs = parse_path(key);
        if segs.is_empty()
            || segs
                .iter()
                .any(|s| !matches!(s, Seg::Key(k) if !k.is_empty()))
        {
            return Err(bad(format!(
                "`{key}` is not a key path: dotted keys, e.g. stop.max_rounds, sweep.\"data.n\" or faps.beta0"
            )));
        }
        if text.contains(['\n', '\r']) {
            return Err(bad("the value is one line".into()));
        }
        let value = match toml::from_str::<Table>(&format!("v = {text}")) {
            Ok(t) if t.len() == 1 && t.contains_key("v") => t["v"].clone(),
            _ if is_word(text) => Value::String(text.to_string()),
            Ok(_) => return Err(bad(format!("`{text}` is not one TOML value"))),
            Err(e) => {
                return Err(bad(format!(
                "`{text}` is not a TOML value ({}); quote a string with spaces: --set 'k=\"a b\"'",
                e.message().trim_end()
            )))
            }
        };
        Ok(Set {
            key: format_path(&segs),
            value,
        })
    }

    /// `key=value` with the value as TOML writes it: what run.json and report.md record, and
    /// what [`Set::parse`] reads back to the same value.
    pub fn text(&self) -> String {
        format!("{}={}", self.key, inline(&self.value))
    }
}

fn is_word(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c))
}

/// A value on one line (toml writes a table value as a document).
fn inline(v: &Value) -> String {
    match v {
        Value::Table(t) => {
            let mut keys: Vec<&String> = t.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .iter()
                .map(|k| {
                    format!(
                        "{} = {}",
                        format_path(&[Seg::Key((*k).clone())]),
                        inline(&t[*k])
                    )
                })
                .collect();
            format!("{{ {} }}", parts.join(", "))
        }
        Value::Array(a) => format!("[{}]", a.iter().map(inline).collect::<Vec<_>>().join(", ")),
        other => other.to_string(),
    }
}

/// "" without `--set`, else `+set-` and 8 hex digits of the list (in its order, since a later
/// entry may overwrite an earlier one): appended to the profile's results folder, so a variant
/// never mixes with the manifest's own results. `+` is not allowed in a profile name, so the
/// folder cannot be another profile's.
pub fn folder_suffix(sets: &[Set]) -> String {
    if sets.is_empty() {
        return String::new();
    }
    let text: Vec<String> = sets.iter().map(Set::text).collect();
    let digest = Sha256::digest(text.join("\n").as_bytes());
    let hex: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    format!("+set-{hex}")
}

/// Apply `sets` to the manifest's table in order. Returns, per set, the key path it wrote
/// (`methods[i].params.p` for a method's parameter) and its text, for errors to name the flag.
pub(super) fn apply(
    base: &mut Table,
    sets: &[Set],
    file: &Path,
) -> Result<Vec<(Vec<Seg>, String)>, ManifestError> {
    let mut written = Vec::new();
    for set in sets {
        let flag = set.text();
        let err = |message: String| ManifestError {
            file: file.to_path_buf(),
            line: None,
            column: None,
            key: Some(set.key.clone()),
            message,
            flag: Some(flag.clone()),
        };
        let segs = parse_path(&set.key);
        let Some(Seg::Key(first)) = segs.first() else {
            return Err(err("empty key".into()));
        };
        let path = if first == "profiles" {
            return Err(err(
                "--set applies after the profile overlay: set the key itself (e.g. data.n), with --profile choosing the profile".into(),
            ));
        } else if MANIFEST_KEYS.contains(&first.as_str()) {
            segs.clone()
        } else {
            let i = method_entry(base, first).map_err(err)?;
            let [_, param] = &segs[..] else {
                return Err(err(format!(
                    "`{first}` is a method of this manifest: set one parameter as {first}.PARAM=VALUE"
                )));
            };
            vec![
                Seg::Key("methods".into()),
                Seg::Index(i),
                Seg::Key("params".into()),
                param.clone(),
            ]
        };
        set_path(base, &path, set.value.clone()).map_err(err)?;
        written.push((path, flag));
    }
    Ok(written)
}

/// The `[[methods]]` entry `who` names: by label first (a label is unique), else by method name.
fn method_entry(base: &Table, who: &str) -> Result<usize, String> {
    let entries: Vec<(&str, &str)> = base
        .get("methods")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_table)
                .map(|t| {
                    let name = t.get("name").and_then(Value::as_str).unwrap_or("");
                    (name, t.get("label").and_then(Value::as_str).unwrap_or(name))
                })
                .collect()
        })
        .unwrap_or_default();
    let by_label: Vec<usize> = (0..entries.len())
        .filter(|&i| entries[i].1 == who)
        .collect();
    let by_name: Vec<usize> = (0..entries.len())
        .filter(|&i| entries[i].0 == who)
        .collect();
    match (&by_label[..], &by_name[..]) {
        ([i], _) | ([], [i]) => Ok(*i),
        ([], []) => {
            let labels: Vec<String> = entries.iter().map(|e| format!("`{}`", e.1)).collect();
            Err(format!(
                "`{who}` is neither a manifest key ({}) nor a method of this manifest (its [[methods]]: {})",
                MANIFEST_KEYS.join(", "),
                if labels.is_empty() { "none".to_string() } else { labels.join(", ") }
            ))
        }
        (_, several) => {
            let labels: Vec<String> = several
                .iter()
                .map(|&i| format!("methods[{i}] `{}`", entries[i].1))
                .collect();
            Err(format!(
                "`{who}` names {} [[methods]] entries ({}): name one by its label",
                several.len(),
                labels.join(", ")
            ))
        }
    }
}

/// Set a key path (keys and array indices) inside `table`, creating missing tables on the way;
/// a value that is not a table where one is needed is an error, not overwritten.
fn set_path(table: &mut Table, path: &[Seg], value: Value) -> Result<(), String> {
    let mut cur = Value::Table(std::mem::take(table));
    let result = set_in(&mut cur, path, value);
    if let Value::Table(t) = cur {
        *table = t;
    }
    result
}

fn set_in(cur: &mut Value, path: &[Seg], value: Value) -> Result<(), String> {
    let Some((seg, rest)) = path.split_first() else {
        *cur = value;
        return Ok(());
    };
    let next = match (seg, cur) {
        (Seg::Key(k), Value::Table(t)) => t
            .entry(k.clone())
            .or_insert_with(|| Value::Table(Table::new())),
        (Seg::Index(i), Value::Array(a)) => {
            a.get_mut(*i).ok_or_else(|| format!("no entry [{i}]"))?
        }
        (seg, v) => {
            return Err(format!(
                "cannot set a key inside `{}` ({}): it is a {}",
                format_path(std::slice::from_ref(seg)),
                super::merge::fmt_value(v),
                v.type_str()
            ))
        }
    };
    if rest.first().is_some_and(|s| matches!(s, Seg::Key(_))) && !next.is_table() {
        return Err(format!(
            "cannot set a key inside a {} value",
            next.type_str()
        ));
    }
    set_in(next, rest, value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_toml_or_bare_words() {
        let v = |a: &str| Set::parse(a).unwrap().value;
        assert_eq!(v("faps.beta0=0.1"), Value::Float(0.1));
        assert_eq!(
            v("faps.inner_steps=[1,3]"),
            Value::Array(vec![Value::Integer(1), Value::Integer(3)])
        );
        assert_eq!(v("partition.scheme=even"), Value::String("even".into()));
        assert_eq!(v("partition.scheme=\"even\""), Value::String("even".into()));
        let s = Set::parse("sweep.\"data.n\"=[500, 1000]").unwrap();
        assert_eq!(s.key, "sweep.\"data.n\"");
        assert!(Set::parse("data.n").unwrap_err().contains("KEY=VALUE"));
        assert!(Set::parse("data.n=1\nx=2").is_err());
        assert!(Set::parse("data.n=[1,")
            .unwrap_err()
            .contains("not a TOML value"));
        assert!(Set::parse("data[0]=1").is_err());
    }

    #[test]
    fn text_reads_back_to_the_same_value() {
        for a in [
            "faps.beta0=0.1",
            "partition={scheme=\"dirichlet\", alpha=0.1}",
            "sweep.partition=[{scheme=\"even\"}, {scheme=\"dirichlet\", alpha=1e-1}]",
            "x.y=even",
        ] {
            let s = Set::parse(a).unwrap();
            assert_eq!(Set::parse(&s.text()).unwrap(), s, "{a} -> {}", s.text());
        }
    }

    #[test]
    fn folder_suffix_depends_on_the_list() {
        let s = |a: &[&str]| {
            folder_suffix(&a.iter().map(|x| Set::parse(x).unwrap()).collect::<Vec<_>>())
        };
        assert_eq!(s(&[]), "");
        assert_eq!(s(&["data.n=5"]).len(), "+set-".len() + 8);
        assert_eq!(s(&["data.n=5"]), s(&["data.n = 5"]));
        assert_ne!(s(&["data.n=5"]), s(&["data.n=6"]));
        assert_ne!(s(&["data.n=5", "data.n=6"]), s(&["data.n=6", "data.n=5"]));
    }

    #[test]
    fn manifest_keys_are_raw_manifests_fields() {
        // serde lists the fields it expects beside an unknown one.
        let t: Table = toml::from_str("zzz_unknown = 1").unwrap();
        let e = toml::Value::Table(t)
            .try_into::<super::super::RawManifest>()
            .unwrap_err()
            .to_string();
        let listed: Vec<&str> = e
            .split("expected one of ")
            .nth(1)
            .unwrap_or_else(|| panic!("{e}"))
            .split(',')
            .map(|s| s.trim().trim_matches('`').trim_end_matches(['`', '\n']))
            .map(|s| s.trim_end_matches('`'))
            .collect();
        let mut a: Vec<&str> = listed.clone();
        let mut b: Vec<&str> = MANIFEST_KEYS.to_vec();
        a.sort();
        b.sort();
        assert_eq!(a, b, "{e}");
    }
}
