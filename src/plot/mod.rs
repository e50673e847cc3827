//! Figures: convergence line plots, grouped bar charts and heat maps, each written as
//! `<stem>.svg` and `<stem>.png` (1200×800).
//!
//! All text uses the embedded DejaVu Sans (registered with plotters' `ab_glyph` renderer), so the
//! output never depends on the fonts of the machine: the same input gives byte-identical PNGs.
//! The layout is done here in logical pixels (axes, ticks, legend), plotters only draws
//! primitives; the PNG is rendered at 2× and box-filtered down, which anti-aliases the lines.
//!
//! Log axes are drawn in log10 space with whole-decade ranges and `10⁻⁶`-style labels; see
//! [`ticks`] for ranges and labels.
//!
//! The crate's lowest floor: nothing here imports from the rest of the crate. `canvas.rs` draws
//! in logical pixels (font, text, lines, markers), `output.rs` writes the two files, `axes.rs`
//! lays out title, frame and axes (with `ticks.rs`), `legend.rs` the legends, `style.rs` holds
//! palette, markers and dashes; one file per chart: `line.rs`, `bars.rs`, `heatmap.rs`.

use std::path::Path;

use anyhow::{Context, Result};
use plotters::style::RGBColor;

mod axes;
mod bars;
mod canvas;
mod heatmap;
mod legend;
mod line;
mod output;
pub mod style;
pub mod ticks;

pub use self::bars::BarPlot;
pub use self::heatmap::{HeatMap, Overlay};
pub use self::line::{LegendKey, LinePlot, Marker, Series};
use self::output::render_both;
pub use self::style::End;

/// Image size in (logical) pixels.
pub const WIDTH: u32 = 1200;
pub const HEIGHT: u32 = 800;

/// Writes `<stem>.svg` and `<stem>.png`, each to a temporary name in the same directory that
/// is then renamed over the target.
pub fn render(plot: &LinePlot, stem: &Path) -> Result<()> {
    render_both(stem, plot).with_context(|| {
        format!(
            "rendering plot {:?} to {}.{{svg,png}}",
            plot.title,
            stem.display()
        )
    })
}

/// Grouped bar chart; writes `<stem>.svg` and `<stem>.png` like [`render`].
pub fn render_bars(plot: &BarPlot, stem: &Path) -> Result<()> {
    render_both(stem, plot).with_context(|| {
        format!(
            "rendering bars {:?} to {}.{{svg,png}}",
            plot.title,
            stem.display()
        )
    })
}

/// Heat map; writes `<stem>.svg` and `<stem>.png` like [`render`].
pub fn render_heatmap(plot: &HeatMap, stem: &Path) -> Result<()> {
    render_both(stem, plot).with_context(|| {
        format!(
            "rendering heat map {:?} to {}.{{svg,png}}",
            plot.title,
            stem.display()
        )
    })
}

// ---------------------------------------------------------------------------------------------
// House style: colours and sizes every chart shares

const INK: RGBColor = RGBColor(30, 30, 30);
const FRAME: RGBColor = RGBColor(90, 90, 90);
const GRID_MAJOR: RGBColor = RGBColor(210, 210, 210);
const GRID_MINOR: RGBColor = RGBColor(236, 236, 236);
const NOTE: RGBColor = RGBColor(120, 120, 120);

const MARGIN: f64 = 18.0;
const TITLE_SIZE: f64 = 26.0;
const AXIS_TITLE_SIZE: f64 = 20.0;
const TICK_SIZE: f64 = 17.0;
const LEGEND_SIZE: f64 = 16.0;
const LINE_WIDTH: f64 = 2.5;
const MARKER_RADIUS: f64 = 4.5;
const PAPER_RADIUS: f64 = 10.0;
