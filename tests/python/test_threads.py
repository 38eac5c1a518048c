"""threads= on er.sum, er.dot and er.matmul, and er.sum's fast path for whole contiguous arrays: every thread count and
both paths give the same references, bit for bit (s, S, n, max|x|, the special-value state, every rounding), and the
thread count honours EXACTREF_NUM_THREADS, then OMP_NUM_THREADS, read at each call (bad values: ValueError).

Inputs are long enough for several chunks (32768 terms each) with NaN, ±Inf and -0.0 planted around the chunk
boundaries of 2 .. 8 threads. Fixed seeds."""

import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import exactref as er

N = 5 * 32768 + 1237  # several chunks and a ragged end
DTYPES = ["float64", "float32", "float16", "bfloat16"]
MODES = ["nearest", "toward_zero", "upward", "downward"]


def _dtype(name):
    if name == "bfloat16":
        ml_dtypes = pytest.importorskip("ml_dtypes")
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def _data(name, kind, seed):
    rng = np.random.default_rng(seed)
    dt = _dtype(name)
    if kind == "gauss":
        x = rng.standard_normal(N)
    elif kind == "wide":
        span = 12 if name == "float16" else 40
        x = np.ldexp(rng.uniform(1, 2, N), rng.integers(-span, span + 1, N)) * rng.choice([-1.0, 1.0], N)
    else:  # "bits": any bit pattern (subnormals, Inf, NaN)
        bits = rng.integers(0, 2 ** (8 * dt.itemsize), N, dtype=np.uint64)
        return bits.astype({2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]).view(dt)
    x = x.astype(dt)
    specials = np.array([np.nan, np.inf, -np.inf, -0.0]).astype(dt)
    for w in range(2, 9):
        for k in range(w + 1):
            at = min(N - 1, N * k // w)
            x[max(0, at - 1):at + 2] = specials[rng.integers(0, 4)]
    return x


def _state(r):
    """Everything a 0-d Reference shows, exactly."""
    states = r._refs.export_states(np.ascontiguousarray(r._index, dtype=np.int64).ravel())  # every field, exactly
    out = [r.count, r.dtype, r.decimal, str(r.abs_sum), states]
    for dt in ("float64", "float32", "float16"):
        for mode in MODES:
            out.append(np.asarray(r.nearest(dt, rounding=mode)).tobytes())
    return out


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("kind", ["gauss", "wide", "bits"])
def test_sum_same_bits_for_every_thread_count(name, kind):
    x = _data(name, kind, 7)
    one = _state(er.sum(x, threads=1))
    for t in (2, 3, 4, 8, None):
        assert _state(er.sum(x, threads=t)) == one, t


@pytest.mark.parametrize("name", DTYPES)
def test_fast_path_equals_the_general_path(name):
    x = _data(name, "gauss", 8)
    fast = er.sum(x)
    general = er.sum(x, axis=0)  # the general path (axis given)
    strided = er.sum(np.repeat(x, 2)[::2])  # not contiguous: the general path
    assert _state(fast) == _state(general) == _state(strided)
    head = x[:5 * 32768]
    assert _state(er.sum(head.reshape(-1, 1024))) == _state(er.sum(head, axis=0))  # 2-D C-contiguous, summed whole


@pytest.mark.parametrize("values, expected", [
    ([], "0"), ([-0.0, -0.0], "-0"), ([0.0, -0.0], "0"), ([np.inf, 1.0], "inf"), ([np.inf, -np.inf], "nan"),
    ([np.nan, 1.0], "nan"), ([1e308, 1e308, -1e308], None)])
def test_fast_path_special_values(values, expected):
    x = np.array(values, dtype=np.float64)
    r = er.sum(x)
    assert _state(r) == _state(er.sum(x, axis=0))
    if expected is not None:
        assert r.decimal == expected
    assert r.nearest().dtype == np.float64 and type(r.nearest()) is np.float64
    assert np.signbit(r.nearest()) == (expected == "-0")


def test_nearest_scalar_matches_the_array_path():
    x = np.array([0.1, 0.2, 0.3, 1e-310], dtype=np.float64)
    r = er.sum(x)
    for dt in ("float64", "float32", "float16", np.float32, "single"):
        for mode in MODES:
            got = r.nearest(dt, rounding=mode)
            want = er.sum(x.reshape(1, -1), axis=1).nearest(dt, rounding=mode)[0]  # the array path
            assert type(got) is type(want) and np.asarray(got).tobytes() == np.asarray(want).tobytes()
    with pytest.raises(ValueError, match="rounding="):
        r.nearest(rounding="sideways")


@pytest.mark.parametrize("name", DTYPES)
def test_dot_same_bits_for_every_thread_count(name):
    x, y = _data(name, "gauss", 9), _data(name, "wide", 10)
    one = _state(er.dot(x, y, threads=1))
    for t in (2, 3, 8, None):
        assert _state(er.dot(x, y, threads=t)) == one
    assert _state(er.dot(x[::2], y[::-2], threads=4)) == _state(er.dot(x[::2], y[::-2], threads=1))


def test_matmul_threads():
    rng = np.random.default_rng(11)
    a, b = rng.standard_normal((20, 30)), rng.standard_normal((30, 10))
    one = er.matmul(a, b, threads=1)
    two = er.matmul(a, b, threads=2)
    assert np.array_equal(one.nearest(), two.nearest())
    assert pickle.dumps(one) == pickle.dumps(two)


@pytest.mark.parametrize("bad, error", [(-1, ValueError), (1.5, TypeError), ("2", TypeError), (True, TypeError),
                                        (10**6, ValueError)])
def test_threads_argument_is_checked(bad, error):
    x = np.ones(10)
    # one message everywhere: the value, what is expected, the default
    message = r"threads=.+: expected None or 0 \(the default: EXACTREF_NUM_THREADS, else OMP_NUM_THREADS, else " \
              r"every core\) or a thread count from 1 to 65536"
    with pytest.raises(error, match=message):
        er.sum(x, threads=bad)
    with pytest.raises(error, match=message):
        er.sum(x.reshape(2, 5), axis=1, threads=bad)
    with pytest.raises(error, match=message):
        er.dot(x, x, threads=bad)
    with pytest.raises(error, match=message):
        er.matmul(x.reshape(2, 5), x.reshape(5, 2), threads=bad)
    with pytest.raises(error, match=message):
        er.segment_sum(x, np.zeros(10, np.int64), 1, threads=bad)


def test_environment_is_read_at_each_call(monkeypatch):
    x = _data("float64", "wide", 12)
    one = _state(er.sum(x, threads=1))
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    for value in ("1", "2", "3"):
        monkeypatch.setenv("EXACTREF_NUM_THREADS", value)
        assert _state(er.sum(x)) == one
    for bad in ("0", "-2", "junk"):
        monkeypatch.setenv("EXACTREF_NUM_THREADS", bad)
        for call in (lambda: er.sum(x), lambda: er.sum(x, axis=0), lambda: er.dot(x, x),
                     lambda: er.matmul(x[:4].reshape(2, 2), x[:4].reshape(2, 2))):
            with pytest.raises(ValueError, match=f"EXACTREF_NUM_THREADS='{bad}'"):
                call()
        assert _state(er.sum(x, threads=2)) == one  # an explicit count does not read the variables
    monkeypatch.delenv("EXACTREF_NUM_THREADS")
    monkeypatch.setenv("OMP_NUM_THREADS", "x")
    with pytest.raises(ValueError, match="OMP_NUM_THREADS"):
        er.sum(x)
    monkeypatch.setenv("OMP_NUM_THREADS", "2,1")
    assert _state(er.sum(x)) == one


def test_environment_in_a_fresh_process():
    code = ("import numpy as np, exactref as er\n"
            "x = np.ldexp(np.arange(1, 200001, dtype=np.float64), -7)\n"
            "print(er.sum(x).decimal, er.dot(x, x).decimal)\n")
    env = dict(os.environ, EXACTREF_NUM_THREADS="2", OMP_NUM_THREADS="1")
    two = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    env["EXACTREF_NUM_THREADS"] = "1"
    one = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert one == two and one.split()[0] == str(sum(range(1, 200001)) / 128).rstrip("0").rstrip(".")
    env["EXACTREF_NUM_THREADS"] = "zero"
    bad = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert bad.returncode != 0 and "EXACTREF_NUM_THREADS='zero'" in bad.stderr


def test_a_bad_exactref_simd_is_a_value_error_naming_it():
    """EXACTREF_SIMD is read once per process, so in a subprocess: a value other than avx2, base or empty is a
    ValueError naming the variable, its value and the valid spellings; the valid ones give the same bits."""
    code = ("import numpy as np, exactref as er\n"
            "x = np.arange(12.0).reshape(3, 4)\n"
            "try:\n"
            "    er.sum(x, axis=1)\n"
            "except ValueError as e:\n"
            "    print('ValueError:', e)\n"
            "else:\n"
            "    print('sum', er.sum(x).exact, er.sum(x, axis=1).covers(x.sum(axis=1)).all())\n")
    def run(value):
        env = dict(os.environ, EXACTREF_SIMD=value)
        return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                              check=True).stdout.strip()
    out = run("avx3")
    assert out.startswith("ValueError: EXACTREF_SIMD='avx3'") and "'avx2'" in out and "'base'" in out, out
    for value in ("avx2", "base", ""):
        assert run(value) == "sum 66 True", value
