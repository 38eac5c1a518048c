"""The deterministic trees (exactref/tree.h) and comparison orders (exactref/orders.h): computed results, to compare
with the exact reference and to check with covers().

Every operation is rounded to the accumulation format (round to nearest, ties to even): the data's own format, or
float32 for float16/bfloat16 data with acc="float32" (the result then comes back as float32: round it once to the
output format, and check it with standard="mixed", acc="float32", out=...). Results are numpy scalars.
"""

from __future__ import annotations

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


def tree_height(shape: str, n: Any) -> int:
    """The height of the tree `shape` over n elements: the most roundings on a path from an element to the root,
    for standard="tree", height=h. halving L: ceil(log2 min(n, L)) + ceil(log2 m); fold L: (min(n, L) - 1) +
    ceil(log2 m), m = ceil(n / L) leaves; 0 for n <= 1 (a single term: standard="tree", height=0 covers only s).

    n: an integer from 0 to 2**64 - 1. Raises ValueError for n out of that range or an unknown shape.

    >>> er.tree_height("halving256", 1000), er.tree_height("fold16", 1000)
    (10, 21)
    """
    count = as_count(n, "n", 0)
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
    np.add.reduce on contiguous data. standard="any_order" covers it. x is taken in C order; empty input gives
    +0.0."""
    flat, as_dtype = _flat(x)
    return _scalar(_core.pairwise_sum(flat, as_dtype, _acc(acc)))
