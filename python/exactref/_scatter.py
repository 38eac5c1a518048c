"""Exact references of scatter-adds and scans (exactref/scatter.h): er.segment_sum, er.scatter_add, er.index_add,
er.add_at, er.bincount, er.embedding_bag and er.cumsum, named after the library functions whose results they judge.

Each returns a Reference of the output's shape, one exact reference per output element: element k is the sum of the
updates that land on it (plus the initial value, where the function has one, as one more term), kept compact in C++
(48 bytes per element; a full ~2.3 KB reference is built only for the per-element detail queries: exact, bound,
verdict, ratios, pickling). covers() judges every element on its own terms: standard="any_order" bounds element k
by (n_k - 1)·u·S_k, the model of atomics landing in any order onto the initial value; scans (cumsum) are sums of
prefixes, so any_order's bound of prefix i grows with i (docs/scatter.md says which standard fits which kernel).

Inputs: float arrays (numpy, any ``__dlpack__`` array in host memory, Python floats) of float64, float32, float16 or
bfloat16, every float operand of one call in the same format (torch's rule; a TypeError otherwise); index arrays of
any integer dtype (int32 and int64 are read in place, other integer types converted exactly; float or bool indices
are a TypeError naming the argument). Errors name the argument and its first offending position: IndexError for an
index outside the output where numpy and torch raise one (add_at, scatter_add, index_add, embedding_bag), ValueError
for shapes and lengths that do not fit, negative bincount input and bad offsets.

Threads (threads= of every builder; the scans run on one thread): None (default) or 0: EXACTREF_NUM_THREADS, else
OMP_NUM_THREADS (its first entry), else every core, read at each call; or a positive int. The result is the same,
bit for bit, for every count: with at least 8 updates per output element each thread adds a contiguous chunk of the
updates into partial cells of its own (48 bytes per element more), merged exactly at the end; otherwise each thread
owns a range of the output and reads every index (updates that all land on one element then gain nothing). Fewer
than 2 x 32768 updates run on one thread, with no thread start cost. A variable that is set to anything but a positive integer is a ValueError naming it; threads=
that is not None or an int from 0 to 65536 is a TypeError or ValueError.
"""

from __future__ import annotations

import operator
from typing import Any, Optional, Tuple

import numpy as np

from . import _core
from ._arrays import _check_device, as_count, as_threads, host_array
from ._hints import exactly_as
from ._products import _as_dtype, _same_dtype
from ._reference import Reference

_INT64_MAX = np.iinfo(np.int64).max


def _flat(a: np.ndarray) -> np.ndarray:
    """a's elements in C order as one contiguous vector (no copy when a is C-contiguous)."""
    return np.ascontiguousarray(a).reshape(-1)


def _indices(x: Any, what: str, fn: str) -> np.ndarray:
    """An int32 or int64 numpy array of x's integer values (x: numpy, DLPack, a list of ints)."""
    if isinstance(x, np.ma.MaskedArray):
        raise TypeError(f"{fn}: {what} is a numpy masked array: pass the indices to use (.compressed())")
    if isinstance(x, np.ndarray):
        a = x
    elif hasattr(x, "__dlpack__") and not isinstance(x, np.generic):
        _check_device(x, what)
        try:
            a = np.from_dlpack(x)
        except (AttributeError, TypeError, RuntimeError, BufferError):  # an older numpy, or a producer it cannot read
            a = np.asarray(x)
    else:
        a = np.asarray(x)
        if isinstance(x, (list, tuple)) and a.size == 0:
            a = a.astype(np.int64)  # np.asarray([]) is float64
    kind = a.dtype.kind
    if kind == "b":
        raise TypeError(f"{fn}: {what} is a bool array; pass integer indices (np.flatnonzero(mask) gives the "
                        f"positions of a mask)")
    if kind not in "iu":
        raise TypeError(f"{fn}: {what}: expected integer indices (int32 or int64), got an array of {a.dtype}: "
                        f"indices address elements and are never rounded; convert them with .astype(np.int64) if "
                        f"they hold integers")
    if a.dtype.isnative and a.dtype.itemsize in (4, 8) and kind == "i":
        return a
    if kind == "u" and a.dtype.itemsize == 8 and a.size and int(a.max()) > _INT64_MAX:
        position = int(np.argmax(a > _INT64_MAX))
        raise ValueError(f"{fn}: {what}[{position}] = {int(a.reshape(-1)[position])} does not fit in int64")
    return a.astype(np.int64)


