//! Refusing, before anything is generated, a point whose data and reference cannot fit the
//! memory budget ([`util::memory`](crate::util::memory)): an allocation that size would abort
//! the process or drive the machine into swap. A manifest's n (or a LIBSVM file's largest
//! feature index) may ask for terabytes.

use super::Options;
use crate::data::matrix::reference_bytes;
use crate::spec::{Experiment, Point};
use crate::util::memory::gib;
use anyhow::Result;

/// Whether the point's data is read as sparse samples.
fn sparse_data(point: &Point) -> bool {
    use crate::spec::{FileFormat, Gen};
    match &point.data.gen {
        Gen::Dataset(d) => crate::data::datasets::find(&d.dataset)
            .is_ok_and(|d| matches!(d.format, crate::data::datasets::Format::Libsvm { .. })),
        Gen::File(f) => crate::data::own::file_format(f) == Some(FileFormat::Libsvm),
        _ => false,
    }
}

/// Bytes a point needs at the least: its n×m data matrix (sparse samples, a LIBSVM dataset or
/// file such as rcv1, are never made dense: their 12 bytes per non-zero were checked as they
/// were read) and the reference's working memory.
fn min_bytes(point: &Point) -> (u128, u128) {
    let (n, m) = (point.data.n as u128, point.data.m as u128);
    let data = if sparse_data(point) { 0 } else { 8 * n * m };
    (data, reference_bytes(point.data.n, point.problem.p))
}

/// Refuse the first point of `exp` that does not fit, naming `data.n` and the sweep point.
pub(super) fn check(exp: &Experiment, opts: &Options) -> Result<()> {
    if !opts.memory_check {
        return Ok(());
    }
    for pt in &exp.points {
        let (data, reference) = min_bytes(pt);
        let Err(tail) = crate::util::memory::check(data + reference) else {
            continue;
        };
        let at = if pt.label.is_empty() {
            String::new()
        } else {
            format!(" (sweep point {})", pt.label)
        };
        return Err(exp
            .error_at(
                "data.n",
                format!(
                    "n = {}, m = {}, p = {}{at}: the data ({}) and the reference's working \
                     memory ({}) need {tail}",
                    pt.data.n,
                    pt.data.m,
                    pt.problem.p,
                    gib(data),
                    gib(reference)
                ),
            )
            .into());
    }
    Ok(())
}
