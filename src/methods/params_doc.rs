//! What `dpca methods NAME` says about a method's parameters, all read from its `Params` type.
//!
//! Names, types and meanings come from the type's JSON schema (`#[derive(JsonSchema)]`: a
//! field's doc comment is its meaning), defaults from the method's own `check` run on an empty
//! `params` table (so exactly what a run resolves), else from the schema's `default`.

use super::registry::Entry;
use super::Params;
use schemars::generate::SchemaSettings;
use serde::de::{self, value::MapDeserializer, DeserializeOwned, IntoDeserializer, Visitor};
use serde_json::Value;
use std::fmt;

/// One parameter as printed: name (`table.key` inside a nested table), type, default as a
/// manifest writes it, and one line of meaning.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamDoc {
    pub name: String,
    pub ty: String,
    pub default: String,
    pub meaning: String,
}

/// The parameters of `e` with the defaults a run resolves, in declaration order. Fails only if
/// the defaults fail the method's own check, which a test rules out.
pub fn params(e: &Entry) -> Result<Vec<ParamDoc>, String> {
    let defaults = (e.check)(&toml::Table::new()).map_err(|err| {
        format!(
            "{}: the defaults fail params.{}: {}",
            e.name, err.key, err.msg
        )
    })?;
    Ok((e.param_docs)()
        .into_iter()
        .map(|mut p| {
            let value = p.name.split('.').try_fold(&defaults, |v, key| v.get(key));
            // A key the resolved parameters leave out (skipped when empty or unset) has the
            // schema's default, else is an empty list or unset.
            p.default = match value {
                Some(v) => toml_text(v),
                None if !p.default.is_empty() => p.default,
                None if p.ty.starts_with("list") => "[]".into(),
                None => "unset".into(),
            };
            p
        })
        .collect())
}

/// The parameters of `P` as its type declares them; `default` is the schema's (empty if none).
pub fn declared<P: Params>() -> Vec<ParamDoc> {
    let schema = SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator()
        .into_root_schema_for::<P>()
        .to_value();
    let mut out = Vec::new();
    table::<P>(&schema, &mut Vec::new(), &mut out);
    out
}

/// The keys of the table `schema` at `path`, a nested table's keys right after it.
fn table<P: DeserializeOwned>(schema: &Value, path: &mut Vec<String>, out: &mut Vec<ParamDoc>) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    let mut keys: Vec<&String> = props.keys().collect();
    if let Some(order) = declared_keys::<P>(path) {
        keys.sort_by_key(|k| order.iter().position(|o| o == k).unwrap_or(usize::MAX));
    }
    for key in keys {
        let field = &props[key];
        path.push(key.clone());
        out.push(ParamDoc {
            name: path.join("."),
            ty: type_text(field),
            default: field.get("default").map_or_else(String::new, toml_text),
            meaning: field
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        });
        table::<P>(field, path, out);
        path.pop();
    }
}

/// A type as a manifest writes it: `number`, `integer ≥ 0`, `"a" | "b"`, `list of number`,
/// `table`, with `, optional` when it may be left unset.
fn type_text(s: &Value) -> String {
    match base_type(s) {
        (ty, true) => format!("{ty}, optional"),
        (ty, false) => ty,
    }
}

/// The type without its null, and whether null is allowed.
fn base_type(s: &Value) -> (String, bool) {
    let quote = |v: &Value| match v {
        Value::String(s) => format!("\"{s}\""),
        v => v.to_string(),
    };
    if let Some(values) = s.get("enum").and_then(Value::as_array) {
        let text: Vec<String> = values.iter().filter(|v| !v.is_null()).map(quote).collect();
        return (text.join(" | "), values.iter().any(Value::is_null));
    }
    if let Some(value) = s.get("const") {
        return (quote(value), false);
    }
    // An enum whose variants have doc comments is a `oneOf` of constants; an optional
    // non-primitive an `anyOf` with null.
    let alternatives = ["oneOf", "anyOf"]
        .iter()
        .find_map(|k| s.get(*k).and_then(Value::as_array));
    if let Some(alts) = alternatives {
        let is_null = |a: &&Value| a.get("type").and_then(Value::as_str) == Some("null");
        let parts: Vec<(String, bool)> =
            alts.iter().filter(|a| !is_null(a)).map(base_type).collect();
        let text: Vec<&str> = parts.iter().map(|(t, _)| t.as_str()).collect();
        let optional = alts.iter().any(|a| is_null(&a)) || parts.iter().any(|p| p.1);
        return (text.join(" | "), optional);
    }
    let types: Vec<&str> = match s.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let non_negative = s
        .get("minimum")
        .and_then(Value::as_f64)
        .is_some_and(|m| m >= 0.0)
        || s.get("format")
            .and_then(Value::as_str)
            .is_some_and(|f| f.starts_with("uint"));
    let ty = match types.iter().find(|t| **t != "null") {
        Some(&"integer") if non_negative => "integer ≥ 0".into(),
        Some(&"integer") => "integer".into(),
        Some(&"number") => "number".into(),
        Some(&"boolean") => "bool".into(),
        Some(&"string") => "string".into(),
        Some(&"array") => format!("list of {}", s.get("items").map_or("?".into(), type_text)),
        Some(&"object") => "table".into(),
        _ => "?".into(),
    };
    (ty, types.contains(&"null"))
}

/// A value as a manifest would write it.
fn toml_text(v: &Value) -> String {
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

/// The keys of the table at `path` inside `P` in declaration order, which the schema loses
/// (serde_json sorts an object's keys): serde's derive hands them to `deserialize_struct`.
/// None if `path` is not a struct.
fn declared_keys<P: DeserializeOwned>(path: &[String]) -> Option<&'static [&'static str]> {
    P::deserialize(KeysAt(path))
        .err()
        .and_then(|Keys(keys)| keys)
}

