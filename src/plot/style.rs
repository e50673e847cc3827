//! How a curve looks: palette, markers, dash patterns and shades, and the styles of a figure's
//! curves ([`assign`]) from each method's own colour and marker (which the caller supplies).
//!
//! Within a figure, what else tells curves apart keeps the method's hue: another manifest
//! entry of the same method (a variant such as "FAPS kkt (14)") gets another dash pattern,
//! and its parameter variants and the sweep points get shades of the hue; with several sweep
//! points the marker names the point (the same shape is the same point for every method).
//! Curves of a method without a look of its own fall back to the palette in order of
//! appearance.

use plotters::style::RGBColor;

/// Okabe–Ito palette (colour-blind safe), ordered so the first colours contrast most on white.
pub const PALETTE: [RGBColor; 8] = [BLUE, VERMILLION, GREEN, PURPLE, ORANGE, SKY, BLACK, YELLOW];
pub const BLUE: RGBColor = RGBColor(0, 114, 178);
pub const VERMILLION: RGBColor = RGBColor(213, 94, 0);
/// Okabe–Ito's bluish green.
pub const GREEN: RGBColor = RGBColor(0, 158, 115);
/// Okabe–Ito's reddish purple.
pub const PURPLE: RGBColor = RGBColor(204, 121, 167);
pub const ORANGE: RGBColor = RGBColor(230, 159, 0);
pub const SKY: RGBColor = RGBColor(86, 180, 233);
pub const BLACK: RGBColor = RGBColor(0, 0, 0);
/// Too pale for lines on white: last in the fallback order, given to no method.
pub const YELLOW: RGBColor = RGBColor(240, 228, 66);

/// Dash patterns (on, off, … in logical px); empty = solid. Length coprime to the shape
/// list so colour × dash × shape combinations stay distinct for many series.
pub const DASHES: [&[f64]; 5] = [
    &[],
    &[12.0, 6.0],
    &[3.0, 4.5],
    &[16.0, 5.0, 3.0, 5.0],
    &[26.0, 8.0],
];
pub const SHAPES: [Shape; 7] = [
    Shape::Circle,
    Shape::Square,
    Shape::TriangleUp,
    Shape::Diamond,
    Shape::TriangleDown,
    Shape::Pentagon,
    Shape::Hexagon,
];
/// Markers of the paper's values, in turn for the values of one colour.
pub const PAPER_SHAPES: [Shape; 5] = [
    Shape::Star,
    Shape::Diamond,
    Shape::Square,
    Shape::TriangleUp,
    Shape::Circle,
];

/// Marker shapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Circle,
    Square,
    TriangleUp,
    Diamond,
    TriangleDown,
    Pentagon,
    Hexagon,
    Star,
}

impl Shape {
    /// Outline of the shape around `(x, y)` with "radius" `r` (scaled so shapes look the same
    /// size); `None` for the circle.
    pub(super) fn outline(self, (x, y): (f64, f64), r: f64) -> Option<Vec<(f64, f64)>> {
        use std::f64::consts::PI;
        let regular = |n: usize, radius: f64, start: f64| -> Vec<(f64, f64)> {
            (0..n)
                .map(|k| {
                    let a = start + 2.0 * PI * k as f64 / n as f64;
                    (x + radius * a.cos(), y + radius * a.sin())
                })
                .collect()
        };
        Some(match self {
            Shape::Circle => return None,
            Shape::Square => regular(4, r * 1.25, PI / 4.0),
            Shape::Diamond => regular(4, r * 1.35, 0.0),
            Shape::TriangleUp => regular(3, r * 1.45, -PI / 2.0),
            Shape::TriangleDown => regular(3, r * 1.45, PI / 2.0),
            Shape::Pentagon => regular(5, r * 1.2, -PI / 2.0),
            Shape::Hexagon => regular(6, r * 1.15, 0.0),
            Shape::Star => (0..10)
                .map(|k| {
                    let a = -PI / 2.0 + PI * k as f64 / 5.0;
                    let radius = if k % 2 == 0 { r * 1.45 } else { r * 0.62 };
                    (x + radius * a.cos(), y + radius * a.sin())
                })
                .collect(),
        })
    }
}

/// The end of a run that did not converge, marked where its curve stops (and in its legend
/// entry): a capped run would have gone on, a stalled one had stopped improving.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// An open circle.
    Capped,
    /// A cross.
    Stalled,
}

/// The look of one curve (bars use the colour only).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Style {
    pub colour: RGBColor,
    pub shape: Shape,
    pub dash: &'static [f64],
}

