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
import os
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


# ---- Twins: rounds on the Rust bench's own data and start (`numpy_rounds.py twin DIR`) ----
#
# The rounds above run on random data of the right shape. FSSPCA's round (its RGD iterations
# and Armijo trials) and the SVT of IALM and APGM (the rank, Krylov's restarts) depend on the
# data, so their twins run on the instance the Rust bench built, handed over by
# benches/suite/twin.rs: DIR/twin.json (method, parameters, client sizes, warm-up rounds and
# timed rounds) and .npy files (x: the n×m data, clients' blocks its columns in order; w0:
# the clients' starts side by side). The twin counts the flops of every matrix product it
# makes (`Flops.dot`; QR, eig and SVD of small matrices are not counted) and, with "out" set,
# writes its final iterates as DIR/out_*.npy: tests/lib/numpy_twin.rs compares them with the
# Rust rounds on a tiny instance.

EPS = np.finfo(float).eps


class Flops:
    """Matrix products, counted: 2·rows·inner·cols each."""

    def __init__(self):
        self.count = 0.0

    def dot(self, a, b):
        self.count += 2.0 * a.shape[0] * a.shape[1] * (b.shape[1] if b.ndim == 2 else 1)
        return a @ b


def smooth_l1(w, mu):
    a = np.abs(w)
    return float(np.sum(np.where(a >= 0.5 * mu, a, w * w / mu + 0.25 * mu)))


def smooth_l1_grad(w, mu):
    return np.where(w >= 0.5 * mu, 1.0, np.where(w <= -0.5 * mu, -1.0, 2.0 * w / mu))


class FsspcaWorker:
    """src/methods/fsspca.rs's Worker without deflation (stage_size = 0): the dual step, then
    Algorithm 3 (RGD, Armijo backtracking from twice the last step, the rounding stop)."""

    def __init__(self, x, w0, p, flops):
        self.x, self.w, self.p, self.flops = x, w0.copy(), p, flops
        self.formed = None if 2 * x.shape[1] < x.shape[0] else flops.dot(x, x.T)
        self.u = np.zeros_like(w0)
        self.pending, self.theta, self.iters = False, 0.5, 0

    def times(self, w):
        if self.formed is not None:
            return self.flops.dot(self.formed, w)
        return self.flops.dot(self.x, self.flops.dot(self.x.T, w))

    def value(self, w, cw, z):
        p = self.p
        terms = [
            -np.sum(w * cw),
            p["lambda1"] * smooth_l1(w, p["mu"]),
            np.sum(self.u * w),
            0.5 * p["rho"] * np.sum((w - z) ** 2),
        ]
        return sum(terms), sum(abs(t) for t in terms)

    def respond(self, z):
        p = self.p
        if self.pending:
            self.u += p["rho"] * (self.w - z)
        w, f = self.w, self.flops
        cw = self.times(w)
        fw, fmag = self.value(w, cw, z)
        first, iters, last = None, 0, self.theta
        while iters < p["inner_max"]:
            eg = -2.0 * cw + p["lambda1"] * smooth_l1_grad(w, p["mu"]) + self.u + p["rho"] * (w - z)
            wtg = f.dot(w.T, eg)
            grad = eg - f.dot(w, 0.5 * (wtg + wtg.T))
            norm = np.sqrt(np.sum(grad * grad))
            first = norm if first is None else first
            if norm <= p["inner_tol"] * first or not np.isfinite(norm):
                break
            slope = -np.sum(eg * grad)
            if not slope < 0.0:
                break
            theta, accepted = 2.0 * last, None
            for _ in range(61):  # MAX_BACKTRACKS + 1 trials
                if theta * -slope <= 100.0 * EPS * fmag:  # ROUNDING
                    break
                wt = orth(w - theta * grad)
                cwt = self.times(wt)
                ft, fmag_t = self.value(wt, cwt, z)
                if ft <= fw + p["armijo_c1"] * theta * slope:
                    accepted = (wt, cwt, ft, fmag_t)
                    break
                theta *= p["backtrack"]
            if accepted is None:
                break
            w, cw, fw, fmag = accepted
            last, iters = theta, iters + 1
        self.theta, self.w, self.iters = last, w, iters
        self.pending = True
        return w.copy()


