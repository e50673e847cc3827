//! Figures: both files written, readable log ticks, byte-identical PNGs, no panics on bad data.
//!
//! Set `DPCA_PLOT_OUT=<dir>` to keep the rendered examples for looking at them.

use std::path::{Path, PathBuf};

use dpca_bench::plot::{
    render, render_bars, render_heatmap, BarPlot, HeatMap, LinePlot, Marker, Overlay, Series,
};

fn out_dir(tmp: &tempfile::TempDir) -> PathBuf {
    match std::env::var_os("DPCA_PLOT_OUT") {
        Some(dir) => {
            std::fs::create_dir_all(&dir).unwrap();
            PathBuf::from(dir)
        }
        None => tmp.path().to_path_buf(),
    }
}

/// Geometric convergence `err_t = rate^t`, floored at `floor` (round-off).
fn geometric(rate: f64, iters: usize, floor: f64) -> Vec<(f64, f64)> {
    (0..=iters)
        .map(|t| (t as f64, rate.powi(t as i32).max(floor)))
        .collect()
}

fn convergence_plot() -> LinePlot {
    LinePlot {
        title: "Grammenos et al. 2020 — Fig. 3: synthetic n=2000, k=10, 20 clients".into(),
        x_label: "communication rounds".into(),
        y_label: "subspace distance ‖sin Θ‖_F".into(),
        log_y: true,
        series: vec![
            Series {
                label: "FAPS".into(),
                points: geometric(0.72, 90, 3e-15),
                ..Default::default()
            },
            Series {
                label: "DSA (η=0.1)".into(),
                points: geometric(0.86, 120, 1e-15),
                ..Default::default()
            },
            Series {
                label: "centralised power method".into(),
                points: geometric(0.55, 60, 2e-15),
                ..Default::default()
            },
        ],
        markers: vec![Marker {
            label: "paper: FAPS 42 it".into(),
            x: 42.0,
            y: 1e-6,
            ..Default::default()
        }],
        keys: vec![],
    }
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The contents of the SVG's `<text>` elements, trimmed.
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..];
            Some(body[..body.find("</text>")?].trim().to_string())
        })
        .collect()
}

fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let be = |i: usize| u32::from_be_bytes(bytes[i..i + 4].try_into().unwrap());
    (be(16), be(20))
}

#[test]
fn log_plot_writes_svg_and_png_with_readable_ticks() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = out_dir(&tmp);
    let plot = convergence_plot();
    let stem = dir.join("convergence");
    render(&plot, &stem).unwrap();

    let svg = String::from_utf8(read(&dir.join("convergence.svg"))).unwrap();
    let texts = svg_texts(&svg);
    assert!(
        texts.iter().any(|t| t.starts_with("Grammenos et al. 2020")),
        "title missing: {texts:?}"
    );
    assert!(
        texts.iter().any(|t| t == "10⁻⁶"),
        "no 10⁻⁶ tick label: {texts:?}"
    );
    assert!(
        texts.iter().any(|t| t == "10⁰"),
        "no 10⁰ tick label: {texts:?}"
    );
    assert!(
        !texts.iter().any(|t| t.contains("e-") || t.contains("e+")),
        "scientific notation: {texts:?}"
    );
    assert!(
        texts.iter().any(|t| t == "paper: FAPS 42 it"),
        "marker legend entry missing"
    );
    assert!(
        svg.contains("DejaVu Sans"),
        "SVG does not name the embedded font"
    );

    let png = read(&dir.join("convergence.png"));
    let (w, h) = png_size(&png);
    assert!(w >= 1000 && h >= 600, "PNG is {w}x{h}");

    // No temporary files left behind.
    if std::env::var_os("DPCA_PLOT_OUT").is_none() {
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["convergence.png", "convergence.svg"]);
    }
}

#[test]
fn png_is_byte_identical_across_renders() {
    let tmp = tempfile::tempdir().unwrap();
    let plot = convergence_plot();
    render(&plot, &tmp.path().join("a")).unwrap();
    render(&plot, &tmp.path().join("b")).unwrap();
    assert!(
        read(&tmp.path().join("a.png")) == read(&tmp.path().join("b.png")),
        "PNG differs"
    );
    assert!(
        read(&tmp.path().join("a.svg")) == read(&tmp.path().join("b.svg")),
        "SVG differs"
    );
    // Rendering again over existing files replaces them.
    render(&plot, &tmp.path().join("a")).unwrap();
    assert!(read(&tmp.path().join("a.png")) == read(&tmp.path().join("b.png")));
}

