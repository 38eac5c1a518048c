"""pytest-friendly checks: ``er.testing.assert_covers(actual, reference, standard="any_order")``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._reference import Reference, worst_position

__all__ = ["assert_covers"]


def assert_covers(actual: Any, reference: Reference, standard: Any = "any_order", **params: Any) -> None:
    """Asserts that every result in `actual` is covered by `standard` for its exact reference.

    actual: results (numpy, DLPack, Python float) of reference.shape, a stack of runs (k, *reference.shape), or a
        shape that broadcasts to reference.shape (see Reference.covers: a shape that would broadcast the references
        themselves, such as (4, 1) against (4,), is a ValueError); their dtype is the result format.
        reference: from er.sum / er.dot / er.matmul. standard, params: as in Reference.covers. An empty `actual`
        passes (nothing to judge).
    On failure raises AssertionError whose message names the number of violations, the worst element (its index,
    the result, the exact value, its error, the bound, the ratio error/bound and the error in ulps), the reason
    when a special-value rule decided, and the first violating indices.

    >>> er.testing.assert_covers(np.sum(x), er.sum(x), standard="any_order")
    """
    __tracebackhide__ = True  # pytest: report the caller's line
    if not isinstance(reference, Reference):
        raise TypeError(f"reference: expected an exactref.Reference (er.sum, er.dot, er.matmul), got "
                        f"{type(reference).__name__}")
    shape, index, flat, as_dtype, model, covered, ratio = reference._detail(actual, standard, params)
    if covered.all():
        return
    bad = np.flatnonzero(~covered)
    worst = worst_position(covered, ratio)
    v = reference._refs.verdict(int(index[worst]), flat, worst, as_dtype, model)
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
    raise AssertionError("\n".join(lines))
