//! dpca-bench: reproduce and extend experiments of distributed and federated PCA papers.
//!
//! Path of every number: manifest ([`manifest`]) → data ([`data`]) → clients and network
//! ([`fed`]) → method ([`methods`]) → run loop and observer ([`run`]) with metrics against an
//! exact reference ([`problem`]) → CSV, figures and report ([`report`]), the figures drawn by
//! [`plot`].

pub mod attack;
pub mod data;
pub mod fed;
pub mod linalg;
pub mod manifest;
pub mod methods;
pub mod plot;
pub mod problem;
pub mod report;
pub mod run;
pub mod seed;
pub mod util;
