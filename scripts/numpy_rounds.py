#!/usr/bin/env python3
"""One round of SSI, LocalPower (q = 2, Procrustes) and FAPS (5 fixed inner steps) in NumPy,
for `make bench` to compare with the Rust rounds of benches/rounds.rs at the same sizes.

The rounds do the same arithmetic as src/methods (FAPS keeps A_iA_iᵀX_i from W_i's computation
for the next round's first product, as the Rust client does), written the way a NumPy user
would: a loop over clients, each product one `@` on NumPy's own multithreaded BLAS (all cores).
The data is a uniform random matrix of the same shape: timing does not depend on its values.

Usage: numpy_rounds.py N M P D [SAMPLES]. Prints one JSON object: seconds per round (median of
SAMPLES rounds after one warm-up round) for each method, and the BLAS NumPy uses.

numpy_rounds.py dcfpca N R D K [SAMPLES]: one DCF-PCA round (benches/robust.rs) on an N×N
matrix over D clients (columns split as evenly as the Rust bench splits them), rank R, K local
steps of one (V, S) sweep and one gradient step each, then the server's weighted average.

numpy_rounds.py dgemm: the GFLOP/s of one square dgemm (n = 3000, median of 5) on NumPy's BLAS
with all cores, as JSON. The bench runs it with OPENBLAS_CORETYPE=SkylakeX on an AVX-512 CPU:
the machine's AVX-512 dgemm peak, which Debian's OpenBLAS does not reach where it does not know
the core (it then runs its AVX2 Haswell kernels).
"""

import json
import sys
import time

import numpy as np


def orth(y):
    q, r = np.linalg.qr(y)
    return q * np.where(np.diag(r) < 0, -1.0, 1.0)


class Ssi:
    def __init__(self, blocks, z):
        self.blocks, self.z = blocks, z

    def round(self):
        y = sum(a @ (a.T @ self.z) for a in self.blocks)
        self.z = orth(y)


class LocalPower:
    """q = 2 local steps, Procrustes alignment onto the largest client's basis."""

    def __init__(self, blocks, z):
        self.blocks, self.z = blocks, z

    def round(self):
        ys, zs = [], []
        for a in self.blocks:
            y = a @ (a.T @ self.z)
            zi = orth(y)
            ys.append(a @ (a.T @ zi))
            zs.append(zi)
        base = zs[0]
        total = np.zeros_like(self.z)
        for y, zi in zip(ys, zs):
            u, _, vt = np.linalg.svd(zi.T @ base)
            total += y @ (u @ vt)
        self.z = orth(total)


class Faps:
    """Fixed 5 inner steps, penalty β fixed (its rule costs O(np²))."""

    def __init__(self, blocks, z, steps=5):
        self.blocks, self.z, self.steps = blocks, z, steps
        self.x = [z.copy() for _ in blocks]
        self.ax = [a @ (a.T @ z) for a in blocks]
        self.w = [z @ (z.T @ ax) - ax for ax in self.ax]
        self.beta = [1.0 for _ in blocks]

    def round(self):
        z = self.z
        total = np.zeros_like(z)
        f = 0.0
        for i, a in enumerate(self.blocks):
            x0, w, beta = self.x[i], self.w[i], self.beta[i]
            _d = np.linalg.norm(x0 - z @ (z.T @ x0))

            def h(v, av):
                return av + x0 @ (w.T @ v) + w @ (x0.T @ v) + beta * (z @ (z.T @ v))

            x = orth(h(x0, self.ax[i]))
            for _ in range(1, self.steps):
                x = orth(h(x, a @ (a.T @ x)))
            ax = a @ (a.T @ x)
            w = x @ (x.T @ ax) - ax
            self.x[i], self.w[i], self.ax[i] = x, w, ax
            xz = x.T @ z
            total += x @ (beta * xz - w.T @ z) - w @ xz
            f += np.sum((a.T @ z) ** 2)
        self.z = orth(total)


