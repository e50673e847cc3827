//! Placeholders in a manifest's prose (`description`, a claim's `text`): numbers the report
//! fills in from the runs, so no hand-typed number can contradict them.
//!
//! `{{ <quantity> [<= <number>] of <method> [/ <method>] [at <point label>] }}`, e.g.
//! `{{rounds of FAPS at kappa=10}}`, `{{kkt <= 1e-5 of FAPS at kappa=10}}` (rounds until kkt is
//! first ≤ 1e-5), `{{rounds of FAPS / SSI at kappa=10}}` (a ratio), `{{time_s of SSI}}` (no
//! `at` with one point). The keywords `of`, `/` and `at` are words of their own, between spaces
//! (`DisPCA-L/B` is one name; the last `at` starts the point); whitespace runs count as one
//! space. A method or point whose name holds ` / `, ` at ` or ` of ` as words goes in
//! backquotes: `` {{rounds of `A / B at x` at `n=1 at 2`}} ``. Here only the grammar: the names
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

/// One word of a placeholder: a run of non-space characters, or a name in backquotes taken as
/// it is (spaces, `/`, ` at ` and ` of ` included).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Word<'a> {
    text: &'a str,
    quoted: bool,
}

impl Word<'_> {
    /// Whether this is the grammar's keyword `k` (a quoted word never is).
    fn is(&self, k: &str) -> bool {
        !self.quoted && self.text == k
    }
}

/// The words of `inner`; an unclosed backquote, or one inside a word, is an error.
fn words(inner: &str) -> Result<Vec<Word<'_>>, String> {
    let mut out = Vec::new();
    let mut rest = inner.trim_start();
    while !rest.is_empty() {
        let (word, after) = if let Some(q) = rest.strip_prefix('`') {
            let Some(end) = q.find('`') else {
                return Err(format!("a backquote without its closing one: {GRAMMAR}"));
            };
            let after = &q[end + 1..];
            if after.starts_with(|c: char| !c.is_whitespace()) {
                return Err(format!("a quoted name ends its word: put a space after its closing backquote: {GRAMMAR}"));
            }
            (
                Word {
                    text: &q[..end],
                    quoted: true,
                },
                after,
            )
        } else {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            if rest[..end].contains('`') {
                return Err(format!(
                    "a backquote inside a word: quote a whole name, `like this`: {GRAMMAR}"
                ));
            }
            (
                Word {
                    text: &rest[..end],
                    quoted: false,
                },
                &rest[end..],
            )
        };
        out.push(word);
        rest = after.trim_start();
    }
    Ok(out)
}

/// A name made of `words`: one quoted word as it is, or unquoted words joined by single spaces.
fn name(words: &[Word]) -> Result<String, String> {
    match words {
        [w] if w.quoted => Ok(w.text.to_string()),
        ws if ws.iter().any(|w| w.quoted) => Err(format!(
            "a quoted name stands alone between the keywords: {GRAMMAR}"
        )),
        ws => Ok(ws.iter().map(|w| w.text).collect::<Vec<_>>().join(" ")),
    }
}

const GRAMMAR: &str = "expected `{{<quantity> [<= <number>] of <method> [/ <method>] [at <point>]}}`, e.g. `{{rounds of FAPS at kappa=10}}`, a name holding ` / `, ` at ` or ` of ` in backquotes";

/// The inside of one `{{...}}`: words split by the keywords `of`, `/` and `at` (each a word of
/// its own, so `DisPCA-L/B` is one name), the last `at` starting the point; a name in backquotes
/// is never split.
fn parse(inner: &str) -> Result<Placeholder, String> {
    let ws = words(inner)?;
    let Some(of) = ws.iter().position(|w| w.is("of")) else {
        return Err(format!("no ` of <method>`: {GRAMMAR}"));
    };
    let (head, rest) = (&ws[..of], &ws[of + 1..]);
    let (who, at) = match rest.iter().rposition(|w| w.is("at")) {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let (method, divided_by) = match who.iter().position(|w| w.is("/")) {
        Some(i) => (&who[..i], Some(&who[i + 1..])),
        None => (who, None),
    };
    if head.iter().any(|w| w.quoted) {
        return Err(format!("the quantity is a bare word: {GRAMMAR}"));
    }
    let head = head.iter().map(|w| w.text).collect::<Vec<_>>().join(" ");
    let (quantity, reach) = match head.split_once("<=").or_else(|| head.split_once('≤')) {
        Some((q, v)) => {
            let v = v.trim();
            let value: f64 = v
                .parse()
                .ok()
                .filter(|x: &f64| x.is_finite())
                .ok_or_else(|| format!("`{v}` after `<=` is not a finite number: {GRAMMAR}"))?;
            (q.trim().to_string(), Some(value))
        }
        None => (head.trim().to_string(), None),
    };
    let empty = |what: &str, s: &str| {
        if s.is_empty() {
            Err(format!("no {what}: {GRAMMAR}"))
        } else {
            Ok(())
        }
    };
    empty("quantity", &quantity)?;
    let method = name(method)?;
    empty("method", &method)?;
    if quantity.contains(' ') {
        return Err(format!("`{quantity}` is not one quantity: {GRAMMAR}"));
    }
    let divided_by = divided_by.map(name).transpose()?;
    if let Some(d) = &divided_by {
        empty("method after `/`", d)?;
    }
    let at = at.map(name).transpose()?;
    if let Some(a) = &at {
        empty("point after `at`", a)?;
    }
    Ok(Placeholder {
        span: 0..0,
        quantity,
        reach,
        method,
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
    fn names_holding_slashes_and_keywords_parse() {
        // A bare `/` inside a word is part of the name; a name with ` / ` or ` at ` as words is
        // quoted, and the keywords around it still split.
        let ps = scan(
            "{{rounds of DisPCA-L/B at n=5}} {{kkt <= 1e-5 of `FAPS at 2 / 3` / `SSI of x` at \
             `k=1 at b/c`}} {{rounds of A at x at `y`}}",
        )
        .unwrap();
        assert_eq!(ps[0].method, "DisPCA-L/B");
        assert_eq!(
            (ps[0].divided_by.clone(), ps[0].at.as_deref()),
            (None, Some("n=5"))
        );
        assert_eq!(ps[1].method, "FAPS at 2 / 3");
        assert_eq!(ps[1].divided_by.as_deref(), Some("SSI of x"));
        assert_eq!(ps[1].at.as_deref(), Some("k=1 at b/c"));
        assert_eq!(ps[1].reach, Some(1e-5));
        // Unquoted, the last `at` starts the point.
        assert_eq!(
            (ps[2].method.as_str(), ps[2].at.as_deref()),
            ("A at x", Some("y"))
        );
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
            ("x {{rounds of `FAPS at}}", "closing one"),
            ("x {{rounds of `FAPS`x}}", "space after"),
            ("x {{rounds of F`AP`S}}", "inside a word"),
            ("x {{rounds of `FAPS` b}}", "stands alone"),
        ] {
            let e = scan(text).unwrap_err();
            assert!(e.why.contains(says), "{text}: {}", e.why);
            assert!(e.text.starts_with("{{"), "{text}: {}", e.text);
        }
    }
}