#[test]
fn empty_nan_and_single_point_inputs_render() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = out_dir(&tmp);
    let base = LinePlot {
        title: "degenerate input".into(),
        x_label: "rounds".into(),
        y_label: "error".into(),
        log_y: true,
        ..Default::default()
    };
    let nan = Series {
        label: "all NaN".into(),
        points: vec![(f64::NAN, f64::NAN); 5],
        ..Default::default()
    };
    let cases = [
        ("no_series", base.clone()),
        (
            "empty_series",
            LinePlot {
                series: vec![Series {
                    label: "empty".into(),
                    points: vec![],
                    ..Default::default()
                }],
                ..base.clone()
            },
        ),
        (
            "all_nan",
            LinePlot {
                series: vec![nan.clone()],
                ..base.clone()
            },
        ),
        (
            "nonpositive_log",
            LinePlot {
                series: vec![Series {
                    label: "zeros".into(),
                    points: vec![(0.0, 0.0), (1.0, -1.0)],
                    ..Default::default()
                }],
                markers: vec![Marker {
                    label: "paper: nowhere".into(),
                    x: f64::NAN,
                    y: 0.0,
                    ..Default::default()
                }],
                ..base.clone()
            },
        ),
        (
            "single_point",
            LinePlot {
                series: vec![
                    Series {
                        label: "one".into(),
                        points: vec![(3.0, 1e-6)],
                        ..Default::default()
                    },
                    nan,
                ],
                ..base.clone()
            },
        ),
        (
            "single_point_linear",
            LinePlot {
                log_y: false,
                series: vec![Series {
                    label: "one".into(),
                    points: vec![(1e3, 0.5)],
                    ..Default::default()
                }],
                ..base.clone()
            },
        ),
        (
            "gaps_and_inf",
            LinePlot {
                series: vec![Series {
                    label: "broken".into(),
                    style: None,
                    end: None,
                    points: vec![
                        (0.0, 1.0),
                        (1.0, f64::INFINITY),
                        (2.0, 0.1),
                        (3.0, 0.01),
                        (4.0, f64::NAN),
                        (5.0, 1e-3),
                    ],
                }],
                ..base.clone()
            },
        ),
    ];
    for (name, plot) in cases {
        render(&plot, &dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e:#}"));
        assert!(dir.join(format!("{name}.png")).exists(), "{name}.png");
        assert!(dir.join(format!("{name}.svg")).exists(), "{name}.svg");
    }
}

#[test]
fn many_series_linear_axes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = out_dir(&tmp);
    let series = (0..10)
        .map(|i| Series {
            label: format!("method {i}"),
            style: None,
            end: None,
            points: (0..400)
                .map(|t| {
                    (
                        t as f64 * 5.0,
                        1000.0 * (1.0 + i as f64) * (-(t as f64) / 150.0).exp(),
                    )
                })
                .collect(),
        })
        .collect();
    let plot = LinePlot {
        title: "ten series, linear axes".into(),
        x_label: "bytes sent (kB)".into(),
        y_label: "objective gap".into(),
        series,
        ..Default::default()
    };
    render(&plot, &dir.join("linear_many")).unwrap();
    let texts = svg_texts(&String::from_utf8(read(&dir.join("linear_many.svg"))).unwrap());
    for tick in ["0", "500", "1000", "2000", "10k"] {
        assert!(
            texts.iter().any(|t| t == tick),
            "tick {tick} missing: {texts:?}"
        );
    }
}

#[test]
fn bar_charts_render() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = out_dir(&tmp);
    let plot = BarPlot {
        title: "Grammenos et al. 2020 — Table 2: iterations to 10⁻⁶ per problem size".into(),
        x_label: "sweep point".into(),
        y_label: "iterations".into(),
        log_y: false,
        categories: vec![
            "n=500".into(),
            "n=1000".into(),
            "n=2000".into(),
            "n=4000".into(),
        ],
        groups: vec![
            ("FAPS".into(), vec![31.0, 35.0, 42.0, 47.0]),
            ("DSA (η=0.1)".into(), vec![88.0, 97.0, f64::NAN, 131.0]),
            ("centralised power".into(), vec![20.0, 22.0, 25.0]),
        ],
        // No method colours: the palette by position.
        colours: vec![],
    };
    render_bars(&plot, &dir.join("bars")).unwrap();
    let texts = svg_texts(&String::from_utf8(read(&dir.join("bars.svg"))).unwrap());
    for label in ["n=2000", "42", "131", "n/a", "FAPS"] {
        assert!(
            texts.iter().any(|t| t == label),
            "{label} missing: {texts:?}"
        );
    }
    render_bars(
        &BarPlot {
            log_y: true,
            ..plot.clone()
        },
        &dir.join("bars_log"),
    )
    .unwrap();
    let texts = svg_texts(&String::from_utf8(read(&dir.join("bars_log.svg"))).unwrap());
    assert!(texts.iter().any(|t| t == "10²"), "{texts:?}");

    for (name, p) in [
        (
            "bars_empty",
            BarPlot {
                title: "empty".into(),
                ..Default::default()
            },
        ),
        (
            "bars_no_groups",
            BarPlot {
                groups: vec![],
                ..plot.clone()
            },
        ),
        (
            "bars_nan",
            BarPlot {
                log_y: true,
                groups: vec![("x".into(), vec![f64::NAN, 0.0])],
                ..plot.clone()
            },
        ),
    ] {
        render_bars(&p, &dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e:#}"));
        assert!(dir.join(format!("{name}.png")).exists());
    }
}

