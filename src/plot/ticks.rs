//! Axis ranges, tick positions and tick labels for the plots in [`super`] (the plot module).
//!
//! Everything here works in *axis space*: the data value itself on a linear axis, its base-10
//! logarithm on a log axis. Labels are plain text: decades as `10⁻⁶` (unicode superscripts),
//! linear ticks as clean decimals (`0`, `50`, `0.25`, `1.5k`, `2×10⁻⁴`).

/// Unicode superscript form of an integer: `-6` → `⁻⁶`.
pub fn superscript(n: i64) -> String {
    const DIGITS: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    let mut out = String::new();
    if n < 0 {
        out.push('⁻');
    }
    for c in n.unsigned_abs().to_string().chars() {
        out.push(DIGITS[c.to_digit(10).expect("decimal digit") as usize]);
    }
    out
}

/// Label of the decade `10^exp`: `10⁻⁶`, `10⁰`, `10³`.
pub fn decade_label(exp: i64) -> String {
    format!("10{}", superscript(exp))
}

/// Label of a log-axis tick at `mantissa × 10^exp` (mantissa 1 gives the bare decade).
pub fn log_label(mantissa: u32, exp: i64) -> String {
    if mantissa == 1 {
        decade_label(exp)
    } else {
        format!("{mantissa}×{}", decade_label(exp))
    }
}

/// Smallest and largest usable value: finite, and positive when `log` is set.
/// `None` when nothing is usable (empty input, all NaN, all ≤ 0 on a log axis).
pub fn data_bounds(values: impl IntoIterator<Item = f64>, log: bool) -> Option<(f64, f64)> {
    values
        .into_iter()
        .filter(|v| usable(*v, log))
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
}

/// Whether `v` can be drawn on an axis (finite; positive on a log axis).
pub fn usable(v: f64, log: bool) -> bool {
    v.is_finite() && (!log || v > 0.0)
}

/// A "nice" tick step (1, 2, 2.5 or 5 × 10^k) giving roughly `target` intervals over `span`.
pub fn nice_step(span: f64, target: usize) -> f64 {
    let span = if span.is_finite() && span > 0.0 {
        span
    } else {
        1.0
    };
    let raw = span / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let nice = if norm <= 1.0 {
        1.0
    } else if norm <= 2.0 {
        2.0
    } else if norm <= 2.5 {
        2.5
    } else if norm <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

/// Number of decimals needed to write multiples of `step` exactly (0.25 → 2, 50 → 0).
pub fn decimals_for(step: f64) -> usize {
    (0..=15)
        .find(|&d| {
            let s = step * 10f64.powi(d as i32);
            (s - s.round()).abs() <= 1e-6 * s.abs().max(1.0)
        })
        .unwrap_or(15)
}

/// How the labels of one linear axis are written; chosen once per axis so all ticks agree.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LinearFormat {
    /// Plain decimals with this many digits after the point.
    Plain { decimals: usize },
    /// Divided by `10^exp3` with an SI suffix (k, M, G).
    Suffix { exp3: i32, decimals: usize },
    /// Mantissa × 10^exp with a common exponent (for tiny values).
    Scientific { exp: i32, decimals: usize },
}

impl LinearFormat {
    /// Pick the format for ticks at multiples of `step` whose largest magnitude is `max_abs`.
    pub fn choose(step: f64, max_abs: f64) -> LinearFormat {
        if (1e4..1e12).contains(&max_abs) {
            let exp3 = ((max_abs.log10().floor() as i32) / 3).clamp(1, 3) * 3;
            LinearFormat::Suffix {
                exp3,
                decimals: decimals_for(step / 10f64.powi(exp3)),
            }
        } else if max_abs >= 1e12 || (max_abs > 0.0 && max_abs < 1e-3) {
            let exp = max_abs.log10().floor() as i32;
            LinearFormat::Scientific {
                exp,
                decimals: decimals_for(step / 10f64.powi(exp)),
            }
        } else {
            LinearFormat::Plain {
                decimals: decimals_for(step),
            }
        }
    }

    /// Label of the tick at `v`.
    pub fn format(&self, v: f64) -> String {
        let fixed = |x: f64, d: usize| {
            let s = format!("{x:.d$}");
            // "-0" and "-0.0" are zero; use a typographic minus for the rest.
            if s.trim_start_matches('-')
                .chars()
                .all(|c| c == '0' || c == '.')
            {
                s.trim_start_matches('-').to_string()
            } else {
                s.replace('-', "−")
            }
        };
        if v == 0.0 {
            return "0".to_string();
        }
        match *self {
            LinearFormat::Plain { decimals } => fixed(v, decimals),
            LinearFormat::Suffix { exp3, decimals } => {
                let suffix = match exp3 {
                    3 => "k",
                    6 => "M",
                    _ => "G",
                };
                format!("{}{suffix}", fixed(v / 10f64.powi(exp3), decimals))
            }
            LinearFormat::Scientific { exp, decimals } => {
                format!(
                    "{}×{}",
                    fixed(v / 10f64.powi(exp), decimals),
                    decade_label(exp as i64)
                )
            }
        }
    }
}

