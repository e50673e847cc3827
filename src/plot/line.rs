//! Line plots: curves with markers along them, the paper's values as large hollow markers, and
//! a legend placed off the data.

use anyhow::Result;
use plotters::prelude::*;

use super::axes::{
    draw_axes, draw_frame_and_titles, draw_note, draw_title, place_frame, Frame, LINE_INSET,
};
use super::canvas::{dashed, dist, Canvas, Pt};
use super::legend::{Legend, Swatch};
use super::output::Figure;
use super::style::{End, Shape, Style, PAPER_SHAPES};
use super::ticks::{self, Axis};
use super::{HEIGHT, INK, LINE_WIDTH, MARKER_RADIUS, PAPER_RADIUS, WIDTH};

/// One line of a convergence plot: `(x, y)` in data units. Non-finite points (and, on log
/// axes, non-positive ones) are skipped and break the line.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    /// None: the palette by position in the plot.
    pub style: Option<Style>,
    /// How the curve's run ended, when that needs saying: a mark at its last point.
    pub end: Option<End>,
}

/// Radius of an end mark, in logical px: larger than the curves' markers, so it reads apart.
const END_RADIUS: f64 = 8.0;

/// A single reference point, e.g. `"paper: FAPS 42 it"`, drawn as a large hollow marker with
/// its own legend entry. Without a colour it takes that of the series whose label it contains.
///
/// A marker far outside the lines' range (or marked `off_scale`, e.g. the paper's cluster
/// seconds beside a quick run's) would squash the lines into a corner: it is not drawn, and its
/// legend entry says so.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Marker {
    pub label: String,
    pub x: f64,
    pub y: f64,
    pub colour: Option<RGBColor>,
    pub off_scale: bool,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct LinePlot {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub log_y: bool,
    pub series: Vec<Series>,
    pub markers: Vec<Marker>,
    /// When not empty, the legend shows these instead of one entry per series: a legend by
    /// factor (colour = method, marker = sweep point) stays short where the curves are many.
    pub keys: Vec<LegendKey>,
}

/// A legend entry of a [`LinePlot`]'s `keys`: a line without marker (`shape: None`) or a marker
/// without line (`dash: None`).
#[derive(Debug, Clone, PartialEq)]
pub struct LegendKey {
    pub label: String,
    pub colour: RGBColor,
    pub dash: Option<&'static [f64]>,
    pub shape: Option<Shape>,
    /// An end mark (then neither line nor marker): what it means.
    pub end: Option<End>,
}

/// Distance between markers along a long line, in logical px.
const MARKER_SPACING: f64 = 90.0;
/// Lines with at most this many points get a marker on every point.
const MARK_ALL_POINTS: usize = 25;

impl Figure for LinePlot {
    fn draw<DB: DrawingBackend>(&self, cv: &Canvas<DB>) -> Result<()> {
        draw_line_plot(cv, self)
    }
}

