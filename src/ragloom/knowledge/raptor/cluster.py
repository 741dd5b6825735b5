"""Clustering one layer of a RAPTOR tree: PCA, then a Gaussian mixture whose size is chosen by BIC.

The reference (REFERENCE §8, v0.22.0) reduces the vectors with UMAP and fits scikit-learn's
``GaussianMixture`` for every component count from 1 to ``max_cluster - 1``, keeping the one with
the lowest BIC; a row joins the clusters whose posterior is over ``threshold``. Here, with numpy only:

* **Reduction**: PCA (an SVD of the centred vectors) to ``min(12, n - 2)`` dimensions, the reference's
  component count. UMAP would need numba and llvmlite (a large, compiled dependency) and is not
  deterministic across thread counts; a linear projection keeps the directions the vectors vary most
  in, which is what a mixture with diagonal covariances can use.
* **Mixture**: diagonal covariances, fitted by EM from a k-means++ start drawn with the settings' seed
  (the same vectors and seed give the same clusters). A component's variance never falls below
  :data:`VARIANCE_FLOOR` of the data's own: scikit-learn's fixed floor (1e-6) lets a component shrink
  onto one row, whose likelihood then grows without bound, so BIC prefers one cluster per row on the
  tightly packed vectors of a text embedder (measured: 11 clusters of 12 rows from two topics).
  Component counts are tried from 1 upwards and the scan stops once :data:`PATIENCE` counts in a row
  did not beat the best BIC (BIC is U-shaped in the count: the rest of the reference's scan would only cost time).
* **Membership**: a row belongs to its most probable component, and also to any other whose posterior
  is over ``threshold`` (the RAPTOR paper's soft clustering; the reference takes the first component
  over the threshold, whose order means nothing).
"""

from __future__ import annotations

import numpy as np

MAX_DIMS = 12
PATIENCE = 8
MAX_ITER = 100
TOLERANCE = 1e-4
VARIANCE_FLOOR = 0.02  # of the data's mean variance per dimension: the least variance of a component


def reduce(vectors: np.ndarray, dims: int) -> np.ndarray:
    """``vectors`` projected on their ``dims`` principal directions."""
    x = np.asarray(vectors, dtype=np.float64)
    centred = x - x.mean(axis=0)
    if dims >= min(x.shape):
        out: np.ndarray = centred
        return out
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    projected: np.ndarray = centred @ vt[:dims].T
    return projected


def _kmeans_pp(x: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    centres = [x[rng.integers(len(x))]]
    for _ in range(1, k):
        d2 = np.min(((x[:, None, :] - np.array(centres)[None, :, :]) ** 2).sum(-1), axis=1)
        total = d2.sum()
        pick = rng.choice(len(x), p=d2 / total) if total > 0 else rng.integers(len(x))
        centres.append(x[pick])
    return np.array(centres)


def _log_prob(x: np.ndarray, weights: np.ndarray, means: np.ndarray, variances: np.ndarray) -> np.ndarray:
    """log(weight_j · N(x_i | mean_j, diag variance_j)) for every row i and component j."""
    precision = 1.0 / variances
    quad = (x**2) @ precision.T - 2.0 * x @ (means * precision).T + (means**2 * precision).sum(1)
    log_det = np.log(variances).sum(1)
    d = x.shape[1]
    out: np.ndarray = np.log(weights) - 0.5 * (d * np.log(2 * np.pi) + log_det + quad)
    return out


def _logsumexp(a: np.ndarray) -> np.ndarray:
    top = a.max(axis=1, keepdims=True)
    out: np.ndarray = (top + np.log(np.exp(a - top).sum(axis=1, keepdims=True)))[:, 0]
    return out


def _m_step(x: np.ndarray, resp: np.ndarray, floor: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    nk = resp.sum(0) + 10 * np.finfo(float).eps
    means = resp.T @ x / nk[:, None]
    variances = np.maximum(resp.T @ (x**2) / nk[:, None] - means**2, 0.0) + floor
    return nk / len(x), means, variances


def fit_mixture(x: np.ndarray, k: int, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """EM for a ``k``-component diagonal Gaussian mixture: (posteriors ``n × k``, total log-likelihood)."""
    centres = _kmeans_pp(x, k, rng)
    labels = ((x[:, None, :] - centres[None, :, :]) ** 2).sum(-1).argmin(1)
    resp = np.eye(k)[labels]
    floor = VARIANCE_FLOOR * float(x.var(axis=0).mean()) + 1e-12
    previous = -np.inf
    loglik = -np.inf
    for _ in range(MAX_ITER):
        weights, means, variances = _m_step(x, resp, floor)
        logp = _log_prob(x, weights, means, variances)
        norm = _logsumexp(logp)
        loglik = float(norm.sum())
        resp = np.exp(logp - norm[:, None])
        if abs(loglik - previous) <= TOLERANCE * max(1.0, abs(loglik)):
            break
        previous = loglik
    return resp, loglik


def bic(loglik: float, n: int, k: int, d: int) -> float:
    """Bayesian information criterion of a diagonal mixture (lower is better)."""
    params = k * d * 2 + (k - 1)
    return float(-2.0 * loglik + params * np.log(n))


def cluster(vectors: np.ndarray, *, max_cluster: int, threshold: float, seed: int) -> list[list[int]]:
    """Clusters of the rows of ``vectors`` (lists of row indices, ascending, ordered by their first row);
    every row is in at least one. Two rows or fewer make one cluster."""
    n = len(vectors)
    if n <= 2:
        return [list(range(n))]
    x = reduce(vectors, min(MAX_DIMS, n - 2))
    kmax = max(1, min(max_cluster, n) - 1)
    best: tuple[float, np.ndarray] | None = None
    best_k = 0
    for k in range(1, kmax + 1):
        resp, loglik = fit_mixture(x, k, np.random.default_rng(seed))
        score = bic(loglik, n, k, x.shape[1])
        if best is None or score < best[0]:
            best, best_k = (score, resp), k
        elif k - best_k >= PATIENCE:
            break
    assert best is not None
    return memberships(best[1], threshold)


def memberships(resp: np.ndarray, threshold: float) -> list[list[int]]:
    """Clusters from posteriors: each row's most probable component and every other over ``threshold``."""
    top = resp.argmax(1)
    groups: dict[int, list[int]] = {}
    for i, row in enumerate(resp):
        for j in sorted({int(top[i]), *(int(j) for j in np.flatnonzero(row > threshold))}):
            groups.setdefault(j, []).append(i)
    return sorted(groups.values(), key=lambda g: g[0])


def split_in_two(vectors: np.ndarray, *, seed: int) -> list[list[int]]:
    """Two clusters of the rows (a two-component mixture, hard assignment); halves in row order when the
    mixture cannot tell them apart."""
    n = len(vectors)
    if n > 2:
        x = reduce(vectors, min(MAX_DIMS, n - 2))
        resp, _ = fit_mixture(x, 2, np.random.default_rng(seed))
        labels = resp.argmax(1)
        groups = [list(np.flatnonzero(labels == j).tolist()) for j in (0, 1)]
        if all(groups):
            return sorted(groups, key=lambda g: g[0])
    half = max(1, n // 2)
    return [list(range(half)), list(range(half, n))]
