#!/usr/bin/env python3
"""One round of SSI, LocalPower (q = 2, Procrustes) and FAPS (5 fixed inner steps) in NumPy,
for `make bench` to compare with the Rust rounds of benches/suite/rounds.rs at the same sizes.

The rounds do the same arithmetic as src/methods (FAPS keeps A_iA_iᵀX_i from W_i's computation
for the next round's first product, as the Rust client does), written the way a NumPy user
would: a loop over clients, each product one `@` on NumPy's own multithreaded BLAS (all cores).
The data is a uniform random matrix of the same shape: timing does not depend on its values.

Usage: numpy_rounds.py N M P D [SAMPLES]. Prints one JSON object: seconds per round (median of
SAMPLES rounds after one warm-up round) for each method, and the BLAS NumPy uses.

numpy_rounds.py dcfpca N R D K [SAMPLES]: one DCF-PCA round (benches/suite/robust.rs) on an N×N
matrix over D clients (columns split as evenly as the Rust bench splits them), rank R, K local
steps of one (V, S) sweep and one gradient step each, then the server's weighted average.

numpy_rounds.py cedre D NK K [SAMPLES]: one CEDRE round (benches/suite/families.rs) on a D×(K·NK)
matrix over K machines of NK samples: exchange A (A_kw̃ = X_k(X_kᵀw̃)/n_k, weighted sum, the
Riemannian gradient), then 5·NK single-sample local steps per machine (a Python loop of vector
operations: the steps are a chain, each depending on the last) and the sign-fixed average.
No warm-up round (a round takes seconds of Python; NumPy's BLAS threads are idle in it).

numpy_rounds.py dssal1 N M P D [SAMPLES]: one DSSAL1 round (benches/suite/families.rs): each client a
FAPS client (5 fixed inner steps, the penalty rule, y_i and c_i = ‖W_i‖₂ + β_i), then the
server's ManPG step by semismooth Newton on the proximal subproblem's dual (as
src/linalg/stiefel_prox.rs: the same Newton matrix and regularisation; its line search
backtracks on ‖E‖, the ManPG reference code's test, instead of our dual merit: the same work
per trial) and the polar retraction.

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
        # The penalty rule on (client, d_i), before the local solve: a no-op here (DSSAL1's).
        self.rule = lambda i, dist: None

    def client(self, i, a):
        """Client i's round at the current Z: its reply y_i (and f_i, as the Rust client)."""
        z = self.z
        x0 = self.x[i]
        self.rule(i, np.sqrt(2) * np.linalg.norm(x0 - z @ (z.T @ x0)))
        w, beta = self.w[i], self.beta[i]

        def h(v, av):
            return av + x0 @ (w.T @ v) + w @ (x0.T @ v) + beta * (z @ (z.T @ v))

        x = orth(h(x0, self.ax[i]))
        for _ in range(1, self.steps):
            x = orth(h(x, a @ (a.T @ x)))
        ax = a @ (a.T @ x)
        w = x @ (x.T @ ax) - ax
        self.x[i], self.w[i], self.ax[i] = x, w, ax
        xz = x.T @ z
        _f = np.sum((a.T @ z) ** 2)
        return x @ (beta * xz - w.T @ z) - w @ xz

    def round(self):
        total = sum(self.client(i, a) for i, a in enumerate(self.blocks))
        self.z = orth(total)


class Cedre:
    """src/methods/cedre.rs, dense data, single-sample steps, option II, fixed η."""

    def __init__(self, blocks, w, eta, steps_per_sample=5):
        self.blocks, self.w, self.eta = blocks, w, eta
        self.steps = [steps_per_sample * b.shape[1] for b in blocks]
        total = sum(b.shape[1] for b in blocks)
        self.weights = [b.shape[1] / total for b in blocks]
        self.rng = np.random.default_rng(1)

    def local(self, a, wt, g, steps):
        eta, w = self.eta, wt.copy()
        for i in self.rng.integers(0, a.shape[1], size=steps):
            x = a[:, i]
            av, b, wwt, wg = x @ w, x @ wt, w @ wt, w @ g
            wd = -b * (av - b * wwt) - wg
            d = -b * (x - b * wt) - g
            v = w - eta * (-av * (x - av * w) - d + wd * w)
            w = v / np.sqrt(v @ v)
        return w

    def round(self):
        wt = self.w
        aw = sum(c * (a @ (a.T @ wt)) / a.shape[1] for a, c in zip(self.blocks, self.weights))
        g = -(aw - wt * (wt @ aw))
        ws = [self.local(a, wt, g, m) for a, m in zip(self.blocks, self.steps)]
        s = sum(np.copysign(1.0, w @ ws[0]) * w for w in ws)
        self.w = s / np.sqrt(s @ s)


def shrink(c, tau):
    return np.sign(c) * np.maximum(np.abs(c) - tau, 0.0)


