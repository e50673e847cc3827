//! Federated subspace iteration (SSI), the baseline of FAPS (its eq. (2)).
//!
//! Each round the server broadcasts Z; client i sends Y_i = A_iA_iᵀZ; the server sets
//! Z ← orth(Σ_i Y_i). The objective f(Z) = tr(Zᵀ Σ_i Y_i) comes for free at the server.

use crate::data::matrix::Block;
use crate::fed::{sum_part, Client, Message, Network, Shape};
use crate::linalg::orth;
use crate::methods::{ClientSetup, Method, NoParams, Server, ServerSetup, StepInfo};
use crate::spec::Kind;
use anyhow::Result;
use ndarray::Array2;

pub struct Ssi;

struct SsiClient<'a> {
    a: Block<'a>,
}

impl Client for SsiClient<'_> {
    fn respond(&mut self, msg: &Message) -> Result<Message> {
        Ok(Message::new().with("y", self.a.gram_times(msg.get("z")?.view())))
    }
}

struct SsiServer {
    z: Array2<f64>,
}

impl Server for SsiServer {
    fn step(&mut self, net: &mut dyn Network) -> Result<StepInfo> {
        let replies = net.round(&Message::new().with("z", self.z.clone()))?;
        let y = sum_part(&replies, "y")?;
        let objective = (&self.z * &y).sum();
        self.z = orth(y.view());
        Ok(StepInfo {
            objective: Some(objective),
            ..Default::default()
        })
    }
    fn estimate(&self) -> Message {
        Message::new().with("z", self.z.clone())
    }
}

impl Method for Ssi {
    const NAME: &'static str = "ssi";
    const PAPER: &'static str = "FAPS paper, eq. (2)";
    const FAMILY: Kind = Kind::Subspace;
    const ABOUT: &'static str = "federated subspace iteration";
    const TRANSCRIPT: Shape = Shape::Answers;
    type Params = NoParams;
    fn server(_: &NoParams, setup: ServerSetup) -> Result<Box<dyn Server>> {
        Ok(Box::new(SsiServer {
            z: setup.start.get("z")?.clone(),
        }))
    }
    fn client<'a>(_: &NoParams, setup: ClientSetup<'a, '_>) -> Result<Box<dyn Client + 'a>> {
        Ok(Box::new(SsiClient { a: setup.block }))
    }
}
