"""exactref.mpi: exact references and the canonical tree of data distributed over MPI ranks, over mpi4py.

The data of a call is the concatenation, in rank order, of every rank's local array (taken in C order, flattened;
a rank may hold none). Every function is collective over `comm` (an mpi4py communicator): every rank calls it and
every rank gets the same result — bit for bit what exactref gives for the whole data in one process, for every
distribution and rank count (docs/mpi.md; the C++ face is exactref::mpi, include/exactref/mpi.h).

    >>> from mpi4py import MPI
    >>> import exactref as er, exactref.mpi
    >>> r = er.mpi.sum(MPI.COMM_WORLD, local)          # == er.sum(np.concatenate(all locals)), on every rank
    >>> r.covers(MPI.COMM_WORLD.allreduce(float(np.sum(local))), standard="any_order")
    >>> er.mpi.tree_sum(MPI.COMM_WORLD, local)         # the bits of er.tree_sum(whole data)

How: sum and dot merge the ranks' exact states (the pickled state of a Reference: both accumulators as exact
dyadic numbers, term counts, special values, signed-zero flags) with Python integers after one allgather — exact,
so the order does not matter. tree_sum follows src/mpi/tree.cpp: whole leaves and maximal aligned subtrees on each
rank, the elements of a leaf cut by a rank boundary sent to the rank holding its first element, the subtree roots
combined in tree order on rank 0 and broadcast.

Errors: when the ranks disagree (dtype, kind, shape, op, acc) or a rank's own call fails (a bad array, x and y of
different lengths), every rank raises the same ValueError naming the rank — no rank is left waiting.
Needs mpi4py (pip install mpi4py); importing exactref.mpi without it raises ImportError saying so.
"""

from __future__ import annotations

import builtins
import re
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

try:
    from mpi4py import MPI  # noqa: F401 - the communicators passed in are mpi4py's
except ImportError as e:  # pragma: no cover - exercised only without mpi4py
    raise ImportError("exactref.mpi needs mpi4py: pip install mpi4py (and an MPI library, e.g. Debian's "
                      "libopenmpi-dev)") from e

from . import _core
from ._reference import Reference
from ._orders import tree_sum as _tree_sum

__all__ = ["dot", "sum", "tree_sum"]

_LSB = -2176  # superaccumulator::lsb_exponent: every state's exponent lies at or above it, a multiple of 32 above
_SCALAR_INDEX = np.zeros((), dtype=np.int64)
_add = builtins.sum  # this module defines sum()


# ---- every rank makes the same call -----------------------------------------------------------------------------

def _agree(comm: Any, function: str, header: Dict[str, Any], error: Optional[str]) -> List[Dict[str, Any]]:
    """Allgathers every rank's header and error; raises the same ValueError on every rank when some rank failed
    or disagrees with rank 0. Returns the headers."""
    everyone = comm.allgather((header, error))
    for rank, (_, err) in enumerate(everyone):
        if err is not None:
            raise ValueError(f"{function}: rank {rank}: {err}")
    first = everyone[0][0]
    for rank, (h, _) in enumerate(everyone):
        for key, value in h.items():
            if key in first and value != first[key]:
                raise ValueError(f"{function}: rank {rank} has {key} {value} but rank 0 has {first[key]} "
                                 "(every rank must call it alike)")
    return [h for h, _ in everyone]


# ---- exact states, merged with Python integers --------------------------------------------------------------------

def _value(acc: tuple) -> int:
    """The exact finite part of an accumulator state, as an integer multiple of 2^_LSB."""
    negative, magnitude, exponent = acc[0], acc[1], acc[2]
    if not magnitude:
        return 0
    v = int.from_bytes(magnitude, "little") << (exponent - _LSB)
    return -v if negative else v


