#!/usr/bin/env python3
"""Why FAPS trails SSI on Fashion-MNIST (experiments/faps/fig3_fashion_mnist_beta0.toml): a
controlled test the harness has no preprocessing step for.

SSI and FAPS (5 fixed inner steps, penalty rule (25), stop rule (27)) as in src/methods/ssi.rs
and src/methods/faps.rs, on each client's Gram matrix A_iA_iᵀ (784×784, so a FAPS run takes
seconds; ‖A_i‖₂² is its exact top eigenvalue instead of 30 power steps). The start Z⁽⁰⁾ comes
from NumPy's generator, so round counts match the harness's only in distribution; the fitted
tail rates agree (SSI 0.8995, FAPS 0.9258 on fig3_fashion_mnist).

Each case maps every client's block A_i to T A_i with T symmetric, T = I on everything but the
top p−1 eigenvectors of AAᵀ: it rescales λ₁…λ_(p−1) to a chosen λ₁/λ_p and keeps λ_p, λ_(p+1),
… and every eigenvector, so SSI's tail rate λ_(p+1)/λ_p is unchanged while FAPS's penalty
β_i = β₀‖A_i‖₂² follows λ₁.

Usage: `make numpy-venv`, then `.venv/bin/python scripts/faps_spectrum_study.py [DATA_DIR]`
(default datasets/raw, with fashion-mnist and mnist fetched by `dpca data fetch`); about 5 min on
one core. Prints, per case and start, the rounds of SSI and FAPS.
"""

import sys

import numpy as np

N, P, CLIENTS, BETA0 = 784, 5, 16, 0.15


def load(root, name):
    """Training images as columns, scaled to [0, 1] (n × 60000)."""
    path = f"{root}/{name}/train-images-idx3-ubyte"
    img = np.fromfile(path, dtype=np.uint8, offset=16).reshape(-1, N)
    return img.T / 255.0


def grams(a):
    """A_iA_iᵀ of the even contiguous split (the harness's `scheme = "even"`)."""
    return [b @ b.T for b in np.array_split(a, CLIENTS, axis=1)]


def orth(y):
    q, r = np.linalg.qr(y)
    return q * np.where(np.diag(r) < 0, -1.0, 1.0)


def converged(fs):
    """Stop rule (27) on the objectives f(Z) of the rounds so far."""
    return len(fs) >= 2 and abs(fs[-1] - fs[-2]) <= 1e-10 * abs(fs[-1])


def ssi(g, z, max_rounds=3000):
    fs = []
    for rounds in range(1, max_rounds + 1):
        y = sum(gi @ z for gi in g)
        fs.append(np.sum(z * y))
        z = orth(y)
        if converged(fs):
            break
    return rounds


def faps(g, z, max_rounds=3000, steps=5, theta=0.1, mu=0.01, period=5):
    xs = [z.copy() for _ in g]
    axs = [gi @ z for gi in g]
    ws = [x @ (x.T @ ax) - ax for x, ax in zip(xs, axs)]
    betas = [BETA0 * np.linalg.eigvalsh(gi)[-1] for gi in g]
    dists = [[] for _ in g]
    fs = []
    for rounds in range(1, max_rounds + 1):
        k = rounds - 1
        ysum, f = np.zeros_like(z), 0.0
        for i, gi in enumerate(g):
            x, w = xs[i], ws[i]
            d = np.sqrt(2.0) * np.linalg.norm(x - z @ (z.T @ x))
            dists[i].append(d)
            if k > 0 and k % period == 0 and dists[i][k - period] <= (1 + mu) * d:
                betas[i] *= 1 + theta
            b = betas[i]

            def h(v, av):
                return av + x @ (w.T @ v) + w @ (x.T @ v) + b * (z @ (z.T @ v))

            xn = orth(h(x, axs[i]))
            for _ in range(1, steps):
                xn = orth(h(xn, gi @ xn))
            axs[i] = gi @ xn
            ws[i] = w = xn @ (xn.T @ axs[i]) - axs[i]
            xs[i] = xn
            xz = xn.T @ z
            ysum += xn @ (xz * b - w.T @ z) - w @ xz
            f += np.sum(z * (gi @ z))
        fs.append(f)
        z = orth(ysum)
        if converged(fs):
            break
    return rounds


def rescale_top(g, ratio):
    """T A_i for every client: λ₁…λ_(p−1) of AAᵀ mapped to λ_p·(λ_j/λ_p)^a, λ₁/λ_p = ratio."""
    lam, v = np.linalg.eigh(sum(g))
    lam, v = lam[::-1][:P], v[:, ::-1][:, :P]
    r = lam / lam[-1]
    a = np.log(ratio) / np.log(r[0])
    t = np.eye(N) + (v * (np.sqrt(r**a / r) - 1.0)) @ v.T
    return [t @ gi @ t for gi in g]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "datasets/raw"
    fashion = load(root, "fashion-mnist")
    mnist = load(root, "mnist")
    centred = grams(fashion - fashion.mean(axis=1, keepdims=True))
    mnist_centred = grams(mnist - mnist.mean(axis=1, keepdims=True))
    cases = [
        ("Fashion-MNIST centred", centred),
        ("Fashion-MNIST centred, top rescaled to l1/l5 = 2", rescale_top(centred, 2.0)),
        ("Fashion-MNIST uncentred", grams(fashion)),
        ("MNIST centred", mnist_centred),
        ("MNIST centred, top rescaled to l1/l5 = 7.55", rescale_top(mnist_centred, 7.55)),
    ]
    for name, g in cases:
        lam = np.linalg.eigvalsh(sum(g))[::-1]
        for seed in (1, 2, 3):
            z = orth(np.random.default_rng(seed).uniform(-1.0, 1.0, (N, P)))
            print(
                f"{name}: l1/l5 = {lam[0] / lam[P - 1]:.2f}, l6/l5 = {lam[P] / lam[P - 1]:.3f}, "
                f"start {seed}: SSI {ssi(g, z)} rounds, FAPS (beta0 = {BETA0}) {faps(g, z)} rounds",
                flush=True,
            )


if __name__ == "__main__":
    main()
