"""A FlashAttention-2-style forward pass in numpy, with the numerics of a
16-bit GPU kernel: scores Q K^T accumulated in float32 from the storage type,
an online softmax over blocks of keys (running maximum m and sum l in
float32), P = exp(S - m) rounded to the storage type of V before P V, that
product accumulated in float32 with the running output rescaled, and O / l
rounded once to the output type by the caller.

Query rows are independent, so the query blocks change nothing numerically;
the loop is kept so that the kernel reads as the algorithm it models. The
masks (causal, window, padding) are computed from indices inside each block,
as a GPU kernel does, never materialised for the whole problem.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import ml_dtypes
import numpy as np

SIXTEEN_BIT = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


@dataclasses.dataclass
class Problem:
    """One Attention call, its inputs already in heads layout and the past appended."""

    q: np.ndarray  # [B, Hq, S, D], storage type
    k: np.ndarray  # [B, Hkv, T, D], storage type (past ++ current)
    v: np.ndarray  # [B, Hkv, T, Dv], storage type
    # The attention mask as an additive bias [Bm, Hm, Sm, T] (each of the
    # first three 1 or full), its last axis already padded with -inf to T.
    mask: Optional[np.ndarray]
    past_length: int
    nonpad: Optional[np.ndarray]  # [B] int64, valid keys per batch entry (opset 24)
    causal: bool
    left_window: int  # -1: unbounded (opset 25)
    right_window: int
    scale: float
    softcap: float  # 0: none
    accumulate: np.dtype  # float32, or float64 for float64 inputs or softmax_precision double
    fault: str = ""
    block_queries: int = 32
    block_keys: int = 32


def kv_head_of_query_head(problem: Problem) -> np.ndarray:
    """For each query head, the key/value head it reads (grouped-query attention,
    repeat-interleave: spec/functions/attention.md, step 3)."""
    q_heads, kv_heads = problem.q.shape[1], problem.k.shape[1]
    heads = np.arange(q_heads)
    if problem.fault == "head_mod":
        return heads % kv_heads
    return heads // (q_heads // kv_heads)


class Scores:
    """Scores of a block of query rows against a block of keys: scaled, soft-capped
    and masked, in the accumulation type. The kernel and the plain qk output
    both read them here, so a fault in the scores reaches both."""

    def __init__(self, problem: Problem):
        p = problem
        self.p = p
        acc = p.accumulate
        self.q = p.q.astype(acc)
        self.k = p.k.astype(acc)[:, kv_head_of_query_head(p)]  # [B, Hq, T, D]
        scale = p.scale * (1 + 1e-3) if p.fault == "scale_off" else p.scale
        self.scale = acc.type(scale)
        self.softcap = acc.type(p.softcap)
        nonpad = None if p.fault == "ignore_nonpad" else p.nonpad
        self.nonpad = nonpad
        # Position of query row 0 among the keys, per batch entry: the past
        # length with a cache, nonpad_kv_seqlen - S with an external one.
        batch, _, q_len, _ = p.q.shape
        if nonpad is not None and p.past_length == 0:
            self.offsets = nonpad.astype(np.int64) - q_len
        else:
            self.offsets = np.full(batch, p.past_length, dtype=np.int64)

    def bias(self, r0: int, r1: int, c0: int, c1: int) -> np.ndarray:
        """The additive bias (0 or -inf, plus the mask) of rows [r0, r1) and keys
        [c0, c1), broadcastable to [B, Hq, rows, keys]."""
        p, acc = self.p, self.p.accumulate
        rows = np.arange(r0, r1, dtype=np.int64)[None, None, :, None]
        keys = np.arange(c0, c1, dtype=np.int64)[None, None, None, :]
        offsets = self.offsets[:, None, None, None]
        position = rows + offsets  # where each query row sits among the keys
        blocked = np.zeros((offsets.shape[0], 1, r1 - r0, c1 - c0), dtype=bool)
        if p.causal:
            causal_position = rows if p.fault == "causal_top_left" else position
            blocked |= keys > causal_position
        distance = position - keys  # > 0: the key lies to the left of the query
        if p.left_window >= 0:
            reach = p.left_window + 1 if p.fault == "window_off_by_one" else p.left_window
            blocked |= distance > reach
        if p.right_window >= 0:
            blocked |= -distance > p.right_window
        if self.nonpad is not None:
            blocked |= keys >= self.nonpad.astype(np.int64)[:, None, None, None]
        bias = np.where(blocked, acc.type(-np.inf), acc.type(0))
        if p.mask is not None:
            mask_rows = p.mask if p.mask.shape[2] == 1 else p.mask[:, :, r0:r1]
            bias = bias + mask_rows[..., c0:c1].astype(acc)
        return bias

    def block(self, r0: int, r1: int, c0: int, c1: int):
        """(scaled, capped, biased) scores [B, Hq, rows, keys]."""
        product = self.q[:, :, r0:r1] @ self.k[:, :, c0:c1].swapaxes(-1, -2)
        scaled = product * self.scale
        bias = self.bias(r0, r1, c0, c1)
        if self.p.softcap == 0:
            return scaled, scaled, scaled + bias
        if self.p.fault == "softcap_after_mask":
            return scaled, scaled, self.softcap * np.tanh((scaled + bias) / self.softcap)
        capped = self.softcap * np.tanh(scaled / self.softcap)
        return scaled, capped, capped + bias


def _round_to(values: np.ndarray, storage: np.dtype, acc: np.dtype) -> np.ndarray:
    """values rounded to the storage type (nearest even) and read back, as a
    kernel that feeds them to a 16-bit matrix unit does; identity otherwise."""
    if storage in SIXTEEN_BIT:
        return values.astype(storage).astype(acc)
    return values


def _sum_float16(values: np.ndarray) -> np.ndarray:
    """Sum over the last axis with a float16 accumulator (numpy's own float16
    reductions accumulate in float32)."""
    total = np.zeros(values.shape[:-1], dtype=np.float16)
    for j in range(values.shape[-1]):
        total = total + values[..., j]
    return total


# Infinities and NaN are data here (masks, overflow in the faults), not accidents
# to warn about in the worker's log.
_QUIET = dict(over="ignore", invalid="ignore", divide="ignore")


def flash_forward(problem: Problem) -> np.ndarray:
    """Y [B, Hq, S, Dv] in the accumulation type, before rounding to the output type."""
    with np.errstate(**_QUIET):
        return _flash_forward(problem)


def _flash_forward(problem: Problem) -> np.ndarray:
    p, acc = problem, problem.accumulate
    scores = Scores(p)
    batch, q_heads, q_len, _ = p.q.shape
    total, v_size = p.k.shape[2], p.v.shape[3]
    v = p.v.astype(acc)[:, kv_head_of_query_head(p)]  # [B, Hq, T, Dv]
    # The softmax state's type: the accumulation type, or float16 for that fault.
    state = np.dtype(np.float16) if p.fault == "softmax_fp16" else acc
    y = np.zeros((batch, q_heads, q_len, v_size), dtype=acc)
    for r0 in range(0, q_len, p.block_queries):
        r1 = min(r0 + p.block_queries, q_len)
        m = np.full((batch, q_heads, r1 - r0), -np.inf, dtype=state)  # running maximum
        l = np.zeros((batch, q_heads, r1 - r0), dtype=state)  # running sum of exp(S - m)
        o = np.zeros((batch, q_heads, r1 - r0, v_size), dtype=acc)  # running unnormalised output
        for c0 in range(0, total, p.block_keys):
            c1 = min(c0 + p.block_keys, total)
            _, _, s = scores.block(r0, r1, c0, c1)
            s = np.broadcast_to(s, (batch, q_heads, r1 - r0, c1 - c0)).astype(state)
            m_new = np.maximum(m, s.max(axis=-1))
            if p.fault == "no_max_subtraction":
                alpha = np.ones_like(m)
                probs = np.exp(s)
            else:
                # A row with no allowed key so far keeps m = -inf; subtracting 0
                # instead keeps exp(-inf - -inf) = NaN out (its P is then 0).
                m_used = np.where(np.isneginf(m_new), state.type(0), m_new)
                alpha = np.exp(m - m_used)
                probs = np.exp(s - m_used[..., None])
            block_sum = _sum_float16(probs) if state == np.float16 else probs.sum(axis=-1)
            l = alpha * l + block_sum
            # P goes into the second product in V's storage type (float16,
            # bfloat16), the sum l keeps the unrounded values, as FlashAttention-2 does.
            p_low = _round_to(probs.astype(acc), p.v.dtype, acc)
            o = alpha.astype(acc)[..., None] * o + p_low @ v[:, :, c0:c1]
            m = m_new
        l = l.astype(acc)
        if p.fault != "nan_masked_rows":
            # A fully masked row has l = 0 and o = 0: its output is zeros
            # (Attention 23 and 24 errata, 25: "a zero output row ..., not NaN").
            l = np.where(l == 0, acc.type(1), l)
        y[:, :, r0:r1] = o / l[..., None]
    return y


def qk_output(problem: Problem, mode: int) -> np.ndarray:
    """qk_matmul_output [B, Hq, S, T] in the accumulation type, computed plainly
    (the whole row at once): 0 scaled scores, 1 soft-capped, 2 with the bias,
    3 the softmax, whose fully masked rows are zeros."""
    with np.errstate(**_QUIET):
        return _qk_output(problem, mode)


def _qk_output(problem: Problem, mode: int) -> np.ndarray:
    p, acc = problem, problem.accumulate
    batch, q_heads, q_len, _ = p.q.shape
    total = p.k.shape[2]
    scaled, capped, biased = Scores(p).block(0, q_len, 0, total)
    shape = (batch, q_heads, q_len, total)
    if mode < 3:
        return np.broadcast_to((scaled, capped, biased)[mode], shape).astype(acc)
    biased = np.broadcast_to(biased, shape)
    top = biased.max(axis=-1, keepdims=True) if total else np.zeros(shape[:-1] + (1,), acc)
    guarded = p.fault != "nan_masked_rows"
    if guarded:
        top = np.where(np.isneginf(top), acc.type(0), top)
    exps = np.exp(biased - top)
    sums = exps.sum(axis=-1, keepdims=True)
    if guarded:
        sums = np.where(sums == 0, acc.type(1), sums)
    return (exps / sums).astype(acc)