class Fsspca:
    """FSSPCA's round: the workers' replies, then the master's z ← S_{λ2/(Kρ)}(w̄ + ū/ρ)."""

    def __init__(self, blocks, w0s, params, flops):
        p = {"mu": 1e-3, "inner_max": 100, "inner_tol": 1e-3, "armijo_c1": 1e-4, "backtrack": 0.5}
        p.update(params)
        self.p = p
        self.workers = [FsspcaWorker(x, w, p, flops) for x, w in zip(blocks, w0s)]
        self.z = np.zeros_like(w0s[0])
        self.ubar, self.wbar_prev = np.zeros_like(self.z), None

    def round(self):
        ws = [wk.respond(self.z) for wk in self.workers]
        k, rho = len(ws), self.p["rho"]
        wbar = sum(ws) / k
        if self.wbar_prev is not None:
            self.ubar += rho * (self.wbar_prev - self.z)
        self.z = shrink(wbar + self.ubar / rho, self.p["lambda2"] / (k * rho))
        self.wbar_prev = wbar
        return sum(wk.iters for wk in self.workers)

    def out(self):
        return {"w": np.hstack([wk.w for wk in self.workers])}


class Faspca:
    """src/methods/faspca.rs's first loading (its twin stops where the first would deflate):
    worker w_i ← (2X_iy_i − u_i + ρz)/(2y_iᵀy_i + ρ), y_i = X_iᵀw_i, normalised; master as FSSPCA."""

    def __init__(self, blocks, w0s, params, flops):
        self.blocks, self.flops = blocks, flops
        self.lam, self.rho = params["lambda"], params.get("rho", 1000.0)
        self.tol = params.get("tol", 1e-4)
        self.w = [w.copy() for w in w0s]
        self.u = [np.zeros_like(w) for w in w0s]
        self.z, self.ubar, self.wbar = np.zeros_like(w0s[0]), np.zeros_like(w0s[0]), None

    def round(self):
        rho, f = self.rho, self.flops
        if self.wbar is not None:
            self.ubar += rho * (self.wbar - self.z)
            for w, u in zip(self.w, self.u):
                u += rho * (w - self.z)
        for i, x in enumerate(self.blocks):
            y = f.dot(x.T, self.w[i])
            w = (2.0 * f.dot(x, y) - self.u[i] + self.z * rho) / (2.0 * (y.T @ y).item() + rho)
            self.w[i] = w / np.sqrt(np.sum(w * w))
        k = len(self.blocks)
        wbar = sum(self.w) / k
        z = shrink(wbar + self.ubar / rho, self.lam / (k * rho))
        primal = np.sqrt(sum(np.sum((w - z) ** 2) for w in self.w) / k)
        if primal <= self.tol and np.sqrt(np.sum((z - self.z) ** 2)) <= self.tol:
            sys.exit("faspca twin: the first loading finished; deflation is not in the twin")
        self.z, self.wbar = z, wbar
        return len(self.blocks)

    def out(self):
        return {"w": np.hstack(self.w)}


# ---- The SVT of src/linalg/svd.rs (svt_factors), for IALM's and APGM's twins ----

KRYLOV_TOL, KRYLOV_STEPS, KRYLOV_BUDGET = 1e-12, 3, 0.5
GROW = "grow"


