//! dpca-bench: reproduce and extend experiments of distributed and federated PCA papers.
//!
//! Path of every number: manifest ([`spec`], loaded and checked by [`plan`]) → data ([`data`])
//! → clients and network ([`fed`]) → method ([`methods`]) → run loop and observer ([`run`]) with
//! metrics against an exact reference ([`problem`]) → CSV, figures ([`plot`] draws them) and
//! report ([`report`]). Modules import only downwards; ARCHITECTURE.md draws the floors.

pub mod attack;
pub mod data;
pub mod fed;
pub mod linalg;
pub mod methods;
pub mod plan;
pub mod plot;
pub mod problem;
pub mod progress;
pub mod report;
pub mod run;
pub mod seed;
pub mod spec;
pub mod util;
