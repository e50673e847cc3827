//! Profile overlay and expansion of lists (sweep points, method parameter variants).
//! Everything here is order-deterministic: keys are sorted explicitly rather than trusting the
//! map type, whose order depends on a toml cargo feature another crate might switch on.

use toml::{Table, Value};

use super::locate::Seg;

/// Deep merge: tables merge key by key, anything else (arrays included) replaces. Arrays replace
/// because merging `[[methods]]` element-wise would make a profile's meaning depend on order.
pub(crate) fn deep_merge(base: &mut Table, overlay: &Table) {
    for (k, v) in overlay {
        match (base.get_mut(k), v) {
            (Some(Value::Table(b)), Value::Table(o)) => deep_merge(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

/// Set a key path (keys only) inside `table`, creating missing tables on the way.
pub(crate) fn set_path(table: &mut Table, path: &[Seg], value: Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut cur = table;
    for seg in parents {
        let Seg::Key(k) = seg else { return };
        let entry = cur
            .entry(k.clone())
            .or_insert_with(|| Value::Table(Table::new()));
        if !entry.is_table() {
            *entry = Value::Table(Table::new());
        }
        cur = entry.as_table_mut().expect("just made a table");
    }
    if let Seg::Key(k) = last {
        cur.insert(k.clone(), value);
    }
}

/// One sweep value into the sections: a key's value replaces it; a table swept over a whole
/// section (`"partition" = [{ scheme = "even" }, ...]`) is laid over it key by key, as a
/// profile is, so keys it leaves out (`clients`) stay the section's.
pub(crate) fn sweep_into(sections: &mut Table, path: &[Seg], value: Value) {
    match (path, value) {
        ([Seg::Key(s)], Value::Table(t)) => {
            if let Some(Value::Table(section)) = sections.get_mut(s) {
                deep_merge(section, &t);
            } else {
                sections.insert(s.clone(), Value::Table(t));
            }
        }
        (path, value) => set_path(sections, path, value),
    }
}

/// Cartesian product, first list outermost (slowest varying), each list in its own order.
pub(crate) fn product<T: Clone>(lists: &[Vec<T>]) -> Vec<Vec<T>> {
    lists.iter().fold(vec![Vec::new()], |acc, list| {
        acc.iter()
            .flat_map(|prefix| {
                list.iter().map(move |x| {
                    let mut p = prefix.clone();
                    p.push(x.clone());
                    p
                })
            })
            .collect()
    })
}

/// Short, stable text of a value for labels: strings bare, floats in shortest round-trip form.
pub(crate) fn fmt_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Integer(i) => i.to_string(),
        Value::Float(f) => format!("{f:?}"),
        Value::Boolean(b) => b.to_string(),
        Value::Table(t) => fmt_table(t),
        other => other.to_string(),
    }
}

/// A table in a label: its `scheme` (or `generator`, `kind`) first, the other keys sorted in
/// parentheses: `dirichlet(alpha=0.1)`, `even`.
fn fmt_table(t: &Table) -> String {
    let head = ["scheme", "generator", "kind"]
        .into_iter()
        .find(|k| t.get(*k).is_some_and(Value::is_str));
    let mut keys: Vec<&String> = t.keys().filter(|k| Some(k.as_str()) != head).collect();
    keys.sort();
    let rest: Vec<String> = keys
        .iter()
        .map(|k| format!("{k}={}", fmt_value(&t[*k])))
        .collect();
    let head = head.map_or(String::new(), |k| fmt_value(&t[k]));
    if rest.is_empty() {
        head
    } else {
        format!("{head}({})", rest.join(","))
    }
}

/// `k1=v1,k2=v2` in the given key order.
pub(crate) fn label(pairs: &[(String, Value)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={}", fmt_value(v)))
        .collect::<Vec<_>>()
        .join(",")
}

/// One method entry's parameter variants: every list-valued parameter sweeps, the product is
/// taken over the list-valued keys in sorted order. Returns (variant label, scalar params).
/// To pass a list itself to a method, wrap it: `schedule = [[8, 4, 2, 1]]` sweeps one value.
pub(crate) fn expand_params(params: &Table) -> Vec<(String, Table)> {
    let mut keys: Vec<&String> = params.keys().collect();
    keys.sort();
    let fixed: Vec<&String> = keys
        .iter()
        .copied()
        .filter(|k| !params[*k].is_array())
        .collect();
    let swept: Vec<&String> = keys
        .iter()
        .copied()
        .filter(|k| params[*k].is_array())
        .collect();
    let lists: Vec<Vec<Value>> = swept
        .iter()
        .map(|k| params[*k].as_array().expect("filtered on is_array").clone())
        .collect();
    product(&lists)
        .into_iter()
        .map(|combo| {
            let mut t = Table::new();
            for k in &fixed {
                t.insert((*k).clone(), params[*k].clone());
            }
            let pairs: Vec<(String, Value)> =
                swept.iter().map(|k| (*k).clone()).zip(combo).collect();
            for (k, v) in &pairs {
                t.insert(k.clone(), v.clone());
            }
            (label(&pairs), t)
        })
        .collect()
}