/// A decimal number without trailing fractional zeros: `1.0100` → `1.01`, `2.000` → `2`, `300` → `300`.
pub fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// Short label for a single value (bar tops): integers as they are, others with three
/// significant digits, very small or large magnitudes as `1.2×10⁻⁴`.
pub fn format_value(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".to_string();
    }
    let a = v.abs();
    let minus = if v < 0.0 { "−" } else { "" };
    if a == 0.0 {
        "0".to_string()
    } else if v.fract() == 0.0 && a < 1e7 {
        format!("{minus}{a:.0}")
    } else if (1e-2..1e5).contains(&a) {
        let decimals = (2 - a.log10().floor() as i32).max(0) as usize;
        format!("{minus}{}", trim_zeros(&format!("{a:.decimals$}")))
    } else {
        let exp = a.log10().floor() as i64;
        let mant = a / 10f64.powi(exp as i32);
        let m = format!("{mant:.1}");
        let m = trim_zeros(&m);
        if m == "1" {
            format!("{minus}{}", decade_label(exp))
        } else {
            format!("{minus}{m}×{}", decade_label(exp))
        }
    }
}

/// One axis: range, labelled (major) ticks and unlabelled (minor) grid positions,
/// all in axis space.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub log: bool,
    pub lo: f64,
    pub hi: f64,
    pub major: Vec<(f64, String)>,
    pub minor: Vec<f64>,
}

impl Axis {
    /// Axis covering `bounds` (data units; `None` = no data), with at most about
    /// `max_labels` labelled ticks. Linear axes are extended to include 0 when the data
    /// start close to it (`zero_snap`) and always when `include_zero` is set.
    pub fn new(
        bounds: Option<(f64, f64)>,
        log: bool,
        max_labels: usize,
        include_zero: bool,
    ) -> Axis {
        let max_labels = max_labels.max(2);
        if log {
            match bounds {
                Some((lo, hi)) => Axis::log(lo.log10(), hi.log10(), max_labels),
                None => Axis::log(0.0, 1.0, max_labels),
            }
        } else {
            let (lo, hi) = bounds.unwrap_or((0.0, 1.0));
            Axis::linear(lo, hi, max_labels, include_zero)
        }
    }

    /// Log axis from `lo10` to `hi10` (log10 of the data), padded to whole decades.
    fn log(lo10: f64, hi10: f64, max_labels: usize) -> Axis {
        let mut lo = lo10.floor() as i64;
        let mut hi = hi10.ceil() as i64;
        if hi <= lo {
            // A single value (or one exact decade): give it a decade each side.
            lo -= 1;
            hi += 1;
        }
        let decades = (hi - lo) as usize;
        let stride = decades.div_ceil(max_labels).max(1) as i64;
        let mut major = Vec::new();
        let mut minor = Vec::new();
        for e in lo..=hi {
            if e.rem_euclid(stride) == 0 {
                major.push((e as f64, decade_label(e)));
            } else {
                minor.push(e as f64);
            }
            if e == hi || decades > 6 {
                continue;
            }
            for m in 2..=9u32 {
                let t = e as f64 + (m as f64).log10();
                // Label 2× and 5× when there are too few decades to read values off.
                if decades <= 2 && (m == 2 || m == 5) {
                    major.push((t, log_label(m, e)));
                } else {
                    minor.push(t);
                }
            }
        }
        major.sort_by(|a, b| a.0.total_cmp(&b.0));
        Axis {
            log: true,
            lo: lo as f64,
            hi: hi as f64,
            major,
            minor,
        }
    }

    /// Linear axis from `lo` to `hi`, widened to whole tick steps.
    fn linear(mut lo: f64, mut hi: f64, max_labels: usize, include_zero: bool) -> Axis {
        if hi <= lo {
            let half = if lo == 0.0 { 1.0 } else { 0.5 * lo.abs() };
            lo -= half;
            hi += half;
        }
        // Snap to zero when the data start near it (iterations from 1, errors near 0).
        if include_zero || (lo > 0.0 && lo < 0.25 * (hi - lo)) {
            lo = lo.min(0.0);
        }
        if include_zero || (hi < 0.0 && -hi < 0.25 * (hi - lo)) {
            hi = hi.max(0.0);
        }
        let target = (max_labels - 1).clamp(1, 8);
        let step = nice_step(hi - lo, target);
        let k_lo = (lo / step + 1e-9).floor() as i64;
        let k_hi = (hi / step - 1e-9).ceil() as i64;
        let ticks: Vec<f64> = (k_lo..=k_hi).map(|k| k as f64 * step).collect();
        let max_abs = ticks.iter().fold(0f64, |m, t| m.max(t.abs()));
        let fmt = LinearFormat::choose(step, max_abs);
        let major = ticks.iter().map(|&t| (t, fmt.format(t))).collect();
        Axis {
            log: false,
            lo: k_lo as f64 * step,
            hi: k_hi as f64 * step,
            major,
            minor: vec![],
        }
    }