def _common_index_type(*arrays: np.ndarray) -> Tuple[np.ndarray, ...]:
    """The arrays in one index type (int64 unless they are all int32)."""
    if all(a.dtype == arrays[0].dtype for a in arrays):
        return arrays
    return tuple(a.astype(np.int64) for a in arrays)


def _check_range(fn: str, what: str, index: np.ndarray, low: int, high: int, rule: str) -> None:
    """IndexError naming the first element of `index` outside [low, high), as numpy and torch raise."""
    bad = (index < low) | (index >= high)
    if not bad.any():
        return
    position = np.unravel_index(int(np.argmax(bad)), index.shape)
    at = ", ".join(str(int(p)) for p in position)
    raise IndexError(f"{fn}: {what}[{at}] = {int(index[position])} lies outside [{low}, {high}); {rule}")


def _dim(value: Any, rank: int, fn: str) -> int:
    try:
        if isinstance(value, (bool, np.bool_)):  # an int to Python, but dim=True is a mistake (torch refuses it)
            raise TypeError
        d = operator.index(value)
    except TypeError:
        raise TypeError(f"{fn}: dim={value!r}: expected an integer (not a bool)") from None
    if not -rank <= d < rank:
        raise IndexError(f"{fn}: dim={d} is out of range for an array of rank {rank} (expected {-rank} .. "
                         f"{rank - 1})")
    return d + rank if d < 0 else d


def _onto(fn: str, initial: Any, dim: Any, index: Any, updates: Any,
          updates_name: str) -> Tuple[np.ndarray, np.ndarray, str, np.ndarray, int]:
    """The operands of a torch-style add onto `initial` along `dim` (scatter_add, index_add): initial, updates, their
    common dtype name, the indices and dim in 0 .. rank - 1."""
    c, name = host_array(initial, "initial")
    u, nu = host_array(updates, updates_name)
    _same_dtype(fn, {"initial": name, updates_name: nu}, fn)
    idx = _indices(index, "index", fn)
    if c.ndim not in (1, 2):
        raise ValueError(f"{fn}: initial has shape {c.shape}; er.{fn} takes arrays of rank 1 or 2")
    return c, u, name, idx, _dim(dim, c.ndim, fn)


def _reference(refs: Any, shape: Tuple[int, ...]) -> Reference:
    return Reference(refs, np.arange(len(refs), dtype=np.int64).reshape(shape), whole=True)