fn draw_line_plot<DB: DrawingBackend>(cv: &Canvas<DB>, plot: &LinePlot) -> Result<()> {
    let layout = draw_title(cv, &plot.title)?;
    // A point counts for the range only if both coordinates are usable.
    let usable = |x: f64, y: f64| ticks::usable(x, false) && ticks::usable(y, plot.log_y);
    let off = off_scale(plot);
    let pairs: Vec<Pt> = plot
        .series
        .iter()
        .flat_map(|s| s.points.iter().copied())
        .chain(
            plot.markers
                .iter()
                .zip(&off)
                .filter(|(_, off)| !**off)
                .map(|(m, _)| (m.x, m.y)),
        )
        .filter(|&(x, y)| usable(x, y))
        .collect();
    let x_bounds = ticks::data_bounds(pairs.iter().map(|p| p.0), false);
    let y_bounds = ticks::data_bounds(pairs.iter().map(|p| p.1), plot.log_y);

    // Axes sized for the nominal plot area, then the frame fitted around their labels.
    let (nominal_w, nominal_h) = (WIDTH as f64 - 170.0, HEIGHT as f64 - layout.top - 90.0);
    let x_axis = Axis::new(x_bounds, false, (nominal_w / 105.0) as usize, false);
    let y_axis = Axis::new(y_bounds, plot.log_y, (nominal_h / 38.0) as usize, false);
    let x_labels: Vec<String> = x_axis.major.iter().map(|(_, s)| s.clone()).collect();
    let frame = place_frame(cv, &layout, x_axis, y_axis, &x_labels, 0.0, [LINE_INSET; 4]);
    draw_axes(cv, &frame, true)?;

    // Lines in pixel space, split where a point cannot be drawn.
    let n = plot.series.len().max(1);
    let mut obstacles = Vec::new();
    let mut legend = Legend {
        entries: Vec::new(),
    };
    let style = |i: usize| {
        plot.series[i]
            .style
            .unwrap_or_else(|| Style::by_position(i))
    };
    for (i, s) in plot.series.iter().enumerate() {
        let Style {
            colour: c,
            dash,
            shape,
        } = style(i);
        let pieces = split_usable(&s.points, &frame);
        let drawable: usize = pieces.iter().map(Vec::len).sum();
        for piece in &pieces {
            for part in dashed(piece, dash) {
                cv.path(&part, c, LINE_WIDTH)?;
            }
        }
        let phase = MARKER_SPACING * i as f64 / n as f64;
        for piece in &pieces {
            for k in marker_indices(piece, drawable, MARKER_SPACING, phase) {
                cv.shape(shape, piece[k], MARKER_RADIUS, c, None)?;
            }
            sample_line(piece, 3.0, &mut obstacles);
        }
        if let (Some(end), Some(&last)) = (s.end, pieces.last().and_then(|p| p.last())) {
            cv.end_mark(end, last, END_RADIUS, c)?;
        }
        let label = if drawable == 0 {
            format!("{} (no data)", s.label)
        } else {
            s.label.clone()
        };
        if plot.keys.is_empty() {
            legend.entries.push((
                label,
                Swatch::Line {
                    color: c,
                    dash: Some(dash),
                    shape: Some(shape),
                    end: s.end,
                },
            ));
        }
    }
    for k in &plot.keys {
        legend.entries.push((
            k.label.clone(),
            Swatch::Line {
                color: k.colour,
                dash: k.dash,
                shape: k.shape,
                end: k.end,
            },
        ));
    }

    // Reference markers from the paper, on top of the lines.
    let mut per_color: Vec<(RGBColor, usize)> = Vec::new();
    for (m, off) in plot.markers.iter().zip(off) {
        let c = m
            .colour
            .or_else(|| series_for_marker(&m.label, &plot.series).map(|i| style(i).colour))
            .unwrap_or(INK);
        let k = match per_color.iter_mut().find(|(pc, _)| *pc == c) {
            Some((_, k)) => {
                *k += 1;
                *k
            }
            None => {
                per_color.push((c, 0));
                0
            }
        };
        let shape = PAPER_SHAPES[k % PAPER_SHAPES.len()];
        let at = match (frame.x.to_axis(m.x), frame.y.to_axis(m.y)) {
            _ if off => None,
            (Some(tx), Some(ty)) => Some(frame.to_px((tx, ty))),
            _ => None,
        };
        let label = match at {
            None if off => format!("{} — off this scale, not drawn", m.label),
            Some(p) => {
                cv.shape(shape, p, PAPER_RADIUS, WHITE, Some(2.0 * LINE_WIDTH))?;
                cv.shape(shape, p, PAPER_RADIUS, c, Some(LINE_WIDTH))?;
                for dx in [-1.0, 0.0, 1.0] {
                    for dy in [-1.0, 0.0, 1.0] {
                        obstacles.push((p.0 + dx * PAPER_RADIUS, p.1 + dy * PAPER_RADIUS));
                    }
                }
                m.label.clone()
            }
            None => format!("{} (not drawable)", m.label),
        };
        legend
            .entries
            .push((label, Swatch::Paper { color: c, shape }));
    }

    draw_frame_and_titles(cv, &frame, &plot.x_label, &plot.y_label)?;
    if pairs.is_empty() {
        draw_note(cv, &frame, "no finite data to plot")?;
    }
    let at = legend.place(cv, &frame, &obstacles);
    legend.draw(cv, at)
}

/// Which markers stay off the axes: those marked `off_scale`, and those that would stretch the
/// lines' range by more than half its span (on a log axis: more than a decade), squashing the
/// lines into a corner.
fn off_scale(plot: &LinePlot) -> Vec<bool> {
    let usable = |x: f64, y: f64| ticks::usable(x, false) && ticks::usable(y, plot.log_y);
    let lines: Vec<Pt> = plot
        .series
        .iter()
        .flat_map(|s| s.points.iter().copied())
        .filter(|&(x, y)| usable(x, y))
        .collect();
    let range = |v: &dyn Fn(&Pt) -> f64| {
        lines
            .iter()
            .map(v)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
                (lo.min(x), hi.max(x))
            })
    };
    let far = |v: f64, (lo, hi): (f64, f64), log: bool| {
        if log {
            v > 10.0 * hi || v < lo / 10.0
        } else {
            let span = (hi - lo).max(hi.abs().max(lo.abs()));
            v > hi + 0.5 * span || v < lo - 0.5 * span
        }
    };
    let (xr, yr) = (range(&|p| p.0), range(&|p| p.1));
    plot.markers
        .iter()
        .map(|m| {
            m.off_scale
                || (!lines.is_empty()
                    && usable(m.x, m.y)
                    && (far(m.x, xr, false) || far(m.y, yr, plot.log_y)))
        })
        .collect()
}

