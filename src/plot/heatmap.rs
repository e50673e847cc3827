//! Heat maps: a grid of cells coloured by value with viridis, a colour bar, optional value
//! annotations and overlay lines. Layout, axes, titles, fonts and legend come from the other
//! files of the module; this file adds the colour map, the cells and the colour bar.
//!
//! Both axes are in *cell units*: column `i` spans `[i, i+1]` on x, row `j` spans `[j, j+1]`
//! on y (row 0 at the bottom), and the tick labels sit at cell centres.

use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::HPos;

use super::axes::{draw_axes, draw_frame_and_titles, draw_note, draw_title, place_frame};
use super::canvas::{dashed, missing_cell, Canvas, Pt};
use super::legend::{Legend, Swatch};
use super::output::Figure;
use super::style::{DASHES, PALETTE};
use super::ticks::{self, Axis, LinearFormat};
use super::{AXIS_TITLE_SIZE, FRAME, INK, LINE_WIDTH, MARGIN, TICK_SIZE, WIDTH};

/// A grid of cells coloured by value (viridis), e.g. a phase-transition diagram: log10 of the
/// recovery error over sparsity (x) × rank ratio (y). Cells are annotated with their value
/// (one decimal) when every annotation fits its cell at a readable size.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HeatMap {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    /// Column and row labels (the grid's x and y values as text), left→right, bottom→top.
    /// Labels are thinned out when they would overlap.
    pub x_ticks: Vec<String>,
    pub y_ticks: Vec<String>,
    /// `values[row][col]`, row 0 at the bottom. NaN = not run: drawn grey and hatched, with
    /// a legend entry. ±∞ take the colours of the ends of the scale (e.g. log10 of a zero
    /// error). Missing entries (short rows, fewer rows than `y_ticks`) count as NaN.
    pub values: Vec<Vec<f64>>,
    /// What the colour bar measures, e.g. "log₁₀ relative error".
    pub colour_label: String,
    /// Lines drawn over the grid (e.g. the paper's failure boundary), each with a legend entry.
    pub overlays: Vec<Overlay>,
}

/// A polyline over a [`HeatMap`], in cell-index units: cell `(i, j)` (column `i`, row `j`)
/// spans `[i, i+1]×[j, j+1]`, so its centre is `(i + 0.5, j + 0.5)`. Parts outside the grid
/// are clipped; a non-finite point breaks the line.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Overlay {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

impl Figure for HeatMap {
    fn draw<DB: DrawingBackend>(&self, cv: &Canvas<DB>) -> Result<()> {
        draw_heat_map(cv, self)
    }
}

/// Viridis (matplotlib's 256-entry table, van der Walt & Smith 2015), every 17th entry: knots
/// at `t = k/15`. Linear interpolation between them stays within 7/255 of the full table in
/// every channel (the largest gap is blue near the yellow end).
const VIRIDIS: [RGBColor; 16] = [
    RGBColor(68, 1, 84),    // #440154
    RGBColor(72, 26, 108),  // #481a6c
    RGBColor(71, 47, 125),  // #472f7d
    RGBColor(65, 68, 135),  // #414487
    RGBColor(57, 86, 140),  // #39568c
    RGBColor(49, 104, 142), // #31688e
    RGBColor(42, 120, 142), // #2a788e
    RGBColor(35, 136, 142), // #23888e
    RGBColor(31, 152, 139), // #1f988b
    RGBColor(34, 168, 132), // #22a884
    RGBColor(53, 183, 121), // #35b779
    RGBColor(84, 197, 104), // #54c568
    RGBColor(122, 209, 81), // #7ad151
    RGBColor(165, 219, 54), // #a5db36
    RGBColor(210, 226, 27), // #d2e21b
    RGBColor(253, 231, 37), // #fde725
];

const MISSING_LABEL: &str = "not run (NaN)";

/// Overlay line colours: dark first (reads on all of viridis with its white halo), then the
/// palette's vermillion and reddish purple, which viridis does not contain.
const OVERLAY_COLOURS: [RGBColor; 3] = [INK, PALETTE[1], PALETTE[3]];
/// Width of the white halo under overlay lines, on top of the line width.
const HALO: f64 = 3.0;

const COLOUR_BAR_GAP: f64 = 28.0;
const COLOUR_BAR_WIDTH: f64 = 22.0;
/// Space between the legend and the grid below it.
const LEGEND_GAP: f64 = 14.0;
/// Cell annotations: at most this size, and left out (in every cell) when the widest one
/// would need to be smaller than `ANNOTATION_MIN` to fit its cell.
const ANNOTATION_SIZE: f64 = 15.0;
const ANNOTATION_MIN: f64 = 9.0;