def segment_sum(values: Any, segment_ids: Any, num_segments: Optional[int] = None,
                initial: Any = None, *, threads: Any = None) -> Reference:
    """Exact references of jax.ops.segment_sum(values, segment_ids, num_segments) (tf.math.unsorted_segment_sum):
    out[k] = initial[k] + Σ_{i: segment_ids[i] = k} values[i] for k = 0 .. num_segments - 1.

    values: a vector of n float64/float32/float16/bfloat16 values (numpy, DLPack, floats).
    segment_ids: n integer ids, sorted or not (int32/int64 read in place).
    num_segments: None (max id + 1, as jax; 0 for no ids) or a count. Ids outside [0, num_segments), negative ones
        included, are dropped, as jax.ops.segment_sum drops them (its default mode).
    initial: None (the segments start from nothing: a segment with no terms is +0.0, n_k = 0), or values that
        broadcast to (num_segments,) in the dtype of values: one more term of each segment, the existing output.
    threads: None (default: EXACTREF_NUM_THREADS, else OMP_NUM_THREADS, else every core) or a positive int; the same
        bits for every count (the module's "Threads").
    Returns a Reference of shape (num_segments,). Check results per element with standard="any_order": each
    segment's bound is (n_k - 1)·u·S_k, which covers atomics in any order (jax on GPU, XLA's scatter).
    Special values: NaN and ±Inf values make their segment's reference special (Reference.covers).
    Raises ValueError for values or ids that are not vectors, lengths that differ, an initial that does not
    broadcast; TypeError for float or bool ids or dtypes that differ.

    >>> r = er.segment_sum(np.array([1.0, 2.0, 3.0, 4.0]), np.array([0, 2, 0, 2]), num_segments=3)
    >>> r.nearest()
    array([4., 0., 6.])
    >>> r.covers(jax.ops.segment_sum(values, ids, num_segments=3)).all()
    True
    """
    fn = "segment_sum"
    v, name = host_array(values, "values")
    ids = _indices(segment_ids, "segment_ids", fn)
    if v.ndim != 1 or ids.ndim != 1:
        raise ValueError(f"{fn}: values has shape {v.shape} and segment_ids {ids.shape}; er.segment_sum takes "
                         f"vectors (a segment sum of rows is one segment sum per column)")
    if num_segments is None:
        count = max(int(ids.max()) + 1, 0) if ids.size else 0
    else:
        count = as_count(num_segments, "num_segments", context=f"{fn}: ")
    init = None
    if initial is not None:
        c, nc = host_array(initial, "initial")
        _same_dtype(fn, {"values": name, "initial": nc}, "the segment sum")
        try:
            init = _flat(np.broadcast_to(c, (count,)))
        except ValueError:
            raise ValueError(f"{fn}: initial has shape {c.shape}; expected one value per segment, "
                             f"({count},), or one value for all") from None
    refs = _core.segment_sum(_flat(v), _flat(ids), count, init, _as_dtype(name), as_threads(threads))
    return _reference(refs, (count,))


def scatter_add(initial: Any, dim: int, index: Any, src: Any, *, threads: Any = None) -> Reference:
    """Exact references of initial.scatter_add_(dim, index, src) (torch.Tensor.scatter_add_, torch.scatter_add):
    dim 0: out[index[i][j]][j] += src[i][j];  dim 1: out[i][index[i][j]] += src[i][j]  (rank 1: out[index[i]]).

    initial: the tensor scattered into, rank 1 or 2, float64/float32/float16/bfloat16; every element of the output
        has its initial value as one term (n_k = 1 + the updates that hit it).
    dim: 0, 1, or negative (-1 is the last axis).
    index: integer array of initial's rank; every position (i, j) of index adds src[i][j]; index may be smaller
        than src in any dimension, and than initial outside dim (torch's rules).
    src: the updates, of initial's rank and dtype.
    threads: None (default: EXACTREF_NUM_THREADS, else OMP_NUM_THREADS, else every core) or a positive int; the same
        bits for every count (the module's "Threads").
    Returns a Reference of initial's shape. Check results per element with standard="any_order" (atomics in any
    order onto the initial value, torch's CUDA kernel).
    Raises IndexError for an index value outside [0, initial.shape[dim]) or a dim outside the rank, naming the
    first position; ValueError for ranks and shapes that do not fit; TypeError for float or bool indices or dtypes
    that differ.

    >>> r = er.scatter_add(np.zeros(3), 0, np.array([0, 2, 0]), np.array([1.0, 2.0, 3.0]))
    >>> r.nearest(), r.count
    (array([4., 0., 2.]), array([3, 1, 2]))
    """
    fn = "scatter_add"
    c, s, name, idx, d = _onto(fn, initial, dim, index, src, "src")
    if idx.ndim == c.ndim:
        _check_range(fn, "index", idx, 0, c.shape[d], f"every index must address an element of initial along "
                                                      f"dim {d} (of length {c.shape[d]})")
    refs = _core.scatter_add(_flat(c), list(c.shape), d, _flat(idx), list(idx.shape), _flat(s), list(s.shape),
                             _as_dtype(name), as_threads(threads))
    return _reference(refs, c.shape)


