//! Legends: a white box of entries (a swatch and its label), stacked or in wrapped rows, placed
//! where it covers the fewest data.

use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::HPos;

use super::axes::Frame;
use super::canvas::{dashed, missing_cell, Canvas, Pt};
use super::style::{End, Shape};
use super::{FRAME, INK, LEGEND_SIZE, LINE_WIDTH, MARKER_RADIUS, PAPER_RADIUS};

pub(super) enum Swatch {
    /// A line (if `dash`) with a marker (if `shape`).
    Line {
        color: RGBColor,
        dash: Option<&'static [f64]>,
        shape: Option<Shape>,
        /// A run's end mark at the line's right end.
        end: Option<End>,
    },
    Paper {
        color: RGBColor,
        shape: Shape,
    },
    Bar {
        color: RGBColor,
    },
    /// A plain (possibly dashed) line, no marker: heat-map overlays.
    Overlay {
        color: RGBColor,
        dash: &'static [f64],
    },
    /// A grey hatched box: heat-map cells without a value.
    Missing,
}

pub(super) struct Legend {
    pub(super) entries: Vec<(String, Swatch)>,
}

pub(super) const LEGEND_PAD: f64 = 10.0;
const LEGEND_SAMPLE: f64 = 46.0;
const LEGEND_ROW: f64 = 1.65 * LEGEND_SIZE;

impl Legend {
    pub(super) fn size<DB: DrawingBackend>(&self, cv: &Canvas<DB>) -> (f64, f64) {
        let text_w = self
            .entries
            .iter()
            .map(|(s, _)| cv.text_width(s, LEGEND_SIZE))
            .fold(0.0, f64::max);
        let w = 2.0 * LEGEND_PAD + LEGEND_SAMPLE + 10.0 + text_w;
        let h = 2.0 * LEGEND_PAD + LEGEND_ROW * self.entries.len() as f64 - 0.4 * LEGEND_SIZE;
        (w, h)
    }

    pub(super) fn draw<DB: DrawingBackend>(&self, cv: &Canvas<DB>, (x, y): Pt) -> Result<()> {
        if self.entries.is_empty() {
            return Ok(());
        }
        let (w, h) = self.size(cv);
        legend_box(cv, (x, y), (w, h))?;
        for (i, (label, swatch)) in self.entries.iter().enumerate() {
            let cy = y + Self::row_centre(i);
            legend_entry(cv, label, swatch, (x + LEGEND_PAD, cy))?;
        }
        Ok(())
    }

    /// Vertical centre of row `i` below the top of the box.
    fn row_centre(i: usize) -> f64 {
        LEGEND_PAD + 0.5 * (LEGEND_ROW - 0.4 * LEGEND_SIZE) + LEGEND_ROW * i as f64
    }

    /// Entries side by side, wrapped into rows at most `max_w` wide: each entry's x offset and
    /// row inside the box, and the box size.
    fn row_layout<DB: DrawingBackend>(
        &self,
        cv: &Canvas<DB>,
        max_w: f64,
    ) -> (Vec<(f64, usize)>, (f64, f64)) {
        let gap = 2.5 * LEGEND_PAD;
        let (mut at, mut row, mut widest) = (Vec::new(), 0, 0f64);
        let mut x = LEGEND_PAD;
        for (label, _) in &self.entries {
            let w = LEGEND_SAMPLE + 10.0 + cv.text_width(label, LEGEND_SIZE);
            if x > LEGEND_PAD && x + w + LEGEND_PAD > max_w {
                row += 1;
                x = LEGEND_PAD;
            }
            at.push((x, row));
            widest = widest.max(x + w + LEGEND_PAD);
            x += w + gap;
        }
        let rows = if self.entries.is_empty() { 0 } else { row + 1 };
        let h = 2.0 * LEGEND_PAD + LEGEND_ROW * rows as f64 - 0.4 * LEGEND_SIZE;
        (at, (widest, h))
    }

    /// Size of the legend drawn by [`Legend::draw_rows`].
    pub(super) fn rows_size<DB: DrawingBackend>(&self, cv: &Canvas<DB>, max_w: f64) -> (f64, f64) {
        self.row_layout(cv, max_w).1
    }