def _merge_accumulators(states: List[tuple]) -> tuple:
    """One accumulator state holding the sum of `states` (the canonical form exactref writes: a magnitude of
    32-bit words with no zero word at either end, its exponent a multiple of 32 above _LSB)."""
    v = 0
    for s in states:
        v += _value(s)
    negative, m, exponent, magnitude = v < 0, abs(v), 0, b""
    if m:
        low = ((m & -m).bit_length() - 1) // 32  # the lowest non-zero word
        m >>= 32 * low
        exponent = _LSB + 32 * low
        magnitude = m.to_bytes((m.bit_length() + 31) // 32 * 4, "little")
    terms = [s for s in states if s[3] > 0]
    return (negative, magnitude, exponent, _add(s[3] for s in states), _add(s[4] for s in states),
            _add(s[5] for s in states), any(s[6] for s in states),
            bool(terms) and all(s[7] for s in terms), bool(terms) and all(s[8] for s in terms))


def _merge_references(states: List[tuple]) -> tuple:
    """The state of the reference of the concatenated data (every field of exactref::reference, reference.h)."""
    first = states[0]
    largest = [s[8] for s in states]
    return (_add(s[0] for s in states), first[1], first[2], any(s[3] for s in states), min(s[4] for s in states),
            any(s[5] for s in states), _merge_accumulators([s[6] for s in states]),
            _merge_accumulators([s[7] for s in states]), None if None in largest else max(largest), [])


def _state(ref: Reference) -> tuple:
    return ref._refs.export_states(np.zeros(1, dtype=np.int64))[0]


def _allreduce_reference(comm: Any, function: str, build: Any) -> Reference:
    ref, error = None, None
    try:
        ref = build()
        if ref.ndim != 0:
            raise ValueError("expected one reference")
    except Exception as e:  # noqa: BLE001 - any local failure must reach every rank, or the others would wait
        error = f"{type(e).__name__}: {e}"
    header = {} if ref is None else {"dtype": ref.dtype}
    _agree(comm, function, header, error)
    states = comm.allgather(_state(ref))
    merged = _merge_references(states)
    return Reference(_core.references_from_states(merged[1], merged[2], [merged]), _SCALAR_INDEX)


def sum(comm: Any, x: Any) -> Reference:  # noqa: A001 - mirrors er.sum
    """The exact reference of Σ x over every rank's x (collective over comm): on every rank the Reference that
    er.sum gives for the concatenated data, bit for bit (no structured bounds). n = 0 on every rank gives +0.0.
    Raises ValueError on every rank when the ranks' dtypes differ or some rank's x is refused by er.sum."""
    from . import sum as _sum
    return _allreduce_reference(comm, "exactref.mpi.sum", lambda: _sum(x))


def dot(comm: Any, x: Any, y: Any) -> Reference:
    """The exact reference of Σ x_i·y_i over every rank's x and y (collective over comm): on every rank the
    Reference that er.dot gives for the concatenated vectors, bit for bit. Raises ValueError on every rank when the
    dtypes differ or some rank's x and y are refused by er.dot (different lengths: the message names the rank)."""
    from . import dot as _dot
    return _allreduce_reference(comm, "exactref.mpi.dot", lambda: _dot(np.ravel(x), np.ravel(y)))


# ---- the canonical tree across ranks (src/mpi/tree.cpp, steps 1-4) ------------------------------------------------

def _leaf_size(shape: str) -> int:
    m = re.fullmatch(r"(halving|fold):?(\d*)", shape)
    if not m:  # er.tree_sum has refused it already; kept for a clear error
        raise ValueError(f"unknown shape {shape!r}")
    return int(m.group(2)) if m.group(2) else (256 if m.group(1) == "halving" else 16)


def tree_sum(comm: Any, x: Any, shape: str = "halving256", op: str = "sum", *, acc: Any = None) -> np.generic:
    """er.tree_sum over every rank's x (collective over comm): on every rank the bits er.tree_sum(whole data,
    shape, op, acc=acc) gives in one process, for every distribution. Traffic: fewer than L elements per rank
    boundary, O(log n) subtree roots per rank into rank 0, one broadcast. No masks. Raises ValueError on every rank
    when the ranks disagree on dtype, shape, op or acc, or some rank's call is refused."""
    function = "exactref.mpi.tree_sum"
    flat, error, header = None, None, {}
    try:
        identity = _tree_sum(np.asarray(x).reshape(-1)[:0], shape, op, acc=acc)  # validates x, shape, op, acc
        flat = np.ascontiguousarray(np.asarray(x)).reshape(-1)
        header = {"dtype": str(flat.dtype), "shape": shape, "op": op, "acc": str(identity.dtype)}
    except Exception as e:  # noqa: BLE001 - any local failure must reach every rank, or the others would wait
        error = f"{type(e).__name__}: {e}"
    headers = _agree(comm, function, header, error)
    # Step 1: the offsets of every rank.
    lengths = comm.allgather(int(flat.size))
    offsets = [0]
    for n_r in lengths:
        offsets.append(offsets[-1] + n_r)
    n, L, me = offsets[-1], _leaf_size(headers[0]["shape"]), comm.Get_rank()
    if n == 0:
        return identity
    begin, end = offsets[me], offsets[me + 1]

    def holder(e: int) -> int:  # the last rank whose range starts at or before element e (never an empty one)
        return max(r for r in range(len(lengths)) if offsets[r] <= e)

    # Step 2: the head of a range that starts inside a leaf goes to the leaf's owner.
    request = None
    if end > begin and begin % L:
        head = min(end, (begin // L + 1) * L) - begin
        request = comm.isend(flat[:head], dest=holder(begin // L * L), tag=0x6578)
    first_leaf = -(-begin // L)
    end_leaf = (end - 1) // L + 1 if end > begin else 0
    nodes: List[Tuple[int, int, Any]] = []

    def reduce(values: np.ndarray) -> Any:
        return _tree_sum(values, shape, op, acc=acc)

    if first_leaf < end_leaf:
        last_end, whole_end, cut = min(end_leaf * L, n), end_leaf, None
        if last_end > end:  # my last leaf continues on the next ranks
            whole_end = end_leaf - 1
            parts = [flat[whole_end * L - begin:]]
            q = me + 1
            while q < len(lengths) and offsets[q] < last_end:
                if lengths[q]:
                    parts.append(comm.recv(source=q, tag=0x6578))
                q += 1
            cut = np.concatenate(parts)
        # Step 3: maximal aligned blocks of whole leaves, then the cut leaf.
        i = first_leaf
        while i < whole_end:
            k = 0
            while i % (2 << k) == 0 and i + (2 << k) <= whole_end:
                k += 1
            lo, hi = i * L, min((i + (1 << k)) * L, n)
            nodes.append((k, i >> k, reduce(flat[lo - begin:hi - begin])))
            i += 1 << k
        if cut is not None:
            nodes.append((0, whole_end, reduce(cut)))
    if request is not None:
        request.wait()

    # Step 4: rank 0 evaluates the root in tree order and broadcasts it.
    gathered = comm.gather(nodes, root=0)
    root = None
    if me == 0:
        values = {(k, i): v for part in gathered for (k, i, v) in part}
        m = -(-n // L)
        top = max(m - 1, 0).bit_length()  # the least K with 2^K >= m

        def evaluate(k: int, i: int) -> Any:
            if (i << k) >= m:
                return None  # past the last leaf: absent
            if (k, i) in values:
                return values[(k, i)]
            left, right = evaluate(k - 1, 2 * i), evaluate(k - 1, 2 * i + 1)
            if right is None:
                return left  # an odd last node is carried up unchanged
            return _tree_sum(np.array([left, right], dtype=left.dtype), "halving2", op)

        root = evaluate(top, 0)
    return comm.bcast(root, root=0)
