"""Issue 5's acceptance program, run as a program, and the shared test vectors (shared/data/README.md)."""

import math
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import exactref as er
from exact_oracle import abs_sum, exact_sum, frac, round_to

ACCEPTANCE = '''
import random
import numpy as np
import exactref as er
rng = random.Random(1)
values = np.array([rng.gauss(0, 1) for _ in range(10000)], dtype=np.float32)
r = er.sum(values)
runs = []
for seed in range(5):
    order = list(range(len(values)))
    random.Random(seed).shuffle(order)
    total = np.float32(0)
    for i in order:
        total = np.float32(total + values[i])
    runs.append(total)
print("different answers:", len(set(runs)))
print("covered:", [bool(r.covers(er.asarray(run), standard="any_order").all()) for run in runs])
'''

SHARED_DATA = Path(os.environ.get("EXACTREF_SHARED_DATA",
                                  Path(__file__).resolve().parents[1] / "data"))  # tests/data: shared/data's copy


def gauss_values():
    import random

    rng = random.Random(1)
    return np.array([rng.gauss(0, 1) for _ in range(10000)], dtype=np.float32)


def test_acceptance_program_prints_exactly():
    out = subprocess.run([sys.executable, "-c", ACCEPTANCE], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "different answers: 4\ncovered: [True, True, True, True, True]\n"


def rounded_up_double(q: Fraction) -> float:
    d = float(q)
    if Fraction(d) < q:
        d = math.nextafter(d, math.inf)
    return d


def test_any_order_bound_is_the_exact_bound_rounded_up():
    values = gauss_values()
    r = er.sum(values)
    exact_bound = (len(values) - 1) * Fraction(1, 2 ** 24) * abs_sum(values)   # (n-1)·u·S, Rump 2012
    assert r.bound("any_order") == rounded_up_double(exact_bound)
    assert f"{r.bound('any_order'):.12f}".startswith("4.72203014716")
    assert r.exact == exact_sum(values)
    assert r.abs_sum == abs_sum(values)
    assert r.count == 10000


def test_a_result_just_outside_the_acceptance_bound_is_refused():
    values = gauss_values()
    r = er.sum(values)
    s = exact_sum(values)
    bound = (len(values) - 1) * Fraction(1, 2 ** 24) * abs_sum(values)
    outside = round_to(s + bound, "float32", "upward")
    if outside == s + bound:
        outside = outside + Fraction(2) ** -19
    inside = round_to(s + bound, "float32", "downward")
    assert outside - s > bound >= inside - s  # checked without exactref
    assert not r.covers(np.float32(float(outside)))
    assert r.covers(np.float32(float(inside)))


def test_shared_vectors():
    lines = (SHARED_DATA / "gauss10k_f32.txt").read_text().split("\n")
    values = np.array([float.fromhex(t) for t in lines if t and not t.startswith("#")], dtype=np.float32)
    np.testing.assert_array_equal(values, gauss_values())
    r = er.sum(values)
    assert r.nearest() == np.float32(float.fromhex("0x1.e9ab0ep+4"))
    assert r.decimal.startswith("30.6042613661775249")  # README: 30.604261366177525… (rounded)
    orders = [[int(t) for t in line.split()] for line in (SHARED_DATA / "gauss10k_orders.txt").read_text().splitlines()
              if line.strip() and not line.startswith("#")]
    expected = ["0x1.e9ab46p+4", "0x1.e9ab26p+4", "0x1.e9ab46p+4", "0x1.e9aae2p+4", "0x1.e9abb4p+4"]
    runs = []
    for order in orders:
        total = np.float32(0)
        for i in order:
            total = np.float32(total + values[i])
        runs.append(total)
    assert [float(t).hex() for t in runs] == [float.fromhex(h).hex() for h in expected]
    assert r.covers(np.array(runs), standard="any_order").tolist() == [True] * 5
    assert r.covers(np.array(runs), standard="exact").tolist() == [False] * 5
    assert frac(r.nearest()) == round_to(exact_sum(values), "float32")