/// What [`KeysAt`] ends with: the struct's keys, or None where it found no struct.
#[derive(Debug)]
struct Keys(Option<&'static [&'static str]>);

impl fmt::Display for Keys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "keys {:?}", self.0)
    }
}

impl std::error::Error for Keys {}

impl de::Error for Keys {
    fn custom<M: fmt::Display>(_: M) -> Self {
        Keys(None)
    }
}

/// A table holding only the keys of `path`, one inside the other, down to the struct whose
/// keys it reports.
struct KeysAt<'p>(&'p [String]);

impl<'de> de::Deserializer<'de> for KeysAt<'_> {
    type Error = Keys;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Keys> {
        Err(Keys(None))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Keys> {
        match self.0.split_first() {
            None => Err(Keys(Some(fields))),
            Some((key, rest)) => visitor.visit_map(MapDeserializer::new(std::iter::once((
                key.as_str(),
                KeysAt(rest),
            )))),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

impl<'de> IntoDeserializer<'de, Keys> for KeysAt<'_> {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::registry::{lookup, METHODS};
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    #[test]
    fn every_field_has_one_meaning_line_and_a_known_type() {
        for e in METHODS {
            for p in (e.param_docs)() {
                assert!(
                    !p.meaning.trim().is_empty() && !p.meaning.contains('\n'),
                    "{}: params.{} needs a one-line doc comment, its meaning; has {:?}",
                    e.name,
                    p.name,
                    p.meaning
                );
                assert!(
                    !p.ty.contains('?'),
                    "{}: params.{}: {}",
                    e.name,
                    p.name,
                    p.ty
                );
            }
        }
    }

    #[test]
    fn shared_parameters_mean_the_same() {
        let docs = |m: &str| (lookup(m).unwrap().param_docs)();
        let meaning = |docs: &[ParamDoc], name: &str| {
            docs.iter()
                .find(|d| d.name == name)
                .unwrap_or_else(|| panic!("no {name}"))
                .meaning
                .clone()
        };
        // DSSAL1's X_i-step is FAPS's local solve.
        let (faps, dssal1) = (docs("faps"), docs("dssal1"));
        for name in [
            "inner",
            "eps_x",
            "inner_steps",
            "delta",
            "max_inner",
            "beta0",
            "theta",
            "period",
            "power_iters",
        ] {
            assert_eq!(meaning(&faps, name), meaning(&dssal1, name), "{name}");
        }
        // Consensus ADMM's Z-step is ManPG's.
        let (manpg, admm) = (docs("manpg"), docs("consensus_admm"));
        for d in manpg.iter().filter(|d| d.name.starts_with("line_search")) {
            assert_eq!(meaning(&admm, &d.name), d.meaning, "{}", d.name);
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

    /// Two ways a unit enum comes out of the schema: `enum` (no variant docs) or `oneOf`.
    #[derive(Clone, Copy, Serialize, Deserialize, JsonSchema, Default)]
    #[serde(rename_all = "snake_case")]
    enum Mode {
        #[default]
        Fast,
        SlowButSure,
    }

    #[derive(Clone, Copy, Serialize, Deserialize, JsonSchema, Default)]
    #[serde(rename_all = "snake_case")]
    enum Documented {
        /// The first.
        #[default]
        One,
        /// The second.
        Two,
    }

    #[derive(Clone, Serialize, Deserialize, JsonSchema, Default)]
    #[serde(deny_unknown_fields)]
    struct Inner {
        /// second-level b
        b: u32,
        /// second-level a
        a: f64,
    }

    #[derive(Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, default)]
    struct Outer {
        /// x
        x: Option<f64>,
        /// steps
        steps: usize,
        /// offset
        offset: i64,
        /// on
        on: bool,
        /// mode
        mode: Mode,
        /// documented
        documented: Documented,
        /// grid
        #[serde(skip_serializing_if = "Vec::is_empty")]
        grid: Vec<f64>,
        /// inner
        inner: Inner,
        /// restart
        restart: Option<u32>,
        #[serde(skip)]
        hidden: u8,
    }

    impl Default for Outer {
        fn default() -> Self {
            Self {
                x: None,
                steps: 3,
                offset: -1,
                on: true,
                mode: Mode::Fast,
                documented: Documented::Two,
                grid: Vec::new(),
                inner: Inner::default(),
                restart: None,
                hidden: 0,
            }
        }
    }

    impl Params for Outer {}

    #[test]
    fn names_types_and_meanings_come_from_the_schema_in_declaration_order() {
        let got: Vec<(String, String, String, String)> = declared::<Outer>()
            .into_iter()
            .map(|p| (p.name, p.ty, p.default, p.meaning))
            .collect();
        let want = [
            ("x", "number, optional", "unset", "x"),
            ("steps", "integer ≥ 0", "3", "steps"),
            ("offset", "integer", "-1", "offset"),
            ("on", "bool", "true", "on"),
            ("mode", "\"fast\" | \"slow_but_sure\"", "\"fast\"", "mode"),
            ("documented", "\"one\" | \"two\"", "\"two\"", "documented"),
            ("grid", "list of number", "", "grid"),
            ("inner", "table", "{ a = 0.0, b = 0 }", "inner"),
            ("inner.b", "integer ≥ 0", "", "second-level b"),
            ("inner.a", "number", "", "second-level a"),
            ("restart", "integer ≥ 0, optional", "unset", "restart"),
        ];
        let want: Vec<(String, String, String, String)> = want
            .iter()
            .map(|(a, b, c, d)| (a.to_string(), b.to_string(), c.to_string(), d.to_string()))
            .collect();
        assert_eq!(got, want);
    }
}
