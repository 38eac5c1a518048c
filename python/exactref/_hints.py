"""The narrower-format hint of a rejected result (issue 15, item 4): a float32 result passed as a Python float is
judged as float64, whose bound is 2^29 times smaller, and fails far outside it. When the rejected value is exactly a
value of a narrower format and that format's judgement covers it, the failure says so. A hint never changes a
verdict: it is text for the message only. A format whose check is vacuous there (B >= S: it covers every result, 0
included) is never named, the rule of the C++ exactref::suggest_narrower_format behind the CLI's hint.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from ._arrays import bfloat16_dtype

# Formats narrower than each result format, widest precision first (the hint names the first that covers).
_NARROWER = {"float64": ("float32", "float16", "bfloat16"), "float32": ("float16", "bfloat16")}


def exactly_as(values: np.ndarray, name: str) -> Optional[np.ndarray]:
    """values converted to the format `name` when every value is exactly a value of it (NaN to NaN, ±Inf to
    ±Inf, -0.0 to -0.0), else None. bfloat16 without ml_dtypes is None as well."""
    target = bfloat16_dtype() if name == "bfloat16" else np.dtype(name)
    if target is None:
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        converted = values.astype(target)
        back = converted.astype(values.dtype)
    same = (back == values) & (np.signbit(back) == np.signbit(values))
    same |= np.isnan(back) & np.isnan(values)
    return converted if bool(np.all(same)) else None


def narrower_format_hint(value: np.ndarray, result_dtype: str, covered_as: Callable[[Any], bool]) -> str:
    """'' or the hint for one rejected result `value` (a 0-d array of `result_dtype`): the first narrower format
    that holds it exactly and in which covered_as(converted value) is True."""
    for name in _NARROWER.get(result_dtype, ()):
        converted = exactly_as(value, name)
        if converted is not None and covered_as(converted):
            return (f"hint: the result is exactly representable in {name} and is covered when judged as {name}: "
                    f"pass a np.{name} or dtype='{name}'" if name != "bfloat16" else
                    f"hint: the result is exactly representable in bfloat16 and is covered when judged as "
                    f"bfloat16: pass an ml_dtypes.bfloat16 array or dtype='bfloat16'")
    return ""
