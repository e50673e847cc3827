//! Drawing in logical pixels on either backend: the embedded font, text placed by baseline,
//! lines, rectangles and markers, the hatched box of a missing value, and dashed polylines.

use std::sync::OnceLock;

use anyhow::{anyhow, bail, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontDesc, FontFamily, FontStyle, FontTransform, RGBAColor};

use super::style::{End, Shape};
use super::LINE_WIDTH;

// ---------------------------------------------------------------------------------------------
// Font

const FONT_BYTES: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/assets/fonts/DejaVuSans.ttf"
));
/// The family name written into the SVG (a CSS list, so viewers without DejaVu Sans fall back
/// to their sans-serif); for plotters it is only the key of the registered font.
const FAMILY: &str = "DejaVu Sans, sans-serif";

/// Registers the embedded font once per process (also as plotters' "sans-serif", so nothing
/// in the process falls back to system fonts).
pub(super) fn register_embedded_font() -> Result<()> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        [FAMILY, "sans-serif"]
            .iter()
            .all(|name| plotters::style::register_font(name, FontStyle::Normal, FONT_BYTES).is_ok())
    });
    if !ok {
        bail!("the embedded DejaVu Sans font could not be parsed");
    }
    Ok(())
}

fn font(size: f64) -> FontDesc<'static> {
    FontDesc::new(FontFamily::Name(FAMILY), size, FontStyle::Normal)
}

pub(super) fn drawing_error<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow!("drawing failed: {e}")
}

// ---------------------------------------------------------------------------------------------
// Canvas: primitives in logical pixels, text placed by baseline

/// How each backend sizes and places text, so both give the same picture. The ab_glyph
/// rasteriser scales the font so ascent−descent = the plotters size (DejaVu: 2384 of 2048
/// units per em) and puts the baseline at size/2 below a top anchor; the SVG backend writes
/// `font-size = size/1.24` and `dy="0.76em"`. Canvas sizes are "PNG sizes": the SVG gets its
/// font size multiplied by `size_factor` so its em matches, and widths are always measured
/// with the PNG semantics.
#[derive(Debug, Clone, Copy)]
pub(super) struct TextMetrics {
    size_factor: f64,
    /// Baseline below the top anchor, in ems.
    top_to_baseline_em: f64,
}

/// Em of DejaVu Sans per unit of plotters (ab_glyph) font size.
const EM: f64 = 2048.0 / 2384.0;

impl TextMetrics {
    pub(super) const SVG: TextMetrics = TextMetrics {
        size_factor: 1.24 * EM,
        top_to_baseline_em: 0.76,
    };
    pub(super) const PNG: TextMetrics = TextMetrics {
        size_factor: 1.0,
        top_to_baseline_em: 0.5 / EM,
    };
}

pub(super) struct Canvas<'a, DB: DrawingBackend> {
    pub(super) area: &'a DrawingArea<DB, Shift>,
    pub(super) scale: f64,
    pub(super) metrics: TextMetrics,
}

pub(super) type Pt = (f64, f64);

