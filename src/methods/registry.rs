//! Method names → builders. A new method is a new file plus one entry here.

use super::{faps, localpower, ssi, Method, Setup};
use serde::de::DeserializeOwned;

/// Whether a method can run yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Ready,
    /// Named by a paper's experiments but not implemented yet; the text says where it is tracked.
    Planned(&'static str),
}

pub struct Entry {
    pub name: &'static str,
    pub about: &'static str,
    pub status: Status,
}

pub const METHODS: &[Entry] = &[
    Entry {
        name: "ssi",
        about: "federated subspace iteration (FAPS eq. 2)",
        status: Status::Ready,
    },
    Entry {
        name: "faps",
        about: "FAPS, Algorithm 1 of Wang, Liu, Zhang",
        status: Status::Ready,
    },
    Entry {
        name: "localpower",
        about: "LocalPower (Li, Wang, Chen, Zhang, ICML 2021), Procrustes-aligned, decaying q",
        status: Status::Ready,
    },
    Entry {
        name: "cedre",
        about: "CEDRE (Huang, Pan, ICML 2020), leading eigenvector",
        status: Status::Planned("not implemented yet (CEDRE paper issue)"),
    },
    Entry {
        name: "dssal1",
        about: "DSSAL1 (Wang, Liu, Zhang, COAP 2023), sparse PCA",
        status: Status::Planned("not implemented yet (DSSAL1 paper issue)"),
    },
    Entry {
        name: "fsspca",
        about: "FSSPCA (Ciou, Chen, Tseng, Lee), federated sparse PCA",
        status: Status::Planned("not implemented yet (sparse-PCA paper issue)"),
    },
    Entry {
        name: "dcfpca",
        about: "DCF-PCA (Chu), distributed robust PCA",
        status: Status::Planned("not implemented yet (robust-PCA paper issue)"),
    },
];

pub fn lookup(name: &str) -> Option<&'static Entry> {
    METHODS.iter().find(|e| e.name == name)
}

/// A parameter problem: the key inside `params` and what was wrong.
#[derive(Debug)]
pub struct ParamError {
    pub key: String,
    pub msg: String,
}

fn parse<T: DeserializeOwned>(params: &toml::Table) -> Result<T, ParamError> {
    serde_path_to_error::deserialize(toml::Value::Table(params.clone())).map_err(|e| ParamError {
        key: e.path().to_string(),
        msg: e.into_inner().to_string(),
    })
}

fn faps_params(params: &toml::Table) -> Result<faps::Params, ParamError> {
    let p: faps::Params = parse(params)?;
    p.check().map_err(|(key, msg)| ParamError {
        key: key.into(),
        msg,
    })?;
    Ok(p)
}

fn localpower_params(params: &toml::Table) -> Result<localpower::Params, ParamError> {
    let p: localpower::Params = parse(params)?;
    p.check().map_err(|(key, msg)| ParamError {
        key: key.into(),
        msg,
    })?;
    Ok(p)
}

/// Check a method's name and parameters before any data is built; returns every parameter
/// the method will use, defaults included (so a changed default changes the run's fingerprint).
pub fn check(name: &str, params: &toml::Table) -> Result<serde_json::Value, ParamError> {
    let json = |v: serde_json::Result<serde_json::Value>| v.expect("parameters serialise");
    match name {
        "ssi" => no_params(params).map(|_| serde_json::Value::Null),
        name if lookup(name).is_some_and(|e| e.status != Status::Ready) => {
            no_params(params).map(|_| serde_json::Value::Null)
        }
        "localpower" => localpower_params(params).map(|p| json(serde_json::to_value(p))),
        "faps" => faps_params(params).map(|p| json(serde_json::to_value(p))),
        _ => Err(ParamError {
            key: "name".into(),
            msg: format!(
                "unknown method `{name}`; known: {}",
                METHODS
                    .iter()
                    .map(|e| e.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }),
    }
}

fn no_params(params: &toml::Table) -> Result<(), ParamError> {
    match params.keys().next() {
        Some(k) => Err(ParamError {
            key: k.clone(),
            msg: "this method takes no parameters".into(),
        }),
        None => Ok(()),
    }
}

/// Build a ready method; `check` must have passed.
pub fn build<'a>(
    name: &str,
    params: &toml::Table,
    setup: Setup<'a>,
) -> anyhow::Result<Box<dyn Method + 'a>> {
    let err = |e: ParamError| anyhow::anyhow!("method {name}: params.{}: {}", e.key, e.msg);
    Ok(match name {
        "ssi" => Box::new(ssi::Ssi::new(setup)),
        "faps" => Box::new(faps::Faps::new(setup, faps_params(params).map_err(err)?)),
        "localpower" => Box::new(localpower::LocalPower::new(
            setup,
            localpower_params(params).map_err(err)?,
        )),
        other => anyhow::bail!(
            "method `{other}` cannot be built: {:?}",
            lookup(other).map(|e| e.status)
        ),
    })
}
