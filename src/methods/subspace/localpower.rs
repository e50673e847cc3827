//! LocalPower (Li, Wang, Chen, Zhang, ICML 2021, Algorithm 1), as FAPS's baseline.
//!
//! Between communications each client runs q local power steps from the broadcast Z:
//! Y_i ← A_iA_iᵀZ_i, Z_i ← orth(Y_i). At a communication the server sums the clients' last
//! products, each rotated onto the base client's basis (the client with the most samples, as
//! in the LocalPower paper) by the orthogonal Procrustes map O_i = W₁W₂ᵀ, W₁ΣW₂ᵀ = svd(Z_iᵀZ_base),
//! or by sign-fixing; then Z ← orth(Σ_i Y_iO_i). For the server to compute O_i, a client sends
//! its last input basis Z_i beside Y_i (the paper's Remark 2) — counted by the network. q starts
//! at q0 and halves after every communication down to 1, where LocalPower is exactly SSI (no
//! rotation, no extra upload). Sums are unweighted, as in the authors' code (orth ignores the
//! common 1/m scale of the paper's weighted average).

use crate::data::matrix::Block;
use crate::fed::{Client, Message, Network, Shape};
use crate::linalg::orth;
use crate::linalg::procrustes::{procrustes, sign_align};
use crate::methods::{ClientSetup, Method, Server, ServerSetup, StepInfo};
use crate::spec::Kind;
use anyhow::Result;
use ndarray::{Array2, ArrayView2};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How clients' bases are aligned before summing (only while q > 1).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Align {
    /// Orthogonal Procrustes transformation, eq. (4) of the LocalPower paper.
    Procrustes,
    /// Column sign-fixing, eq. (5): cheaper, "comparably stable".
    Sign,
    /// No alignment (vanilla LocalPower).
    None,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// local power steps per communication at the start (FAPS §5.3: 8)
    pub q0: u32,
    /// halve q every halve_every communications until it reaches 1
    pub decay: bool,
    // Communications between halvings of q (FAPS §5.3: 1, "halves q every round").
    /// communications between halvings of q
    pub halve_every: u32,
    /// alignment of local bases: "procrustes" (4), "sign" (5) or "none"
    pub align: Align,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            q0: 8,
            decay: true,
            halve_every: 1,
            align: Align::Procrustes,
        }
    }
}

impl crate::methods::Params for Params {
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        if self.q0 == 0 {
            return Err(("q0", "must be >= 1".into()));
        }
        if self.halve_every == 0 {
            return Err(("halve_every", "must be >= 1".into()));
        }
        Ok(())
    }
}

/// q, the local steps of the next communication: q0, halved every `halve_every`
/// communications down to 1. Server and clients both follow this public schedule, so q is
/// never sent.
struct Schedule {
    q: u32,
    rounds: u32,
}

impl Schedule {
    fn new(p: &Params) -> Self {
        Self { q: p.q0, rounds: 0 }
    }
    fn advance(&mut self, p: &Params) {
        self.rounds += 1;
        if p.decay && self.rounds.is_multiple_of(p.halve_every) {
            self.q = (self.q / 2).max(1);
        }
    }
}

struct LocalPowerClient<'a> {
    a: Block<'a>,
    params: Params,
    schedule: Schedule,
    /// q of the last reply (the report's local steps per round).
    last_q: u32,
}

impl Client for LocalPowerClient<'_> {
    fn respond(&mut self, msg: &Message) -> Result<Message> {
        let z = msg.get("z")?.view();
        let q = self.schedule.q;
        let mut y = self.a.gram_times(z);
        // ‖A_iᵀZ‖² = tr(ZᵀA_iA_iᵀZ), from the first product: the stop rule's share.
        let f_i = (&z * &y).sum();
        let mut zi = z.to_owned();
        for _ in 1..q {
            zi = orth(y.view());
            y = self.a.gram_times(zi.view());
        }
        self.schedule.advance(&self.params);
        self.last_q = q;
        Ok(match (q, self.params.align != Align::None) {
            (1, _) => Message::new().with("y", y),
            // The basis Y answers, for the server's Procrustes rotation (Remark 2).
            (_, true) => Message::new()
                .with("y", y)
                .with("z", zi)
                .with_scalar("f", f_i),
            (_, false) => Message::new().with("y", y).with_scalar("f", f_i),
        })
    }
    fn inner_iters(&self) -> u32 {
        self.last_q
    }
}

struct LocalPowerServer {
    z: Array2<f64>,
    params: Params,
    schedule: Schedule,
    /// The client with the most samples: the basis every other client is rotated onto.
    base: usize,
}

/// O minimising ‖Z_i O − Z_base‖_F over orthogonal O (Procrustes) or ±1 diagonals (sign).
fn alignment(
    align: Align,
    zi: ArrayView2<f64>,
    zb: ArrayView2<f64>,
) -> Result<Option<Array2<f64>>> {
    Ok(match align {
        Align::None => None,
        Align::Sign => Some(sign_align(zi, zb)?),
        Align::Procrustes => Some(procrustes(zi, zb)?),
    })
}

impl Server for LocalPowerServer {
    fn step(&mut self, net: &mut dyn Network) -> Result<StepInfo> {
        let (q, p) = (self.schedule.q, self.z.ncols());
        let aligned = q > 1 && self.params.align != Align::None;
        let replies = net.round(&Message::new().with("z", self.z.clone()))?;
        let objective = if q == 1 {
            None
        } else {
            Some(crate::fed::sum_scalar(&replies, "f")?)
        };
        let mut sum = Array2::<f64>::zeros((self.z.nrows(), p));
        for r in &replies {
            let y = r.get("y")?;
            if aligned {
                let zb = replies[self.base].get("z")?;
                let o = alignment(self.params.align, r.get("z")?.view(), zb.view())?;
                sum += &y.dot(&o.expect("aligned implies a rotation"));
            } else {
                sum += y;
            }
        }
        // With q = 1 the objective is tr(Zᵀ ΣY), known to the server without extra messages.
        let objective = objective.or_else(|| Some((&self.z * &sum).sum()));
        self.z = orth(sum.view());
        self.schedule.advance(&self.params);
        Ok(StepInfo {
            objective,
            ..Default::default()
        })
    }
    fn estimate(&self) -> Message {
        Message::new().with("z", self.z.clone())
    }
}

pub struct LocalPower;

impl Method for LocalPower {
    const NAME: &'static str = "localpower";
    const PAPER: &'static str = "Li, Wang, Chen, Zhang (ICML 2021), Algorithm 1";
    const FAMILY: Kind = Kind::Subspace;
    const ABOUT: &'static str = "LocalPower, Procrustes-aligned, decaying q";
    const TRANSCRIPT: Shape = Shape::Answers;
    type Params = Params;
    fn server(params: &Params, setup: ServerSetup) -> Result<Box<dyn Server>> {
        let sizes = setup.sizes;
        let base = (0..sizes.len())
            .max_by_key(|&i| (sizes[i], std::cmp::Reverse(i)))
            .unwrap_or(0);
        Ok(Box::new(LocalPowerServer {
            z: setup.start.get("z")?.clone(),
            params: params.clone(),
            schedule: Schedule::new(params),
            base,
        }))
    }
    fn client<'a>(params: &Params, setup: ClientSetup<'a, '_>) -> Result<Box<dyn Client + 'a>> {
        Ok(Box::new(LocalPowerClient {
            a: setup.block,
            params: params.clone(),
            schedule: Schedule::new(params),
            last_q: 0,
        }))
    }
}