impl<DB: DrawingBackend> Canvas<'_, DB> {
    pub(super) fn px(&self, (x, y): Pt) -> (i32, i32) {
        (
            (x * self.scale).round() as i32,
            (y * self.scale).round() as i32,
        )
    }

    pub(super) fn stroke(&self, c: RGBColor, width: f64) -> ShapeStyle {
        ShapeStyle {
            color: RGBAColor(c.0, c.1, c.2, 1.0),
            filled: false,
            stroke_width: (width * self.scale).round().max(1.0) as u32,
        }
    }

    pub(super) fn fill(&self, c: RGBColor) -> ShapeStyle {
        ShapeStyle {
            color: RGBAColor(c.0, c.1, c.2, 1.0),
            filled: true,
            stroke_width: 1,
        }
    }

    pub(super) fn clear(&self) -> Result<()> {
        self.area.fill(&WHITE).map_err(drawing_error)
    }

    pub(super) fn path(&self, pts: &[Pt], c: RGBColor, width: f64) -> Result<()> {
        let pts: Vec<_> = pts.iter().map(|&p| self.px(p)).collect();
        self.area
            .draw(&PathElement::new(pts, self.stroke(c, width)))
            .map_err(drawing_error)
    }

    pub(super) fn rect(&self, (x0, y0): Pt, (x1, y1): Pt, style: ShapeStyle) -> Result<()> {
        let r = Rectangle::new([self.px((x0, y0)), self.px((x1, y1))], style);
        self.area.draw(&r).map_err(drawing_error)
    }

    /// A marker; `hollow` draws the outline with `width`, otherwise the shape is filled.
    /// End mark `end` of a curve at `at`, radius `r`, in colour `c` (see [`End`]).
    pub(super) fn end_mark(&self, end: End, at: Pt, r: f64, c: RGBColor) -> Result<()> {
        match end {
            End::Capped => {
                self.shape(Shape::Circle, at, r, WHITE, None)?;
                self.shape(Shape::Circle, at, r, c, Some(LINE_WIDTH))
            }
            End::Stalled => {
                let d = r / std::f64::consts::SQRT_2;
                self.path(&[(at.0 - d, at.1 - d), (at.0 + d, at.1 + d)], c, LINE_WIDTH)?;
                self.path(&[(at.0 - d, at.1 + d), (at.0 + d, at.1 - d)], c, LINE_WIDTH)
            }
        }
    }

    pub(super) fn shape(
        &self,
        shape: Shape,
        at: Pt,
        r: f64,
        c: RGBColor,
        hollow: Option<f64>,
    ) -> Result<()> {
        match (shape.outline(at, r), hollow) {
            (None, None) => {
                let circle =
                    Circle::new(self.px(at), (r * self.scale).round() as i32, self.fill(c));
                self.area.draw(&circle).map_err(drawing_error)
            }
            (None, Some(w)) => {
                // Closed polyline rather than a stroked circle: same look in both backends.
                let ring: Vec<Pt> = (0..=48)
                    .map(|k| {
                        let a = std::f64::consts::TAU * k as f64 / 48.0;
                        (at.0 + r * a.cos(), at.1 + r * a.sin())
                    })
                    .collect();
                self.path(&ring, c, w)
            }
            (Some(poly), None) => {
                let pts: Vec<_> = poly.iter().map(|&p| self.px(p)).collect();
                self.area
                    .draw(&Polygon::new(pts, self.fill(c)))
                    .map_err(drawing_error)
            }
            (Some(poly), Some(w)) => {
                // Edges one by one with round corners: plotters' mitred joins spike at the
                // sharp tips of stars and triangles.
                for (k, &p) in poly.iter().enumerate() {
                    self.path(&[p, poly[(k + 1) % poly.len()]], c, w)?;
                    let dot = Circle::new(
                        self.px(p),
                        (0.5 * w * self.scale).round() as i32,
                        self.fill(c),
                    );
                    self.area.draw(&dot).map_err(drawing_error)?;
                }
                Ok(())
            }
        }
    }

    pub(super) fn style(&self, size: f64, c: RGBColor, h: HPos) -> TextStyle<'static> {
        let size = size * self.scale * self.metrics.size_factor;
        font(size).color(&c).pos(Pos::new(h, VPos::Top))
    }

    /// Text width in logical px.
    pub(super) fn text_width(&self, s: &str, size: f64) -> f64 {
        let style: TextStyle = font(size * self.scale).into();
        match self.area.estimate_text_size(s, &style) {
            Ok((w, _)) => w as f64 / self.scale,
            Err(_) => 0.6 * size * s.chars().count() as f64,
        }
    }

    /// Text with its baseline at `y`, aligned at `x` by `h`.
    pub(super) fn text(&self, s: &str, (x, y): Pt, h: HPos, size: f64, c: RGBColor) -> Result<()> {
        let top = y - self.metrics.top_to_baseline_em * EM * size;
        self.area
            .draw_text(s, &self.style(size, c, h), self.px((x, top)))
            .map_err(drawing_error)
    }

    /// Text whose digits are vertically centred on `y` (tick labels).
    pub(super) fn text_mid(
        &self,
        s: &str,
        (x, y): Pt,
        h: HPos,
        size: f64,
        c: RGBColor,
    ) -> Result<()> {
        // DejaVu digits are 0.729 em tall.
        self.text(s, (x, y + 0.3645 * EM * size), h, size, c)
    }

    /// Text reading upwards, centred on `y`, its top (cap side) at `x`.
    pub(super) fn text_up(&self, s: &str, (x, y): Pt, size: f64, c: RGBColor) -> Result<()> {
        let style = self
            .style(size, c, HPos::Center)
            .transform(FontTransform::Rotate270);
        self.area
            .draw_text(s, &style, self.px((x, y)))
            .map_err(drawing_error)
    }

    /// Largest size ≤ `size` (down to `min`) at which `s` fits in `width`.
    pub(super) fn fit(&self, s: &str, size: f64, min: f64, width: f64) -> f64 {
        let w = self.text_width(s, size);
        if w <= width || w == 0.0 {
            size
        } else {
            (size * width / w).max(min).floor()
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Missing values: here, as both the heat map's cells and the legend's swatch draw them

/// Cells without a value (NaN): light grey, hatched with a darker grey. No viridis colour is
/// grey, and the hatching survives greyscale printing.
pub(super) const MISSING_FILL: RGBColor = RGBColor(218, 218, 218);
const MISSING_HATCH: RGBColor = RGBColor(150, 150, 150);
/// Distance between hatch lines, in logical px.
const HATCH_SPACING: f64 = 7.0;

/// Grey hatched box (a cell without a value, or its legend swatch). Hatch lines run at 45°
/// on a grid fixed to the image, so neighbouring missing cells continue each other's lines.
pub(super) fn missing_cell<DB: DrawingBackend>(cv: &Canvas<DB>, p0: Pt, p1: Pt) -> Result<()> {
    let (x0, x1) = (p0.0.min(p1.0), p0.0.max(p1.0));
    let (y0, y1) = (p0.1.min(p1.1), p0.1.max(p1.1));
    cv.rect((x0, y0), (x1, y1), cv.fill(MISSING_FILL))?;
    // Lines x + y = d, going up and to the right.
    let first = ((x0 + y0) / HATCH_SPACING).floor() as i64 + 1;
    let last = ((x1 + y1) / HATCH_SPACING).ceil() as i64 - 1;
    for k in first..=last {
        let d = k as f64 * HATCH_SPACING;
        let (xa, xb) = ((d - y1).max(x0), (d - y0).min(x1));
        if xb - xa > 0.5 {
            cv.path(&[(xa, d - xa), (xb, d - xb)], MISSING_HATCH, 1.0)?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Geometry helpers

/// Splits a pixel polyline into the "on" pieces of a dash `pattern` (on, off, on, …);
/// an empty pattern returns the line unchanged.
pub(super) fn dashed(line: &[Pt], pattern: &[f64]) -> Vec<Vec<Pt>> {
    if pattern.is_empty() || line.len() < 2 || pattern.iter().any(|d| *d <= 0.0) {
        return vec![line.to_vec()];
    }
    let mut pieces = Vec::new();
    let mut current = vec![line[0]];
    let (mut idx, mut left, mut on) = (0, pattern[0], true);
    for seg in line.windows(2) {
        let (mut a, b) = (seg[0], seg[1]);
        let mut d = dist(a, b);
        while d > left {
            let t = left / d;
            let p = (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t);
            if on {
                current.push(p);
                pieces.push(std::mem::take(&mut current));
            } else {
                current = vec![p];
            }
            on = !on;
            idx = (idx + 1) % pattern.len();
            left = pattern[idx];
            a = p;
            d = dist(a, b);
        }
        left -= d;
        if on {
            current.push(b);
        }
    }
    if on && current.len() >= 2 {
        pieces.push(current);
    }
    pieces
}

pub(super) fn dist(a: Pt, b: Pt) -> f64 {
    (b.0 - a.0).hypot(b.1 - a.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dashes_cover_the_pattern() {
        let pieces = dashed(&[(0.0, 0.0), (30.0, 0.0)], &[10.0, 5.0]);
        assert_eq!(
            pieces,
            vec![
                vec![(0.0, 0.0), (10.0, 0.0)],
                vec![(15.0, 0.0), (25.0, 0.0)]
            ]
        );
        assert_eq!(
            dashed(&[(0.0, 0.0), (3.0, 4.0)], &[]),
            vec![vec![(0.0, 0.0), (3.0, 4.0)]]
        );
        // Dashes continue around corners.
        let pieces = dashed(&[(0.0, 0.0), (6.0, 0.0), (6.0, 6.0)], &[10.0, 2.0]);
        assert_eq!(pieces[0], vec![(0.0, 0.0), (6.0, 0.0), (6.0, 4.0)]);
    }
}
