//! Method names → builders. A new method is a new file (a type implementing [`Method`], its
//! name, paper and family among its constants) plus one line in [`METHODS`].

use super::eigvec::{cedre, dispca_b, dispca_l, dsi, ilea, rgd};
use super::robust::{apgm, dcfpca, ialm};
use super::sparse::{consensus_admm, dssal1, faspca, fsspca, manpg, pca};
use super::subspace::{faps, localpower, ssi};
use super::StepInfo;
use super::{params_doc, ClientSetup, Method, Params, Server, ServerSetup};
use crate::data::matrix::Block;
use crate::fed::{Client, LocalNetwork, Message, Shape};
use crate::spec::Kind;
use anyhow::{Context, Result};

/// A registered method.
pub struct Entry {
    pub name: &'static str,
    /// The paper (or section) that defines it.
    pub paper: &'static str,
    pub family: Kind,
    pub about: &'static str,
    /// Runs on one client holding all the data; its rounds are iterations.
    pub centralised: bool,
    /// Needs `[problem] mu` (solves DSSAL1's model).
    pub needs_mu: bool,
    /// What its transcript reveals to the server, for the leakage attack.
    pub transcript: Shape,
    /// Check a manifest's `params`; the resolved parameters, defaults included.
    pub check: fn(&toml::Table) -> std::result::Result<serde_json::Value, ParamError>,
    /// Its parameters as its `Params` type declares them: names, types, meanings.
    pub param_docs: fn() -> Vec<params_doc::ParamDoc>,
    pub server: ServerBuilder,
    pub clients: ClientsBuilder,
}

/// Builds the server from resolved parameters and every client's sample count (no data).
pub type ServerBuilder = fn(&serde_json::Value, Start<'_>, &[usize]) -> Result<Box<dyn Server>>;

/// Builds clients from resolved parameters, every client's sample count, and the (client index,
/// block) pairs to build: all of them, or one MPI rank's share.
pub type ClientsBuilder = for<'a> fn(
    &serde_json::Value,
    Start<'_>,
    &[usize],
    Vec<(usize, Block<'a>)>,
) -> Result<Vec<Box<dyn Client + 'a>>>;

/// What every party starts from.
#[derive(Clone, Copy)]
pub struct Start<'s> {
    pub start: &'s Message,
    pub seed: u64,
}

const fn entry<M: Method>() -> Entry {
    Entry {
        name: M::NAME,
        paper: M::PAPER,
        family: M::FAMILY,
        about: M::ABOUT,
        centralised: M::CENTRALISED,
        needs_mu: M::NEEDS_MU,
        transcript: M::TRANSCRIPT,
        check: check::<M::Params>,
        param_docs: params_doc::declared::<M::Params>,
        server: server::<M>,
        clients: clients::<M>,
    }
}

pub const METHODS: &[Entry] = &[
    entry::<ssi::Ssi>(),
    entry::<faps::Faps>(),
    entry::<localpower::LocalPower>(),
    entry::<dcfpca::DcfPca>(),
    entry::<dcfpca::CfPca>(),
    entry::<apgm::Apgm>(),
    entry::<ialm::Ialm>(),
    entry::<fsspca::Fsspca>(),
    entry::<faspca::Faspca>(),
    entry::<cedre::Cedre>(),
    entry::<rgd::Rgd>(),
    entry::<dispca_l::DisPcaL>(),
    entry::<dispca_b::DisPcaB>(),
    entry::<dsi::Dsi>(),
    entry::<ilea::Ilea>(),
    entry::<pca::Pca>(),
    entry::<dssal1::Dssal1>(),
    entry::<manpg::Manpg>(),
    entry::<consensus_admm::ConsensusAdmm>(),
];

/// Named by a paper's experiments but not implemented yet, with the issue that tracks each.
pub const PLANNED: &[(&str, &str)] = &[];

impl Entry {
    /// The clients it runs on given the partition's: one holding all the data when centralised.
    pub fn client_sizes(&self, sizes: &[usize]) -> Vec<usize> {
        if self.centralised {
            vec![sizes.iter().sum()]
        } else {
            sizes.to_vec()
        }
    }
}

pub fn lookup(name: &str) -> Option<&'static Entry> {
    METHODS.iter().find(|e| e.name == name)
}

