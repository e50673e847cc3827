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

use super::{Method, Setup, StepInfo};
use crate::data::matrix::Block;
use crate::fed::{Federation, Network, Upload};
use crate::linalg::orth;
use anyhow::{Context, Result};
use ndarray::{concatenate, s, Array2, ArrayView2, Axis};
use ndarray_linalg::SVD;
use serde::{Deserialize, Serialize};

/// How clients' bases are aligned before summing (only while q > 1).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Align {
    /// Orthogonal Procrustes transformation, eq. (4) of the LocalPower paper.
    Procrustes,
    /// Column sign-fixing, eq. (5): cheaper, "comparably stable".
    Sign,
    /// No alignment (vanilla LocalPower).
    None,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Local power steps per communication at the start (FAPS §5.3: 8).
    pub q0: u32,
    /// Halve q after every `halve_every` communications until it reaches 1.
    pub decay: bool,
    /// Communications between halvings of q (FAPS §5.3: 1, "halves q every round").
    pub halve_every: u32,
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

impl Params {
    pub fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        if self.q0 == 0 {
            return Err(("q0", "must be >= 1".into()));
        }
        if self.halve_every == 0 {
            return Err(("halve_every", "must be >= 1".into()));
        }
        Ok(())
    }
}

struct Client<'a> {
    a: Block<'a>,
}

pub struct LocalPower<'a> {
    fed: Federation<Client<'a>>,
    z: Array2<f64>,
    params: Params,
    q: u32,
    /// Communications so far.
    rounds: u32,
    /// The client with the most samples: the basis every other client is rotated onto.
    base: usize,
}

impl<'a> LocalPower<'a> {
    pub fn new(setup: Setup<'a>, params: Params) -> Self {
        let n = setup.n();
        let base = (0..setup.blocks.len())
            .max_by_key(|&i| (setup.blocks[i].samples(), std::cmp::Reverse(i)))
            .unwrap_or(0);
        let mut fed = Federation::new(setup.blocks.into_iter().map(|a| Client { a }).collect(), n);
        if let Some(w) = setup.watch {
            fed.record_transcript(w);
        }
        let q = params.q0;
        Self {
            fed,
            z: setup.z0,
            params,
            q,
            rounds: 0,
            base,
        }
    }
}

/// O minimising ‖Z_i O − Z_base‖_F over orthogonal O (Procrustes) or ±1 diagonals (sign).
fn alignment(
    align: Align,
    zi: ArrayView2<f64>,
    zb: ArrayView2<f64>,
) -> Result<Option<Array2<f64>>> {
    let c = zi.t().dot(&zb);
    Ok(match align {
        Align::None => None,
        Align::Sign => Some(Array2::from_diag(&c.diag().mapv(|v| {
            if v < 0.0 {
                -1.0
            } else {
                1.0
            }
        }))),
        Align::Procrustes => {
            let (u, _, vt) = c
                .svd(true, true)
                .context("SVD for the Procrustes rotation")?;
            Some(u.expect("requested").dot(&vt.expect("requested")))
        }
    })
}

impl Method for LocalPower<'_> {
    fn step(&mut self) -> Result<StepInfo> {
        let (q, p) = (self.q, self.z.ncols());
        let aligned = q > 1 && self.params.align != Align::None;
        let uploads = self.fed.gather(self.z.view(), |c, z| {
            let mut y = c.a.gram_times(z);
            // ‖A_iᵀZ‖² = tr(ZᵀA_iA_iᵀZ), from the first product: the stop rule's share.
            let f_i = (&z * &y).sum();
            let mut zi = z.to_owned();
            for _ in 1..q {
                zi = orth(y.view());
                y = c.a.gram_times(zi.view());
            }
            match (q, aligned) {
                (1, _) => Upload::matrix(y),
                (_, true) => Upload {
                    matrix: concatenate![Axis(1), y, zi],
                    scalars: vec![f_i],
                },
                (_, false) => Upload {
                    matrix: y,
                    scalars: vec![f_i],
                },
            }
        });
        let objective = if q == 1 {
            None
        } else {
            Some(uploads.iter().map(|u| u.scalars[0]).sum::<f64>())
        };
        let zb = uploads[self.base].matrix.slice(s![.., p..]).to_owned();
        let mut sum = Array2::<f64>::zeros((self.z.nrows(), p));
        for u in &uploads {
            let y = u.matrix.slice(s![.., ..p]);
            match aligned
                .then(|| alignment(self.params.align, u.matrix.slice(s![.., p..]), zb.view()))
            {
                Some(o) => sum += &y.dot(&o?.expect("aligned implies a rotation")),
                None => sum += &y,
            }
        }
        // With q = 1 the objective is tr(Zᵀ ΣY), known to the server without extra messages.
        let objective = objective.or_else(|| Some((&self.z * &sum).sum()));
        self.z = orth(sum.view());
        self.rounds += 1;
        if self.params.decay && self.rounds.is_multiple_of(self.params.halve_every) {
            self.q = (self.q / 2).max(1);
        }
        Ok(StepInfo {
            objective,
            inner_iters: vec![q; self.fed.num_clients()],
        })
    }
    fn server(&self) -> (&Array2<f64>, &dyn Network) {
        (&self.z, &self.fed)
    }
}