def index_add(initial: Any, dim: int, index: Any, source: Any, *, threads: Any = None) -> Reference:
    """Exact references of initial.index_add_(dim, index, source) (torch.Tensor.index_add_, alpha = 1):
    dim 0: out[index[i], :] += source[i, :];  dim 1: out[:, index[j]] += source[:, j]  (rank 1: out[index[i]]).

    initial: the tensor added into, rank 1 or 2, float64/float32/float16/bfloat16; its values are one term of each
        output element.
    dim: 0, 1, or negative.
    index: a vector of source.shape[dim] integers in [0, initial.shape[dim]), repeats allowed (they accumulate).
    source: the slices added, of initial's rank and dtype, agreeing with initial outside dim.
    threads: None (default: EXACTREF_NUM_THREADS, else OMP_NUM_THREADS, else every core) or a positive int; the same
        bits for every count (the module's "Threads").
    Returns a Reference of initial's shape. Check results per element with standard="any_order" (torch's CUDA
    index_add_ uses atomics; its CPU loop adds in index order, which any_order covers too).
    Raises IndexError for an index outside [0, initial.shape[dim]) or a dim outside the rank; ValueError for an
    index that is not a vector of source.shape[dim] entries or shapes that do not agree; TypeError for float or
    bool indices or dtypes that differ.

    >>> er.index_add(np.ones((2, 2)), 0, np.array([1, 1]), np.array([[1.0, 2.0], [3.0, 4.0]])).nearest()
    array([[1., 1.],
           [5., 7.]])
    """
    fn = "index_add"
    c, s, name, idx, d = _onto(fn, initial, dim, index, source, "source")
    if idx.ndim != 1:
        raise ValueError(f"{fn}: index has shape {idx.shape}; expected a vector, one index per slice of source "
                         f"along dim {d}")
    _check_range(fn, "index", idx, 0, c.shape[d], f"every index must address a slice of initial along dim {d} "
                                                  f"(of length {c.shape[d]})")
    refs = _core.index_add(_flat(c), list(c.shape), d, _flat(idx), _flat(s), list(s.shape), _as_dtype(name),
                           as_threads(threads))
    return _reference(refs, c.shape)


def add_at(initial: Any, indices: Any, values: Any, *, threads: Any = None) -> Reference:
    """Exact references of np.add.at(initial, indices, values) on a one-dimensional array:
    out[indices[i]] += values[i], each repeated index accumulating (unbuffered, as np.add.at).

    initial: a vector of float64/float32/float16/bfloat16 values, one term of each output element.
    indices: a vector of integers; negative ones count from the end, as numpy's.
    values: one value per index, or one value for all (a scalar or shape (1,)); a Python float or a value of
        another float dtype is taken when it is exactly a value of initial's dtype (np.add.at casts it; here
        nothing is rounded).
    threads: None (default: EXACTREF_NUM_THREADS, else OMP_NUM_THREADS, else every core) or a positive int; the same
        bits for every count (the module's "Threads").
    Returns a Reference of initial's shape. np.add.at adds in index order (a left fold per element); any_order
    covers it and every other order.
    Raises IndexError for an index outside [-n, n), naming the first; ValueError for shapes that are not vectors or
    a values length that is neither 1 nor len(indices); TypeError for float or bool indices, or values that are not
    exactly of initial's dtype.

    >>> a = np.zeros(3, np.float32); np.add.at(a, [0, 0, -1], np.float32(0.1))
    >>> er.add_at(np.zeros(3, np.float32), [0, 0, -1], np.float32(0.1)).covers(a).all()
    True
    """
    fn = "add_at"
    c, name = host_array(initial, "initial")
    v, nv = host_array(values, "values")
    if nv != name:
        converted = exactly_as(v, name) if nv != "bfloat16" else None
        if converted is None:
            raise TypeError(f"{fn}: initial is {name} but values is {nv} and not exactly {name} values: pass "
                            f"values in the format the addition was computed in")
        v, _ = host_array(converted, "values")
    idx = _indices(indices, "indices", fn)
    if c.ndim != 1 or idx.ndim != 1 or v.ndim > 1:
        raise ValueError(f"{fn}: initial has shape {c.shape}, indices {idx.shape} and values {v.shape}; er.add_at "
                         f"takes a vector, a vector of indices and one value per index (or one for all)")
    n = c.shape[0]
    _check_range(fn, "indices", idx, -n, n, f"the array has {n} elements (numpy accepts -{n} .. {n - 1})")
    refs = _core.add_at(_flat(c), _flat(idx), _flat(v), _as_dtype(name), as_threads(threads))
    return _reference(refs, c.shape)