    /// A data value in axis space, or `None` if it cannot be drawn.
    pub fn to_axis(&self, v: f64) -> Option<f64> {
        if !usable(v, self.log) {
            None
        } else if self.log {
            Some(v.log10())
        } else {
            Some(v)
        }
    }

    /// Position of an axis-space value as a fraction of the axis length (0 at `lo`).
    pub fn frac(&self, t: f64) -> f64 {
        (t - self.lo) / (self.hi - self.lo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decades() {
        assert_eq!(decade_label(-6), "10⁻⁶");
        assert_eq!(decade_label(3), "10³");
        assert_eq!(decade_label(0), "10⁰");
        assert_eq!(decade_label(-16), "10⁻¹⁶");
        assert_eq!(log_label(5, -3), "5×10⁻³");
    }

    #[test]
    fn log_axis_whole_decades() {
        let a = Axis::new(
            data_bounds([1e-6, 0.3, f64::NAN, 0.0, -1.0], true),
            true,
            12,
            false,
        );
        assert_eq!((a.lo, a.hi), (-6.0, 0.0));
        let labels: Vec<&str> = a.major.iter().map(|(_, s)| s.as_str()).collect();
        assert_eq!(
            labels,
            ["10⁻⁶", "10⁻⁵", "10⁻⁴", "10⁻³", "10⁻²", "10⁻¹", "10⁰"]
        );
        assert!(!labels.iter().any(|s| s.contains('e')));
    }

    #[test]
    fn log_axis_many_decades_thins_labels() {
        let a = Axis::new(Some((1e-16, 10.0)), true, 9, false);
        assert_eq!((a.lo, a.hi), (-16.0, 1.0));
        assert!(a.major.len() <= 10, "{:?}", a.major);
        assert!(a.major.iter().any(|(_, s)| s == "10⁰"));
    }

    #[test]
    fn log_axis_single_value_and_short_range() {
        let a = Axis::new(Some((1e-6, 1e-6)), true, 10, false);
        assert_eq!((a.lo, a.hi), (-7.0, -5.0));
        let b = Axis::new(Some((2e-4, 7e-4)), true, 10, false);
        assert_eq!((b.lo, b.hi), (-4.0, -3.0));
        let labels: Vec<&str> = b.major.iter().map(|(_, s)| s.as_str()).collect();
        assert_eq!(labels, ["10⁻⁴", "2×10⁻⁴", "5×10⁻⁴", "10⁻³"]);
    }

    #[test]
    fn linear_labels_are_clean() {
        let a = Axis::new(Some((1.0, 197.0)), false, 8, false);
        assert_eq!(a.lo, 0.0);
        let labels: Vec<&str> = a.major.iter().map(|(_, s)| s.as_str()).collect();
        assert_eq!(labels, ["0", "50", "100", "150", "200"]);
        let b = Axis::new(Some((0.1, 0.9)), false, 6, false);
        assert!(b.major.iter().all(|(_, s)| s.len() <= 4), "{:?}", b.major);
        let c = Axis::new(Some((0.0, 1.0)), false, 6, false);
        assert_eq!(c.major[1].1, "0.2");
    }

    #[test]
    fn linear_formats() {
        assert_eq!(LinearFormat::choose(500.0, 20000.0).format(1500.0), "1.5k");
        assert_eq!(LinearFormat::choose(5000.0, 20000.0).format(15000.0), "15k");
        assert_eq!(LinearFormat::choose(0.25, 1.0).format(0.75), "0.75");
        assert_eq!(LinearFormat::choose(1e-4, 5e-4).format(2e-4), "2×10⁻⁴");
        assert_eq!(LinearFormat::choose(1.0, 5.0).format(-3.0), "−3");
        assert_eq!(LinearFormat::choose(0.1, 1.0).format(0.1 + 0.2), "0.3");
        assert_eq!(LinearFormat::choose(0.1, 1.0).format(-0.0), "0");
    }

    #[test]
    fn values() {
        assert_eq!(format_value(42.0), "42");
        assert_eq!(format_value(1234.0), "1234");
        assert_eq!(format_value(1.23456), "1.23");
        assert_eq!(format_value(0.5), "0.5");
        assert_eq!(format_value(-12.5), "−12.5");
        assert_eq!(format_value(1.23e-4), "1.2×10⁻⁴");
        assert_eq!(format_value(1e-9), "10⁻⁹");
        assert_eq!(format_value(f64::NAN), "n/a");
    }

    #[test]
    fn empty_and_degenerate() {
        assert_eq!(data_bounds([f64::NAN, f64::INFINITY], false), None);
        assert_eq!(data_bounds([0.0, -2.0], true), None);
        let a = Axis::new(None, true, 10, false);
        assert!(a.hi > a.lo);
        let b = Axis::new(Some((3.0, 3.0)), false, 10, false);
        assert!(b.lo < 3.0 && b.hi > 3.0);
        let c = Axis::new(Some((0.0, 0.0)), false, 10, false);
        assert!(c.lo <= -1.0 && c.hi >= 1.0);
        assert!(nice_step(0.0, 5) > 0.0);
    }
}
