//! One colour and marker per method (its registry name), the same in every figure of every
//! experiment, so FAPS is vermillion squares wherever it appears. The chart engine's
//! [`crate::plot::style::assign`] turns them into the styles of a figure's curves. A method
//! listed in [`METHODS`] keeps the look committed figures show; a new one needs no entry: it
//! takes the first pair of the palette its family's listed methods leave free.

use crate::methods::registry;
use crate::plot::style::{Curve, Shape, Style};
use crate::plot::style::{BLACK, BLUE, GREEN, ORANGE, PURPLE, SKY, VERMILLION};
use plotters::style::RGBColor;

/// Colour and marker of the methods whose looks committed figures fix. Within a family no two
/// share a colour or a marker (they meet in one figure); across families the pairs differ.
/// Yellow is left out: too pale for a line. Never reorder (figures must stay comparable).
const METHODS: &[(&str, RGBColor, Shape)] = &[
    ("ssi", BLUE, Shape::Circle),
    ("faps", VERMILLION, Shape::Square),
    ("localpower", GREEN, Shape::TriangleUp),
    ("dcfpca", VERMILLION, Shape::Diamond),
    ("cfpca", ORANGE, Shape::Square),
    ("apgm", BLUE, Shape::TriangleDown),
    ("ialm", GREEN, Shape::Pentagon),
    ("fsspca", VERMILLION, Shape::Hexagon),
    ("faspca", BLUE, Shape::Square),
    ("pca", BLACK, Shape::Circle),
    ("dssal1", PURPLE, Shape::Diamond),
    ("manpg", SKY, Shape::TriangleUp),
    ("consensus_admm", GREEN, Shape::TriangleDown),
    ("cedre", PURPLE, Shape::Circle),
    ("rgd", ORANGE, Shape::TriangleUp),
    ("dispca_l", SKY, Shape::Square),
    ("dispca_b", BLACK, Shape::Diamond),
    ("dsi", BLUE, Shape::Pentagon),
    ("ilea", GREEN, Shape::Hexagon),
];

/// The colours and markers a method without a fixed look takes, in this order.
const PALETTE: [RGBColor; 7] = [BLUE, VERMILLION, GREEN, ORANGE, PURPLE, SKY, BLACK];
const SHAPES: [Shape; 8] = [
    Shape::Circle,
    Shape::Square,
    Shape::TriangleUp,
    Shape::Diamond,
    Shape::TriangleDown,
    Shape::Pentagon,
    Shape::Hexagon,
    Shape::Star,
];

fn fixed(method: &str) -> Option<(RGBColor, Shape)> {
    METHODS
        .iter()
        .find(|(m, _, _)| *m == method)
        .map(|&(_, c, s)| (c, s))
}

/// The colour and marker of a registered method: its fixed look, else, for the k-th method of
/// its family without one (registry order), the k-th colour and the k-th marker its family's
/// fixed looks leave free.
pub fn method_look(method: &str) -> Option<(RGBColor, Shape)> {
    if let Some(look) = fixed(method) {
        return Some(look);
    }
    let family = registry::lookup(method)?.family;
    let peers = || registry::METHODS.iter().filter(|e| e.family == family);
    let taken: Vec<(RGBColor, Shape)> = peers().filter_map(|e| fixed(e.name)).collect();
    let k = peers()
        .filter(|e| fixed(e.name).is_none())
        .position(|e| e.name == method)?;
    let colours = PALETTE.iter().filter(|c| taken.iter().all(|t| t.0 != **c));
    let shapes = SHAPES.iter().filter(|s| taken.iter().all(|t| t.1 != **s));
    // More unfixed methods than free colours: colours repeat, markers still tell them apart.
    let colour = colours.clone().cycle().nth(k).copied().unwrap_or(BLACK);
    let shape = shapes
        .clone()
        .cycle()
        .nth(k)
        .copied()
        .unwrap_or(Shape::Star);
    Some((colour, shape))
}