/// Viridis at `t` ∈ [0, 1] (clamped; NaN gives the low end).
pub(super) fn viridis(t: f64) -> RGBColor {
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    let x = t * (VIRIDIS.len() - 1) as f64;
    let k = (x.floor() as usize).min(VIRIDIS.len() - 2);
    let f = x - k as f64;
    let (a, b) = (VIRIDIS[k], VIRIDIS[k + 1]);
    let mix = |p: u8, q: u8| (p as f64 + (q as f64 - p as f64) * f).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// WCAG relative luminance of an sRGB colour.
fn luminance(c: RGBColor) -> f64 {
    let lin = |v: u8| {
        let v = v as f64 / 255.0;
        if v <= 0.04045 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * lin(c.0) + 0.7152 * lin(c.1) + 0.0722 * lin(c.2)
}

/// Text colour on a `fill` background: the ink or white, whichever contrasts more.
fn text_on(fill: RGBColor) -> RGBColor {
    let l = luminance(fill);
    let on_ink = (l + 0.05) / (luminance(INK) + 0.05);
    let on_white = 1.05 / (l + 0.05);
    if on_ink >= on_white {
        INK
    } else {
        WHITE
    }
}

/// Value range the colours span: the finite values' min and max, or (one distinct value, or
/// none) the colour bar axis' range, so a lone value gets the middle colour.
#[derive(Debug, Clone, Copy)]
struct Scale {
    lo: f64,
    hi: f64,
}

impl Scale {
    fn frac(&self, v: f64) -> f64 {
        (v - self.lo) / (self.hi - self.lo)
    }

    /// Colour of a value; ±∞ clamp to the ends.
    fn colour(&self, v: f64) -> RGBColor {
        viridis(self.frac(v))
    }
}

/// Cell annotation: one decimal, written like the linear tick labels (typographic minus), but
/// zero too keeps its decimal.
fn annotation(v: f64) -> String {
    if v.is_infinite() {
        if v > 0.0 { "∞" } else { "−∞" }.to_string()
    } else if v == 0.0 {
        "0.0".to_string()
    } else {
        LinearFormat::Plain { decimals: 1 }.format(v)
    }
}

/// An axis in cell units with `labels` at the centres of the first `n` cells (empty labels
/// give no tick).
fn cell_axis(n: usize, labels: &[String]) -> Axis {
    Axis {
        log: false,
        lo: 0.0,
        hi: n.max(1) as f64,
        major: labels
            .iter()
            .take(n)
            .enumerate()
            .filter(|(_, s)| !s.trim().is_empty())
            .map(|(i, s)| (i as f64 + 0.5, s.clone()))
            .collect(),
        minor: vec![],
    }
}

/// Keeps the labels of every `stride`-th cell (from the first) so that labels `need` px apart
/// fit cells `cell` px long; the others become unlabelled (minor) ticks.
fn thin_labels(axis: &mut Axis, cell: f64, need: f64) {
    let stride = if cell > 0.0 {
        (need / cell).ceil().max(1.0) as usize
    } else {
        usize::MAX
    };
    if stride <= 1 {
        return;
    }
    for (t, label) in std::mem::take(&mut axis.major) {
        if ((t - 0.5).round() as usize).is_multiple_of(stride) {
            axis.major.push((t, label));
        } else {
            axis.minor.push(t);
        }
    }
}

/// Clips the segment `a`–`b` to the rectangle `[x0, x1]×[y0, y1]` (Liang–Barsky). Returns the
/// clipped ends and whether each end was moved.
fn clip_segment(
    a: Pt,
    b: Pt,
    (x0, y0, x1, y1): (f64, f64, f64, f64),
) -> Option<(Pt, Pt, bool, bool)> {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [
        (-dx, a.0 - x0),
        (dx, x1 - a.0),
        (-dy, a.1 - y0),
        (dy, y1 - a.1),
    ] {
        if p == 0.0 {
            if q < 0.0 {
                return None;
            }
        } else {
            let r = q / p;
            if p < 0.0 {
                t0 = t0.max(r);
            } else {
                t1 = t1.min(r);
            }
        }
    }
    if t0 > t1 {
        return None;
    }
    let at = |t: f64| (a.0 + dx * t, a.1 + dy * t);
    Some((at(t0), at(t1), t0 > 0.0, t1 < 1.0))
}

/// An overlay's style and its drawable polylines (cell units).
struct OverlayLine {
    color: RGBColor,
    dash: &'static [f64],
    pieces: Vec<Vec<Pt>>,
}

/// An overlay's drawable polylines: its finite runs clipped to the grid `[0, n_cols]×[0, n_rows]`,
/// still in cell units.
fn overlay_pieces(points: &[Pt], (n_cols, n_rows): (usize, usize)) -> Vec<Vec<Pt>> {
    let grid = (0.0, 0.0, n_cols as f64, n_rows as f64);
    let finite = |p: Pt| p.0.is_finite() && p.1.is_finite();
    let mut pieces: Vec<Vec<Pt>> = Vec::new();
    // Whether the last piece ends at the previous point (so the next segment continues it).
    let mut open = false;
    for w in points.windows(2) {
        if !finite(w[0]) || !finite(w[1]) {
            open = false;
            continue;
        }
        match clip_segment(w[0], w[1], grid) {
            Some((p, q, start_moved, end_moved)) => {
                match pieces.last_mut() {
                    Some(piece) if open && !start_moved => piece.push(q),
                    _ => pieces.push(vec![p, q]),
                }
                open = !end_moved;
            }
            None => open = false,
        }
    }
    pieces
}

fn draw_heat_map<DB: DrawingBackend>(cv: &Canvas<DB>, plot: &HeatMap) -> Result<()> {
    let mut layout = draw_title(cv, &plot.title)?;
    let widest_row = plot.values.iter().map(Vec::len).max().unwrap_or(0);
    let n_cols = plot.x_ticks.len().max(widest_row);
    let n_rows = plot.y_ticks.len().max(plot.values.len());
    let value = |i: usize, j: usize| {
        plot.values
            .get(j)
            .and_then(|row| row.get(i))
            .copied()
            .unwrap_or(f64::NAN)
    };
    let cells: Vec<(usize, usize, f64)> = (0..n_rows)
        .flat_map(|j| (0..n_cols).map(move |i| (i, j)))
        .map(|(i, j)| (i, j, value(i, j)))
        .collect();
    let bounds = ticks::data_bounds(cells.iter().map(|c| c.2), false);
    let any_missing = cells.iter().any(|c| c.2.is_nan());
    let any_coloured = cells.iter().any(|c| !c.2.is_nan());

    // Legend (overlays, then the note on missing cells) in rows between the title and the
    // grid, where it covers no cell and leaves the grid the full width.
    let overlays: Vec<OverlayLine> = plot
        .overlays
        .iter()
        .enumerate()
        .map(|(k, o)| OverlayLine {
            color: OVERLAY_COLOURS[k % OVERLAY_COLOURS.len()],
            dash: DASHES[(k + 1) % DASHES.len()],
            pieces: overlay_pieces(&o.points, (n_cols, n_rows)),
        })
        .collect();
    let mut legend = Legend {
        entries: plot
            .overlays
            .iter()
            .zip(&overlays)
            .map(|(o, line)| {
                let label = if line.pieces.is_empty() {
                    format!("{} (not drawable)", o.label)
                } else {
                    o.label.clone()
                };
                let (color, dash) = (line.color, line.dash);
                (label, Swatch::Overlay { color, dash })
            })
            .collect(),
    };
    if any_missing {
        legend
            .entries
            .push((MISSING_LABEL.to_string(), Swatch::Missing));
    }
    let legend_max_w = WIDTH as f64 - 2.0 * MARGIN;
    let legend_top = layout.top;
    if !legend.entries.is_empty() {
        layout.top += legend.rows_size(cv, legend_max_w).1 + LEGEND_GAP;
    }

    // Height first (the frame's top and bottom do not depend on what is beside it), then the
    // colour bar beside it, then the width.
    let x_axis = cell_axis(n_cols, &plot.x_ticks);
    let mut y_axis = cell_axis(n_rows, &plot.y_ticks);
    let probe = place_frame(
        cv,
        &layout,
        x_axis.clone(),
        y_axis.clone(),
        &[],
        0.0,
        [0.0; 4],
    );
    let bar_h = probe.height();
    thin_labels(&mut y_axis, bar_h / n_rows.max(1) as f64, 1.3 * TICK_SIZE);

    let scale = match bounds {
        Some((lo, hi)) if hi > lo => Scale { lo, hi },
        _ => {
            let a = Axis::new(bounds, false, 3, false);
            Scale { lo: a.lo, hi: a.hi }
        }
    };
    let bar_axis = Axis::new(
        Some((scale.lo, scale.hi)),
        false,
        (bar_h / 38.0) as usize,
        false,
    );
    let tolerance = 1e-9 * (scale.hi - scale.lo);
    let bar_ticks: Vec<(f64, String)> = if any_coloured {
        bar_axis
            .major
            .into_iter()
            .filter(|(v, _)| *v >= scale.lo - tolerance && *v <= scale.hi + tolerance)
            .collect()
    } else {
        vec![]
    };
    let tick_w = bar_ticks
        .iter()
        .map(|(_, s)| cv.text_width(s, TICK_SIZE))
        .fold(0.0, f64::max);
    let colour_label = plot.colour_label.trim();
    let colour_label_size = cv.fit(colour_label, AXIS_TITLE_SIZE, 12.0, bar_h);
    let colour_label_x = COLOUR_BAR_WIDTH + 8.0 + tick_w + 12.0;
    let bar_block_w = if colour_label.is_empty() {
        colour_label_x
    } else {
        colour_label_x + 1.25 * colour_label_size
    };

    let mut frame = place_frame(
        cv,
        &layout,
        x_axis,
        y_axis,
        &[],
        COLOUR_BAR_GAP + bar_block_w,
        [0.0; 4],
    );
    let cell_w = frame.width() / n_cols.max(1) as f64;
    let cell_h = frame.height() / n_rows.max(1) as f64;
    let x_label_w = frame
        .x
        .major
        .iter()
        .map(|(_, s)| cv.text_width(s, TICK_SIZE))
        .fold(0.0, f64::max);
    thin_labels(&mut frame.x, cell_w, x_label_w + 12.0);
    draw_axes(cv, &frame, true)?;

    // Cells.
    let corners = |i: usize, j: usize| {
        (
            frame.to_px((i as f64, j as f64 + 1.0)),
            frame.to_px((i as f64 + 1.0, j as f64)),
        )
    };
    for &(i, j, v) in &cells {
        let (p0, p1) = corners(i, j);
        if v.is_nan() {
            missing_cell(cv, p0, p1)?;
        } else {
            cv.rect(p0, p1, cv.fill(scale.colour(v)))?;
        }
    }

    // Annotations, all or none: the size at which the widest fits, if that is readable.
    let texts: Vec<(usize, usize, f64, String)> = cells
        .iter()
        .filter(|c| !c.2.is_nan())
        .map(|&(i, j, v)| (i, j, v, annotation(v)))
        .collect();
    if let Some(widest) = texts
        .iter()
        .map(|t| &t.3)
        .max_by(|a, b| cv.text_width(a, 10.0).total_cmp(&cv.text_width(b, 10.0)))
    {
        let size = cv.fit(
            widest,
            ANNOTATION_SIZE.min(0.45 * cell_h),
            1.0,
            cell_w - 8.0,
        );
        if size >= ANNOTATION_MIN && cv.text_width(widest, size) <= cell_w - 4.0 {
            for (i, j, v, text) in &texts {
                let (p0, p1) = corners(*i, *j);
                let centre = ((p0.0 + p1.0) / 2.0, (p0.1 + p1.1) / 2.0);
                let ink = text_on(scale.colour(*v));
                cv.text_mid(text, centre, HPos::Center, size, ink)?;
            }
        }
    }

    // Overlays on top, each on a white halo so it reads on dark and light cells alike.
    for line in &overlays {
        let parts: Vec<Vec<Pt>> = line
            .pieces
            .iter()
            .map(|piece| piece.iter().map(|&p| frame.to_px(p)).collect::<Vec<Pt>>())
            .flat_map(|piece| dashed(&piece, line.dash))
            .collect();
        for part in &parts {
            cv.path(part, WHITE, LINE_WIDTH + HALO)?;
        }
        for part in &parts {
            cv.path(part, line.color, LINE_WIDTH)?;
        }
    }

    draw_frame_and_titles(cv, &frame, &plot.x_label, &plot.y_label)?;

    // Colour bar right of the frame, as tall as it, low values at the bottom.
    let bx0 = frame.x1 + COLOUR_BAR_GAP;
    let bx1 = bx0 + COLOUR_BAR_WIDTH;
    let (by0, by1) = (frame.y0, frame.y1);
    if any_coloured {
        let steps = (bar_h / 2.0).ceil().max(1.0) as usize;
        for k in 0..steps {
            let y_low = by1 - bar_h * k as f64 / steps as f64;
            let y_high = by1 - bar_h * (k + 1) as f64 / steps as f64;
            let t = (k as f64 + 0.5) / steps as f64;
            cv.rect((bx0, y_high), (bx1, y_low), cv.fill(viridis(t)))?;
        }
        cv.path(
            &[(bx0, by0), (bx1, by0), (bx1, by1), (bx0, by1), (bx0, by0)],
            FRAME,
            1.0,
        )?;
        for (v, label) in &bar_ticks {
            let y = by1 - bar_h * scale.frac(*v);
            cv.path(&[(bx1, y), (bx1 + 5.0, y)], FRAME, 1.0)?;
            cv.text_mid(label, (bx1 + 8.0, y), HPos::Left, TICK_SIZE, INK)?;
        }
        if !colour_label.is_empty() {
            cv.text_up(
                colour_label,
                (bx0 + colour_label_x, (by0 + by1) / 2.0),
                colour_label_size,
                INK,
            )?;
        }
    } else {
        // Nothing to colour: say so on a white box, over the hatching.
        let note = "no data to plot";
        let w = cv.text_width(note, AXIS_TITLE_SIZE) + 24.0;
        let h = 1.6 * AXIS_TITLE_SIZE;
        let (cx, cy) = ((frame.x0 + frame.x1) / 2.0, (frame.y0 + frame.y1) / 2.0);
        cv.rect(
            (cx - w / 2.0, cy - h / 2.0),
            (cx + w / 2.0, cy + h / 2.0),
            cv.fill(WHITE),
        )?;
        draw_note(cv, &frame, note)?;
    }

    // Legend centred over the grid (or as far left as it must be to stay on the canvas).
    let legend_w = legend.rows_size(cv, legend_max_w).0;
    let legend_x = (0.5 * (frame.x0 + frame.x1) - 0.5 * legend_w)
        .min(WIDTH as f64 - MARGIN - legend_w)
        .max(MARGIN);
    legend.draw_rows(cv, (legend_x, legend_top), legend_max_w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::canvas::MISSING_FILL;

    #[test]
    fn colour_map_ends_are_viridis() {
        assert_eq!(viridis(0.0), RGBColor(0x44, 0x01, 0x54));
        assert_eq!(viridis(1.0), RGBColor(0xfd, 0xe7, 0x25));
        // Clamped outside [0, 1]; NaN is the low end.
        assert_eq!(viridis(-3.0), viridis(0.0));
        assert_eq!(viridis(7.0), viridis(1.0));
        assert_eq!(viridis(f64::NAN), viridis(0.0));
        // The middle is matplotlib's viridis(0.5) = #21918c, give or take a level.
        let mid = viridis(0.5);
        let close = |a: u8, b: u8| a.abs_diff(b) <= 2;
        assert!(
            close(mid.0, 0x21) && close(mid.1, 0x91) && close(mid.2, 0x8c),
            "{mid:?}"
        );
    }

    #[test]
    fn colour_map_brightens_monotonically() {
        let l: Vec<f64> = (0..=200)
            .map(|k| luminance(viridis(k as f64 / 200.0)))
            .collect();
        assert!(l.windows(2).all(|w| w[1] >= w[0]), "{l:?}");
    }

    #[test]
    fn annotations_contrast_with_their_cell() {
        assert_eq!(text_on(viridis(0.0)), WHITE);
        assert_eq!(text_on(viridis(1.0)), INK);
        assert_eq!(text_on(MISSING_FILL), INK);
    }

    #[test]
    fn annotation_text() {
        assert_eq!(annotation(-7.25), "−7.2");
        assert_eq!(annotation(-0.04), "0.0");
        assert_eq!(annotation(0.0), "0.0");
        assert_eq!(annotation(1.0), "1.0");
        assert_eq!(annotation(f64::NEG_INFINITY), "−∞");
    }

    #[test]
    fn segments_clip_to_the_rectangle() {
        let r = (0.0, 0.0, 10.0, 10.0);
        assert_eq!(
            clip_segment((-5.0, 5.0), (5.0, 5.0), r),
            Some(((0.0, 5.0), (5.0, 5.0), true, false))
        );
        assert_eq!(
            clip_segment((2.0, 2.0), (8.0, 8.0), r),
            Some(((2.0, 2.0), (8.0, 8.0), false, false))
        );
        assert_eq!(clip_segment((-5.0, -1.0), (20.0, -1.0), r), None);
        assert_eq!(clip_segment((11.0, 0.0), (20.0, 5.0), r), None);
    }

    #[test]
    fn crowded_labels_are_thinned() {
        let labels: Vec<String> = (0..10).map(|i| format!("{i}")).collect();
        let mut a = cell_axis(10, &labels);
        thin_labels(&mut a, 10.0, 25.0);
        let kept: Vec<&str> = a.major.iter().map(|(_, s)| s.as_str()).collect();
        assert_eq!(kept, ["0", "3", "6", "9"]);
        assert_eq!(a.minor.len(), 6);
        let mut b = cell_axis(10, &labels);
        thin_labels(&mut b, 40.0, 25.0);
        assert_eq!(b.major.len(), 10);
    }
}