class DcfPca:
    """src/methods/dcfpca.rs: per client, K steps of V ← (M_i − S_i)ᵀU(UᵀU + ρI)⁻¹,
    S ← soft(M_i − UVᵀ, λ), U ← U − η((S − resid)V + ρ(m_i/m)U); then U ← Σ (m_i/m) U_i."""

    def __init__(self, blocks, u, steps, lam=0.2, eta0=0.01):
        self.blocks, self.u, self.steps, self.lam, self.eta = blocks, u, steps, lam, eta0
        n = u.shape[0]
        self.m = sum(b.shape[1] for b in blocks)
        self.rho = 1.0 / np.sqrt(min(n, self.m))
        self.s = [np.zeros_like(b) for b in blocks]
        self.v = [np.zeros((b.shape[1], u.shape[1])) for b in blocks]

    def round(self):
        total = np.zeros_like(self.u)
        r = self.u.shape[1]
        for i, mi in enumerate(self.blocks):
            u = self.u.copy()
            weight = self.rho * mi.shape[1] / self.m
            for _ in range(self.steps):
                g = u.T @ u + self.rho * np.eye(r)
                g_inv = np.linalg.inv(g)
                v = (mi - self.s[i]).T @ u @ g_inv
                resid = mi - u @ v.T
                s = np.sign(resid) * np.maximum(np.abs(resid) - self.lam, 0.0)
                grad = (s - resid) @ v + weight * u
                u -= self.eta * grad
                self.s[i], self.v[i] = s, v
            total += mi.shape[1] * u
        self.u = total / self.m


def timed(method, samples):
    method.round()
    secs = []
    for _ in range(samples):
        t = time.perf_counter()
        method.round()
        secs.append(time.perf_counter() - t)
    return float(np.median(secs))


def blas_name():
    try:
        cfg = np.show_config(mode="dicts")
        return cfg["Build Dependencies"]["blas"]["name"]
    except Exception:  # older NumPy: no dict mode
        return "unknown"


def dgemm():
    rng = np.random.default_rng(0)
    s = rng.uniform(-1.0, 1.0, size=(3000, 3000))
    s @ s
    secs = []
    for _ in range(5):
        t = time.perf_counter()
        s @ s
        secs.append(time.perf_counter() - t)
    out = {"numpy": np.__version__, "blas": blas_name()}
    out["dgemm_gflops"] = 2 * 3000**3 / float(np.median(secs)) / 1e9
    print(json.dumps(out))


def dcfpca(args):
    n, r, d, k = (int(v) for v in args[:4])
    samples = int(args[4]) if len(args) > 4 else 3
    rng = np.random.default_rng(0)
    m = np.asfortranarray(rng.uniform(-1.0, 1.0, size=(n, n)))
    sizes = [n // d + (1 if i < n % d else 0) for i in range(d)]
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    blocks = [m[:, bounds[i] : bounds[i + 1]] for i in range(d)]
    u0 = rng.standard_normal(size=(n, r))
    out = {"numpy": np.__version__, "blas": blas_name()}
    out["dcfpca"] = timed(DcfPca(blocks, u0, k), samples)
    print(json.dumps(out))


def main():
    if sys.argv[1:2] == ["dgemm"]:
        return dgemm()
    if sys.argv[1:2] == ["dcfpca"]:
        return dcfpca(sys.argv[2:])
    n, m, p, d = (int(v) for v in sys.argv[1:5])
    samples = int(sys.argv[5]) if len(sys.argv) > 5 else 3
    rng = np.random.default_rng(0)
    # Column-major n × m, as the Rust matrix: each client's block is contiguous.
    a = np.asfortranarray(rng.uniform(-1.0, 1.0, size=(n, m)))
    bounds = np.linspace(0, m, d + 1).astype(int)
    blocks = [a[:, bounds[i] : bounds[i + 1]] for i in range(d)]
    z0 = orth(rng.uniform(-1.0, 1.0, size=(n, p)))
    out = {
        "numpy": np.__version__,
        "blas": blas_name(),
        "ssi": timed(Ssi(blocks, z0), samples),
        "localpower": timed(LocalPower(blocks, z0), samples),
        "faps": timed(Faps(blocks, z0), samples),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