    /// The legend with its entries side by side (wrapped at `max_w`), top-left at `(x, y)`.
    pub(super) fn draw_rows<DB: DrawingBackend>(
        &self,
        cv: &Canvas<DB>,
        (x, y): Pt,
        max_w: f64,
    ) -> Result<()> {
        if self.entries.is_empty() {
            return Ok(());
        }
        let (at, size) = self.row_layout(cv, max_w);
        legend_box(cv, (x, y), size)?;
        for ((label, swatch), (dx, row)) in self.entries.iter().zip(at) {
            legend_entry(cv, label, swatch, (x + dx, y + Self::row_centre(row)))?;
        }
        Ok(())
    }

    /// Top-left corner of the legend inside `f`: upper right unless that covers data
    /// (`obstacles`, pixel points), then the first free of lower left, lower right, upper
    /// left, middle right, middle left; if none is free, the place covering the fewest points.
    /// (The middle places matter where lines run along the top and the bottom: fig1b's lone
    /// attack points at the lower left were hidden by the legend.)
    pub(super) fn place<DB: DrawingBackend>(
        &self,
        cv: &Canvas<DB>,
        f: &Frame,
        obstacles: &[Pt],
    ) -> Pt {
        let (w, h) = self.size(cv);
        let inset = 10.0;
        let middle = (f.y0 + f.y1 - h) / 2.0;
        let candidates = [
            (f.x1 - inset - w, f.y0 + inset),
            (f.x0 + inset, f.y1 - inset - h),
            (f.x1 - inset - w, f.y1 - inset - h),
            (f.x0 + inset, f.y0 + inset),
            (f.x1 - inset - w, middle),
            (f.x0 + inset, middle),
        ];
        let covered = |&(x, y): &Pt| {
            obstacles
                .iter()
                .filter(|(px, py)| {
                    *px >= x - 4.0 && *px <= x + w + 4.0 && *py >= y - 4.0 && *py <= y + h + 4.0
                })
                .count()
        };
        let counts: Vec<usize> = candidates.iter().map(covered).collect();
        let best = (0..candidates.len())
            .min_by_key(|&i| (counts[i], i))
            .unwrap_or(0);
        candidates[best]
    }
}

/// White legend box with a grey border.
fn legend_box<DB: DrawingBackend>(cv: &Canvas<DB>, (x, y): Pt, (w, h): Pt) -> Result<()> {
    cv.rect((x, y), (x + w, y + h), cv.fill(WHITE))?;
    cv.path(
        &[(x, y), (x + w, y), (x + w, y + h), (x, y + h), (x, y)],
        RGBColor(150, 150, 150),
        1.0,
    )
}

