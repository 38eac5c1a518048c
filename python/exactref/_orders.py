"""The deterministic trees (exactref/tree.h) and comparison orders (exactref/orders.h): computed results, to compare
with the exact reference and to check with covers().

Every operation is rounded to the accumulation format (round to nearest, ties to even): the data's own format, or
float32 for float16/bfloat16 data with acc="float32" (the result then comes back as float32: round it once to the
output format, and check it with standard="mixed", acc="float32", out=...). Results are numpy scalars.
"""

from __future__ import annotations

import functools
from typing import Any, Optional

import numpy as np

from . import _core
from ._arrays import as_count, dtype_name, host_array, numpy_dtype

_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def _flat(x: Any) -> tuple:
    a, name = host_array(x, "x")
    return np.ascontiguousarray(a).reshape(-1), ("bfloat16" if name == "bfloat16" else None)


def _scalar(bits_and_format: tuple) -> np.generic:
    bits, name = bits_and_format
    dtype = numpy_dtype(name)
    return np.array(bits, dtype=_UINT[dtype.itemsize]).view(dtype)[()]


def _acc(acc: Any) -> Optional[str]:
    return None if acc is None else dtype_name(acc, "acc")


def tree_sum(x: Any, shape: str = "halving256", op: str = "sum", *, acc: Any = None, mask: Any = None) -> np.generic:
    """x reduced over a deterministic tree: the same bits on every machine and thread count (DESIGN §4, a contract).

    x: float16/float32/float64/bfloat16 array, taken in C order (flattened; a non-contiguous array is copied).
    shape: "halving256" (the canonical tree, the shape of a 256-thread CUDA block), "fold16" (leaves of 16 folded
        left to right), "halvingL"/"foldL" for another power of two L, or "halving"/"fold" for the defaults.
    op: "sum", "product", "min", "max", "any", "all".
    acc: None (the data's format) or float32 (np.float32, "float32", "single", "f4") for float16/bfloat16 data.
    mask: fold shapes only: a bool array of x's size, the elements that take part.

    Error bound: γ_h·Σ|x_i| with h = tree_height(shape, n) (Higham §4.2): check with
    r.covers(result, standard="tree", height=er.tree_height(shape, n)). Empty input gives the op's identity.
    Raises ValueError for an unknown shape or op, or a mask with a halving shape.

    >>> er.tree_sum(np.array([-0.0]))                       # halving: absent slots are not zeros
    np.float64(-0.0)
    >>> er.tree_sum(np.array([-0.0]), shape="fold16")       # fold starts from +0.0
    np.float64(0.0)
    """
    flat, as_dtype = _flat(x)
    m = None
    if mask is not None:
        if isinstance(mask, np.ma.MaskedArray):
            raise TypeError("mask is a numpy masked array: pass a plain bool array (mask.filled(False) drops the "
                            "masked flags)")
        m = np.asarray(mask)
        if m.dtype != np.bool_:
            raise TypeError(f"mask: expected a bool array, got {m.dtype}")
        m = np.ascontiguousarray(m).reshape(-1)
        if m.size != flat.size:
            raise ValueError(f"mask has {m.size} elements for {flat.size} data elements: pass one flag per element")
    return _scalar(_core.tree_reduce(flat, as_dtype, op, shape, _acc(acc), m))


# numpy's pairwise summation (numpy/_core/src/umath/loops_utils.h.src, @TYPE@_pairwise_sum): runs shorter than
# 8 are folded, runs of at most PW_BLOCKSIZE = 128 use 8 interleaved accumulators, longer runs are halved.
_PW_UNROLL = 8
_PW_BLOCKSIZE = 128


