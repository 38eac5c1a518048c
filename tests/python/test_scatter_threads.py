"""threads= of er.segment_sum, er.bincount, er.add_at, er.scatter_add, er.index_add and er.embedding_bag: the same
references, bit for bit, for threads = 1, 2, 3, 7 and the default (inputs long enough to run threaded: >= 2 x 32768
updates), on random, sorted and one-hot ids, spills (wide spreads, Inf, NaN), empty elements, initial values and
dropped ids; the one-thread references against an exact oracle (Python fractions); planted faults rejected; the
environment read at each call, bad values a ValueError naming the variable; bad threads= a TypeError or ValueError.

Seeds are fixed (SEED below)."""

import numpy as np
import pytest

import exactref as er
from exact_oracle import exact_sum

SEED = 20261203
N = 4 * 32768 + 1237  # several threads' worth, a ragged end
COUNTS = (2, 3, 7, None)


def _state(r):
    """Everything a reference array says that threads could change: the roundings in every mode, the counts."""
    out = [np.asarray(r.count).tobytes()]
    for mode in ("nearest", "upward", "downward"):
        out.append(np.asarray(r.nearest("float64", rounding=mode)).tobytes())
    return out


def _values(rng, kind, n=N):
    x = rng.standard_normal(n)
    if kind in ("wide", "specials"):
        x = x * np.exp2(rng.integers(-900, 900, size=n).astype(np.float64))
    if kind == "specials":
        at = rng.integers(0, n, size=40)
        x[at[:10]] = np.inf
        x[at[10:20]] = -np.inf
        x[at[20:25]] = np.nan
        x[at[25:]] = -0.0
    return x