impl Style {
    /// The `i`-th curve of a figure whose curves belong to no method.
    pub fn by_position(i: usize) -> Style {
        Style {
            colour: PALETTE[i % PALETTE.len()],
            shape: SHAPES[i % SHAPES.len()],
            dash: DASHES[i % DASHES.len()],
        }
    }

    /// A reference curve that is no method's (a planted truth): grey, dotted.
    pub fn reference() -> Style {
        Style {
            colour: RGBColor(110, 110, 110),
            shape: Shape::Circle,
            dash: DASHES[2],
        }
    }
}

/// What tells one curve from the others of its figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Curve<'a> {
    /// The method, as the `look` of [`assign`] knows it.
    pub method: &'a str,
    /// The manifest entry (its label), plus anything else drawn as a separate line of the
    /// same method such as a second metric: another entry gets another dash.
    pub entry: &'a str,
    /// The parameter variant within the entry: another one gets another shade.
    pub variant: &'a str,
    /// Index of the sweep point: another one gets another shade and marker.
    pub point: usize,
}

/// The styles of a figure's curves, in order; `look` gives a method's own colour and marker.
pub fn assign(
    curves: &[Curve],
    points: usize,
    look: impl Fn(&str) -> Option<(RGBColor, Shape)>,
) -> Vec<Style> {
    // Methods without a look take the palette in order of first appearance.
    let mut unknown: Vec<&str> = Vec::new();
    for c in curves {
        if look(c.method).is_none() && !unknown.contains(&c.method) {
            unknown.push(c.method);
        }
    }
    curves
        .iter()
        .map(|c| {
            let (colour, shape) = look(c.method).unwrap_or_else(|| {
                let k = unknown.iter().position(|u| *u == c.method).unwrap_or(0);
                (PALETTE[k % PALETTE.len()], SHAPES[k % SHAPES.len()])
            });
            let same_method: Vec<&Curve> = curves.iter().filter(|o| o.method == c.method).collect();
            let dash = DASHES[entry_rank(c, &same_method) % DASHES.len()];
            // Shades over the (variant, point) pairs of this entry, in order of appearance.
            let mut pairs: Vec<(&str, usize)> = Vec::new();
            for o in same_method.iter().filter(|o| o.entry == c.entry) {
                if !pairs.contains(&(o.variant, o.point)) {
                    pairs.push((o.variant, o.point));
                }
            }
            let k = pairs
                .iter()
                .position(|p| *p == (c.variant, c.point))
                .unwrap_or(0);
            Style {
                colour: shade(colour, k, pairs.len()),
                shape: if points > 1 {
                    SHAPES[c.point % SHAPES.len()]
                } else {
                    shape
                },
                dash,
            }
        })
        .collect()
}

/// 0 (solid) for the method's main entry, the one named like the method or else the first;
/// 1, 2, … for the others in order of appearance.
fn entry_rank(c: &Curve, same_method: &[&Curve]) -> usize {
    let norm = |s: &str| -> String {
        s.chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_lowercase())
            .collect()
    };
    let mut entries: Vec<&str> = Vec::new();
    for o in same_method {
        if !entries.contains(&o.entry) {
            entries.push(o.entry);
        }
    }
    if let Some(main) = entries.iter().position(|e| norm(e) == norm(c.method)) {
        let e = entries.remove(main);
        entries.insert(0, e);
    }
    entries.iter().position(|e| *e == c.entry).unwrap_or(0)
}

/// Shade `k` of `n` of a colour: from darker to lighter, the hue kept. One shade is the colour.
pub fn shade(c: RGBColor, k: usize, n: usize) -> RGBColor {
    if n <= 1 {
        return c;
    }
    // Black cannot get darker: its shades only lighten, to mid grey.
    let (lo, hi) = if c.0.max(c.1).max(c.2) < 40 {
        (0.0, 0.6)
    } else {
        (-0.35, 0.5)
    };
    let t = lo + (hi - lo) * k as f64 / (n - 1) as f64;
    let mix = |v: u8| {
        let v = v as f64;
        let out = if t < 0.0 {
            v * (1.0 + t)
        } else {
            v + (255.0 - v) * t
        };
        out.round() as u8
    };
    RGBColor(mix(c.0), mix(c.1), mix(c.2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shades_run_from_darker_to_lighter() {
        assert_eq!(shade(BLUE, 0, 1), BLUE);
        let dark = shade(BLUE, 0, 3);
        let light = shade(BLUE, 2, 3);
        assert!(dark.2 < BLUE.2 && light.0 > BLUE.0);
        assert!(shade(BLACK, 1, 2).0 > 100);
    }
}