def bincount(x: Any, weights: Any, minlength: int = 0, *, threads: Any = None) -> Reference:
    """Exact references of np.bincount(x, weights, minlength): out[k] = Σ_{i: x[i] = k} weights[i].

    x: a vector of non-negative integers. weights: a vector of len(x) float64/float32/float16/bfloat16 values.
    minlength: the least length of the output.
    threads: None (default: EXACTREF_NUM_THREADS, else OMP_NUM_THREADS, else every core) or a positive int; the same
        bits for every count (the module's "Threads").
    Returns a Reference of shape (max(max(x) + 1, minlength),); a bin no value lands in has no terms (+0.0).
    np.bincount adds in the order of x (in float64: pass its result as it is, covers() judges it as float64 with
    float64's bound); standard="any_order" covers that and any other order.
    Raises ValueError for a negative x (naming the first), lengths that differ or a negative minlength; TypeError
    for float or bool x.

    >>> er.bincount(np.array([0, 1, 1, 3]), np.array([0.5, 1.0, 2.0, 4.0])).nearest()
    array([0.5, 3. , 0. , 4. ])
    """
    fn = "bincount"
    w, name = host_array(weights, "weights")
    idx = _indices(x, "x", fn)
    if idx.ndim != 1 or w.ndim != 1:
        raise ValueError(f"{fn}: x has shape {idx.shape} and weights {w.shape}; both must be vectors")
    length = as_count(minlength, "minlength", context=f"{fn}: ")
    try:
        refs = _core.bincount(_flat(idx), _flat(w), length, _as_dtype(name), as_threads(threads))
    except MemoryError:
        bins = max(length, int(idx.max()) + 1 if idx.size else 0)
        raise MemoryError(f"{fn}: the largest x is {bins - 1:,}, so the output has {bins:,} bins (48 bytes each); "
                          f"that does not fit in memory: check x, or map its values to a dense range first") from None
    return _reference(refs, (len(refs),))


def cumsum(x: Any, axis: Optional[int] = None, *, exclusive: bool = False) -> Reference:
    """Exact references of np.cumsum(x, axis) (torch.cumsum, jnp.cumsum, CUB/thrust inclusive_scan): element i of
    a line is Σ_{k <= i} x[k]; with exclusive=True (exclusive_scan) Σ_{k < i} x[k], the first element of each line
    having no terms (+0.0).

    x: float64/float32/float16/bfloat16 values; axis None flattens x (any rank, C order; a scalar gives shape (1,)),
        as np.cumsum does; otherwise x has rank 1 or 2 and axis is 0, 1 or negative.
    Returns a Reference of the output's shape (x.shape, or (x.size,) for axis=None). Element i of a line has
    n_i = i + 1 terms (i for exclusive scans).
    Standards: a sequential scan (numpy, torch on CPU) is a left fold per prefix, covered by any_order; a parallel
    scan (CUB's decoupled look-back, jnp.cumsum's associative scan) by tree:H with H = ceil(log2(line length)) when
    its combining tree is at most that deep, and by any_order. any_order's bound of prefix i is (n_i - 1)·u·S_i: on
    long lines it grows with i and sees little at large prefixes, so prefer order-free test data (exactref.testing)
    or shorter lines (axis=1 over many rows) for a sharp check.
    Raises ValueError for a rank above 2 with an axis, or an axis outside the rank.

    >>> x = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    >>> er.cumsum(x).covers(np.cumsum(x)).all()
    True
    """
    fn = "cumsum"
    if not isinstance(exclusive, (bool, np.bool_)):
        raise TypeError(f"{fn}: exclusive={exclusive!r}: expected True or False")
    a, name = host_array(x, "x")
    if axis is None:
        a = a.reshape(-1)
        d = 0
    else:
        if a.ndim not in (1, 2):
            raise ValueError(f"{fn}: x has shape {a.shape}; er.cumsum takes rank 1 or 2 with an axis (axis=None "
                             f"flattens any rank)")
        try:
            if isinstance(axis, (bool, np.bool_)):  # an int to Python, but axis=True is a mistake (numpy refuses it)
                raise TypeError
            d = operator.index(axis)
        except TypeError:
            raise TypeError(f"{fn}: axis={axis!r}: expected None or an integer (not a bool)") from None
        if not -a.ndim <= d < a.ndim:
            raise ValueError(f"{fn}: axis {d} is out of bounds for an array of dimension {a.ndim}")
        d = d + a.ndim if d < 0 else d
    refs = _core.scan(_flat(a), list(a.shape), d, not bool(exclusive), _as_dtype(name))
    return _reference(refs, a.shape)