/// One legend entry: the swatch starting at `sx0`, then the label, centred on `cy`.
fn legend_entry<DB: DrawingBackend>(
    cv: &Canvas<DB>,
    label: &str,
    swatch: &Swatch,
    (sx0, cy): Pt,
) -> Result<()> {
    let sx1 = sx0 + LEGEND_SAMPLE;
    let mid = ((sx0 + sx1) / 2.0, cy);
    match *swatch {
        Swatch::Line {
            color,
            dash,
            shape,
            end,
        } => {
            for piece in dash.map_or(vec![], |d| dashed(&[(sx0, cy), (sx1, cy)], d)) {
                cv.path(&piece, color, LINE_WIDTH)?;
            }
            if let Some(shape) = shape {
                cv.shape(shape, mid, MARKER_RADIUS, color, None)?;
            }
            if let Some(end) = end {
                let at = if dash.is_some() { (sx1, cy) } else { mid };
                cv.end_mark(end, at, 0.8 * MARKER_RADIUS + 2.0, color)?;
            }
        }
        Swatch::Paper { color, shape } => {
            cv.shape(
                shape,
                mid,
                0.8 * PAPER_RADIUS,
                WHITE,
                Some(4.0 * LINE_WIDTH / 2.5),
            )?;
            cv.shape(shape, mid, 0.8 * PAPER_RADIUS, color, Some(LINE_WIDTH))?;
        }
        Swatch::Bar { color } => {
            let (bw, bh) = (0.5 * LEGEND_SAMPLE, 0.8 * LEGEND_SIZE);
            let (p0, p1) = (
                (mid.0 - bw / 2.0, cy - bh / 2.0),
                (mid.0 + bw / 2.0, cy + bh / 2.0),
            );
            cv.rect(p0, p1, cv.fill(color))?;
            cv.rect(p0, p1, cv.stroke(darker(color), 1.0))?;
        }
        Swatch::Overlay { color, dash } => {
            for piece in dashed(&[(sx0, cy), (sx1, cy)], dash) {
                cv.path(&piece, color, LINE_WIDTH)?;
            }
        }
        Swatch::Missing => {
            let (bw, bh) = (0.6 * LEGEND_SAMPLE, LEGEND_SIZE);
            let (p0, p1) = (
                (mid.0 - bw / 2.0, cy - bh / 2.0),
                (mid.0 + bw / 2.0, cy + bh / 2.0),
            );
            missing_cell(cv, p0, p1)?;
            cv.rect(p0, p1, cv.stroke(FRAME, 1.0))?;
        }
    }
    cv.text_mid(label, (sx1 + 10.0, cy), HPos::Left, LEGEND_SIZE, INK)
}

pub(super) fn darker(c: RGBColor) -> RGBColor {
    RGBColor(
        (c.0 as f64 * 0.7) as u8,
        (c.1 as f64 * 0.7) as u8,
        (c.2 as f64 * 0.7) as u8,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::canvas::{register_embedded_font, TextMetrics};
    use crate::plot::ticks::Axis;
    use crate::plot::{HEIGHT, WIDTH};

    /// The legend goes to the upper right; when data lie there, to the first free place of
    /// lower left, lower right, upper left, middle right, middle left; when all are covered,
    /// to the one covering the fewest points (the earlier on a tie).
    #[test]
    fn legend_avoids_the_data() {
        register_embedded_font().unwrap();
        let mut svg = String::new();
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        let cv = Canvas {
            area: &root,
            scale: 1.0,
            metrics: TextMetrics::SVG,
        };
        let axis = Axis::new(Some((0.0, 1.0)), false, 5, false);
        let f = Frame {
            x0: 100.0,
            y0: 100.0,
            x1: 1100.0,
            y1: 700.0,
            inset: [0.0; 4],
            x: axis.clone(),
            y: axis,
        };
        let legend = Legend {
            entries: vec![(
                "SSI".to_string(),
                Swatch::Paper {
                    color: RGBColor(0, 0, 0),
                    shape: Shape::Circle,
                },
            )],
        };
        let (w, h) = legend.size(&cv);
        let inset = 10.0;
        let middle = (f.y0 + f.y1 - h) / 2.0;
        let (right, left) = (f.x1 - inset - w, f.x0 + inset);
        let (top, bottom) = (f.y0 + inset, f.y1 - inset - h);
        // A point at the centre of each candidate place, in the order they are tried.
        let order = [
            (right, top),
            (left, bottom),
            (right, bottom),
            (left, top),
            (right, middle),
            (left, middle),
        ];
        let centre = |(x, y): Pt| (x + w / 2.0, y + h / 2.0);
        assert_eq!(legend.place(&cv, &f, &[]), order[0]);
        for free in 1..order.len() {
            let taken: Vec<Pt> = order[..free].iter().map(|&c| centre(c)).collect();
            assert_eq!(legend.place(&cv, &f, &taken), order[free], "{free} taken");
        }
        // All covered: the fewest points wins, then the earlier place.
        let mut crowd: Vec<Pt> = order.iter().flat_map(|&c| [centre(c); 2]).collect();
        crowd.push(centre(order[3]));
        crowd.remove(crowd.iter().position(|&q| q == centre(order[4])).unwrap());
        crowd.remove(crowd.iter().position(|&q| q == centre(order[2])).unwrap());
        assert_eq!(legend.place(&cv, &f, &crowd), order[2]);
    }
}