#[test]
fn noisy_zigzag_lines_render() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = out_dir(&tmp);
    // Deterministic pseudo-noise: a stochastic method whose error jumps every round.
    let mut state = 12345u64;
    let mut noise = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let points = (0..300)
        .map(|t| (t as f64, 0.97f64.powi(t) * (0.05 + 3.0 * noise())))
        .collect();
    let plot = LinePlot {
        title: "noisy stochastic method".into(),
        x_label: "rounds".into(),
        y_label: "error".into(),
        log_y: true,
        series: vec![
            Series {
                label: "SGD-like".into(),
                style: None,
                end: None,
                points,
            },
            Series {
                label: "smooth".into(),
                points: geometric(0.95, 300, 1e-12),
                ..Default::default()
            },
        ],
        ..Default::default()
    };
    render(&plot, &dir.join("noisy")).unwrap();
}

/// Cell annotation as the heat map writes it: one decimal, typographic minus.
fn one_decimal(v: f64) -> String {
    let s = format!("{v:.1}");
    if s == "-0.0" {
        "0.0".into()
    } else {
        s.replace('-', "−")
    }
}

const BOUNDARY: &str = "paper: recovery fails (r ≈ 0.15n, s ≈ 0.2)";

/// A DCF-PCA-like phase transition: log10 relative error over sparsity s = 0.05…0.5 (x) and
/// rank ratio r/n = 0.03…0.3 (y), small where both are small, ≈ 0 past the boundary; two
/// grid points not run.
fn phase_transition() -> HeatMap {
    let s: Vec<f64> = (1..=10).map(|i| 0.05 * i as f64).collect();
    let rho: Vec<f64> = (1..=10).map(|j| 0.03 * j as f64).collect();
    let mut values: Vec<Vec<f64>> = rho
        .iter()
        .map(|&r| {
            s.iter()
                .map(|&s| {
                    let margin = (s / 0.2).max(r / 0.15) - 1.0;
                    -7.3 / (1.0 + (12.0 * margin).exp()) - 0.15
                })
                .collect()
        })
        .collect();
    values[9][9] = f64::NAN;
    values[8][9] = f64::NAN;
    // Cell-index units: the edge between s = 0.2 and 0.25 (columns 3 and 4) is x = 4, the
    // edge between r/n = 0.15 and 0.18 (rows 4 and 5) is y = 5.
    let boundary = Overlay {
        label: BOUNDARY.into(),
        points: vec![(0.0, 5.0), (4.0, 5.0), (4.0, 0.0)],
    };
    HeatMap {
        title: "DCF-PCA — phase transition of robust PCA recovery".into(),
        x_label: "sparsity s".into(),
        y_label: "rank ratio r/n".into(),
        x_ticks: s.iter().map(|v| format!("{v:.2}")).collect(),
        y_ticks: rho.iter().map(|v| format!("{v:.2}")).collect(),
        values,
        colour_label: "log₁₀ relative error".into(),
        overlays: vec![boundary],
    }
}

#[test]
fn heat_map_writes_svg_and_png_with_annotations() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = out_dir(&tmp);
    let plot = phase_transition();
    render_heatmap(&plot, &dir.join("phase")).unwrap();

    let svg = String::from_utf8(read(&dir.join("phase.svg"))).unwrap();
    let texts = svg_texts(&svg);
    for want in [
        "DCF-PCA — phase transition of robust PCA recovery",
        "sparsity s",
        "rank ratio r/n",
        "log₁₀ relative error",
        "0.05",
        "0.30",
        BOUNDARY,
        "not run (NaN)",
    ] {
        assert!(
            texts.iter().any(|t| t == want),
            "{want:?} missing: {texts:?}"
        );
    }
    // Every cell that ran carries its value; the colour bar is labelled with whole numbers.
    for row in &plot.values {
        for v in row.iter().filter(|v| !v.is_nan()) {
            let a = one_decimal(*v);
            assert!(texts.contains(&a), "annotation {a} missing: {texts:?}");
        }
    }
    assert!(
        texts.iter().any(|t| t == "−6"),
        "colour bar tick: {texts:?}"
    );
    assert!(svg.contains("DejaVu Sans"));

    let png = read(&dir.join("phase.png"));
    assert_eq!(png_size(&png), (1200, 800));
}