def _ids(rng, pattern, segments, n=N):
    if pattern == "random":
        return rng.integers(0, segments, size=n)
    if pattern == "sorted":
        return np.sort(rng.integers(0, segments, size=n))
    if pattern == "one hot":
        return np.full(n, segments // 2)
    return rng.integers(0, segments // 2, size=n) * 2  # "even only": the odd elements stay empty


def _same_for_every_count(build):
    one = build(1)
    want = _state(one)
    for t in COUNTS:
        assert _state(build(t)) == want, f"threads={t}"
    return one


@pytest.mark.parametrize("kind", ["normal", "wide", "specials"])
@pytest.mark.parametrize("pattern", ["random", "sorted", "one hot", "even only"])
def test_one_dimensional_builders_same_for_every_count(kind, pattern):
    rng = np.random.default_rng(SEED)
    segments = 2001
    v = _values(rng, kind)
    ids = _ids(rng, pattern, segments)
    init = _values(rng, kind, segments)
    seg = _same_for_every_count(lambda t: er.segment_sum(v, ids, segments, threads=t))
    _same_for_every_count(lambda t: er.segment_sum(v, ids, segments, initial=init, threads=t))
    _same_for_every_count(lambda t: er.bincount(ids, v, minlength=segments, threads=t))
    _same_for_every_count(lambda t: er.add_at(init, ids, v, threads=t))
    _same_for_every_count(lambda t: er.scatter_add(init, 0, ids, v, threads=t))
    _same_for_every_count(lambda t: er.index_add(init, 0, ids, v, threads=t))
    exact, counts = seg.exact, seg.count
    for k in (0, 1, segments // 2, segments - 1):
        terms = v[ids == k]
        assert counts[k] == len(terms)
        if np.isfinite(terms).all():  # the oracle takes finite terms (specials: the C++ tests' oracles)
            assert exact[k] == exact_sum(terms), k


def test_dropped_ids_same_for_every_count():
    rng = np.random.default_rng(SEED + 1)
    v = _values(rng, "normal")
    ids = rng.integers(-500, 2500, size=N)  # segment_sum drops ids outside [0, 2000), as jax
    seg = _same_for_every_count(lambda t: er.segment_sum(v, ids, 2000, threads=t))
    assert seg.count.sum() == np.count_nonzero((ids >= 0) & (ids < 2000))


def test_rank_two_and_embedding_bags_same_for_every_count():
    rng = np.random.default_rng(SEED + 2)
    src = _values(rng, "wide", 700 * 150).reshape(700, 150)
    index = rng.integers(0, 40, size=(700, 150))
    _same_for_every_count(lambda t: er.scatter_add(np.zeros((40, 150)), 0, index, src, threads=t))
    _same_for_every_count(lambda t: er.scatter_add(np.ones((700, 40)), 1, index, src, threads=t))
    _same_for_every_count(lambda t: er.index_add(np.zeros((40, 150)), 0, index[:, 0], src, threads=t))
    _same_for_every_count(lambda t: er.index_add(np.zeros((700, 40)), 1, index[0], src, threads=t))
    lengths = rng.integers(0, 70, size=3000)
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    indices = rng.integers(0, 700, size=int(lengths.sum()))
    bags = _same_for_every_count(lambda t: er.embedding_bag(src, indices, offsets, threads=t))
    b = 1717
    rows = indices[offsets[b]:offsets[b] + lengths[b]]
    assert bags[b, 3].exact == exact_sum(src[rows, 3])


def test_planted_faults_rejected_when_threaded():
    rng = np.random.default_rng(SEED + 3)
    v = rng.standard_normal(N)
    ids = rng.integers(0, 5000, size=N)
    r = er.bincount(ids, v, minlength=5000, threads=2)
    good = np.bincount(ids, v, minlength=5000)
    assert r.covers(good, standard="any_order").all()
    dropped = np.bincount(ids[1:], v[1:], minlength=5000)
    shifted = ids.copy()
    shifted[7] = (shifted[7] + 1) % 5000
    for bad in (dropped, np.bincount(shifted, v, minlength=5000)):
        assert not r.covers(bad, standard="any_order").all()


@pytest.mark.parametrize("bad, error", [(-1, ValueError), (1.5, TypeError), ("2", TypeError), (True, TypeError),
                                        (10**6, ValueError)])
def test_threads_argument_is_checked(bad, error):
    x, ids = np.ones(10), np.arange(10)
    for call in (lambda: er.segment_sum(x, ids, threads=bad), lambda: er.bincount(ids, x, threads=bad),
                 lambda: er.add_at(x, ids, x, threads=bad), lambda: er.scatter_add(x, 0, ids, x, threads=bad),
                 lambda: er.index_add(x, 0, ids, x, threads=bad),
                 lambda: er.embedding_bag(x.reshape(5, 2), ids[:4].reshape(2, 2), threads=bad)):
        with pytest.raises(error, match="threads="):
            call()


def test_environment_is_read_at_each_call(monkeypatch):
    rng = np.random.default_rng(SEED + 4)
    v = rng.standard_normal(N)
    ids = rng.integers(0, 999, size=N)
    one = _state(er.segment_sum(v, ids, 999, threads=1))
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    for value in ("1", "2", "3"):
        monkeypatch.setenv("EXACTREF_NUM_THREADS", value)
        assert _state(er.segment_sum(v, ids, 999)) == one
    for bad in ("0", "-2", "junk"):
        monkeypatch.setenv("EXACTREF_NUM_THREADS", bad)
        for call in (lambda: er.segment_sum(v, ids, 999), lambda: er.bincount(ids, v),
                     lambda: er.add_at(v[:999], ids, v), lambda: er.scatter_add(v[:999], 0, ids, v),
                     lambda: er.index_add(v[:999], 0, ids, v),
                     lambda: er.embedding_bag(v[:10].reshape(5, 2), ids[:4].reshape(2, 2) % 5)):
            with pytest.raises(ValueError, match=f"EXACTREF_NUM_THREADS='{bad}'"):
                call()
        assert _state(er.segment_sum(v, ids, 999, threads=2)) == one  # an explicit count reads no variable
    monkeypatch.delenv("EXACTREF_NUM_THREADS")
    monkeypatch.setenv("OMP_NUM_THREADS", "x")
    with pytest.raises(ValueError, match="OMP_NUM_THREADS"):
        er.bincount(ids, v)
    monkeypatch.setenv("OMP_NUM_THREADS", "2,1")
    assert _state(er.segment_sum(v, ids, 999)) == one