/// Why a method name is not runnable: planned (with where it is tracked) or unknown.
pub fn unknown(name: &str) -> String {
    match PLANNED.iter().find(|(n, _)| *n == name) {
        Some((_, about)) => format!("`{name}` is not implemented yet: {about}"),
        None => {
            let close = closest(name).into_iter().next();
            let hint = close.map_or(String::new(), |n| format!(" (did you mean `{n}`?)"));
            format!(
                "unknown method `{name}`{hint}; known: {}",
                METHODS
                    .iter()
                    .map(|e| e.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    }
}

/// The registered method names nearest `name`, nearest first: within a few edits (ignoring
/// case, `-` and `_`), or containing it, or contained in it. Empty when none is near.
pub fn closest(name: &str) -> Vec<&'static str> {
    let norm = |s: &str| -> Vec<char> {
        s.chars()
            .filter(|c| *c != '-' && *c != '_' && !c.is_whitespace())
            .flat_map(char::to_lowercase)
            .collect()
    };
    let want = norm(name);
    let text = |c: &[char]| c.iter().collect::<String>();
    let mut near: Vec<(usize, &'static str)> = METHODS
        .iter()
        .filter_map(|e| {
            let have = norm(e.name);
            let d = edit_distance(&want, &have);
            let (w, h) = (text(&want), text(&have));
            let inside = want.len() >= 3 && (h.contains(&w) || w.contains(&h));
            (d <= (want.len() / 3).max(1) || inside).then_some((d, e.name))
        })
        .collect();
    near.sort();
    near.into_iter().map(|(_, n)| n).collect()
}

/// Levenshtein distance.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diag + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

pub fn is_planned(name: &str) -> bool {
    PLANNED.iter().any(|(n, _)| *n == name)
}

/// A parameter problem: the key inside `params` and what was wrong.
#[derive(Debug)]
pub struct ParamError {
    pub key: String,
    pub msg: String,
}

/// The largest value any integer parameter (an iteration count, a number of steps or sketches)
/// may take: beyond it a run would not end in any useful time.
pub const MAX_COUNT: i64 = 1_000_000;

/// Checks every method's parameters share: floats finite (∞ or NaN as a penalty or tolerance
/// only turns a run into NaN), integers at most [`MAX_COUNT`].
fn check_values(params: &toml::Table, prefix: &str) -> std::result::Result<(), ParamError> {
    for (key, value) in params {
        let key = format!("{prefix}{key}");
        match value {
            toml::Value::Float(v) if !v.is_finite() => {
                return Err(ParamError {
                    key,
                    msg: format!("{v} is not a finite number"),
                })
            }
            toml::Value::Integer(v) if *v > MAX_COUNT => {
                return Err(ParamError {
                    key,
                    msg: format!(
                    "{v} exceeds {MAX_COUNT}, the cap on any count: a run this long would not end"
                ),
                })
            }
            toml::Value::Table(t) => check_values(t, &format!("{key}."))?,
            _ => {}
        }
    }
    Ok(())
}

fn check<P: Params>(params: &toml::Table) -> std::result::Result<serde_json::Value, ParamError> {
    check_values(params, "")?;
    let p: P =
        serde_path_to_error::deserialize(toml::Value::Table(params.clone())).map_err(|e| {
            ParamError {
                key: e.path().to_string(),
                msg: e.into_inner().to_string(),
            }
        })?;
    p.check().map_err(|(key, msg)| ParamError {
        key: key.into(),
        msg,
    })?;
    Ok(serde_json::to_value(p).expect("parameters serialise to JSON"))
}

fn parse_params<M: Method>(params: &serde_json::Value) -> Result<M::Params> {
    serde_json::from_value(params.clone()).context("resolved parameters")
}

fn server<M: Method>(
    params: &serde_json::Value,
    start: Start<'_>,
    sizes: &[usize],
) -> Result<Box<dyn Server>> {
    M::server(
        &parse_params::<M>(params)?,
        ServerSetup {
            start: start.start,
            seed: start.seed,
            sizes,
        },
    )
}

fn clients<'a, M: Method>(
    params: &serde_json::Value,
    start: Start<'_>,
    sizes: &[usize],
    blocks: Vec<(usize, Block<'a>)>,
) -> Result<Vec<Box<dyn Client + 'a>>> {
    let params = parse_params::<M>(params)?;
    // Each client sees its own block only.
    blocks
        .into_iter()
        .map(|(index, block)| {
            M::client(
                &params,
                ClientSetup {
                    index,
                    block,
                    sizes,
                    start: start.start,
                    seed: start.seed,
                },
            )
        })
        .collect()
}

/// A method ready to run: its server and the network of its clients, as the runner drives it.
pub struct Running<'a> {
    pub server: Box<dyn Server>,
    pub net: LocalNetwork<'a>,
}

impl<'a> Running<'a> {
    /// Build from resolved parameters; `dim` is the length of the vectors exchanged.
    pub fn new(
        entry: &Entry,
        resolved: &serde_json::Value,
        start: Start<'_>,
        blocks: Vec<Block<'a>>,
        dim: usize,
    ) -> Result<Self> {
        let sizes: Vec<usize> = blocks.iter().map(|b| b.samples()).collect();
        let server = (entry.server)(resolved, start, &sizes)?;
        let clients = (entry.clients)(
            resolved,
            start,
            &sizes,
            blocks.into_iter().enumerate().collect(),
        )?;
        Ok(Self {
            server,
            net: LocalNetwork::new(clients, sizes, dim),
        })
    }

    /// Build by name from manifest-style parameters (for tests and benchmarks).
    pub fn named(
        name: &str,
        params: &toml::Table,
        start: &Message,
        seed: u64,
        blocks: Vec<Block<'a>>,
        dim: usize,
    ) -> Result<Self> {
        let entry = lookup(name).ok_or_else(|| anyhow::anyhow!(unknown(name)))?;
        let resolved = (entry.check)(params)
            .map_err(|e| anyhow::anyhow!("{name}: params.{}: {}", e.key, e.msg))?;
        Self::new(entry, &resolved, Start { start, seed }, blocks, dim)
    }

    /// One outer iteration of the method.
    pub fn step(&mut self) -> Result<StepInfo> {
        self.server.step(&mut self.net)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_names_forgive_case_separators_and_small_typos() {
        assert_eq!(closest("fap"), ["faps"]);
        assert_eq!(closest("DCF-PCA")[0], "dcfpca");
        assert_eq!(closest("admm"), ["consensus_admm"]);
        assert!(closest("dispca").starts_with(&["dispca_b", "dispca_l"]));
        assert!(closest("zzzzzz").is_empty());
    }
}
