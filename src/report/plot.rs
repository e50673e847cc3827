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

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use anyhow::{anyhow, bail, Context, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontDesc, FontFamily, FontStyle, FontTransform, RGBAColor};

// Tick and range helpers live next to this file; declared here so `report/mod.rs` needs only
// `pub mod plot;` (reachable as `report::plot::ticks`).
#[path = "ticks.rs"]
pub mod ticks;
use self::ticks::Axis;

// Heat maps (cells, colour map, colour bar): `plot/heatmap.rs`.
mod heatmap;
// One colour and marker per method: `plot/style.rs`.
pub mod style;
use self::style::{Shape, Style, DASHES, PALETTE, PAPER_SHAPES};

/// One line of a convergence plot: `(x, y)` in data units. Non-finite points (and, on log
/// axes, non-positive ones) are skipped and break the line.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    /// None: the palette by position in the plot.
    pub style: Option<Style>,
}

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
}

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

/// Image size in (logical) pixels.
pub const WIDTH: u32 = 1200;
pub const HEIGHT: u32 = 800;
/// The PNG is drawn at this multiple of its size and averaged down (anti-aliasing).
const SUPERSAMPLE: u32 = 2;

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
// Style

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
/// Distance between markers along a long line, in logical px.
const MARKER_SPACING: f64 = 90.0;
/// Lines with at most this many points get a marker on every point.
const MARK_ALL_POINTS: usize = 25;

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
fn register_embedded_font() -> Result<()> {
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

// ---------------------------------------------------------------------------------------------
// Output

/// A figure that can draw itself on any plotters backend.
trait Figure {
    fn draw<DB: DrawingBackend>(&self, cv: &Canvas<DB>) -> Result<()>;
}

impl Figure for LinePlot {
    fn draw<DB: DrawingBackend>(&self, cv: &Canvas<DB>) -> Result<()> {
        draw_line_plot(cv, self)
    }
}

impl Figure for BarPlot {
    fn draw<DB: DrawingBackend>(&self, cv: &Canvas<DB>) -> Result<()> {
        draw_bar_plot(cv, self)
    }
}

impl Figure for HeatMap {
    fn draw<DB: DrawingBackend>(&self, cv: &Canvas<DB>) -> Result<()> {
        heatmap::draw_heat_map(cv, self)
    }
}

/// Renders `fig` into an SVG and a (supersampled) PNG and moves both into place.
fn render_both(stem: &Path, fig: &impl Figure) -> Result<()> {
    register_embedded_font()?;

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        let cv = Canvas {
            area: &root,
            scale: 1.0,
            metrics: TextMetrics::SVG,
        };
        cv.clear()?;
        fig.draw(&cv)?;
        root.present().map_err(drawing_error)?;
    }
    write_atomic(&with_suffix(stem, ".svg"), |tmp| {
        Ok(std::fs::write(tmp, svg.as_bytes())?)
    })?;

    let (w, h) = (WIDTH * SUPERSAMPLE, HEIGHT * SUPERSAMPLE);
    let mut big = vec![255u8; 3 * (w * h) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut big, (w, h)).into_drawing_area();
        let cv = Canvas {
            area: &root,
            scale: SUPERSAMPLE as f64,
            metrics: TextMetrics::PNG,
        };
        cv.clear()?;
        fig.draw(&cv)?;
        root.present().map_err(drawing_error)?;
    }
    let small = downsample(&big, w as usize, h as usize, SUPERSAMPLE as usize);
    write_atomic(&with_suffix(stem, ".png"), |tmp| {
        let mut backend = BitMapBackend::new(tmp, (WIDTH, HEIGHT));
        backend
            .blit_bitmap((0, 0), (WIDTH, HEIGHT), &small)
            .map_err(|e| anyhow!("{e}"))?;
        backend.present().map_err(|e| anyhow!("writing PNG: {e}"))
    })
}