@functools.lru_cache(maxsize=None)
def _pairwise_height(n: int) -> int:
    """The depth of the deepest leaf of numpy's pairwise_sum over n elements (the roundings on its path):
      n < 8:        r = -0.0; r += x[i] for each i: the first addition is exact, so n - 1;
      8 <= n <= 128: r[j] = x[j], r[j] += x[i + j] for each full group of 8 beyond the first (m - 1 additions,
                    m = n // 8), then ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)) (3), then the n % 8 remaining elements
                    added one by one to the result (n % 8): m + 2 + n % 8 for x[0];
      n > 128:      n2 = n // 2 rounded down to a multiple of 8, P(x[:n2]) + P(x[n2:]): 1 + the deeper half.
    Each addition rounds once, so every leaf's error factor is at most (1 + u)^depth: γ_depth (Higham §4.2)."""
    if n < _PW_UNROLL:
        return max(n - 1, 0)
    if n <= _PW_BLOCKSIZE:
        return n // _PW_UNROLL + 2 + n % _PW_UNROLL
    half = n // 2
    half -= half % _PW_UNROLL
    return 1 + max(_pairwise_height(half), _pairwise_height(n - half))


def tree_height(shape: str, n: Any) -> int:
    """The height of the tree `shape` over n elements: the most roundings on a path from an element to the root,
    for standard="tree", height=h. halving L: ceil(log2 min(n, L)) + ceil(log2 m); fold L: (min(n, L) - 1) +
    ceil(log2 m), m = ceil(n / L) leaves; 0 for n <= 1 (a single term: standard="tree", height=0 covers only s).

    shape "pairwise": numpy's pairwise summation, the order of np.sum / np.add.reduce over n contiguous float64 or
    float32 elements reduced whole (er.pairwise_sum computes its bits): the depth of its deepest leaf, exactly
    (the first element: numpy folds runs under 8 from -0.0, sums runs of 8 to 128 with 8 accumulators and halves
    longer runs at a multiple of 8; see _pairwise_height). It is the smallest h for which tree(h)'s argument
    (Higham §4.2: every leaf rounded at most h times) holds for that order, about log2(n / 128) + 24 at most
    (n = 127: 24; 128: 18; 10^6: 31); a strided or non-contiguous axis, or a float16 sum (numpy accumulates it in
    float32 and rounds once: standard="mixed"), is another order.

    n: an integer from 0 to 2**64 - 1. Raises ValueError for n out of that range or an unknown shape.

    >>> er.tree_height("halving256", 1000), er.tree_height("fold16", 1000), er.tree_height("pairwise", 1000)
    (10, 21, 21)
    """
    count = as_count(n, "n", 0)
    if shape == "pairwise":
        return _pairwise_height(count)
    return int(_core.tree_height(shape, count))


def fold_sum(x: Any, *, acc: Any = None) -> np.generic:
    """The left fold ((x0 + x1) + x2) + ...: a plain loop. Error bound (n-1)·u·Σ|x_i| (Higham (4.4); Rump 2012):
    standard="any_order" covers it. x is taken in C order; empty input gives +0.0."""
    flat, as_dtype = _flat(x)
    return _scalar(_core.fold_sum(flat, as_dtype, _acc(acc)))


def kahan_sum(x: Any, *, acc: Any = None) -> np.generic:
    """Kahan–Babuška compensated summation (Neumaier, ZAMM 54 (1974)): |error| <= u·|s| + O(n·u²)·Σ|x_i|.
    x is taken in C order; empty input gives +0.0."""
    flat, as_dtype = _flat(x)
    return _scalar(_core.kahan_sum(flat, as_dtype, _acc(acc)))


def pairwise_sum(x: Any, *, acc: Any = None) -> np.generic:
    """numpy's pairwise summation (blocks of 128 with 8 partial sums, halves split at multiples of 8): the order of
    np.add.reduce on contiguous data. standard="any_order" covers it, and so does the tighter standard="tree",
    height=er.tree_height("pairwise", n). x is taken in C order; empty input gives
    +0.0."""
    flat, as_dtype = _flat(x)
    return _scalar(_core.pairwise_sum(flat, as_dtype, _acc(acc)))
