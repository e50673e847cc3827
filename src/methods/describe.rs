//! What `dpca methods NAME` says about a method's parameters, and the registered names nearest
//! a misspelt one.
//!
//! Names and types come from the `Params` type ([`super::param_probe`]), defaults from the method's
//! own `check` run on an empty `params` table (so exactly what a run resolves), and meanings
//! from its `Params::DOCS`.

use super::param_probe::Ty;
use super::registry::{Entry, METHODS};

/// One parameter as printed: name (`table.key` inside a nested table), type, default as a
/// manifest writes it, and one line of meaning.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamDoc {
    pub name: String,
    pub ty: String,
    pub default: String,
    pub meaning: &'static str,
}

/// The parameters of `e`, in declaration order. Fails only if the defaults fail the method's
/// own check, which a registry test rules out.
pub fn params(e: &Entry) -> Result<Vec<ParamDoc>, String> {
    let defaults = (e.check)(&toml::Table::new()).map_err(|err| {
        format!(
            "{}: the defaults fail params.{}: {}",
            e.name, err.key, err.msg
        )
    })?;
    Ok((e.fields)()
        .into_iter()
        .map(|f| {
            let value = f.path.split('.').try_fold(&defaults, |v, key| v.get(key));
            ParamDoc {
                default: default_text(value, &f.ty),
                ty: f.ty.to_string(),
                meaning: e
                    .docs
                    .iter()
                    .find(|(k, _)| *k == f.path)
                    .map_or("", |d| d.1),
                name: f.path,
            }
        })
        .collect())
}

/// Fields of `e` without a meaning line, and meaning lines that name no field.
pub fn doc_mismatch(e: &Entry) -> (Vec<String>, Vec<&'static str>) {
    let fields: Vec<String> = (e.fields)().into_iter().map(|f| f.path).collect();
    let undocumented = fields
        .iter()
        .filter(|f| !e.docs.iter().any(|(k, _)| k == f))
        .cloned()
        .collect();
    let stray = e
        .docs
        .iter()
        .map(|(k, _)| *k)
        .filter(|k| !fields.iter().any(|f| f == k))
        .collect();
    (undocumented, stray)
}

/// A default as a manifest would write it. A key the resolved parameters leave out is an
/// empty list (skipped when empty) or unset.
fn default_text(v: Option<&serde_json::Value>, ty: &Ty) -> String {
    match (v, ty) {
        (Some(v), _) => toml_text(v),
        (None, Ty::List(_)) => "[]".into(),
        (None, _) => "unset".into(),
    }
}

fn toml_text(v: &serde_json::Value) -> String {
    use serde_json::Value;
    match v {
        Value::Null => "unset".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => format!("\"{s}\""),
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(toml_text).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(o) => format!(
            "{{ {} }}",
            o.iter()
                .map(|(k, v)| format!("{k} = {}", toml_text(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The registered method names nearest `name`, nearest first: within a few edits (ignoring
/// case, `-` and `_`), or containing it, or contained in it. Empty when none is near.
pub fn closest(name: &str) -> Vec<&'static str> {
    let norm = |s: &str| -> Vec<char> {
        s.chars()
            .filter(|c| *c != '-' && *c != '_' && !c.is_whitespace())
            .flat_map(char::to_lowercase)
            .collect()
    };
    let want = norm(name);
    let text = |c: &[char]| c.iter().collect::<String>();
    let mut near: Vec<(usize, &'static str)> = METHODS
        .iter()
        .filter_map(|e| {
            let have = norm(e.name);
            let d = edit_distance(&want, &have);
            let (w, h) = (text(&want), text(&have));
            let inside = want.len() >= 3 && (h.contains(&w) || w.contains(&h));
            (d <= (want.len() / 3).max(1) || inside).then_some((d, e.name))
        })
        .collect();
    near.sort();
    near.into_iter().map(|(_, n)| n).collect()
}

/// Levenshtein distance.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diag + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::registry::lookup;

    #[test]
    fn every_field_has_one_meaning_line_and_every_line_a_field() {
        for e in METHODS {
            let (undocumented, stray) = doc_mismatch(e);
            assert!(
                undocumented.is_empty() && stray.is_empty(),
                "{}: fields without a line in its Params::DOCS: {undocumented:?}; \
                 lines naming no field: {stray:?}",
                e.name
            );
        }
    }

    #[test]
    fn defaults_are_the_resolved_ones() {
        for e in METHODS {
            let docs = params(e).unwrap_or_else(|err| panic!("{err}"));
            assert!(docs.iter().all(|d| !d.meaning.is_empty()), "{}", e.name);
        }
        let faps = params(lookup("faps").unwrap()).unwrap();
        let get = |name: &str| faps.iter().find(|d| d.name == name).unwrap().clone();
        assert_eq!(get("inner").default, "\"fixed\"");
        assert_eq!(get("inner").ty, "\"rule\" | \"fixed\" | \"kkt\"");
        assert_eq!(get("beta0").default, "0.15");
        assert_eq!(get("period").default, "5");
        // CF-PCA shares DCF-PCA's type with other defaults.
        let steps = |m: &str| {
            params(lookup(m).unwrap())
                .unwrap()
                .into_iter()
                .find(|d| d.name == "local_steps")
                .unwrap()
                .default
        };
        assert_eq!((steps("dcfpca"), steps("cfpca")), ("5".into(), "1".into()));
        let apgm = params(lookup("apgm").unwrap()).unwrap();
        assert_eq!(apgm[0].default, "unset");
        assert_eq!(apgm[0].ty, "number, optional");
        let faspca = params(lookup("faspca").unwrap()).unwrap();
        assert_eq!(faspca[1].default, "[]");
        let manpg = params(lookup("manpg").unwrap()).unwrap();
        let armijo = manpg
            .iter()
            .find(|d| d.name == "line_search.armijo")
            .unwrap();
        assert_eq!(armijo.default, "0.5");
    }

    #[test]
    fn closest_names_forgive_case_separators_and_small_typos() {
        assert_eq!(closest("fap"), ["faps"]);
        assert_eq!(closest("DCF-PCA")[0], "dcfpca");
        assert_eq!(closest("admm"), ["consensus_admm"]);
        assert!(closest("dispca").starts_with(&["dispca_b", "dispca_l"]));
        assert!(closest("zzzzzz").is_empty());
    }
}