def stiefel_prox(z, grad, t, mu, lam, tol=1e-12):
    """D = argmin ⟨G, D⟩ + ‖D‖²/(2t) + μ‖Z + D‖₁ over the tangent space at Z, by semismooth
    Newton on the dual multiplier Λ (src/linalg/stiefel_prox.rs); returns D and Λ."""
    p = z.shape[1]
    tau = t * mu
    b = z - t * grad
    tol *= max(1.0, np.sqrt(np.sum(b * b) / np.sum(z * z)))
    c = b + 2 * t * (z @ lam)
    pairs = [(i, k) for k in range(p) for i in range(k + 1)]

    def residual(c):
        d = shrink(c, tau) - z
        ztd = z.T @ d
        e = ztd + ztd.T
        return d, e, np.linalg.norm(e)

    def basis(i, k):
        e = np.zeros((p, p))
        e[i, k] = e[k, i] = 1.0
        return e

    def inner(x):
        return np.array([x[i, k] + (x[k, i] if i != k else 0.0) for i, k in pairs])

    d, e, norm = residual(c)
    for _ in range(100):
        if norm <= tol:
            break
        reg = 4 * t * 0.2 * min(max(norm, 1e-11), 0.1)
        active = np.abs(c) > tau
        ms = [z.T @ (z * active[:, j : j + 1]) for j in range(p)]
        h = np.empty((len(pairs), len(pairs)))
        for col, (i, k) in enumerate(pairs):
            eb = basis(i, k)
            kk = np.column_stack([ms[j] @ eb[:, j] for j in range(p)])
            h[:, col] = inner(2 * t * (kk + kk.T) + reg * eb)
        s = np.linalg.solve(h, -inner(e))
        dl = np.zeros((p, p))
        for idx, (i, k) in enumerate(pairs):
            dl[i, k] = dl[k, i] = s[idx]
        direction = 2 * t * (z @ dl)
        step = 1.0
        for _ in range(30):
            trial = residual(c + step * direction)
            if trial[2] <= (1 - 1e-4 * step) * norm:
                break
            step *= 0.5
        c, lam = c + step * direction, lam + step * dl
        d, e, norm = trial
    return d, lam


def polar(y):
    u, _, vt = np.linalg.svd(y, full_matrices=False)
    return u @ vt


class Dssal1:
    """src/methods/dssal1.rs: FAPS clients (fixed inner steps, penalty rule, y_i and c_i), the
    server's ManPG proximal step with η = 1/Σc_i and the polar retraction."""

    def __init__(self, blocks, z, mu, steps=5):
        self.faps = Faps(blocks, z, steps)
        self.faps.rule = self.rule
        self.mu, self.lam = mu, np.zeros((z.shape[1], z.shape[1]))
        self.dists = [[] for _ in blocks]

    def rule(self, i, dist):
        """FAPS's rule (25): every 5 rounds β_i ← 1.1β_i unless d_i fell by a factor 1.01."""
        self.dists[i].append(dist)
        k = len(self.dists[i]) - 1
        if k > 0 and k % 5 == 0 and self.dists[i][k - 5] <= 1.01 * dist:
            self.faps.beta[i] *= 1.1

    def round(self):
        f, z = self.faps, self.faps.z
        total, c = np.zeros_like(z), 0.0
        for i, a in enumerate(f.blocks):
            total -= f.client(i, a)
            c += np.sqrt(max(np.linalg.eigvalsh(f.w[i].T @ f.w[i])[-1], 0.0)) + f.beta[i]
        d, self.lam = stiefel_prox(z, total, 1.0 / c, self.mu, self.lam)
        f.z = polar(z + d)


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


def timed(method, samples, warm_up=True):
    """Median seconds of `samples` rounds, after one untimed round unless warm_up is False."""
    if warm_up:
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


def cedre(args):
    d, nk, k = (int(v) for v in args[:3])
    samples = int(args[3]) if len(args) > 3 else 1
    blocks, w0 = column_blocks(d, nk * k, 1, k)
    out = {"numpy": np.__version__, "blas": blas_name()}
    out["cedre"] = timed(Cedre(blocks, w0[:, 0], 0.05), samples, warm_up=False)
    print(json.dumps(out))


def dssal1(args):
    n, m, p, d = (int(v) for v in args[:4])
    samples = int(args[4]) if len(args) > 4 else 3
    blocks, z0 = column_blocks(n, m, p, d)
    out = {"numpy": np.__version__, "blas": blas_name()}
    out["dssal1"] = timed(Dssal1(blocks, z0, 0.005), samples)
    print(json.dumps(out))


def column_blocks(n, m, p, d):
    """A uniform random n×m matrix, column-major as the Rust matrix (each client's block
    contiguous), split over d clients, and an orthonormal n×p start."""
    rng = np.random.default_rng(0)
    a = np.asfortranarray(rng.uniform(-1.0, 1.0, size=(n, m)))
    bounds = np.linspace(0, m, d + 1).astype(int)
    blocks = [a[:, bounds[i] : bounds[i + 1]] for i in range(d)]
    return blocks, orth(rng.uniform(-1.0, 1.0, size=(n, p)))


def main():
    commands = {"dgemm": lambda _: dgemm(), "dcfpca": dcfpca, "cedre": cedre, "dssal1": dssal1}
    if sys.argv[1:2] and sys.argv[1] in commands:
        return commands[sys.argv[1]](sys.argv[2:])
    n, m, p, d = (int(v) for v in sys.argv[1:5])
    samples = int(sys.argv[5]) if len(sys.argv) > 5 else 3
    blocks, z0 = column_blocks(n, m, p, d)
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