def embedding_bag(weight: Any, indices: Any, offsets: Any = None, include_last_offset: bool = False, *,
                  threads: Any = None) -> Reference:
    """Exact references of torch.nn.functional.embedding_bag(indices, weight, offsets, mode="sum"):
    out[b][d] = Σ_{k in bag b} weight[indices[k]][d].

    weight: the (num_embeddings, dim) table, float64/float32/float16/bfloat16.
    indices: a vector of row numbers in [0, num_embeddings) with offsets, or a (bags, length) matrix of them without
        (each row one bag of that length, as torch's 2-D input).
    offsets: where each bag starts in indices: offsets[0] = 0, not decreasing; bag b is indices[offsets[b] ..
        offsets[b+1]), the last bag running to the end, or, with include_last_offset=True, the last offset closing
        the last bag (bags = len(offsets) - 1). An empty bag has no terms (+0.0, torch's zeros).
    threads: None (default: EXACTREF_NUM_THREADS, else OMP_NUM_THREADS, else every core) or a positive int; the same
        bits for every count (the module's "Threads").
    Returns a Reference of shape (bags, dim). Check results per element with standard="any_order".
    Raises IndexError for an index outside [0, num_embeddings), naming the first; ValueError for bad offsets (a
    first offset that is not 0, a decreasing one, one past the end), shapes that do not fit, or 1-D indices
    without offsets; TypeError for float or bool indices or offsets.

    >>> w = np.arange(6.0).reshape(3, 2)
    >>> er.embedding_bag(w, np.array([0, 2, 1]), np.array([0, 2])).nearest()
    array([[4., 6.],
           [2., 3.]])
    """
    fn = "embedding_bag"
    w, name = host_array(weight, "weight")
    idx = _indices(indices, "indices", fn)
    if w.ndim != 2:
        raise ValueError(f"{fn}: weight has shape {w.shape}; expected a (num_embeddings, dim) table")
    if offsets is None:
        if idx.ndim != 2:
            raise ValueError(f"{fn}: indices has shape {idx.shape} and offsets is None: pass offsets for a vector "
                             f"of indices, or a (bags, length) matrix of indices without them")
        bags, length = idx.shape
        offs = np.arange(bags, dtype=idx.dtype) * length
        include_last_offset = False
    else:
        if idx.ndim != 1:
            raise ValueError(f"{fn}: indices has shape {idx.shape}; with offsets, pass a vector of indices")
        offs = _indices(offsets, "offsets", fn)
        if offs.ndim != 1:
            raise ValueError(f"{fn}: offsets has shape {offs.shape}; expected a vector")
    flat_idx, offs = _common_index_type(_flat(idx), _flat(offs))
    num_embeddings, dim = w.shape
    _check_range(fn, "indices", idx, 0, num_embeddings, f"every index must name a row of weight "
                                                        f"({num_embeddings} rows)")
    refs = _core.embedding_bag(_flat(w), num_embeddings, dim, flat_idx, offs, bool(include_last_offset),
                               _as_dtype(name), as_threads(threads))
    bags = len(offs) - 1 if include_last_offset else len(offs)
    return _reference(refs, (max(bags, 0), dim))
