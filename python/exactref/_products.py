"""er.dot and er.matmul: exact references of dot products and matrix products (exactref/dot.h, exactref/gemm.h).

Every product x_i·y_i is exact (no rounding anywhere), so each element's reference holds s = Σ x_i·y_i and
T = Σ|x_i·y_i| exactly; covers() then applies the dot-product rows of the standards: any_order n·u·T (γ_n·T plus an
underflow term n·(1+(n-1)u)·η when a product may underflow, or with fma=True), split_k, tree, mixed, directed
(Higham, ASNA 2nd ed., (3.5) and §4.2; Jeannerod & Rump, SIMAX 34 (2013)).
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from . import _core
from ._arrays import as_threads, host_array
from ._reference import Reference
from ._standards import structures as _structures


def _as_dtype(name: str) -> Optional[str]:
    return "bfloat16" if name == "bfloat16" else None


def _same_dtype(what: str, names: dict, computation: str = "the product") -> str:
    kinds = set(names.values())
    if len(kinds) > 1:
        listing = ", ".join(f"{k} is {v}" for k, v in names.items())
        raise TypeError(f"{what}: {listing}: pass every operand in the format {computation} was computed in")
    return kinds.pop()


def dot(x: Any, y: Any, *, initial: Any = None, structure: Any = None, threads: Any = None) -> Reference:
    """The exact reference of the dot product Σ_i x_i·y_i (0-d Reference); for matrices, of x @ y (as er.matmul).

    x, y: vectors of the same length n and the same dtype (float16/float32/float64/bfloat16; numpy, DLPack in host
        memory), any strides (read in place; a non-native byte order or an unaligned view, such as a field of a
        packed structured array, is copied first). Two-dimensional operands follow np.dot: the matrix product
        (errors then name dot and x, y, initial).
    initial: an existing output accumulated into (BLAS beta = 1), one value of the same dtype: it counts as one more
        term (n + 1 terms, T includes |initial|).
    structure: structured standards whose bounds the reference holds, as in er.sum ("levels:fold/8,any+fma" for a
        split-K dot of 8 chunks with FMA): computed over the products x_i·y_i in order, each product's own rounding
        at the leaves. Vectors only, and not with initial= (ValueError).

    threads: None (default) or 0: EXACTREF_NUM_THREADS, else OMP_NUM_THREADS, else every core (read at each call);
        or a positive int. Vectors of at least 2 x 32768 pairs are cut into contiguous chunks, one exact
        accumulator per thread, merged exactly: the same bits for every count; shorter ones run on one thread.
        Matrices: as er.matmul. A variable set to anything but a positive integer is a ValueError naming it.

    Exact for every input: products and sums are never rounded; independent of the rounding mode and FTZ/DAZ.
    Special values: NaN operands or Inf·0 give a NaN term; Inf·finite a signed Inf term (see Reference.covers).
    Raises ValueError for lengths or inner dimensions that differ, a structure that is not structured, does not fit
    n or comes with initial= or matrices; TypeError for dtypes that differ or are not floating-point, or a numpy
    masked array.

    >>> x = np.array([1e20, 1.0, -1e20], np.float32); y = np.ones(3, np.float32)
    >>> er.dot(x, y).nearest()            # a left fold in float32 gives 0
    np.float32(1.0)
    """
    a, na = host_array(x, "x")
    b, nb = host_array(y, "y")
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"dot: x has shape {a.shape} and y {b.shape}: er.dot takes vectors (1-D) or matrices "
                         f"(2-D); a scalar times an array is not a sum")
    if a.ndim > 2 or b.ndim > 2:
        raise ValueError(f"dot: x has shape {a.shape} and y {b.shape}: er.dot takes vectors or matrices; use "
                         f"er.matmul for stacks of matrices")
    models = _structures(structure)
    if a.ndim == 2 or b.ndim == 2:
        if models:
            raise ValueError(f"dot: x has shape {a.shape} and y {b.shape}: structure= applies to the dot product of "
                             f"two vectors; check a matrix product's elements with er.dot(a[i], b[:, j], "
                             f"structure=...)")
        return _matmul(x, y, initial, "automatic", "dot", ("x", "y", "initial"), threads)
    name = _same_dtype("dot", {"x": na, "y": nb})
    init = None
    if initial is not None:
        init, ni = host_array(initial, "initial")
        _same_dtype("dot", {"x": name, "initial": ni})
        if init.size != 1:
            raise ValueError(f"dot: initial has shape {init.shape}: pass one value, the existing output")
        init = init.reshape(())
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"dot: x has {a.shape[0]} elements and y {b.shape[0]}: pass two vectors of the same length")
    refs = _core.dot(a, b, _as_dtype(name), init, models, as_threads(threads))
    return Reference(refs, np.zeros((), dtype=np.int64))


def matmul(a: Any, b: Any, *, c: Any = None, method: str = "automatic", threads: Any = None) -> Reference:
    """The exact reference of the matrix product a @ b (or c + a @ b): one dot-product reference per element.

    a: (..., m, K), b: (..., K, n), same dtype (float16/float32/float64/bfloat16), any strides (read in place; a
        non-native byte order or an unaligned view is copied first); numpy's matmul rules for 1-D operands (a (K,)
        is a row, b (K,) a column, the axis dropped from the result) and for broadcasting the batch axes. Returns a
        Reference of shape (..., m, n).
    c: an existing output accumulated into (BLAS beta = 1), broadcastable to the result's shape: c(i, j) counts as
        one more term of element (i, j).
    method: "automatic", "sliced" (the Ozaki scheme: exact binary64 GEMMs on error-free slices) or "per_element"
        (one superaccumulator dot per element). The values never depend on it, only the time.
    threads: None (default) or 0: EXACTREF_NUM_THREADS, else OMP_NUM_THREADS, else every core (read at each call);
        or a positive int: the workers of the slice GEMMs and the per-element work. The values never depend on it.

    Memory: the product is kept compact (gemm.h, about 16 bytes per slice pair per element plus copies of the
    operands); an element's full reference is built when it is asked for. A batch of small products (m·n·K up to
    about 16³ in float64, 19³ in the narrow formats) is kept as one per-element reference for the whole batch
    (C++ exact_matmul_batched): building it costs per output element what one unbatched product of as many rows does
    (bench/bench_python.py --batched); larger batch elements are planned and built one by one. Broadcast batch
    axes are read in place, not copied.
    Raises ValueError when the inner dimensions differ or the batch axes do not broadcast, TypeError for dtypes that
    differ or are not floating-point, or a numpy masked array.

    >>> r = er.matmul(a, b)               # float32 a (64, 256), b (256, 32)
    >>> r.covers(a @ b, standard="any_order", fma=True).all()
    True
    """
    return _matmul(a, b, c, method, "matmul", ("a", "b", "c"), threads)


def _matmul(a: Any, b: Any, c: Any, method: Any, op: str, names: tuple, threads: Any = None) -> Reference:
    """matmul's work; `op` ("matmul" or "dot") and `names` (the caller's names of a, b, c) go into messages."""
    na_, nb_, nc_ = names
    workers = as_threads(threads)
    if not isinstance(method, str):
        raise TypeError(f"method={method!r}: expected 'automatic', 'sliced' or 'per_element'")
    x, na = host_array(a, na_)
    y, nb = host_array(b, nb_)
    name = _same_dtype(op, {na_: na, nb_: nb})
    shape_a, shape_b = x.shape, y.shape
    if x.ndim == 0 or y.ndim == 0:
        raise ValueError(f"{op}: {na_} has shape {x.shape} and {nb_} {y.shape}: matmul takes arrays with at least "
                         f"one dimension (numpy's rule; multiply scalars with *)")
    drop = []
    if x.ndim == 1:
        x = x.reshape(1, -1)
        drop.append(-2)
    if y.ndim == 1:
        y = y.reshape(-1, 1)
        drop.append(-1)
    if x.shape[-1] != y.shape[-2]:
        raise ValueError(f"{op}: {na_} has shape {shape_a} and {nb_} {shape_b}: the inner dimensions "
                         f"{x.shape[-1]} and {y.shape[-2]} differ ({na_}'s last axis must match {nb_}'s "
                         f"{'first' if y.ndim == 2 else 'second-to-last'})")
    try:
        batch = np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
    except ValueError:
        ba, bb = x.shape[:-2], y.shape[:-2]
        k = next(k for k in range(1, min(len(ba), len(bb)) + 1) if 1 != ba[-k] != bb[-k] != 1)
        raise ValueError(f"{op}: the batch axes {ba} of {na_} (shape {shape_a}) and {bb} of {nb_} (shape "
                         f"{shape_b}) do not broadcast: axis {-k - 2} (counted from the end of each) has length "
                         f"{ba[-k]} in {na_} and {bb[-k]} in {nb_} (batch axes must be equal or 1)") from None
    m, n = x.shape[-2], y.shape[-1]
    full = batch + (m, n)
    x = np.broadcast_to(x, batch + x.shape[-2:])
    y = np.broadcast_to(y, batch + y.shape[-2:])
    z = None
    if c is not None:
        z, nc = host_array(c, nc_)
        _same_dtype(op, {na_: name, nc_: nc})
        result_shape = tuple(d for i, d in enumerate(full) if i - len(full) not in drop)
        try:
            z = np.broadcast_to(z, result_shape)
        except ValueError:
            raise ValueError(f"{op}: {nc_} has shape {z.shape} but the product has shape {result_shape}") from None
        z = z.reshape(full) if z.flags.c_contiguous else np.ascontiguousarray(z).reshape(full)
    refs = _core.matmul(x, y, z, _as_dtype(name), method, workers)
    index = np.arange(int(np.prod(full, dtype=np.int64)), dtype=np.int64).reshape(full)
    for axis in sorted(drop):
        index = index.squeeze(axis=axis)
    return Reference(refs, index, whole=True)  # every element once, in order: covers() judges the products in place


def matmul_engine() -> str:
    """The engine of er.matmul's slice GEMMs and the kernel it runs, as exactref::matmul_engine() says it.

    Returns a string such as "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY SkylakeX MAX_THREADS=64 (kernel:
    SkylakeX)": Debian's OpenBLAS, which exactref links (numpy's wheels carry their own and are not this one). Where
    OpenBLAS 0.3.21 does not know the CPU (Emerald Rapids is one) it falls back to its SSE3 kernel, Prescott, and runs
    DGEMM about 4.6x slower; exactref replaces that fallback when it is imported, and the string then says so
    ("...; OpenBLAS chose Prescott, its SSE3 fallback for a CPU it does not know, replaced by Cooperlake; ...").
    OPENBLAS_CORETYPE (set before the import) forces a kernel and EXACTREF_BLAS_KERNEL=keep keeps OpenBLAS's own
    choice. The values of every reference are the same on every kernel (docs/gemm.md); only the time differs.

        >>> er.matmul_engine()                       # e.g. on an AVX-512 CPU OpenBLAS knows
        'OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY SkylakeX MAX_THREADS=64 (kernel: SkylakeX)'
    """
    return _core.matmul_engine()
