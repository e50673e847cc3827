//! Writing a figure: an SVG, and a PNG drawn at 2× and box-filtered down; each goes to a
//! temporary name that is then renamed over the target.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{anyhow, Context, Result};
use plotters::prelude::*;

use super::canvas::{drawing_error, register_embedded_font, Canvas, TextMetrics};
use super::{HEIGHT, WIDTH};

/// The PNG is drawn at this multiple of its size and averaged down (anti-aliasing).
const SUPERSAMPLE: u32 = 2;

/// A figure that can draw itself on any plotters backend.
pub(super) trait Figure {
    fn draw<DB: DrawingBackend>(&self, cv: &Canvas<DB>) -> Result<()>;
}

/// Renders `fig` into an SVG and a (supersampled) PNG and moves both into place.
pub(super) fn render_both(stem: &Path, fig: &impl Figure) -> Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffix_keeps_dots_in_stem() {
        assert_eq!(
            with_suffix(Path::new("a/fig_n1.5k"), ".svg"),
            PathBuf::from("a/fig_n1.5k.svg")
        );
    }
}
