//! Messages: named parts (matrices; a scalar is a 1×1 part), so that counting never depends on
//! a message's shape and an attack reads a part by name, not by column count.

use anyhow::{bail, Result};
use ndarray::{arr2, Array2};

#[derive(Clone, Debug, Default)]
pub struct Message {
    parts: Vec<(&'static str, Array2<f64>)>,
}

impl Message {
    pub fn new() -> Self {
        Self::default()
    }

    /// This message with the part `name` added (names are unique within a message).
    pub fn with(mut self, name: &'static str, part: Array2<f64>) -> Self {
        debug_assert!(self.find(name).is_none(), "part `{name}` sent twice");
        self.parts.push((name, part));
        self
    }

    /// This message with the scalar `name` added (a 1×1 part).
    pub fn with_scalar(self, name: &'static str, v: f64) -> Self {
        self.with(name, arr2(&[[v]]))
    }

    fn find(&self, name: &str) -> Option<&Array2<f64>> {
        self.parts.iter().find(|(n, _)| *n == name).map(|(_, p)| p)
    }

    /// The part `name`; an error names the parts the message does have.
    pub fn get(&self, name: &str) -> Result<&Array2<f64>> {
        match self.find(name) {
            Some(p) => Ok(p),
            None => bail!(
                "message has no part `{name}` (parts: {})",
                self.parts
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    pub fn has(&self, name: &str) -> bool {
        self.find(name).is_some()
    }

    pub fn scalar(&self, name: &str) -> Result<f64> {
        let p = self.get(name)?;
        match p.dim() {
            (1, 1) => Ok(p[[0, 0]]),
            (r, c) => bail!("part `{name}` is {r}×{c}, not a scalar"),
        }
    }

    /// Take the part `name` out of the message (no copy).
    pub fn take(&mut self, name: &str) -> Result<Array2<f64>> {
        self.get(name)?;
        let i = self.parts.iter().position(|(n, _)| *n == name);
        Ok(self.parts.remove(i.expect("checked above")).1)
    }

    /// Numbers carried: what the network counts (8 bytes each).
    pub fn numbers(&self) -> u64 {
        self.parts.iter().map(|(_, p)| p.len() as u64).sum()
    }

    pub fn parts(&self) -> impl Iterator<Item = (&'static str, &Array2<f64>)> {
        self.parts.iter().map(|(n, p)| (*n, p))
    }
}

/// Σ_i of the part `name` over `replies`, summed in client order (results never depend on
/// which client finished first or on the backend).
pub fn sum_part(replies: &[Message], name: &str) -> Result<Array2<f64>> {
    let Some(first) = replies.first() else {
        bail!("no replies to sum part `{name}` over")
    };
    let mut sum = first.get(name)?.clone();
    for r in &replies[1..] {
        sum += r.get(name)?;
    }
    Ok(sum)
}

/// Σ_i of the scalar `name`, in client order.
pub fn sum_scalar(replies: &[Message], name: &str) -> Result<f64> {
    replies.iter().map(|r| r.scalar(name)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_counted_and_read_by_name() {
        let m = Message::new()
            .with("y", Array2::ones((5, 3)))
            .with_scalar("f", 2.5);
        assert_eq!(m.numbers(), 16);
        assert_eq!(m.scalar("f").unwrap(), 2.5);
        assert_eq!(m.get("y").unwrap().dim(), (5, 3));
        let e = m.get("z").unwrap_err().to_string();
        assert!(e.contains("no part `z`") && e.contains("y, f"), "{e}");
        assert!(m.scalar("y").is_err());
    }

    #[test]
    fn sums_run_in_client_order() {
        let replies: Vec<Message> = (0..4)
            .map(|i| Message::new().with("y", Array2::from_elem((2, 2), i as f64)))
            .collect();
        assert_eq!(sum_part(&replies, "y").unwrap()[[1, 1]], 6.0);
        assert!(sum_part(&[], "y").is_err());
    }
}
