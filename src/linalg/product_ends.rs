//! Where the sums of an A·T kernel ([`super::avx512::a_t`], [`super::avx2::a_t`]) start and where
//! they go: each kernel implements its own `Ends` for these, on its own vector width.

/// Y += A·T in place (Y column-major, leading dimension `ld`): the end of an A·T kernel's sums.
pub struct AddTo {
    pub y: *mut f64,
    pub ld: usize,
}

/// R = M + A·T, never stored: S = R − clamp(R, ±λ), the soft threshold of R (the same bits as
/// [`crate::linalg::prox::shrink`]), and W = −clamp(R, ±λ) = S − R. M column-major with its
/// leading dimension; S and W column-major, sharing `ld`.
pub struct ThresholdSum {
    pub m: (*const f64, usize),
    pub s: *mut f64,
    pub w: *mut f64,
    pub ld: usize,
    pub lambda: f64,
}