def krylov_svd(a, b, rule, f, rng):
    """Restarted block Krylov on G = AᵀA (b columns, KRYLOV_STEPS steps a restart), then
    Rayleigh–Ritz on A: (U, s, Vᵀ), GROW, or None where Rust gives up (to LAPACK)."""
    m, n = a.shape
    if m < n:
        out = krylov_svd(a.T, b, rule, f, rng)
        return out if out in (None, GROW) else (out[2].T, out[1], out[0].T)
    if 2 * b > n:
        return None
    steps = min(max(KRYLOV_STEPS, 1), n // b - 1)
    basis = b * (steps + 1.0)
    work = steps * 4.0 * m * n * b + 6.0 * n * basis * b * steps
    work += 2.0 * n * basis**2 + 4.0 * n * basis * b + 10.0 * basis**3
    max_restarts = int(KRYLOV_BUDGET * (4.0 * m * n * n + 10.0 * n**3) / work)
    if max_restarts == 0:
        return None

    def apply(x):
        return f.dot(a.T, f.dot(a, x))

    def complement(q, w):
        def project(x):
            return x - f.dot(q, f.dot(q.T, x))

        return orth(project(orth(project(project(w)))))

    v = orth(rng.uniform(-1.0, 1.0, size=(n, b)))
    gv, last = apply(v), np.inf
    for restart in range(1, max_restarts + 1):
        q, gq = v, gv
        for _ in range(steps):
            nxt = complement(q, gq[:, -b:])
            q, gq = np.hstack([q, nxt]), np.hstack([gq, apply(nxt)])
        t = f.dot(q.T, gq)
        vals, vecs = np.linalg.eigh(0.5 * (t + t.T))
        theta, y = vals[::-1][:b], vecs[:, ::-1][:, :b]
        u, gu = f.dot(q, y), f.dot(gq, y)
        resid = np.sqrt(np.sum((gu - u * theta) ** 2, axis=0))
        verdict = rule(theta, resid)
        if verdict == GROW:
            return GROW
        if verdict[0] == "take":
            vv = orth(u[:, : verdict[1]])
            su, s, svt = np.linalg.svd(f.dot(a, vv), full_matrices=False)
            return su, s, f.dot(svt, vv.T)
        excess = verdict[1]
        rate = last / excess
        if restart > 1 and (rate <= 1.0 or restart + np.log(excess) / np.log(rate) > max_restarts):
            return None
        last, v, gv = excess, u, gu
    return None


def above(theta, resid, tau, k):
    """svt's rule: the pairs above τ² converged and the next shown below τ²."""
    tau2 = tau * tau
    p = int(np.sum(theta > tau2))
    if p >= k:
        return GROW
    scale = KRYLOV_TOL * max(theta[0], np.finfo(float).tiny)
    excess = max([resid[p] / (tau2 - theta[p])] + list(resid[:p] / scale))
    return ("take", p + 1) if excess <= 1.0 else ("more", excess)


def svt(a, tau, hint, f, rng):
    """svt_factors: the triplets above τ, shrunk by τ, with room for hint + 1 grown as needed."""
    m, n = a.shape
    r = min(m, n)
    if r == 0 or tau >= np.sqrt(np.sum(a * a)):
        return np.zeros((m, 0)), np.zeros(0), np.zeros((0, n))
    k = min(hint + 1, r)
    while True:
        out = None
        if tau > 0.0:
            rule = lambda th, rs: above(th, rs, tau, k)  # noqa: E731
            out = krylov_svd(a, k + max(k // 10, 10), rule, f, rng)
        if out == GROW and k < r:
            k = min(k + max(k, r // 20), r)
            continue
        if out in (None, GROW):
            out = np.linalg.svd(a, full_matrices=False)
        break
    u, s, vt = out
    p = int(np.sum(s > tau))
    return u[:, :p], s[:p] - tau, vt[:p]


def next_rank_hint(svp, hint, cols):
    return min(svp + 1, cols) if svp < hint else min(svp + int(round(0.05 * cols)), cols)


def spectral_norm(d):
    """‖M‖₂ (not timed): LAPACK on small M, else Krylov to the partial_svd rule."""
    if min(d.shape) <= 200:
        return float(np.linalg.norm(d, 2))
    k = 1

    def rule(theta, resid):
        excess = resid[0] / (KRYLOV_TOL * theta[0])
        return ("take", k) if excess <= 1.0 else ("more", excess)

    out = krylov_svd(d, 16, rule, Flops(), np.random.default_rng(1))
    return float(out[1][0]) if out not in (None, GROW) else float(np.linalg.norm(d, 2))


class Ialm:
    """src/methods/ialm.rs: S = soft(M − L + Y/μ, λ/μ), L = SVT(M − S + Y/μ, 1/μ), Y += μZ."""

    def __init__(self, d, params, flops):
        n, m = d.shape
        self.d, self.f, self.rng = d, flops, np.random.default_rng(2)
        self.lam = params.get("lambda") or 1.0 / np.sqrt(max(n, m))
        norm_two = spectral_norm(d)
        self.mu = params.get("mu0_factor", 1.25) / norm_two
        self.mu_bar = self.mu * params.get("mu_bar_factor", 1e7)
        self.rho = params.get("rho", 1.5)
        self.y = d / max(norm_two, np.max(np.abs(d)) / self.lam)
        self.l, self.s, self.hint, self.rank = np.zeros_like(d), np.zeros_like(d), 10, 0

    def round(self):
        inv = 1.0 / self.mu
        self.s = shrink(self.d - self.l + self.y * inv, self.lam * inv)
        u, sv, vt = svt(self.d - self.s + self.y * inv, inv, self.hint, self.f, self.rng)
        self.l = self.f.dot(u * sv, vt)
        self.rank = len(sv)
        self.hint = next_rank_hint(self.rank, self.hint, self.d.shape[1])
        self.y += self.mu * (self.d - self.l - self.s)
        self.mu = min(self.mu * self.rho, self.mu_bar)
        return self.rank

    def out(self):
        return {"l": self.l, "s": self.s}


class Apgm:
    """src/methods/apgm.rs: accelerated proximal gradient with continuation, no line search."""

    def __init__(self, d, params, flops):
        n, m = d.shape
        self.d, self.f, self.rng = d, flops, np.random.default_rng(2)
        self.lam = params.get("lambda") or 1.0 / np.sqrt(max(n, m))
        norm2 = spectral_norm(d)
        self.mu = params.get("mu0_factor", 0.99) * norm2
        self.mu_bar = params.get("mu_bar_factor", 1e-9) * norm2
        self.eta, self.tau = params.get("eta", 0.9), params.get("lipschitz", 2.0)
        self.t = self.t_prev = 1.0
        self.a = self.a_prev = self.e = self.e_prev = np.zeros_like(d)
        self.hint, self.rank = 10, 0

    def round(self):
        beta = (self.t_prev - 1.0) / self.t
        ya = self.a + (self.a - self.a_prev) * beta
        ye = self.e + (self.e - self.e_prev) * beta
        resid = (ya + ye - self.d) / self.tau
        u, sv, vt = svt(ya - resid, self.mu / self.tau, self.hint, self.f, self.rng)
        self.rank = len(sv)
        self.hint = next_rank_hint(self.rank, self.hint, self.d.shape[1])
        a_next = self.f.dot(u * sv, vt)
        e_next = shrink(ye - resid, self.lam * self.mu / self.tau)
        self.mu = max(self.eta * self.mu, self.mu_bar)
        self.t_prev, self.t = self.t, 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * self.t * self.t))
        self.a_prev, self.a = self.a, a_next
        self.e_prev, self.e = self.e, e_next
        return self.rank

    def out(self):
        return {"l": self.a, "s": self.e}


def twin(args):
    """One of the twins on DIR's data: mean seconds, flops and the round's count (FSSPCA's
    accepted RGD iterations over all workers, FASPCA's clients, IALM's and APGM's SVT rank)
    per timed round."""
    d = args[0]
    with open(os.path.join(d, "twin.json")) as fh:
        cfg = json.load(fh)
    x = np.asfortranarray(np.load(os.path.join(d, "x.npy")))
    flops, name = Flops(), cfg["method"]
    if name in ("fsspca", "faspca"):
        bounds = np.concatenate([[0], np.cumsum(cfg["sizes"])])
        blocks = [x[:, bounds[i] : bounds[i + 1]] for i in range(len(cfg["sizes"]))]
        w0 = np.load(os.path.join(d, "w0.npy"))
        w0s = np.hsplit(w0, len(blocks))
        cls = Fsspca if name == "fsspca" else Faspca
        method = cls(blocks, w0s, cfg["params"], flops)
    else:
        method = {"ialm": Ialm, "apgm": Apgm}[name](x, cfg["params"], flops)
    for _ in range(cfg["warm_up"]):
        method.round()
    flops.count, counts, secs = 0.0, [], 0.0
    for _ in range(cfg["samples"]):
        t = time.perf_counter()
        counts.append(method.round())
        secs += time.perf_counter() - t
    if cfg.get("out"):
        for key, a in method.out().items():
            np.save(os.path.join(d, f"out_{key}.npy"), a)
    k = cfg["samples"]
    out = {"numpy": np.__version__, "blas": blas_name(), "secs": secs / k}
    out.update({"flops": flops.count / k, "counts": counts})
    print(json.dumps(out))


def main():
    commands = {
        "dgemm": lambda _: dgemm(),
        "dcfpca": dcfpca,
        "cedre": cedre,
        "dssal1": dssal1,
        "twin": twin,
    }
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
