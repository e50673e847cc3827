//! PCA, the sparse family's dense baseline (the federated sparse PCA paper's Table 1 row "PCA"):
//! one client holding all the data computes the top-r eigenvectors of XXᵀ with LAPACK's dsyevd
//! and sends them; one round, then done.

use crate::fed::{Client, Message, Network};
use crate::linalg::sym_eig_desc;
use crate::methods::{ClientSetup, Method, NoParams, Server, ServerSetup, StepInfo};
use crate::spec::Kind;
use anyhow::{anyhow, Context, Result};
use ndarray::{s, Array2};

#[derive(Debug)]
pub struct Pca;

impl Method for Pca {
    const NAME: &'static str = "pca";
    const PAPER: &'static str = "dense PCA (the sparse PCA paper's Table 1 baseline)";
    const FAMILY: Kind = Kind::Sparse;
    const ABOUT: &'static str =
        "PCA by dsyevd on one client: the dense loadings sparse methods are measured against";
    const CENTRALISED: bool = true;
    type Params = NoParams;

    fn server(_: &NoParams, setup: ServerSetup) -> Result<Box<dyn Server>> {
        Ok(Box::new(PcaServer {
            z: Array2::zeros(setup.start.get("z")?.dim()),
        }))
    }

    fn client<'a>(_: &NoParams, setup: ClientSetup<'a, '_>) -> Result<Box<dyn Client + 'a>> {
        Ok(Box::new(PcaClient {
            block: setup.block,
            r: setup.start.get("z")?.ncols(),
        }))
    }
}

struct PcaClient<'a> {
    block: crate::data::matrix::Block<'a>,
    r: usize,
}

impl Client for PcaClient<'_> {
    fn respond(&mut self, _: &Message) -> Result<Message> {
        let eig = sym_eig_desc(self.block.gram().view()).context("PCA: dsyevd of XXᵀ")?;
        Ok(Message::new().with("z", eig.vectors.slice(s![.., ..self.r]).to_owned()))
    }

    fn reveal(&self) -> Message {
        Message::new()
    }
}

struct PcaServer {
    z: Array2<f64>,
}

impl Server for PcaServer {
    fn step(&mut self, net: &mut dyn Network) -> Result<StepInfo> {
        let replies = net.round(&Message::new())?;
        let first = replies
            .first()
            .ok_or_else(|| anyhow!("PCA needs its one client"))?;
        self.z = first.get("z")?.clone();
        Ok(StepInfo {
            objective: None,
            converged: true,
            done: true,
        })
    }

    fn estimate(&self) -> Message {
        Message::new().with("z", self.z.clone())
    }
}
