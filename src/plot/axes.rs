//! The title, the plot rectangle (frame) and its two axes: grid, tick marks and labels, axis
//! titles.

use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::HPos;

use super::canvas::{Canvas, Pt};
use super::ticks::Axis;
use super::{
    AXIS_TITLE_SIZE, FRAME, GRID_MAJOR, GRID_MINOR, HEIGHT, INK, MARGIN, NOTE, TICK_SIZE,
    TITLE_SIZE, WIDTH,
};

pub(super) struct Frame {
    pub(super) x0: f64,
    pub(super) y0: f64,
    pub(super) x1: f64,
    pub(super) y1: f64,
    /// Gap between the frame and the ends of the axes (left, right, top, bottom), so data at
    /// the ends of a range do not sit on the frame.
    pub(super) inset: [f64; 4],
    pub(super) x: Axis,
    pub(super) y: Axis,
}

/// Inset of line plots on every side, in logical px.
pub(super) const LINE_INSET: f64 = 10.0;

impl Frame {
    /// Pixel position of an axis-space point.
    pub(super) fn to_px(&self, (tx, ty): Pt) -> Pt {
        let [l, r, t, b] = self.inset;
        (
            self.x0 + l + self.x.frac(tx) * (self.x1 - self.x0 - l - r),
            self.y1 - b - self.y.frac(ty) * (self.y1 - self.y0 - t - b),
        )
    }

    pub(super) fn width(&self) -> f64 {
        self.x1 - self.x0
    }

    pub(super) fn height(&self) -> f64 {
        self.y1 - self.y0
    }

    pub(super) fn contains(&self, (x, y): Pt) -> bool {
        x >= self.x0 - 0.5 && x <= self.x1 + 0.5 && y >= self.y0 - 0.5 && y <= self.y1 + 0.5
    }
}

/// Space taken by the title.
pub(super) struct Layout {
    /// Top of the plot rectangle.
    pub(super) top: f64,
}

pub(super) fn draw_title<DB: DrawingBackend>(cv: &Canvas<DB>, title: &str) -> Result<Layout> {
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
pub(super) fn place_frame<DB: DrawingBackend>(
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
pub(super) fn draw_axes<DB: DrawingBackend>(
    cv: &Canvas<DB>,
    f: &Frame,
    x_ticks: bool,
) -> Result<()> {
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

pub(super) fn draw_frame_and_titles<DB: DrawingBackend>(
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

pub(super) fn draw_note<DB: DrawingBackend>(cv: &Canvas<DB>, f: &Frame, note: &str) -> Result<()> {
    let c = ((f.x0 + f.x1) / 2.0, (f.y0 + f.y1) / 2.0);
    cv.text_mid(note, c, HPos::Center, AXIS_TITLE_SIZE, NOTE)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