/// Box-filters an RGB image by `f` in both directions.
fn downsample(src: &[u8], w: usize, h: usize, f: usize) -> Vec<u8> {
    let (dw, dh) = (w / f, h / f);
    let n = (f * f) as u32;
    let mut out = vec![0u8; 3 * dw * dh];
    for y in 0..dh {
        for x in 0..dw {
            for c in 0..3 {
                let mut sum = 0u32;
                for sy in 0..f {
                    let row = (y * f + sy) * w;
                    for sx in 0..f {
                        sum += src[3 * (row + x * f + sx) + c] as u32;
                    }
                }
                out[3 * (y * dw + x) + c] = ((sum + n / 2) / n) as u8;
            }
        }
    }
    out
}

/// `stem` with `suffix` appended (not `with_extension`, which would eat a dot in the stem).
fn with_suffix(stem: &Path, suffix: &str) -> PathBuf {
    let mut s: OsString = stem.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// Calls `write` on a temporary path next to `target` (same extension, so encoders that look
/// at it still work), then renames it over `target`.
fn write_atomic(target: &Path, write: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let name = target
        .file_name()
        .context("plot path has no file name")?
        .to_string_lossy();
    let ext = target
        .extension()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        ".{name}.{}-{}.tmp.{ext}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = write(&tmp).and_then(|()| {
        std::fs::rename(&tmp, target)
            .with_context(|| format!("renaming {} to {}", tmp.display(), target.display()))
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.with_context(|| format!("writing {}", target.display()))
}

fn drawing_error<E: std::fmt::Display>(e: E) -> anyhow::Error {
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
struct TextMetrics {
    size_factor: f64,
    /// Baseline below the top anchor, in ems.
    top_to_baseline_em: f64,
}

/// Em of DejaVu Sans per unit of plotters (ab_glyph) font size.
const EM: f64 = 2048.0 / 2384.0;

impl TextMetrics {
    const SVG: TextMetrics = TextMetrics {
        size_factor: 1.24 * EM,
        top_to_baseline_em: 0.76,
    };
    const PNG: TextMetrics = TextMetrics {
        size_factor: 1.0,
        top_to_baseline_em: 0.5 / EM,
    };
}

struct Canvas<'a, DB: DrawingBackend> {
    area: &'a DrawingArea<DB, Shift>,
    scale: f64,
    metrics: TextMetrics,
}

type Pt = (f64, f64);

impl<DB: DrawingBackend> Canvas<'_, DB> {
    fn px(&self, (x, y): Pt) -> (i32, i32) {
        (
            (x * self.scale).round() as i32,
            (y * self.scale).round() as i32,
        )
    }

    fn stroke(&self, c: RGBColor, width: f64) -> ShapeStyle {
        ShapeStyle {
            color: RGBAColor(c.0, c.1, c.2, 1.0),
            filled: false,
            stroke_width: (width * self.scale).round().max(1.0) as u32,
        }
    }

    fn fill(&self, c: RGBColor) -> ShapeStyle {
        ShapeStyle {
            color: RGBAColor(c.0, c.1, c.2, 1.0),
            filled: true,
            stroke_width: 1,
        }
    }

    fn clear(&self) -> Result<()> {
        self.area.fill(&WHITE).map_err(drawing_error)
    }

    fn path(&self, pts: &[Pt], c: RGBColor, width: f64) -> Result<()> {
        let pts: Vec<_> = pts.iter().map(|&p| self.px(p)).collect();
        self.area
            .draw(&PathElement::new(pts, self.stroke(c, width)))
            .map_err(drawing_error)
    }

    fn rect(&self, (x0, y0): Pt, (x1, y1): Pt, style: ShapeStyle) -> Result<()> {
        let r = Rectangle::new([self.px((x0, y0)), self.px((x1, y1))], style);
        self.area.draw(&r).map_err(drawing_error)
    }

    /// A marker; `hollow` draws the outline with `width`, otherwise the shape is filled.
    fn shape(&self, shape: Shape, at: Pt, r: f64, c: RGBColor, hollow: Option<f64>) -> Result<()> {
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

    fn style(&self, size: f64, c: RGBColor, h: HPos) -> TextStyle<'static> {
        let size = size * self.scale * self.metrics.size_factor;
        font(size).color(&c).pos(Pos::new(h, VPos::Top))
    }

    /// Text width in logical px.
    fn text_width(&self, s: &str, size: f64) -> f64 {
        let style: TextStyle = font(size * self.scale).into();
        match self.area.estimate_text_size(s, &style) {
            Ok((w, _)) => w as f64 / self.scale,
            Err(_) => 0.6 * size * s.chars().count() as f64,
        }
    }

    /// Text with its baseline at `y`, aligned at `x` by `h`.
    fn text(&self, s: &str, (x, y): Pt, h: HPos, size: f64, c: RGBColor) -> Result<()> {
        let top = y - self.metrics.top_to_baseline_em * EM * size;
        self.area
            .draw_text(s, &self.style(size, c, h), self.px((x, top)))
            .map_err(drawing_error)
    }

    /// Text whose digits are vertically centred on `y` (tick labels).
    fn text_mid(&self, s: &str, (x, y): Pt, h: HPos, size: f64, c: RGBColor) -> Result<()> {
        // DejaVu digits are 0.729 em tall.
        self.text(s, (x, y + 0.3645 * EM * size), h, size, c)
    }

    /// Text reading upwards, centred on `y`, its top (cap side) at `x`.
    fn text_up(&self, s: &str, (x, y): Pt, size: f64, c: RGBColor) -> Result<()> {
        let style = self
            .style(size, c, HPos::Center)
            .transform(FontTransform::Rotate270);
        self.area
            .draw_text(s, &style, self.px((x, y)))
            .map_err(drawing_error)
    }

    /// Largest size ≤ `size` (down to `min`) at which `s` fits in `width`.
    fn fit(&self, s: &str, size: f64, min: f64, width: f64) -> f64 {
        let w = self.text_width(s, size);
        if w <= width || w == 0.0 {
            size
        } else {
            (size * width / w).max(min).floor()
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Frame: plot rectangle and the two axes

struct Frame {
    x0: f64,
    y0: f64,
    x1: f64,
    y1: f64,
    /// Gap between the frame and the ends of the axes (left, right, top, bottom), so data at
    /// the ends of a range do not sit on the frame.
    inset: [f64; 4],
    x: Axis,
    y: Axis,
}

/// Inset of line plots on every side, in logical px.
const LINE_INSET: f64 = 10.0;

impl Frame {
    /// Pixel position of an axis-space point.
    fn to_px(&self, (tx, ty): Pt) -> Pt {
        let [l, r, t, b] = self.inset;
        (
            self.x0 + l + self.x.frac(tx) * (self.x1 - self.x0 - l - r),
            self.y1 - b - self.y.frac(ty) * (self.y1 - self.y0 - t - b),
        )
    }

    fn width(&self) -> f64 {
        self.x1 - self.x0
    }

    fn height(&self) -> f64 {
        self.y1 - self.y0
    }

    fn contains(&self, (x, y): Pt) -> bool {
        x >= self.x0 - 0.5 && x <= self.x1 + 0.5 && y >= self.y0 - 0.5 && y <= self.y1 + 0.5
    }
}

/// Space taken by the title.
struct Layout {
    /// Top of the plot rectangle.
    top: f64,
}

fn draw_title<DB: DrawingBackend>(cv: &Canvas<DB>, title: &str) -> Result<Layout> {
    let width = WIDTH as f64 - 2.0 * MARGIN;
    let mut lines = vec![title.to_string()];
    let mut size = cv.fit(title, TITLE_SIZE, 12.0, width);
    if size < 0.8 * TITLE_SIZE {
        if let Some((a, b)) = split_title(title) {
            let two = cv
                .fit(&a, TITLE_SIZE, 12.0, width)
                .min(cv.fit(&b, TITLE_SIZE, 12.0, width));
            if two > size {
                lines = vec![a, b];
                size = two.min(0.9 * TITLE_SIZE);
            }
        }
    }
    let mut baseline = MARGIN + 0.78 * size;
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            baseline += 1.25 * size;
        }
        cv.text(
            line,
            (WIDTH as f64 / 2.0, baseline),
            HPos::Center,
            size,
            INK,
        )?;
    }
    Ok(Layout {
        top: baseline + 0.5 * size + 14.0,
    })
}

/// Splits a long title into two lines: after ": " or " — " when one is near the middle,
/// else at the space closest to the middle.
fn split_title(title: &str) -> Option<(String, String)> {
    let mid = title.chars().count() / 2;
    let char_pos = |byte: usize| title[..byte].chars().count();
    let near_middle = |byte: usize| char_pos(byte).abs_diff(mid) <= mid / 2;
    let preferred = [": ", " — ", " - ", ", "]
        .iter()
        .flat_map(|sep| {
            title
                .match_indices(sep)
                .map(move |(i, _)| (i, i + sep.len()))
        })
        .filter(|&(i, _)| near_middle(i))
        .min_by_key(|&(i, _)| char_pos(i).abs_diff(mid));
    let (head_end, tail_start) = preferred.or_else(|| {
        title
            .match_indices(' ')
            .map(|(i, _)| (i, i + 1))
            .min_by_key(|&(i, _)| char_pos(i).abs_diff(mid))
    })?;
    let (head, tail) = (
        title[..head_end].trim_end(),
        title[tail_start..].trim_start(),
    );
    // Keep the separator's visible part (":" or ",") on the first line.
    let sep = title[head_end..tail_start].trim();
    let head = if sep == ":" || sep == "," {
        format!("{head}{sep}")
    } else {
        head.to_string()
    };
    let tail = if sep == "—" || sep == "-" {
        format!("{sep} {tail}")
    } else {
        tail.to_string()
    };
    (!head.is_empty() && !tail.is_empty()).then_some((head, tail))
}

/// Places the plot rectangle so the tick labels and axis titles fit, leaving `right_extra`
/// logical px free on the right (for an outside legend).
fn place_frame<DB: DrawingBackend>(
    cv: &Canvas<DB>,
    layout: &Layout,
    x: Axis,
    y: Axis,
    x_labels_below: &[String],
    right_extra: f64,
    inset: [f64; 4],
) -> Frame {
    let y_label_w = y
        .major
        .iter()
        .map(|(_, s)| cv.text_width(s, TICK_SIZE))
        .fold(0.0, f64::max);
    let last_x_w = x_labels_below
        .last()
        .map(|s| cv.text_width(s, TICK_SIZE))
        .unwrap_or(0.0);
    let x0 = MARGIN + 1.25 * AXIS_TITLE_SIZE + 14.0 + y_label_w + 10.0;
    let x1 = WIDTH as f64 - right_extra - (MARGIN + 4.0).max(0.5 * last_x_w + 6.0);
    let y1 = HEIGHT as f64 - (MARGIN + 1.3 * AXIS_TITLE_SIZE + 14.0 + 1.2 * TICK_SIZE + 10.0);
    Frame {
        x0,
        y0: layout.top,
        x1,
        y1,
        inset,
        x,
        y,
    }
}

/// Grid (minor then major), frame, tick marks and labels of both axes; `x_ticks = false`
/// leaves the x axis to the caller (bar charts).
fn draw_axes<DB: DrawingBackend>(cv: &Canvas<DB>, f: &Frame, x_ticks: bool) -> Result<()> {
    let inside = |t: f64, a: &Axis| t >= a.lo - 1e-9 && t <= a.hi + 1e-9;
    if x_ticks {
        for &t in f.x.minor.iter().filter(|t| inside(**t, &f.x)) {
            let (px, _) = f.to_px((t, f.y.lo));
            cv.path(&[(px, f.y0), (px, f.y1)], GRID_MINOR, 1.0)?;
        }
    }
    for &t in f.y.minor.iter().filter(|t| inside(**t, &f.y)) {
        let (_, py) = f.to_px((f.x.lo, t));
        cv.path(&[(f.x0, py), (f.x1, py)], GRID_MINOR, 1.0)?;
    }
    if x_ticks {
        for (t, _) in f.x.major.iter().filter(|(t, _)| inside(*t, &f.x)) {
            let (px, _) = f.to_px((*t, f.y.lo));
            cv.path(&[(px, f.y0), (px, f.y1)], GRID_MAJOR, 1.0)?;
        }
    }
    for (t, _) in f.y.major.iter().filter(|(t, _)| inside(*t, &f.y)) {
        let (_, py) = f.to_px((f.x.lo, *t));
        cv.path(&[(f.x0, py), (f.x1, py)], GRID_MAJOR, 1.0)?;
    }
    // Tick marks and labels.
    for (t, label) in f.y.major.iter().filter(|(t, _)| inside(*t, &f.y)) {
        let (_, py) = f.to_px((f.x.lo, *t));
        cv.path(&[(f.x0 - 6.0, py), (f.x0, py)], FRAME, 1.0)?;
        cv.text_mid(label, (f.x0 - 10.0, py), HPos::Right, TICK_SIZE, INK)?;
    }
    for &t in f.y.minor.iter().filter(|t| inside(**t, &f.y)) {
        let (_, py) = f.to_px((f.x.lo, t));
        cv.path(&[(f.x0 - 3.0, py), (f.x0, py)], FRAME, 1.0)?;
    }
    if x_ticks {
        for (t, label) in f.x.major.iter().filter(|(t, _)| inside(*t, &f.x)) {
            let (px, _) = f.to_px((*t, f.y.lo));
            cv.path(&[(px, f.y1), (px, f.y1 + 6.0)], FRAME, 1.0)?;
            cv.text(
                label,
                (px, f.y1 + 10.0 + 0.95 * TICK_SIZE),
                HPos::Center,
                TICK_SIZE,
                INK,
            )?;
        }
        for &t in f.x.minor.iter().filter(|t| inside(**t, &f.x)) {
            let (px, _) = f.to_px((t, f.y.lo));
            cv.path(&[(px, f.y1), (px, f.y1 + 3.0)], FRAME, 1.0)?;
        }
    }
    Ok(())
}

fn draw_frame_and_titles<DB: DrawingBackend>(
    cv: &Canvas<DB>,
    f: &Frame,
    x_title: &str,
    y_title: &str,
) -> Result<()> {
    let border = [
        (f.x0, f.y0),
        (f.x1, f.y0),
        (f.x1, f.y1),
        (f.x0, f.y1),
        (f.x0, f.y0),
    ];
    cv.path(&border, FRAME, 1.25)?;
    let x_size = cv.fit(x_title, AXIS_TITLE_SIZE, 12.0, f.width());
    let x_baseline = HEIGHT as f64 - MARGIN - 0.3 * x_size;
    cv.text(
        x_title,
        ((f.x0 + f.x1) / 2.0, x_baseline),
        HPos::Center,
        x_size,
        INK,
    )?;
    let y_size = cv.fit(y_title, AXIS_TITLE_SIZE, 12.0, f.height());
    cv.text_up(y_title, (MARGIN, (f.y0 + f.y1) / 2.0), y_size, INK)
}

fn draw_note<DB: DrawingBackend>(cv: &Canvas<DB>, f: &Frame, note: &str) -> Result<()> {
    let c = ((f.x0 + f.x1) / 2.0, (f.y0 + f.y1) / 2.0);
    cv.text_mid(note, c, HPos::Center, AXIS_TITLE_SIZE, NOTE)
}

// ---------------------------------------------------------------------------------------------
// Legend

enum Swatch {
    /// A line (if `dash`) with a marker (if `shape`).
    Line {
        color: RGBColor,
        dash: Option<&'static [f64]>,
        shape: Option<Shape>,
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

struct Legend {
    entries: Vec<(String, Swatch)>,
}

const LEGEND_PAD: f64 = 10.0;
const LEGEND_SAMPLE: f64 = 46.0;
const LEGEND_ROW: f64 = 1.65 * LEGEND_SIZE;

impl Legend {
    fn size<DB: DrawingBackend>(&self, cv: &Canvas<DB>) -> (f64, f64) {
        let text_w = self
            .entries
            .iter()
            .map(|(s, _)| cv.text_width(s, LEGEND_SIZE))
            .fold(0.0, f64::max);
        let w = 2.0 * LEGEND_PAD + LEGEND_SAMPLE + 10.0 + text_w;
        let h = 2.0 * LEGEND_PAD + LEGEND_ROW * self.entries.len() as f64 - 0.4 * LEGEND_SIZE;
        (w, h)
    }

    fn draw<DB: DrawingBackend>(&self, cv: &Canvas<DB>, (x, y): Pt) -> Result<()> {
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
    fn rows_size<DB: DrawingBackend>(&self, cv: &Canvas<DB>, max_w: f64) -> (f64, f64) {
        self.row_layout(cv, max_w).1
    }

    /// The legend with its entries side by side (wrapped at `max_w`), top-left at `(x, y)`.
    fn draw_rows<DB: DrawingBackend>(&self, cv: &Canvas<DB>, (x, y): Pt, max_w: f64) -> Result<()> {
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
    fn place<DB: DrawingBackend>(&self, cv: &Canvas<DB>, f: &Frame, obstacles: &[Pt]) -> Pt {
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
        Swatch::Line { color, dash, shape } => {
            for piece in dash.map_or(vec![], |d| dashed(&[(sx0, cy), (sx1, cy)], d)) {
                cv.path(&piece, color, LINE_WIDTH)?;
            }
            if let Some(shape) = shape {
                cv.shape(shape, mid, MARKER_RADIUS, color, None)?;
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
            heatmap::missing_cell(cv, p0, p1)?;
            cv.rect(p0, p1, cv.stroke(FRAME, 1.0))?;
        }
    }
    cv.text_mid(label, (sx1 + 10.0, cy), HPos::Left, LEGEND_SIZE, INK)
}

fn darker(c: RGBColor) -> RGBColor {
    RGBColor(
        (c.0 as f64 * 0.7) as u8,
        (c.1 as f64 * 0.7) as u8,
        (c.2 as f64 * 0.7) as u8,
    )
}

// ---------------------------------------------------------------------------------------------
// Geometry helpers

/// Splits a pixel polyline into the "on" pieces of a dash `pattern` (on, off, on, …);
/// an empty pattern returns the line unchanged.
fn dashed(line: &[Pt], pattern: &[f64]) -> Vec<Vec<Pt>> {
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

fn dist(a: Pt, b: Pt) -> f64 {
    (b.0 - a.0).hypot(b.1 - a.1)
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

// ---------------------------------------------------------------------------------------------
// Line plot

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

// ---------------------------------------------------------------------------------------------
// Bar chart

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
        };
        let series = [s("FA"), s("FAPS"), s("FAPS-mom"), s("")];
        assert_eq!(series_for_marker("paper: FAPS 42 it", &series), Some(1));
        assert_eq!(series_for_marker("paper: FAPS-mom 12 it", &series), Some(2));
        assert_eq!(series_for_marker("paper: DSA", &series), None);
    }

    #[test]
    fn long_titles_split_near_the_middle() {
        let (a, b) =
            split_title("Grammenos et al. 2020, Fig. 3: synthetic data with twenty clients")
                .unwrap();
        assert_eq!(
            (a.as_str(), b.as_str()),
            (
                "Grammenos et al. 2020, Fig. 3:",
                "synthetic data with twenty clients"
            )
        );
        let (a, b) = split_title("one two three four").unwrap();
        assert_eq!((a.as_str(), b.as_str()), ("one two", "three four"));
        assert_eq!(split_title("single"), None);
    }

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

    #[test]
    fn suffix_keeps_dots_in_stem() {
        assert_eq!(
            with_suffix(Path::new("a/fig_n1.5k"), ".svg"),
            PathBuf::from("a/fig_n1.5k.svg")
        );
    }
}
