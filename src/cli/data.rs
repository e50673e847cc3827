//! `dpca data`: list, fetch and verify the datasets.

use anyhow::Result;
use std::path::Path;

use super::args::DataAction;

pub fn data(action: DataAction, dir: &Path) -> Result<()> {
    use dpca_bench::data::{datasets, fetch};
    match action {
        DataAction::List => print!("{}", fetch::list_text(dir)),
        DataAction::Fetch { name } => {
            let ds = datasets::find(&name)?;
            fetch::fetch(dir, ds, &|line| eprintln!("{line}"))?;
        }
        DataAction::Verify { name } => {
            let ds = datasets::find(&name)?;
            // Absence is reported, not an error: nothing is wrong with what is on disk.
            match fetch::verify(dir, ds)? {
                Some(f) => println!(
                    "{}: {} files verified by SHA-256 in {}",
                    ds.name,
                    f.names.len(),
                    f.dir.display()
                ),
                None => println!("{}", fetch::absent_message(dir, ds)),
            }
        }
    }
    Ok(())
}
