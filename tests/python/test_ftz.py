"""ftz: (flush-to-zero hardware) and any_zero_sign from Python: the spellings and flags, the issue's torch case, the
sign of zero of math.fsum and np.sum, and what they refuse (tests/test_ftz.cpp has the soundness checks)."""
import math

import numpy as np
import pytest

import exactref as er


def test_thousand_float32_subnormals_summed_to_zero_are_covered_by_ftz_only():
    x = np.full(1000, 1e-40, dtype=np.float32)
    r = er.sum(x)
    assert not r.covers(np.float32(0.0))
    assert r.covers(np.float32(0.0), standard="ftz:any_order")
    assert r.covers(np.float32(0.0), standard="any_order", ftz=True)
    assert r.covers(np.float32(-0.0), standard="ftz:any_order")
    assert er.standard("tree", height=10, ftz=True).name == "ftz:tree:10"
    assert er.standard("ftz:directed:levels:fold/4,any").ftz


def test_ftz_refuses_exact_and_dot_products():
    with pytest.raises(ValueError, match="ftz"):
        er.standard("exact", ftz=True)
    with pytest.raises(ValueError, match="ftz"):
        er.standard("ftz:exact")
    d = er.dot(np.ones(4, np.float32), np.ones(4, np.float32))
    with pytest.raises(ValueError, match="ftz: applies to sums"):
        d.covers(np.float32(4.0), standard="ftz:any_order")


def test_fsum_and_np_sum_of_negative_zeros_need_any_zero_sign_under_exact():
    x = np.full(5, -0.0)
    r = er.sum(x)
    for result in (math.fsum(x.tolist()), np.sum(x)):
        assert math.copysign(1.0, result) == 1.0  # both start from +0.0
        assert not r.covers(np.float64(result), standard="exact")
        assert r.covers(np.float64(result), standard="exact", any_zero_sign=True)
        assert r.covers(np.float64(result), standard="faithful", any_zero_sign=True)
        assert r.covers(np.float64(result), standard="exact", allow_negative_zero=True)  # the older name
    assert not r.covers(np.float64(5e-324), standard="exact", any_zero_sign=True)
    with pytest.raises(TypeError, match="older name"):
        er.standard("exact", any_zero_sign=True, allow_negative_zero=True)