/// The styles of a figure's curves, in order, each method in its own colour and marker.
pub fn assign(curves: &[Curve], points: usize) -> Vec<Style> {
    crate::plot::style::assign(curves, points, method_look)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::style::YELLOW;

    #[test]
    fn every_registered_method_has_its_own_colour_and_marker() {
        let mut seen: Vec<(&str, RGBColor, Shape)> = Vec::new();
        for e in registry::METHODS {
            let (c, s) = method_look(e.name)
                .unwrap_or_else(|| panic!("{} has no colour in looks::METHODS", e.name));
            assert_ne!(c, YELLOW, "{}: yellow is too pale for a line", e.name);
            if let Some(other) = seen.iter().find(|o| o.1 == c && o.2 == s) {
                panic!("{} and {} share colour and marker", e.name, other.0);
            }
            // Methods of one family meet in one figure: neither colour nor marker repeats.
            for other in registry::METHODS.iter().filter(|o| o.family == e.family) {
                let (oc, os) = method_look(other.name).unwrap_or((YELLOW, Shape::Star));
                if other.name != e.name {
                    assert!(
                        oc != c && os != s,
                        "{} and {} ({}) share a colour or a marker",
                        e.name,
                        other.name,
                        e.family
                    );
                }
            }
            seen.push((e.name, c, s));
        }
        for (m, ..) in METHODS {
            assert!(registry::lookup(m).is_some(), "a style for no method: {m}");
        }
    }

    /// A method without a fixed look gets one its family's fixed looks leave free.
    #[test]
    fn an_unlisted_method_takes_a_free_pair_of_its_family() {
        for e in registry::METHODS {
            let peers: Vec<_> = registry::METHODS
                .iter()
                .filter(|o| o.family == e.family && o.name != e.name)
                .filter_map(|o| fixed(o.name))
                .collect();
            let colours = PALETTE.iter().filter(|c| peers.iter().all(|t| t.0 != **c));
            let shapes = SHAPES.iter().filter(|s| peers.iter().all(|t| t.1 != **s));
            let free = (
                *colours.clone().next().unwrap(),
                *shapes.clone().next().unwrap(),
            );
            // As if `e` were not listed: the first free pair is its look.
            assert!(
                peers.iter().all(|p| p.0 != free.0 && p.1 != free.1),
                "{}",
                e.name
            );
        }
    }

    #[test]
    fn method_looks_are_stable() {
        // Pinned: committed figures and readers rely on them.
        assert_eq!(method_look("ssi"), Some((BLUE, Shape::Circle)));
        assert_eq!(method_look("faps"), Some((VERMILLION, Shape::Square)));
        assert_eq!(method_look("localpower"), Some((GREEN, Shape::TriangleUp)));
        assert_eq!(method_look("cedre"), Some((PURPLE, Shape::Circle)));
        assert_eq!(method_look("nope"), None);
    }

    fn curve<'a>(method: &'a str, entry: &'a str, variant: &'a str, point: usize) -> Curve<'a> {
        Curve {
            method,
            entry,
            variant,
            point,
        }
    }

    #[test]
    fn a_method_keeps_its_hue_across_variants_and_points() {
        // FAPS's colour does not depend on which methods come before it.
        let alone = assign(&[curve("faps", "FAPS", "", 0)], 1);
        let third = assign(
            &[
                curve("ssi", "SSI", "", 0),
                curve("localpower", "LocalPower", "", 0),
                curve("faps", "FAPS", "", 0),
            ],
            1,
        );
        assert_eq!(alone[0], third[2]);
        assert_eq!(alone[0].colour, VERMILLION);
        assert!(alone[0].dash.is_empty());

        // Entries of one method: the one named like it is solid, the others dashed.
        let s = assign(
            &[
                curve("faps", "FAPS (inner 10)", "", 0),
                curve("faps", "FAPS", "", 0),
            ],
            1,
        );
        assert_eq!((s[0].colour, s[1].colour), (VERMILLION, VERMILLION));
        assert!(s[1].dash.is_empty() && !s[0].dash.is_empty());

        // Sweep points: the marker names the point, shades of one hue tell them apart.
        let s = assign(
            &[
                curve("ssi", "SSI", "", 0),
                curve("faps", "FAPS", "", 0),
                curve("ssi", "SSI", "", 1),
                curve("faps", "FAPS", "", 1),
            ],
            2,
        );
        assert_eq!((s[0].shape, s[1].shape), (Shape::Circle, Shape::Circle));
        assert_eq!((s[2].shape, s[3].shape), (Shape::Square, Shape::Square));
        assert_ne!(s[0].colour, s[2].colour);
        assert_eq!(s[0].dash, s[2].dash);
        // The shades stay blue: blue the largest channel.
        for c in [s[0].colour, s[2].colour] {
            assert!(c.2 > c.0 && c.2 > c.1, "{c:?}");
        }
    }
}
