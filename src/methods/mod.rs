//! Methods, one file per method named after its paper's name for it, built by name through
//! [`registry`].
//!
//! A method is a server and its clients. The runner builds each client from its own data block
//! and seed only ([`Method::client`]), builds the server with no data at all
//! ([`Method::server`]), and hands the server the network: so a method cannot read another
//! client's data, and everything that crosses the network is counted. One [`Server::step`] is
//! one outer iteration (one or more rounds).

pub mod eigvec;
pub mod params_doc;
pub mod registry;
pub mod robust;
pub mod sparse;
pub mod subspace;

use crate::data::matrix::Block;
use crate::fed::{Client, Message, Network, Shape};
use crate::spec::Kind;
use anyhow::Result;
use schemars::JsonSchema;
use serde::{de::DeserializeOwned, Deserialize, Serialize};

/// What one outer iteration reports besides its messages (which the network counts).
#[derive(Clone, Debug, Default)]
pub struct StepInfo {
    /// The objective at the iterate broadcast this step, as the server learned it through the
    /// protocol (the stop rule `objective_tol`, FAPS (27), uses it). None if it cannot know it.
    pub objective: Option<f64>,
    /// The method's own stopping criterion holds (DCF-PCA's relative change of U, APGM's and
    /// IALM's residuals); the runner stops on it when the manifest says `own_criterion = true`.
    pub converged: bool,
    /// Nothing more to do (one-shot methods): the runner always stops.
    pub done: bool,
}

/// The server side of a method.
pub trait Server: Send {
    fn step(&mut self, net: &mut dyn Network) -> Result<StepInfo>;
    /// The server-held parts of the estimate (e.g. the subspace basis `z`), for the observer.
    fn estimate(&self) -> Message;
    /// Values the method chose while running that a reader needs to judge the run (a searched
    /// step size, a shift): recorded with the run and listed in the report.
    fn chosen(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
}

/// What the server starts from: the common start the family defines (public: derived from the
/// run's seed, like a seed shared by all parties), the method's seed, and the client sizes.
pub struct ServerSetup<'s> {
    pub start: &'s Message,
    pub seed: u64,
    pub sizes: &'s [usize],
}

/// What client `index` starts from: its own block, the common start, the method's seed and
/// every client's sample count (public, as the partition is).
pub struct ClientSetup<'a, 's> {
    pub index: usize,
    pub block: Block<'a>,
    pub sizes: &'s [usize],
    pub start: &'s Message,
    pub seed: u64,
}

/// A method's parameters: every one settable in a manifest's `params`, with defaults. Each
/// field's doc comment is its meaning, one line: `dpca methods NAME` prints it with the type
/// and default ([`params_doc`]), and a test checks every field has one.
pub trait Params: Serialize + DeserializeOwned + Default + JsonSchema {
    /// Reject values no run could use: (parameter, what is wrong).
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        Ok(())
    }
}

/// For methods without parameters.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

impl Params for NoParams {}

/// A method: who it is, its parameter type and how its server and each client are built.
/// [`registry::METHODS`] lists each with one line, reading everything else from here.
pub trait Method {
    /// The name a manifest gives it (`[[methods]] name = "..."`).
    const NAME: &'static str;
    /// The paper (or section) that defines it.
    const PAPER: &'static str;
    /// The problem family it solves.
    const FAMILY: Kind;
    /// One line on what it is.
    const ABOUT: &'static str;
    /// Runs on one client holding all the data; its rounds are iterations.
    const CENTRALISED: bool = false;
    /// Solves DSSAL1's model, so its manifests need `[problem] mu`.
    const NEEDS_MU: bool = false;
    /// What its transcript reveals to the server, for the leakage attack.
    const TRANSCRIPT: Shape = Shape::Opaque;
    type Params: Params;
    fn server(params: &Self::Params, setup: ServerSetup) -> Result<Box<dyn Server>>;
    fn client<'a>(
        params: &Self::Params,
        setup: ClientSetup<'a, '_>,
    ) -> Result<Box<dyn Client + 'a>>;
}
