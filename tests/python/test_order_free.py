"""er.testing.order_free (docs/order-free.md): shape, dtype, determinism, and every evaluation numpy and Python
offer — np.sum's pairwise blocks, np.cumsum's left fold, math.fsum, random permutations, evaluations consistent
with a structure — gives er.sum(x).nearest() bit for bit; a lost or doubled term is rejected by standard="exact".
RN(s) is checked against this suite's own Fraction oracle (exact_oracle.py). The C++ twin is
tests/test_order_free.cpp."""

import math

import numpy as np
import pytest

import exactref as er
from exact_oracle import NUMPY_DTYPES, exact_sum, needs_bfloat16, round_to

DTYPES = list(NUMPY_DTYPES)
LIMITS = {"float64": 2 ** 54 - 2, "float32": 33554430, "float16": 4094, "bfloat16": 510}


def bits(a):
    a = np.asarray(a)
    return a.view({8: np.uint64, 4: np.uint32, 2: np.uint16}[a.dtype.itemsize])


def same_bits(a, b):
    return np.array_equal(bits(a), bits(b))


def rn(x):
    """RN(s) by the library and by the Fraction oracle; they must agree."""
    name = "bfloat16" if x.dtype == NUMPY_DTYPES.get("bfloat16") else x.dtype.name
    r = er.sum(x).nearest()
    oracle = round_to(exact_sum(x), name)
    assert float(r) == float(oracle), f"er.sum disagrees with the Fraction oracle: {r!r} vs {oracle!r}"
    return r


@pytest.mark.parametrize("name", DTYPES)
def test_shape_dtype_and_determinism(name):
    dt = NUMPY_DTYPES[name]
    x = er.testing.order_free(300, name, seed=5)
    assert x.shape == (300,) and x.dtype == dt
    assert same_bits(x, er.testing.order_free(300, name, seed=5))
    assert not same_bits(x, er.testing.order_free(300, name, seed=6))
    assert np.all(np.isfinite(x.astype(np.float64))) and np.all(x.astype(np.float64) != 0)
    tiny = np.finfo(np.float32).tiny if name == "bfloat16" else np.finfo(dt).tiny
    assert np.all(np.abs(x.astype(np.float64)) >= tiny), "a subnormal term"
    assert 0.35 < np.mean(x.astype(np.float64) < 0) < 0.65
    assert er.testing.order_free(0, name).shape == (0,)
    # dtype spellings as numpy reads them, and the default float32
    assert er.testing.order_free(10, np.dtype(dt) if name != "bfloat16" else "bfloat16").dtype == dt
    assert er.testing.order_free(10).dtype == np.float32


@pytest.mark.parametrize("name", DTYPES)
def test_numpy_sum_cumsum_fsum_and_permutations_give_rn(name):
    dt = NUMPY_DTYPES[name]
    rng = np.random.default_rng(1)
    for n in (1, 2, 7, 200, min(LIMITS[name], 5000)):
        for seed in range(3):
            x = er.testing.order_free(n, name, seed=seed)
            want = rn(x)
            got = {
                "np.sum": np.sum(x),
                "np.cumsum[-1]": np.cumsum(x)[-1],
                "math.fsum": dt.type(math.fsum(x.astype(np.float64))),
                "np.sum(reversed)": np.sum(x[::-1]),
            }
            for k in range(5):
                got[f"np.sum(permutation {k})"] = np.sum(x[rng.permutation(n)])
                got[f"np.cumsum(permutation {k})[-1]"] = np.cumsum(x[rng.permutation(n)])[-1]
            for how, r in got.items():
                assert np.asarray(r).dtype == dt, how
                assert same_bits(r, want), f"{name} n={n} seed={seed}: {how} gave {r!r}, RN(s) is {want!r}"


def test_the_limits_are_two_to_the_p_plus_one_minus_two():
    for name, limit in LIMITS.items():
        assert er.testing.order_free_max_terms(name) == limit
    x = er.testing.order_free(4094, "float16", seed=3)  # the limit itself
    want = rn(x)
    rng = np.random.default_rng(3)
    for _ in range(20):
        assert same_bits(np.cumsum(x[rng.permutation(x.size)])[-1], want)