/// The drawable runs of `points` in pixel coordinates.
fn split_usable(points: &[Pt], f: &Frame) -> Vec<Vec<Pt>> {
    let mut pieces = vec![Vec::new()];
    for &(x, y) in points {
        match (f.x.to_axis(x), f.y.to_axis(y)) {
            (Some(tx), Some(ty)) if f.contains(f.to_px((tx, ty))) => pieces
                .last_mut()
                .expect("non-empty")
                .push(f.to_px((tx, ty))),
            _ => {
                if !pieces.last().expect("non-empty").is_empty() {
                    pieces.push(Vec::new());
                }
            }
        }
    }
    pieces.retain(|p| !p.is_empty());
    pieces
}

/// Indices of the vertices of a pixel polyline that get a marker: every point of short
/// lines, otherwise about one per `spacing` px of length starting at `phase` (as matplotlib's
/// `markevery=float`), so markers of different lines do not pile up. Vertical moves count a
/// quarter, so a noisy line gets no more markers than a smooth one.
fn marker_indices(line: &[Pt], total_points: usize, spacing: f64, phase: f64) -> Vec<usize> {
    if total_points <= MARK_ALL_POINTS {
        return (0..line.len()).collect();
    }
    let mut out = Vec::new();
    let (mut s, mut next) = (0.0, phase);
    for (i, &p) in line.iter().enumerate() {
        if i > 0 {
            let q = line[i - 1];
            s += (p.0 - q.0).hypot(0.25 * (p.1 - q.1));
        }
        if s >= next {
            out.push(i);
            next = s + spacing;
        }
    }
    out
}

/// Points of a polyline every `step` px (for legend placement).
fn sample_line(line: &[Pt], step: f64, out: &mut Vec<Pt>) {
    out.extend(line.first());
    for seg in line.windows(2) {
        let n = (dist(seg[0], seg[1]) / step).ceil().max(1.0) as usize;
        for k in 1..=n {
            let t = k as f64 / n as f64;
            out.push((
                seg[0].0 + (seg[1].0 - seg[0].0) * t,
                seg[0].1 + (seg[1].1 - seg[0].1) * t,
            ));
        }
    }
}

/// Index of the series whose label occurs in `marker` as a whole word (the longest such
/// label), so "paper: FAPS 42 it" takes the colour of "FAPS" rather than "FA".
fn series_for_marker(marker: &str, series: &[Series]) -> Option<usize> {
    let word_at = |label: &str| {
        let label = label.trim();
        !label.is_empty()
            && marker.match_indices(label).any(|(i, _)| {
                let before = marker[..i].chars().next_back();
                let after = marker[i + label.len()..].chars().next();
                !before.is_some_and(char::is_alphanumeric)
                    && !after.is_some_and(char::is_alphanumeric)
            })
    };
    series
        .iter()
        .enumerate()
        .filter(|(_, s)| word_at(&s.label))
        .max_by_key(|(i, s)| (s.label.trim().len(), std::cmp::Reverse(*i)))
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_spread_along_long_lines() {
        let line: Vec<Pt> = (0..100).map(|i| (i as f64 * 10.0, 0.0)).collect();
        let idx = marker_indices(&line, 100, 90.0, 0.0);
        assert_eq!(idx[..3], [0, 9, 18]);
        assert_eq!(marker_indices(&line[..5], 5, 90.0, 30.0), [0, 1, 2, 3, 4]);
    }

    #[test]
    fn marker_takes_longest_whole_word_series() {
        let s = |l: &str| Series {
            label: l.into(),
            style: None,
            points: vec![],
            end: None,
        };
        let series = [s("FA"), s("FAPS"), s("FAPS-mom"), s("")];
        assert_eq!(series_for_marker("paper: FAPS 42 it", &series), Some(1));
        assert_eq!(series_for_marker("paper: FAPS-mom 12 it", &series), Some(2));
        assert_eq!(series_for_marker("paper: DSA", &series), None);
    }
}
