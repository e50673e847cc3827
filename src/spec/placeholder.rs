//! Placeholders in a manifest's prose (`description`, a claim's `text`): numbers the report
//! fills in from the runs, so no hand-typed number can contradict them.
//!
//! `{{ <quantity> [<= <number>] of <method> [/ <method>] [at <point label>] }}`, e.g.
//! `{{rounds of FAPS at kappa=10}}`, `{{kkt <= 1e-5 of FAPS at kappa=10}}` (rounds until kkt is
//! first ≤ 1e-5), `{{rounds of FAPS / SSI at kappa=10}}` (a ratio), `{{time_s of SSI}}` (no
//! `at` with one point). Whitespace between the parts is free. Here only the grammar: the names
//! are checked when the manifest loads (`plan`), the numbers filled in by `report::placeholders`.

use std::ops::Range;

/// One `{{...}}` of a text, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Placeholder {
    /// Where it lies in the text, braces included.
    pub span: Range<usize>,
    /// `rounds`, `time_s` or a metric.
    pub quantity: String,
    /// `<= v`: the rounds until the metric is first at or below v.
    pub reach: Option<f64>,
    pub method: String,
    /// `/ <method>`: the ratio of the two methods' values.
    pub divided_by: Option<String>,
    /// `at <label>`: the sweep point.
    pub at: Option<String>,
}

/// A `{{...}}` that does not parse: its text and why.
#[derive(Debug, Clone, PartialEq)]
pub struct BadPlaceholder {
    pub text: String,
    pub why: String,
}

/// Every placeholder of `text`, in order; the first one that does not parse is an error.
pub fn scan(text: &str) -> Result<Vec<Placeholder>, BadPlaceholder> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(open) = text[from..].find("{{").map(|i| from + i) {
        let Some(close) = text[open + 2..].find("}}").map(|i| open + 2 + i) else {
            return Err(BadPlaceholder {
                text: text[open..].to_string(),
                why: "`{{` without its closing `}}`".into(),
            });
        };
        let whole = &text[open..close + 2];
        let parsed = parse(&text[open + 2..close]).map_err(|why| BadPlaceholder {
            text: whole.to_string(),
            why,
        })?;
        out.push(Placeholder {
            span: open..close + 2,
            ..parsed
        });
        from = close + 2;
    }
    Ok(out)
}

/// The inside of one `{{...}}`.
fn parse(inner: &str) -> Result<Placeholder, String> {
    const GRAMMAR: &str = "expected `{{<quantity> [<= <number>] of <method> [/ <method>] [at <point>]}}`, e.g. `{{rounds of FAPS at kappa=10}}`";
    // Whitespace is free: runs of it count as one space.
    // Padded, so a missing part still leaves its keyword between spaces.
    let norm = format!(
        " {} ",
        inner.split_whitespace().collect::<Vec<_>>().join(" ")
    );
    let Some((head, rest)) = norm.split_once(" of ") else {
        return Err(format!("no ` of <method>`: {GRAMMAR}"));
    };
    let (who, at) = match rest.rsplit_once(" at ") {
        Some((w, a)) => (w, Some(a.trim().to_string())),
        None => (rest.trim_end(), None),
    };
    let (method, divided_by) = match who.rsplit_once('/') {
        Some((m, d)) => (m.trim(), Some(d.trim().to_string())),
        None => (who.trim(), None),
    };
    let (quantity, reach) = match head.split_once("<=").or_else(|| head.split_once('≤')) {
        Some((q, v)) => {
            let v = v.trim();
            let value: f64 = v
                .parse()
                .ok()
                .filter(|x: &f64| x.is_finite())
                .ok_or_else(|| format!("`{v}` after `<=` is not a finite number: {GRAMMAR}"))?;
            (q.trim(), Some(value))
        }
        None => (head.trim(), None),
    };
    let empty = |what: &str, s: &str| {
        if s.is_empty() {
            Err(format!("no {what}: {GRAMMAR}"))
        } else {
            Ok(())
        }
    };
    empty("quantity", quantity)?;
    empty("method", method)?;
    if quantity.contains(' ') {
        return Err(format!("`{quantity}` is not one quantity: {GRAMMAR}"));
    }
    if let Some(d) = &divided_by {
        empty("method after `/`", d)?;
    }
    if let Some(a) = &at {
        empty("point after `at`", a)?;
    }
    Ok(Placeholder {
        span: 0..0,
        quantity: quantity.to_string(),
        reach,
        method: method.to_string(),
        divided_by,
        at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grammar_reads_every_part_and_tolerates_whitespace() {
        let text =
            "A {{rounds of FAPS at kappa=10}} b {{ kkt<=1e-5   of  FAPS fixed (inner_steps=5) \
                    at kappa=10 }} c {{rounds of FAPS / SSI at kappa=10}} {{time_s of SSI}}";
        let ps = scan(text).unwrap();
        assert_eq!(ps.len(), 4);
        assert_eq!(&text[ps[0].span.clone()], "{{rounds of FAPS at kappa=10}}");
        assert_eq!(
            (ps[0].quantity.as_str(), ps[0].method.as_str()),
            ("rounds", "FAPS")
        );
        assert_eq!(ps[0].at.as_deref(), Some("kappa=10"));
        assert_eq!(ps[1].quantity, "kkt");
        assert_eq!(ps[1].reach, Some(1e-5));
        assert_eq!(ps[1].method, "FAPS fixed (inner_steps=5)");
        assert_eq!(ps[2].divided_by.as_deref(), Some("SSI"));
        assert_eq!((ps[3].at.clone(), ps[3].divided_by.clone()), (None, None));
        assert!(scan("no placeholders {single}").unwrap().is_empty());
    }

    #[test]
    fn what_does_not_parse_is_named() {
        for (text, says) in [
            ("x {{rounds FAPS}}", "of <method>"),
            ("x {{rounds of FAPS", "closing"),
            ("x {{kkt <= tiny of FAPS}}", "not a finite number"),
            ("x {{ of FAPS}}", "no quantity"),
            ("x {{rounds of FAPS at }}", "no point"),
            ("x {{rounds of FAPS / }}", "after `/`"),
            ("x {{final kkt of FAPS}}", "not one quantity"),
        ] {
            let e = scan(text).unwrap_err();
            assert!(e.why.contains(says), "{text}: {}", e.why);
            assert!(e.text.starts_with("{{"), "{text}: {}", e.text);
        }
    }
}
