"""An independent exact oracle for the Python tests: Python's big-integer fractions, nothing from exactref.

Every value of the four formats is a binary64 value, so Fraction(float(x)) is exact; sums of Fractions are exact;
round_to() rounds a Fraction correctly to a format (IEEE 754-2019 §4.3) by integer arithmetic on its own.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Iterable, Union

import numpy as np
import pytest

try:
    import ml_dtypes

    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # optional: bfloat16 has no numpy dtype without it
    BF16 = None

#: numpy dtypes of the formats this environment can hold in numpy arrays.
NUMPY_DTYPES = {"float64": np.dtype(np.float64), "float32": np.dtype(np.float32), "float16": np.dtype(np.float16),
                **({"bfloat16": BF16} if BF16 is not None else {})}
needs_bfloat16 = pytest.mark.skipif(BF16 is None, reason="ml_dtypes is not installed: no numpy bfloat16 dtype")

# precision p, emin, emax (IEEE 754-2019 Table 3.5; bfloat16 = binary32 with p = 8)
FORMATS = {
    "float64": (53, -1022, 1023),
    "float32": (24, -126, 127),
    "float16": (11, -14, 15),
    "bfloat16": (8, -126, 127),
}


def frac(x) -> Fraction:
    """The exact value of a finite float of any of the four formats."""
    return Fraction(float(x))


def exact_sum(xs: Iterable) -> Fraction:
    return sum((frac(x) for x in xs), Fraction(0))


def abs_sum(xs: Iterable) -> Fraction:
    return sum((abs(frac(x)) for x in xs), Fraction(0))


def floor_log2(a: Fraction) -> int:
    """floor(log2 a) for a > 0, exactly."""
    num, den = a.numerator, a.denominator
    e = num.bit_length() - den.bit_length()
    # 2^e <= num/den  <=>  num·2^-e >= den (scaled to integers)
    if (num << -e if e < 0 else num) < (den << e if e > 0 else den):
        e -= 1
    return e


def ulp_exponent(q: Fraction, fmt: str) -> int:
    """Exponent of the spacing of format values around |q| (q != 0): max(floor(log2|q|), emin) - p + 1."""
    p, emin, _ = FORMATS[fmt]
    return max(floor_log2(abs(q)), emin) - p + 1


def round_to(q: Fraction, fmt: str, mode: str = "nearest") -> Union[Fraction, float]:
    """q rounded to the format in `mode` ('nearest' ties-to-even, 'upward', 'downward', 'toward_zero'); ±math.inf on
    overflow where the mode gives it, ±max otherwise. Zero results are Fraction(0)."""
    p, emin, emax = FORMATS[fmt]
    if q == 0:
        return Fraction(0)
    negative = q < 0
    a = -q if negative else q
    qe = ulp_exponent(a, fmt)
    num, den = a.numerator, a.denominator
    if den & (den - 1) == 0:  # dyadic (every sum of format values): integer shifts only, fast
        shift = qe + den.bit_length() - 1  # a / 2^qe = num / 2^shift
        if shift <= 0:
            m, rest_vs_half = num << -shift, -1
            inexact = False
        else:
            m = num >> shift
            rem = num & ((1 << shift) - 1)
            half = 1 << (shift - 1)
            rest_vs_half = (rem > half) - (rem < half)
            inexact = rem != 0
    else:
        scaled = a / Fraction(2) ** qe
        m = math.floor(scaled)
        rest = scaled - m
        rest_vs_half = (rest > Fraction(1, 2)) - (rest < Fraction(1, 2))
        inexact = rest != 0
    # Direction in terms of the magnitude.
    if mode == "nearest":
        up = rest_vs_half > 0 or (rest_vs_half == 0 and inexact and m % 2 == 1)
    elif mode == "toward_zero":
        up = False
    elif mode == "upward":
        up = inexact and not negative
    elif mode == "downward":
        up = inexact and negative
    else:
        raise ValueError(mode)
    if up:
        m += 1
    value = Fraction(m << qe) if qe >= 0 else Fraction(m, 1 << -qe)
    largest = (2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax
    if value > largest:
        to_inf = mode == "nearest" or (mode == "upward" and not negative) or (mode == "downward" and negative)
        if to_inf:
            return -math.inf if negative else math.inf
        value = largest
    return -value if negative else value


def next_up(q: Fraction, fmt: str) -> Fraction:
    """The smallest format value strictly above the format value q (finite, below the largest)."""
    p, emin, _ = FORMATS[fmt]
    if q == 0:
        return Fraction(2) ** (emin - p + 1)
    if q > 0:
        return q + Fraction(2) ** ulp_exponent(q, fmt)
    # q < 0: the spacing below |q| may be half as large at a power of two.
    a = -q
    e = ulp_exponent(a, fmt)
    below = a - Fraction(2) ** e
    if below > 0 and ulp_exponent(below, fmt) < e:
        below = a - Fraction(2) ** (e - 1)
    return -below


def next_down(q: Fraction, fmt: str) -> Fraction:
    return -next_up(-q, fmt)


def to_dtype(q: Fraction, dtype) -> np.generic:
    """A format value q (exact) as a numpy scalar of dtype, checked to be exact."""
    x = np.array(float(q)).astype(dtype)[()]
    assert frac(x) == q, (q, x)
    return x
