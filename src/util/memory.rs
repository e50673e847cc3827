//! The memory budget that sizes are checked against before they are allocated: a declared
//! shape, a feature index or a manifest's n may ask for terabytes, and an allocation that size
//! aborts the process (or drives the machine into swap) instead of giving an error.
//!
//! The budget is this machine's MemAvailable (/proc/meminfo), or `DPCA_MEMORY_BUDGET` (bytes,
//! or with a K, M, G or T suffix) when set; `dpca run --no-memory-check` turns every check off.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// The environment variable that sets the budget instead of MemAvailable.
pub const BUDGET_VAR: &str = "DPCA_MEMORY_BUDGET";

static OFF: AtomicBool = AtomicBool::new(false);

/// No size is refused any more in this process (`--no-memory-check`).
pub fn disable() {
    OFF.store(true, Ordering::Relaxed);
}

/// Where the budget came from, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    MemAvailable,
    Variable,
}

/// The budget in bytes and where it came from; None when the checks are off or the machine does
/// not say (no /proc/meminfo). A malformed `DPCA_MEMORY_BUDGET` is an error naming it. Decided
/// once per process: MemAvailable read later would shrink by what the process itself holds.
pub fn budget() -> Result<Option<(u128, Source)>, String> {
    static ONCE: OnceLock<Result<Option<(u128, Source)>, String>> = OnceLock::new();
    if OFF.load(Ordering::Relaxed) {
        return Ok(None);
    }
    ONCE.get_or_init(decide).clone()
}

fn decide() -> Result<Option<(u128, Source)>, String> {
    if let Ok(text) = std::env::var(BUDGET_VAR) {
        return parse_size(&text)
            .map(|b| Some((b, Source::Variable)))
            .ok_or_else(|| {
                format!(
                    "a memory budget, but {BUDGET_VAR} = {:?} is not one: expected a number of \
                     bytes, optionally with a K, M, G or T suffix (e.g. 8G)",
                    super::excerpt(text.as_bytes())
                )
            });
    }
    Ok(available().map(|b| (b, Source::MemAvailable)))
}

/// MemAvailable of /proc/meminfo, in bytes.
fn available() -> Option<u128> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u128 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// "8G", "512M", "1000": bytes (binary multiples).
fn parse_size(text: &str) -> Option<u128> {
    let t = text.trim();
    let (digits, shift) = match t.char_indices().last()? {
        (k, 'K' | 'k') => (&t[..k], 10),
        (k, 'M' | 'm') => (&t[..k], 20),
        (k, 'G' | 'g') => (&t[..k], 30),
        (k, 'T' | 't') => (&t[..k], 40),
        _ => (t, 0),
    };
    let v: u128 = digits.trim().parse().ok()?;
    v.checked_mul(1u128 << shift)
}

/// `bytes` in GiB with one decimal (two below 0.1 GiB).
pub fn gib(bytes: u128) -> String {
    let g = bytes as f64 / (1u128 << 30) as f64;
    if g < 0.1 {
        format!("{g:.3} GiB")
    } else {
        format!("{g:.1} GiB")
    }
}

/// Ok if `bytes` fit the budget; otherwise the end of an error message after "needs": the size
/// asked, the budget and how to change it. The caller says first what asked (a file and line, a
/// key).
pub fn check(bytes: u128) -> Result<(), String> {
    let Some((budget, source)) = budget()? else {
        return Ok(());
    };
    if bytes <= budget {
        return Ok(());
    }
    let whose = match source {
        Source::MemAvailable => "this machine's available memory (MemAvailable)".to_string(),
        Source::Variable => format!("the memory budget {BUDGET_VAR}"),
    };
    Err(format!(
        "at least {} ({bytes} bytes), more than {whose} of {}: refused before allocating that \
         much; reduce the sizes, or set {BUDGET_VAR} (or pass --no-memory-check to `dpca run`) \
         to try anyway",
        gib(bytes),
        gib(budget)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(parse_size("1000"), Some(1000));
        assert_eq!(parse_size("8G"), Some(8 << 30));
        assert_eq!(parse_size(" 512m "), Some(512 << 20));
        assert_eq!(parse_size("2T"), Some(2 << 40));
        for bad in ["", "G", "-1", "1.5G", "12X", "9".repeat(60).as_str()] {
            assert_eq!(parse_size(bad), None, "{bad:?}");
        }
    }
}
