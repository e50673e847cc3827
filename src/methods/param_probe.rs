//! The fields of a method's `Params` and their types, read from its `Deserialize` impl.
//!
//! serde's derive hands the deserializer every field name (`deserialize_struct`) and asks for
//! each value by the type it wants (`deserialize_f64`, `deserialize_option`, `deserialize_enum`
//! with the variant names, …). A deserializer that records those requests and then fails
//! lists a type's fields and types without a hand-kept copy, so `dpca methods NAME` and the test
//! that every field has a meaning line cannot drift from the code. Skipped fields
//! (`#[serde(skip)]`) are not parameters and are not listed.

use serde::de::DeserializeOwned;
use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor};
use std::cell::RefCell;
use std::fmt;

/// The type of a parameter as a manifest writes it.
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    Bool,
    /// `signed = false`: a count, never negative.
    Integer {
        signed: bool,
    },
    Float,
    String,
    /// One of these strings.
    Enum(&'static [&'static str]),
    /// May be left out (unset).
    Option(Box<Ty>),
    List(Box<Ty>),
    /// A nested table with these keys.
    Table(&'static [&'static str]),
    /// A type this probe does not know (it still lists the field).
    Unknown,
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Bool => write!(f, "bool"),
            Ty::Integer { signed: false } => write!(f, "integer ≥ 0"),
            Ty::Integer { signed: true } => write!(f, "integer"),
            Ty::Float => write!(f, "number"),
            Ty::String => write!(f, "string"),
            Ty::Enum(v) => write!(
                f,
                "{}",
                v.iter()
                    .map(|s| format!("\"{s}\""))
                    .collect::<Vec<_>>()
                    .join(" | ")
            ),
            Ty::Option(t) => write!(f, "{t}, optional"),
            Ty::List(t) => write!(f, "list of {t}"),
            Ty::Table(_) => write!(f, "table"),
            Ty::Unknown => write!(f, "?"),
        }
    }
}

/// A parameter: its path (`line_search.armijo` inside a nested table) and type.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub path: String,
    pub ty: Ty,
}

/// Every field of `T` in declaration order, a nested table's fields right after it.
pub fn fields<T: DeserializeOwned>() -> Vec<Field> {
    let mut out = Vec::new();
    walk::<T>(&mut Vec::new(), &mut out);
    out
}

fn walk<T: DeserializeOwned>(path: &mut Vec<&'static str>, out: &mut Vec<Field>) {
    let Ty::Table(keys) = probe::<T>(path) else {
        return;
    };
    for key in keys {
        path.push(key);
        let ty = probe::<T>(path);
        out.push(Field {
            path: path.join("."),
            ty: ty.clone(),
        });
        if let Ty::Table(_) = ty {
            walk::<T>(path, out);
        }
        path.pop();
    }
}

/// The type `T` asks for at `path` (empty: `T` itself).
fn probe<T: DeserializeOwned>(path: &[&'static str]) -> Ty {
    let seen = RefCell::new(None);
    let _ = T::deserialize(Probe { path, seen: &seen });
    seen.into_inner().unwrap_or(Ty::Unknown)
}

/// The error every probe ends with once it has seen what it came for.
#[derive(Debug)]
struct Probed;

impl fmt::Display for Probed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "probed")
    }
}

impl std::error::Error for Probed {}

impl de::Error for Probed {
    fn custom<M: fmt::Display>(_: M) -> Self {
        Probed
    }
}

/// Walks down `path` through nested structs and records the type requested at its end.
struct Probe<'p> {
    path: &'p [&'static str],
    seen: &'p RefCell<Option<Ty>>,
}

impl Probe<'_> {
    fn record<T>(&self, ty: Ty) -> Result<T, Probed> {
        if self.path.is_empty() {
            self.seen.replace(Some(ty));
        }
        Err(Probed)
    }

    /// The type of what `inner` deserializes at the same path.
    fn nested(&self, inner: impl FnOnce(Probe<'_>)) -> Ty {
        let seen = RefCell::new(None);
        inner(Probe {
            path: self.path,
            seen: &seen,
        });
        seen.into_inner().unwrap_or(Ty::Unknown)
    }
}