#[test]
fn heat_map_png_is_byte_identical_across_renders() {
    let tmp = tempfile::tempdir().unwrap();
    let plot = phase_transition();
    render_heatmap(&plot, &tmp.path().join("a")).unwrap();
    render_heatmap(&plot, &tmp.path().join("b")).unwrap();
    assert!(
        read(&tmp.path().join("a.png")) == read(&tmp.path().join("b.png")),
        "PNG differs"
    );
    assert!(
        read(&tmp.path().join("a.svg")) == read(&tmp.path().join("b.svg")),
        "SVG differs"
    );
}

#[test]
fn degenerate_heat_maps_render() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = out_dir(&tmp);
    let base = HeatMap {
        title: "degenerate heat map".into(),
        x_label: "s".into(),
        y_label: "r/n".into(),
        colour_label: "log₁₀ error".into(),
        ..Default::default()
    };
    // Alternating values: the colours span a range, every annotation would be "−4.7" or "−1.3".
    let big: Vec<Vec<f64>> = (0..40)
        .map(|j| {
            (0..60)
                .map(|i| if (i + j) % 2 == 0 { -4.7 } else { -1.3 })
                .collect()
        })
        .collect();
    let cases = [
        (
            "hm_single_cell",
            HeatMap {
                x_ticks: vec!["0.1".into()],
                y_ticks: vec!["0.05".into()],
                values: vec![vec![-3.25]],
                ..base.clone()
            },
        ),
        (
            "hm_all_nan",
            HeatMap {
                x_ticks: vec!["a".into(), "b".into()],
                y_ticks: vec!["c".into()],
                values: vec![vec![f64::NAN, f64::NAN]],
                overlays: vec![Overlay {
                    label: "boundary".into(),
                    points: vec![(0.0, 0.5), (2.0, 0.5)],
                }],
                ..base.clone()
            },
        ),
        ("hm_empty", base.clone()),
        (
            "hm_ragged_and_infinite",
            HeatMap {
                x_ticks: vec!["1".into(), "2".into(), "3".into()],
                y_ticks: vec![],
                values: vec![
                    vec![f64::NEG_INFINITY, -2.0, -1.0],
                    vec![0.5],
                    vec![f64::INFINITY, f64::NAN, 0.0, 9.0],
                ],
                overlays: vec![
                    Overlay {
                        label: "outside".into(),
                        points: vec![(-5.0, -5.0), (-1.0, -2.0)],
                    },
                    Overlay {
                        label: "crosses and breaks".into(),
                        points: vec![
                            (-1.0, 1.5),
                            (5.0, 1.5),
                            (f64::NAN, 0.0),
                            (1.0, 0.0),
                            (1.0, 9.0),
                        ],
                    },
                    Overlay {
                        label: "one point".into(),
                        points: vec![(1.0, 1.0)],
                    },
                ],
                ..base.clone()
            },
        ),
        (
            "hm_large_grid",
            HeatMap {
                x_ticks: (0..60)
                    .map(|i| format!("{:.3}", 0.001 * i as f64))
                    .collect(),
                y_ticks: (0..40).map(|j| format!("{:.2}", 0.01 * j as f64)).collect(),
                values: big,
                ..base.clone()
            },
        ),
    ];
    for (name, plot) in cases {
        render_heatmap(&plot, &dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e:#}"));
        assert!(dir.join(format!("{name}.png")).exists(), "{name}.png");
        assert!(dir.join(format!("{name}.svg")).exists(), "{name}.svg");
    }
    let texts =
        |name: &str| svg_texts(&String::from_utf8(read(&dir.join(format!("{name}.svg")))).unwrap());
    // A single cell is large: annotated.
    assert!(texts("hm_single_cell").iter().any(|t| t == "−3.2"));
    // NaN cells are explained, overlays that miss the grid say so.
    assert!(texts("hm_all_nan").iter().any(|t| t == "not run (NaN)"));
    let ragged = texts("hm_ragged_and_infinite");
    for want in [
        "0.0",
        "−∞",
        "∞",
        "outside (not drawable)",
        "crosses and breaks",
        "one point (not drawable)",
    ] {
        assert!(
            ragged.iter().any(|t| t == want),
            "{want:?} missing: {ragged:?}"
        );
    }
    // 60×40 cells are too small for annotations, and the tick labels are thinned out.
    let large = texts("hm_large_grid");
    assert!(!large.iter().any(|t| t == "−4.7"), "{large:?}");
    assert!(large.iter().any(|t| t == "0.000") && !large.iter().any(|t| t == "0.001"));
}
