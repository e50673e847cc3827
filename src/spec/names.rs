//! Names a manifest gives, checked where they become folders, and named in error messages.

/// A name that becomes a folder under --results (paper, id, profile): letters, digits, `_`, `-`
/// and inner dots only, so no value can lead outside the results folder.
pub fn plain_name(name: &str) -> std::result::Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 100
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c));
    if ok {
        Ok(())
    } else {
        Err("it names a folder under the results root: expected 1 to 100 ASCII letters, digits, `_`, `-` or `.`, not starting with `.`".into())
    }
}

/// `a`, `b`, `c`: names as an error message lists them.
pub fn quoted(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