macro_rules! record {
    ($($method:ident => $ty:expr),* $(,)?) => {
        $(fn $method<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Probed> {
            self.record($ty)
        })*
    };
}

impl<'de> de::Deserializer<'de> for Probe<'_> {
    type Error = Probed;

    record! {
        deserialize_any => Ty::Unknown,
        deserialize_bool => Ty::Bool,
        deserialize_i8 => Ty::Integer { signed: true },
        deserialize_i16 => Ty::Integer { signed: true },
        deserialize_i32 => Ty::Integer { signed: true },
        deserialize_i64 => Ty::Integer { signed: true },
        deserialize_u8 => Ty::Integer { signed: false },
        deserialize_u16 => Ty::Integer { signed: false },
        deserialize_u32 => Ty::Integer { signed: false },
        deserialize_u64 => Ty::Integer { signed: false },
        deserialize_f32 => Ty::Float,
        deserialize_f64 => Ty::Float,
        deserialize_char => Ty::String,
        deserialize_str => Ty::String,
        deserialize_string => Ty::String,
        deserialize_bytes => Ty::Unknown,
        deserialize_byte_buf => Ty::Unknown,
        deserialize_unit => Ty::Unknown,
        deserialize_map => Ty::Unknown,
        deserialize_identifier => Ty::String,
        deserialize_ignored_any => Ty::Unknown,
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Probed> {
        let inner = self.nested(|p| {
            let _ = visitor.visit_some(p);
        });
        self.record(Ty::Option(Box::new(inner)))
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Probed> {
        let inner = self.nested(|p| {
            let _ = visitor.visit_seq(FirstElement(Some(p)));
        });
        self.record(Ty::List(Box::new(inner)))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Probed> {
        match self.path.split_first() {
            None => self.record(Ty::Table(fields)),
            // One key, whose value is probed one level further down.
            Some((key, rest)) => visitor.visit_map(OneKey {
                key: Some(key),
                value: Some(Probe {
                    path: rest,
                    seen: self.seen,
                }),
            }),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        variants: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Probed> {
        self.record(Ty::Enum(variants))
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: V,
    ) -> Result<V::Value, Probed> {
        self.record(Ty::Unknown)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Probed> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, Probed> {
        self.record(Ty::Unknown)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: usize,
        _: V,
    ) -> Result<V::Value, Probed> {
        self.record(Ty::Unknown)
    }
}

/// A map of one key whose value is a [`Probe`].
struct OneKey<'p> {
    key: Option<&'static str>,
    value: Option<Probe<'p>>,
}

impl<'de> MapAccess<'de> for OneKey<'_> {
    type Error = Probed;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Probed> {
        self.key
            .take()
            .map(|k| seed.deserialize(k.into_deserializer()))
            .transpose()
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Probed> {
        seed.deserialize(self.value.take().ok_or(Probed)?)
    }
}

/// A sequence whose first element is a [`Probe`].
struct FirstElement<'p>(Option<Probe<'p>>);

impl<'de> SeqAccess<'de> for FirstElement<'_> {
    type Error = Probed;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Probed> {
        self.0.take().map(|p| seed.deserialize(p)).transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize, Default)]
    #[serde(rename_all = "snake_case")]
    #[allow(dead_code)]
    enum Mode {
        #[default]
        Fast,
        SlowButSure,
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Inner {
        a: f64,
        b: u32,
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Outer {
        x: Option<f64>,
        steps: usize,
        on: bool,
        mode: Mode,
        grid: Vec<f64>,
        inner: Inner,
        #[serde(skip)]
        hidden: u8,
    }

    #[test]
    fn fields_and_types_come_from_the_deserialize_impl() {
        let got: Vec<(String, String)> = fields::<Outer>()
            .into_iter()
            .map(|f| (f.path, f.ty.to_string()))
            .collect();
        let want = [
            ("x", "number, optional"),
            ("steps", "integer ≥ 0"),
            ("on", "bool"),
            ("mode", "\"fast\" | \"slow_but_sure\""),
            ("grid", "list of number"),
            ("inner", "table"),
            ("inner.a", "number"),
            ("inner.b", "integer ≥ 0"),
        ];
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        assert_eq!(got, want);
    }
}
