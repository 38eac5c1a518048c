"""Testing helpers: ``er.testing.assert_covers(actual, reference, standard="any_order")`` and order-free test data,
``er.testing.order_free(n, dtype="float32", seed=0, structure=None)`` (docs/order-free.md)."""

from __future__ import annotations

import warnings
from typing import Any, Optional

import numpy as np

from . import _core
from ._arrays import as_count, dtype_name, numpy_dtype
from ._reference import Reference, worst_position
from ._standards import standard

__all__ = ["VacuousCheckWarning", "assert_covers", "order_free", "order_free_max_terms"]


class VacuousCheckWarning(UserWarning):
    """assert_covers passed (or failed) with a check that cannot see anything: its bound B is at least S = Σ|x|
    (or infinite), so every lost or doubled part of the terms, even a result of 0, is covered. The message names
    the standard and the library's advice (a structured standard, a smaller n per check, order-free data with
    'exact'). Turn it into an error with ``warnings.simplefilter("error", er.VacuousCheckWarning)`` or pytest's
    ``-W error::exactref.VacuousCheckWarning``."""


def order_free(n: int, dtype: Any = "float32", seed: int = 0, structure: Optional[Any] = None) -> np.ndarray:
    """n random-looking terms whose sum every allowed evaluation computes exactly: the result must be
    ``er.sum(x).nearest(dtype)`` bit for bit, so ``standard="exact"`` catches a lost or doubled term.

    n: the number of terms (0 gives an empty array). dtype: 'float64', 'float32', 'float16' or 'bfloat16' (any
        spelling numpy takes, see er.sum; bfloat16 needs ml_dtypes). seed: an integer 0 .. 2**64 - 1; the same
        (n, dtype, seed, structure) gives the same bits on every platform, and the same as the C++
        exactref::testing::order_free_data.
    structure: None: every order and every binary tree is allowed (np.sum's pairwise blocks, np.cumsum, any
        permutation, atomics), which every-subset-sum-representable data allows only up to 2^(p+1) - 2 terms
        (float16 4094, bfloat16 510, float32 33554430: order_free_max_terms(dtype)). A structured standard
        ("levels:fold/4,any", or an er.Standard built from one) allows the evaluations consistent with its levels
        (a fold level folds each group in index order; tree and any levels may add any subset of a group first), and
        then n may be as large as memory allows.

    Every term is a non-zero multiple of one power of two q (a normal number) with random sign and magnitudes over
    up to p - 1 binades, and every partial sum an allowed evaluation forms is a multiple of q of magnitude at most
    2^p·q minus the largest term: representable, so every allowed evaluation is exact, and one that loses a term or
    adds one twice is exact too and differs from RN(s) (docs/order-free.md, Theorems 1 and 2).

    Raises ValueError when no such data exists for n, the dtype and the structure (the message says what to do: a
    structure, a wider dtype or a smaller n), when `structure` is not a structured standard (levels:...) or its
    groups would be empty; TypeError for a dtype exactref does not take.

    >>> x = er.testing.order_free(1000, "float16", seed=1)
    >>> np.sum(x) == er.sum(x).nearest("float16")
    True
    >>> y = er.testing.order_free(10**6, "float16", seed=1, structure="levels:fold/4,any")
    """
    name = dtype_name(dtype, "dtype")
    count = as_count(n, "n")
    start = as_count(seed, "seed")
    if structure is None:
        model = None
    elif isinstance(structure, (str, _core.Standard)):
        model = standard(structure)  # the package's spelling: numpy dtype names in mixed:ACC:OUT: too
    else:
        raise TypeError(f"structure={structure!r}: expected None, a structured standard's name such as "
                        f"'levels:fold/4,any', or an er.Standard built from one")
    as_dtype = numpy_dtype(name)  # before the work: bfloat16 without ml_dtypes fails here
    return _core.order_free(count, name, start, model).view(as_dtype)


def order_free_max_terms(dtype: Any = "float32") -> int:
    """The largest n for which er.testing.order_free makes data for any order without a structure: 2^(p+1) - 2
    (float64 2^54 - 2, float32 33554430, float16 4094, bfloat16 510)."""
    return int(_core.order_free_max_terms(dtype_name(dtype, "dtype")))


def assert_covers(actual: Any, reference: Reference, standard: Any = "any_order", *, dtype: Any = None,
                  **params: Any) -> None:
    """Asserts that every result in `actual` is covered by `standard` for its exact reference.

    actual: results (numpy, DLPack, Python float) of reference.shape, a stack of runs (k, *reference.shape), or a
        shape that broadcasts to reference.shape (see Reference.covers: a shape that would broadcast the references
        themselves, such as (4, 1) against (4,), is a ValueError); their dtype is the result format.
        reference: from er.sum / er.dot / er.matmul. standard, dtype, params: as in Reference.covers (dtype=: the
        format the results were computed in, when they come as Python floats). An empty `actual` passes (nothing
        to judge).
    On failure raises AssertionError whose message names the number of violations, the worst element (its index,
    the result, the exact value, its error, the bound, the ratio error/bound and the error in ulps), the reason
    when a special-value rule decided, the first violating indices, and a hint when the worst result is exactly a
    value of a narrower format and covered when judged as that format ("hint: the result is exactly representable
    in float32 and is covered when judged as float32: pass a np.float32 or dtype='float32'"; Reference.hint). The
    hint never changes the verdict.
    When the worst result's check is vacuous (Verdict.vacuous: B >= S, it cannot see a lost or doubled term, not
    even a result of 0), warns with exactref.VacuousCheckWarning, whose message gives the advice: a pass then says
    nothing about the result.

    >>> er.testing.assert_covers(np.sum(x), er.sum(x), standard="any_order")
    """
    __tracebackhide__ = True  # pytest: report the caller's line
    if not isinstance(reference, Reference):
        raise TypeError(f"reference: expected an exactref.Reference (er.sum, er.dot, er.matmul), got "
                        f"{type(reference).__name__}")
    shape, index, flat, as_dtype, model, covered, ratio = reference._detail(actual, standard, params, dtype)
    if flat.size == 0:
        return
    worst = worst_position(covered, ratio)
    v = reference._refs.verdict(int(index[worst]), flat, worst, as_dtype, model)
    if v.vacuous:
        warnings.warn(f"assert_covers: {model.name} is vacuous here ({v.result_dtype}, bound {v.bound:.6g} >= "
                      f"S = Σ|x|), so its verdict says nothing about the result: {v.advice}", VacuousCheckWarning,
                      stacklevel=2)
    if covered.all():
        return
    bad = np.flatnonzero(~covered)
    where = "" if len(shape) == 0 else f" at index {tuple(int(i) for i in np.unravel_index(worst, shape))}"
    first = [tuple(int(i) for i in np.unravel_index(b, shape)) for b in bad[:8]] if shape else []
    lines = [
        f"{len(bad)} of {covered.size} result(s) not covered by {model.name} ({v.result_dtype})",
        f"worst{where}: result {v.result}, error {v.error:.6g}, bound {v.bound:.6g}, ratio {v.ratio:.6g} "
        f"(error/bound), {v.ulps:.6g} ulps",
        v.message().rstrip(),
    ]
    if first:
        lines.append("first violations at " + ", ".join(str(p if len(p) > 1 else p[0]) for p in first))
    hint = reference._hint_at(index[worst], flat[worst], as_dtype or flat.dtype.name, standard, params)
    if hint:
        lines.append(hint)
    raise AssertionError("\n".join(lines))
