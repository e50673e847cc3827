//! Grouped bar charts: one group of bars per category, one bar per method, values above the
//! bars and the legend right of the frame.

use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::HPos;

use super::axes::{
    draw_axes, draw_frame_and_titles, draw_note, draw_title, place_frame, LINE_INSET,
};
use super::canvas::Canvas;
use super::legend::{darker, Legend, Swatch};
use super::output::Figure;
use super::style::Style;
use super::ticks::{self, Axis};
use super::{FRAME, HEIGHT, INK, NOTE, TICK_SIZE};

/// Grouped bars: one group of bars per category (e.g. sweep point `n=2000`), one bar per
/// method in each group. `groups[g].1[c]` is the value of method `g` at category `c`; missing
/// or unusable values are shown as "n/a".
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BarPlot {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub log_y: bool,
    pub categories: Vec<String>,
    pub groups: Vec<(String, Vec<f64>)>,
    /// Colour of each group; empty: the palette by position.
    pub colours: Vec<RGBColor>,
}

impl Figure for BarPlot {
    fn draw<DB: DrawingBackend>(&self, cv: &Canvas<DB>) -> Result<()> {
        draw_bar_plot(cv, self)
    }
}

fn draw_bar_plot<DB: DrawingBackend>(cv: &Canvas<DB>, plot: &BarPlot) -> Result<()> {
    let layout = draw_title(cv, &plot.title)?;
    let n_cat = plot.categories.len();
    let value = |g: usize, c: usize| plot.groups[g].1.get(c).copied().unwrap_or(f64::NAN);
    let values: Vec<f64> = (0..plot.groups.len())
        .flat_map(|g| (0..n_cat).map(move |c| (g, c)))
        .map(|(g, c)| value(g, c))
        .collect();
    // Headroom above the tallest bar for its value label.
    let y_bounds = ticks::data_bounds(values.iter().copied(), plot.log_y).map(|(lo, hi)| {
        if plot.log_y {
            (lo, hi * 1.2)
        } else {
            (lo.min(0.0), hi * 1.1)
        }
    });
    let nominal_h = HEIGHT as f64 - layout.top - 90.0;
    let y_axis = Axis::new(
        y_bounds,
        plot.log_y,
        (nominal_h / 38.0) as usize,
        !plot.log_y,
    );
    // x in "category units": category c spans [c, c+1].
    let x_axis = Axis {
        log: false,
        lo: 0.0,
        hi: n_cat.max(1) as f64,
        major: vec![],
        minor: vec![],
    };

    let colour = |g: usize| {
        plot.colours
            .get(g)
            .copied()
            .unwrap_or_else(|| Style::by_position(g).colour)
    };
    let legend = Legend {
        entries: plot
            .groups
            .iter()
            .enumerate()
            .map(|(g, (name, _))| (name.clone(), Swatch::Bar { color: colour(g) }))
            .collect(),
    };
    let legend_w = if legend.entries.is_empty() {
        0.0
    } else {
        legend.size(cv).0 + 14.0
    };
    let frame = place_frame(
        cv,
        &layout,
        x_axis,
        y_axis,
        &[],
        legend_w,
        [0.0, 0.0, LINE_INSET, 0.0],
    );
    draw_axes(cv, &frame, false)?;

    let slot = frame.width() / n_cat.max(1) as f64;
    let n_groups = plot.groups.len().max(1);
    let bar_w = 0.8 * slot / n_groups as f64;
    let gap = (0.12 * bar_w).min(2.0);
    let base_t = if plot.log_y {
        frame.y.lo
    } else {
        0.0f64.clamp(frame.y.lo, frame.y.hi)
    };
    let base_y = frame.to_px((0.0, base_t)).1;
    let value_size = 14.0;
    for c in 0..n_cat {
        for g in 0..plot.groups.len() {
            let x_left = frame.x0 + slot * (c as f64 + 0.1) + bar_w * g as f64 + gap / 2.0;
            let x_right = x_left + bar_w - gap;
            let x_mid = (x_left + x_right) / 2.0;
            let v = value(g, c);
            match frame.y.to_axis(v) {
                Some(t) => {
                    let top = frame.to_px((0.0, t)).1;
                    let (y_a, y_b) = (top.min(base_y), top.max(base_y));
                    cv.rect((x_left, y_a), (x_right, y_b), cv.fill(colour(g)))?;
                    cv.rect(
                        (x_left, y_a),
                        (x_right, y_b),
                        cv.stroke(darker(colour(g)), 1.0),
                    )?;
                    let text = ticks::format_value(v);
                    if cv.text_width(&text, value_size) <= bar_w + 6.0 {
                        let y = if v >= 0.0 || plot.log_y {
                            y_a - 5.0
                        } else {
                            y_b + 5.0 + value_size
                        };
                        cv.text(&text, (x_mid, y), HPos::Center, value_size, INK)?;
                    }
                }
                None => {
                    if cv.text_width("n/a", 12.0) <= bar_w + 6.0 {
                        cv.text("n/a", (x_mid, base_y - 5.0), HPos::Center, 12.0, NOTE)?;
                    }
                }
            }
        }
        // Category label under the middle of its group, shrunk to fit the slot.
        let label = &plot.categories[c];
        let size = cv.fit(label, TICK_SIZE, 10.0, slot - 6.0);
        let mid = frame.x0 + slot * (c as f64 + 0.5);
        cv.path(&[(mid, frame.y1), (mid, frame.y1 + 6.0)], FRAME, 1.0)?;
        cv.text(
            label,
            (mid, frame.y1 + 10.0 + 0.95 * TICK_SIZE),
            HPos::Center,
            size,
            INK,
        )?;
    }

    draw_frame_and_titles(cv, &frame, &plot.x_label, &plot.y_label)?;
    if values.iter().all(|v| frame.y.to_axis(*v).is_none()) {
        draw_note(cv, &frame, "no finite data to plot")?;
    }
    legend.draw(cv, (frame.x1 + 14.0, frame.y0))
}