@pytest.mark.parametrize("structure", ["levels:fold/4,any", "levels:fold%256,tree:16,any"])
@pytest.mark.parametrize("name", DTYPES)
def test_evaluations_consistent_with_a_structure_give_rn(name, structure):
    dt = NUMPY_DTYPES[name]
    n = 100_000
    x = er.testing.order_free(n, name, seed=9, structure=structure)
    assert x.shape == (n,) and x.dtype == dt
    assert same_bits(x, er.testing.order_free(n, name, seed=9, structure=er.standard(structure)))
    want = rn(x)
    rng = np.random.default_rng(9)
    if structure == "levels:fold/4,any":
        # OpenMP's static schedule: the first n mod 4 chunks one longer; each chunk a left fold (np.cumsum), then
        # the 4 chunk results in every order.
        chunks = np.array_split(x, 4)
        partial = np.array([np.cumsum(c)[-1] for c in chunks], dtype=dt)
        for _ in range(24):
            assert same_bits(np.cumsum(partial[rng.permutation(4)])[-1], want)
    else:
        # 256 grid-stride threads (item i in thread i mod 256) fold in order, blocks of 16 threads in any order,
        # then the 16 blocks in any order.
        threads = np.array([np.cumsum(x[t::256])[-1] for t in range(256)], dtype=dt)
        for _ in range(20):
            blocks = np.array([np.cumsum(b[rng.permutation(16)])[-1] for b in threads.reshape(16, 16)], dtype=dt)
            assert same_bits(np.cumsum(blocks[rng.permutation(16)])[-1], want)


@pytest.mark.parametrize("name", DTYPES)
def test_a_lost_or_doubled_term_is_rejected_by_exact(name):
    dt = NUMPY_DTYPES[name]
    n = min(LIMITS[name], 2000)
    x = er.testing.order_free(n, name, seed=4)
    ref = er.sum(x)
    rng = np.random.default_rng(4)
    for j in rng.choice(n, size=50, replace=False):
        lost = np.cumsum(np.delete(x, j)[rng.permutation(n - 1)])[-1]
        doubled = np.cumsum(np.append(x, x[j])[rng.permutation(n + 1)])[-1]
        assert float(lost) == float(ref.nearest()) - float(x[j])  # exact: Theorem 2
        assert float(doubled) == float(ref.nearest()) + float(x[j])
        assert not ref.covers(lost, standard="exact")
        assert not ref.covers(doubled, standard="exact")
        assert ref.covers(np.sum(x), standard="exact")
        assert lost.dtype == dt


def test_errors_are_value_errors_that_say_what_to_do():
    with pytest.raises(ValueError, match=r"at most 4094 terms.*levels:fold/4,any.*a wider dtype.*a smaller n"):
        er.testing.order_free(4095, "float16")
    with pytest.raises(ValueError, match="at most 510 terms"):
        er.testing.order_free(10_000, "bfloat16")
    with pytest.raises(ValueError, match=r"'split_k:4' is not a structured standard .*levels:fold/4,any"):
        er.testing.order_free(100, "float32", structure="split_k:4")
    with pytest.raises(ValueError, match="not a structured standard"):
        er.testing.order_free(100, "float32", structure=er.standard("tree", height=7))
    with pytest.raises(ValueError, match="empty"):
        er.testing.order_free(3, "float32", structure="levels:fold/4,any")
    with pytest.raises(ValueError, match="level 2 .any.*groups of at least 2 terms"):
        er.testing.order_free(1000, "bfloat16", structure="levels:fold/1000,any")
    with pytest.raises(ValueError):
        er.testing.order_free(100, "float32", structure="levels:nonsense")
    with pytest.raises(ValueError, match="n=-1"):
        er.testing.order_free(-1)
    with pytest.raises(ValueError, match="seed=-2"):
        er.testing.order_free(5, seed=-2)
    with pytest.raises(TypeError, match="structure="):
        er.testing.order_free(5, structure=4)
    with pytest.raises(TypeError, match="dtype='int32'"):
        er.testing.order_free(5, "int32")


@needs_bfloat16
def test_bfloat16_comes_back_as_ml_dtypes_bfloat16():
    x = er.testing.order_free(100, "bfloat16", seed=2, structure="levels:fold/4,any")
    assert x.dtype == NUMPY_DTYPES["bfloat16"]
    assert same_bits(er.sum(x).nearest(), rn(x))
