"""Next-token distributions and how close two of them are: softmax, the
per-position acceptance α_t = Σ_v min(p_v, q_v) = 1 − TV(p, q), and KL(p‖q).

Everything is float32 over the common vocabulary (the first n_common ids of
both models); row functions work in bounded blocks so a (summary × vocab)
matrix never needs a second full-size temporary.
"""

from __future__ import annotations

import numpy as np

ROW_BLOCK_FLOATS = 1 << 22  # float32 temporaries per block (16 MiB)


def softmax(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """softmax(logits / temperature) of one row, float32. The maximum is
    subtracted before dividing, so (x - max) / T <= 0 and no T whose float32
    is above 0 overflows (dividing first turns 1e-300 into inf - inf = NaN);
    a temperature that is 0 in float32 gives the one-hot argmax (its limit)."""
    x = np.asarray(logits, dtype=np.float32)
    x = x - x.max()
    if temperature != 1.0:
        with np.errstate(over="ignore"):
            t = np.float32(temperature)  # above float32's range: inf, (x - max) / inf = 0: uniform
        if t == 0:
            e = np.zeros_like(x)
            e[int(np.argmax(x))] = 1.0
            return e
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):  # -inf, then exp -> 0: intended
            x /= t
        if np.isinf(t):  # -inf / inf is NaN: a refused token (logit -inf) stays refused
            x[np.isnan(x)] = -np.inf
    e = np.exp(x)
    return e / e.sum()


def overlap(p: np.ndarray, q: np.ndarray) -> float:
    """α_t = Σ_v min(p_v, q_v) over the common vocabulary."""
    n = min(p.shape[0], q.shape[0])
    return float(np.minimum(p[:n], q[:n]).sum(dtype=np.float32))


def softmax_rows(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax in float32 (a new array; `logits` is left untouched)."""
    x = np.asarray(logits, dtype=np.float32)
    e = x - x.max(axis=1, keepdims=True)
    np.exp(e, out=e)
    e /= e.sum(axis=1, keepdims=True)
    return e


def _step(n_common: int) -> int:
    return max(1, ROW_BLOCK_FLOATS // max(1, n_common))


def probs_rows(logits: np.ndarray, n_common: int, out: np.ndarray) -> None:
    """out[i] = softmax(logits[i, :n_common]), computed in bounded row blocks."""
    step = _step(n_common)
    for r in range(0, logits.shape[0], step):
        out[r : r + step] = softmax_rows(logits[r : r + step, :n_common])


def overlap_rows(p: np.ndarray, logits: np.ndarray, n_common: int) -> np.ndarray:
    """α_t = Σ_v min(p[t, v], softmax(logits[t, :n_common])_v), float32.

    Invariant: every value lies in [0, 1]; float32 rounding can put Σ p a few
    ulps above 1 when p == q, which is clipped.
    """
    return compare_rows(p, logits, n_common)[0]


def entropy_terms(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(Σ_v p, Σ_v p log p) per row in float64: the p-only parts of KL(p‖q)."""
    p_sum, p_logp = np.empty(len(p)), np.empty(len(p))
    step = _step(p.shape[1] if p.ndim == 2 else 1)
    for r in range(0, len(p), step):
        b = p[r : r + step]
        p_sum[r : r + len(b)] = b.sum(axis=1, dtype=np.float64)
        p_logp[r : r + len(b)] = (b * np.log(np.maximum(b, np.float32(1e-45)))).sum(axis=1, dtype=np.float64)
    return p_sum, p_logp


def compare_rows(
    p: np.ndarray, logits: np.ndarray, n_common: int, p_terms: tuple[np.ndarray, np.ndarray] | None = None
) -> tuple[np.ndarray, np.ndarray | None]:
    """(α_t, KL_t) of the target rows `p` against softmax(logits[:, :n_common]).

    KL_t = Σ p log p − Σ p log q with log q = (x − max) − log z; it is computed
    only when `p_terms` (from entropy_terms) is given, and clipped at 0
    (float32 rounding when p == q). α_t is clipped to [0, 1].
    """
    n = p.shape[0]
    alpha = np.empty(n, dtype=np.float32)
    kl = np.empty(n, dtype=np.float64) if p_terms is not None else None
    step = _step(n_common)
    for r in range(0, n, step):
        x = np.asarray(logits[r : r + step, :n_common], dtype=np.float32)
        pb = p[r : r + step]
        e = x - x.max(axis=1, keepdims=True)
        if kl is not None:
            cross = (pb * e).sum(axis=1, dtype=np.float64)  # Σ p (x - max)
        q = np.exp(e, out=e)
        z = q.sum(axis=1, dtype=np.float64)
        q /= z[:, None].astype(np.float32)
        if kl is not None:
            p_sum, p_logp = p_terms
            kl[r : r + len(q)] = np.maximum(
                p_logp[r : r + len(q)] - (cross - np.log(z) * p_sum[r : r + len(q)]), 0.0
            )
        np.minimum(q, pb, out=q)
        alpha[r : r + len(q)] = q.sum(axis=1, dtype=np.float32)
    np.clip(alpha, 0.0, 1.0, out=alpha)
    return alpha, kl
