"""What real libraries were seen to need: every claim of docs/choosing-a-standard.md, "What real libraries were seen
to need", checked on the library itself (numpy, GCC's OpenMP, OpenBLAS behind np.dot, jax and torch when installed)
or, where the library cannot run here (CUB), on its documented order reproduced step by step.

Two kinds of check. A standard that the page recommends must cover every honest result, on random data and on data
built to make the library's roundings as large as they can be. A standard that the page calls wrong must reject an
honest result, and the rejection is checked twice: by covers(), and by the derivation's bound computed here in exact
fractions (model_bound below), so that the rejection is a property of the model and not of its implementation.
"""

import ctypes
import math
import shutil
import subprocess
import warnings
from fractions import Fraction
from functools import lru_cache

import numpy as np
import pytest

import exactref as er
from exact_oracle import abs_sum, exact_sum, frac

U64 = Fraction(1, 2 ** 53)
U32 = Fraction(1, 2 ** 24)
U16 = Fraction(1, 2 ** 11)
F32 = np.float32
# Added to a partial sum just above 1, T rounds up by a whole ulp: an error of about u at every addition.
T = F32(2.0 ** -24 + 2.0 ** -34)


def gamma(k, u):
    return k * u / (1 - k * u)


# ---- numpy's pairwise summation ------------------------------------------------------------------------------------

@lru_cache(maxsize=None)
def numpy_depth(n):
    """The most roundings on a path from a term to the root in numpy's pairwise_sum over n terms
    (numpy/_core/src/umath/loops_utils.h.src): n < 8 a left fold; n <= 128 eight interleaved left folds of n // 8
    terms, ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)), then the n % 8 remaining terms folded on; else halves split at
    n2 = n // 2 rounded down to a multiple of 8. The first addition, -0.0 + x or the ufunc's +0.0 + P, is exact."""
    if n < 8:
        return max(n - 1, 0)
    if n <= 128:
        return (n // 8 - 1) + 3 + n % 8
    n2 = n // 2 - (n // 2) % 8
    return 1 + max(numpy_depth(n2), numpy_depth(n - n2))


def numpy_pairwise(a):
    """numpy's pairwise_sum of a contiguous float32/float64 array, every addition in a's dtype: (value, depth)."""
    n, t = a.size, a.dtype.type
    if n < 8:
        res = t(-0.0)
        for v in a:
            res = t(res + v)
        return res, max(n - 1, 0)
    if n <= 128:
        k = n // 8
        r = a[:8].copy()
        for i in range(1, k):
            r = r + a[8 * i:8 * i + 8]
        res = t(t(t(r[0] + r[1]) + t(r[2] + r[3])) + t(t(r[4] + r[5]) + t(r[6] + r[7])))
        for v in a[8 * k:]:
            res = t(res + v)
        return res, (k - 1) + 3 + n % 8
    n2 = n // 2 - (n // 2) % 8
    (v1, d1), (v2, d2) = numpy_pairwise(a[:n2]), numpy_pairwise(a[n2:])
    return t(v1 + v2), 1 + max(d1, d2)


def fold(values, dtype):
    acc = dtype(0)
    for v in values:
        acc = dtype(acc + v)
    return acc


def round_up_block():
    """128 float32 terms that make numpy's 8 accumulators err by about u at each of their 15 additions: each starts
    at 1.0 and adds T fifteen times; the combining tree is exact. np.add.reduce errs by 120·(2^-24 - 2^-34)."""
    x = np.full(128, T, dtype=F32)
    x[:8] = 1
    return x


def interleaved_block(columns=8, rows=16):
    """rows × columns float32 terms, in row order: the first row 1, -1, 1, -1, ...; then every even column adds T
    (rounding up by about u each time on top of the 1.0) and every odd one -2^-23 (exactly). Column-wise
    accumulators err; a left fold of the row-order sequence does not (its prefix sums stay near 0 or 1)."""
    b = np.empty((rows, columns), dtype=F32)
    b[0, 0::2], b[0, 1::2] = 1, -1
    b[1:, 0::2], b[1:, 1::2] = T, F32(-2.0 ** -23)
    return b.reshape(-1)


def random_data(rng, n, kind, dtype=F32):
    if kind == 0:
        x = rng.standard_normal(n)
    elif kind == 1:
        x = rng.standard_normal(n) + 3
    else:
        x = rng.standard_normal(n) * np.exp2(rng.integers(-12, 12, n))
    return x.astype(dtype)


# ---- the derivation's bound in exact fractions (docs/algorithms/structured-bounds.md, S2a, S2b, S2d) ----------------

def groups_of(m, groups, size):
    idx = list(range(m))
    if groups == "rest":
        return [idx]
    if groups == "consecutive":
        return [idx[i:i + size] for i in range(0, m, size)]
    if groups == "chunks":
        q, r = divmod(m, size)
        out, start = [], 0
        for g in range(size):
            end = start + q + (1 if g < r else 0)
            out.append(idx[start:end])
            start = end
        return out
    return [idx[g::size] for g in range(size)]  # interleaved


def model_bound(terms, levels, u):
    """The structured bound of the derivation with exact group sums, round to nearest: levels is a list of
    (order, groups, size, height) from the leaves up. An upper bound of what covers() uses (it takes the minimum
    of this form, the any-order form and the flat bound), so an error above it is rejected by the model itself."""
    items = [(frac(t), Fraction(0)) for t in terms]  # (exact value y_j, its error bound E_j)
    for order, groups, size, height in levels:
        nxt = []
        for g in groups_of(len(items), groups, size):
            ys, es = [items[j][0] for j in g], [items[j][1] for j in g]
            c, se = len(g), sum(es, Fraction(0))
            sm = sum((abs(y) + e for y, e in zip(ys, es)), Fraction(0))
            if order == "fold":  # S2a
                prefix, total = Fraction(0), Fraction(0)
                for k, y in enumerate(ys):
                    prefix += y
                    if k >= 1:
                        total += abs(prefix)
                e = (1 + u) ** (c - 1) * (se + u * total)
            elif order == "tree":  # S2b
                h = height if height is not None else max(0, math.ceil(math.log2(c)))
                e = se + gamma(h, u) * sm
            else:  # S2d
                e = se + (c - 1) * u * sm
            nxt.append((sum(ys, Fraction(0)), e))
        items = nxt
    assert len(items) == 1
    return items[0][1]


def error_of(result, terms):
    return abs(frac(result) - exact_sum(terms))


# ---- numpy: the order of np.add.reduce and its depth ------------------------------------------------------------

def test_the_model_of_numpy_pairwise_sum_gives_np_add_reduce_bit_for_bit():
    rng = np.random.default_rng(20240601)
    for dtype in (np.float32, np.float64):
        for n in list(range(1, 300)) + [1000, 1023, 1024, 4095, 12345]:
            x = random_data(rng, n, 2, dtype)
            value, depth = numpy_pairwise(x)
            assert value == np.add.reduce(x), (dtype, n)
            assert depth == numpy_depth(n)


def test_numpy_depth_is_not_the_minimal_height_and_has_a_simple_upper_bound():
    assert [numpy_depth(n) for n in (100, 127, 128, 129, 1000, 1024, 10 ** 4, 10 ** 5, 10 ** 6, 10 ** 7, 10 ** 8)] == \
        [18, 24, 18, 12, 21, 21, 19, 25, 31, 29, 34]
    for n in range(1, 1 << 16):
        assert numpy_depth(n) <= 24 + max(0, math.ceil(math.log2(n / 128))), n


def test_np_sum_is_covered_by_a_tree_of_numpys_depth():
    rng = np.random.default_rng(7)
    for n in (100, 127, 128, 129, 1000, 4096, 5000):
        for kind in range(3):
            x = random_data(rng, n, kind)
            assert er.sum(x).covers(np.add.reduce(x), standard="tree", height=numpy_depth(n)).all(), (n, kind)
    for reps in (1, 2, 8):
        x = np.tile(round_up_block(), reps)
        assert er.sum(x).covers(np.add.reduce(x), standard="tree", height=numpy_depth(x.size)).all()


def test_a_tree_of_minimal_height_rejects_an_honest_np_sum():
    x = round_up_block()
    result = np.add.reduce(x)
    r = er.sum(x)
    assert not r.covers(result, standard="tree", height=7).all()      # ceil(log2 128) = 7
    assert error_of(result, x) > gamma(7, U32) * abs_sum(x)          # |r - s| > γ_7·S, in fractions
    assert r.covers(result, standard="tree", height=numpy_depth(128)).all()   # D(128) = 18
    assert r.covers(result, standard="any_order").all()


def test_numpy_blocks_of_128_in_a_power_of_two_count_have_a_structure():
    spelling = "levels:tree@18:128,tree"
    rng = np.random.default_rng(11)
    for k in range(5):
        n = 128 << k
        for x in [random_data(rng, n, kind) for kind in range(3)] + [np.tile(round_up_block(), 1 << k)]:
            r = er.sum(x, structure=spelling)
            assert r.covers(np.add.reduce(x), standard=spelling).all(), (n, x[:3])
            assert r.bound(spelling) <= r.bound("tree", height=numpy_depth(n)) * (1 + 2 ** -40)


# ---- numpy float16 -------------------------------------------------------------------------------------------------

def test_np_sum_of_float16_is_pairwise_in_float32_rounded_once():
    rng = np.random.default_rng(3)
    for n in (5, 100, 1000, 8192, 8193, 20000, 100000):
        h = random_data(rng, n, 0, np.float16)
        for got, terms in ((np.sum(h), h), (np.sum(h[::2]), h[::2])):
            once = np.float16(er.pairwise_sum(terms, acc="float32"))
            assert got.view(np.uint16) == once.view(np.uint16), n
            r = er.sum(terms)
            assert r.covers(got, standard="mixed", acc="float32").all()
            assert r.covers(got, standard=f"mixed:float32:float16:tree:{numpy_depth(terms.size)}").all()
    rows = random_data(rng, 6 * 1000, 0, np.float16).reshape(6, 1000)
    got = np.sum(rows, axis=1)                                        # the contiguous axis
    for i in range(6):
        assert got[i].view(np.uint16) == np.float16(er.pairwise_sum(rows[i], acc="float32")).view(np.uint16)
    h = random_data(rng, 128 << 4, 2, np.float16)
    spelling = "mixed:float32:float16:levels:tree@18:128,tree"
    assert er.sum(h, structure=spelling).covers(np.sum(h), standard=spelling).all()


def test_np_sum_of_float16_with_a_float32_dtype_is_pairwise_per_buffer_and_the_buffers_folded():
    rng = np.random.default_rng(4)
    buf = np.getbufsize()                                             # 8192 unless changed
    one_pairwise_sum = 0
    for n in (20000, 50000) * 4:
        h = random_data(rng, n, 0, np.float16)
        got = np.sum(h, dtype=np.float32)
        acc = F32(0)
        for i in range(0, n, buf):
            acc = F32(acc + numpy_pairwise(h[i:i + buf].astype(F32))[0])
        assert got == acc                                             # the buffered model, bit for bit
        one_pairwise_sum += got == er.pairwise_sum(h, acc="float32")
        height = max(numpy_depth(min(n, buf)), numpy_depth(n % buf))
        spelling = f"levels:tree@{height}:{buf},fold"
        assert er.sum(h, structure=spelling).covers(got, standard=spelling).all()
    assert one_pairwise_sum < 8                                       # 6 of 8 differ from it with this seed


def test_float16_sums_along_an_outer_axis_are_float16_folds():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((100, 8)).astype(np.float16)
    got = np.sum(x, axis=0)
    for j in range(8):
        assert got[j].view(np.uint16) == er.fold_sum(x[:, j]).view(np.uint16)
    r = er.sum(x, axis=0, structure="levels:fold")
    mixed = r.covers(got, standard="mixed", acc="float32")
    assert not mixed.all()                                            # 8 of 8 rejected with this seed
    for j in np.flatnonzero(~mixed):
        column = x[:, j]
        s, big_s = exact_sum(column), abs_sum(column)
        bound = 99 * U32 * big_s + U16 * (abs(s) + 99 * U32 * big_s) + Fraction(1, 2 ** 25)
        assert error_of(got[j], column) > bound                      # the mixed formula, in fractions
    assert r.covers(got, standard="any_order").all()
    assert r.covers(got, standard="levels:fold").all()
    assert all(r[j].bound("levels:fold") < r[j].bound("any_order") / 4 for j in range(8))


def test_np_cumsum_of_float16_is_a_float16_fold():
    rng = np.random.default_rng(6)
    h = rng.standard_normal(1000).astype(np.float16)
    got = np.cumsum(h)
    acc, rejected = np.float16(0), 0
    for k in range(h.size):
        acc = np.float16(acc + h[k])
        assert acc.view(np.uint16) == got[k].view(np.uint16)
        if k % 10 == 9:
            r = er.sum(h[:k + 1])
            assert r.covers(got[k], standard="any_order").all()
            rejected += not r.covers(got[k], standard="mixed", acc="float32").all()
    assert rejected >= 10                                             # 55 of 100 prefixes with this seed


def test_a_vacuous_check_says_so_and_order_free_data_makes_numpy_exact():
    h = np.random.default_rng(13).standard_normal(10_000).astype(np.float16)
    v = er.sum(h).verdict(np.float16(0))
    assert v.covered and v.vacuous and "docs/choosing-a-standard.md" in v.advice
    y = er.testing.order_free(4000, "float16", seed=3)               # any order, any tree
    r = er.sum(y)
    x = y.reshape(1000, 4)
    for got in (np.sum(y), np.cumsum(y)[-1], np.sum(y, dtype=np.float32).astype(np.float16),
                np.float16(np.sum(np.sum(x, axis=0)))):
        assert r.covers(got, standard="exact").all()
    assert not r.covers(np.sum(y[1:]), standard="exact").all()       # one lost term
    z = er.testing.order_free(1 << 17, "float16", seed=3, structure="levels:tree@18:128,tree")
    rz = er.sum(z)
    assert rz.verdict(np.sum(z)).vacuous                              # any_order sees nothing at this n ...
    assert rz.covers(np.sum(z), standard="exact").all()               # ... exact sees every quantum


# ---- OpenMP-like chunks through numpy ------------------------------------------------------------------------------

def chunked_numpy_sum(x, chunks=4):
    parts = [np.add.reduce(c) for c in np.array_split(x, chunks)]    # the first n % chunks one longer, as "/N"
    return fold(parts, x.dtype.type)


def test_chunks_summed_by_numpy_are_not_folds():
    x = np.tile(interleaved_block(), 4)                               # 4 chunks of 128, one numpy block each
    result = chunked_numpy_sum(x)
    wrong = "levels:fold/4,any"
    right = f"levels:tree@{numpy_depth(128)}/4,any"
    r = er.sum(x, structure=[wrong, right])
    assert not r.covers(result, standard=wrong).all()
    assert error_of(result, x) > model_bound(x, [("fold", "chunks", 4, None), ("any", "rest", 0, None)], U32)
    assert r.covers(result, standard=right).all()
    assert r.covers(result, standard="split_k", chunks=4).all()      # the flat bound of fold/4 is far looser


def test_chunks_summed_by_numpy_are_covered_by_trees_of_numpys_depth():
    rng = np.random.default_rng(12)
    for n in (100, 1000, 1024, 5000, 16384):
        for kind in range(3):
            x = random_data(rng, n, kind)
            height = max(numpy_depth(c.size) for c in np.array_split(x, 4))
            spelling = f"levels:tree@{height}/4,any"
            assert er.sum(x, structure=spelling).covers(chunked_numpy_sum(x), standard=spelling).all(), (n, kind)


# ---- a real OpenMP reduction (GCC's libgomp), built here ----------------------------------------------------------

OMP_SOURCE = r"""
#include <omp.h>
float omp_sum(const float *x, long n, int *team) {
    float s = 0.0f;
    int t = 0;
#pragma omp parallel num_threads(4)
    {
#pragma omp single
        t = omp_get_num_threads();
#pragma omp for schedule(static) reduction(+ : s)
        for (long i = 0; i < n; ++i) s += x[i];
    }
    *team = t;
    return s;
}
"""
# No -ffast-math: a shared object built with it may set FTZ/DAZ for the whole process when it loads.
OMP_BUILDS = {"plain": ["-O2"], "vectorized": ["-O3", "-fassociative-math", "-fno-signed-zeros", "-fno-trapping-math"]}


@pytest.fixture(scope="module")
def omp_sum(tmp_path_factory):
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler (gcc or cc) to build the OpenMP reduction")
    d = tmp_path_factory.mktemp("omp")
    (d / "omp.c").write_text(OMP_SOURCE)
    funcs = {}
    for name, flags in OMP_BUILDS.items():
        so = d / f"omp_{name}.so"
        done = subprocess.run([cc, *flags, "-fopenmp", "-fPIC", "-shared", str(d / "omp.c"), "-o", str(so)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"{cc} -fopenmp failed: {done.stderr.strip()[-300:]}")
        f = ctypes.CDLL(str(so)).omp_sum
        f.restype, f.argtypes = ctypes.c_float, [ctypes.c_void_p, ctypes.c_long, ctypes.POINTER(ctypes.c_int)]
        funcs[name] = f

    def run(name, x):
        x = np.ascontiguousarray(x, dtype=F32)
        team = ctypes.c_int(0)
        value = F32(funcs[name](x.ctypes.data, x.size, ctypes.byref(team)))
        if team.value != 4:
            pytest.skip(f"the OpenMP runtime gave a team of {team.value} threads, not 4 (OMP_THREAD_LIMIT?)")
        return value

    return run


def omp_pattern():
    chunk = np.where(np.arange(1024) % 2 == 0, T, F32(-2.0 ** -23)).astype(F32)
    chunk[:2] = 1, -1
    return np.tile(chunk, 4)                                          # 4 static chunks of 1024


def test_an_openmp_static_reduction_is_covered_by_folds_in_static_chunks(omp_sum):
    spelling = "levels:fold/4,any"
    x = omp_pattern()
    r = er.sum(x, structure=spelling)
    assert r.covers(np.array([omp_sum("plain", x) for _ in range(10)]), standard=spelling).all()
    rng = np.random.default_rng(8)
    for n in (10001, 4099):
        for kind in range(3):
            x = random_data(rng, n, kind)
            assert er.sum(x, structure=spelling).covers(omp_sum("plain", x), standard=spelling).all(), (n, kind)


def test_a_vectorized_openmp_reduction_is_not_a_fold_per_thread(omp_sum):
    x = omp_pattern()
    plain, vectorized = omp_sum("plain", x), omp_sum("vectorized", x)
    if plain == vectorized:
        pytest.skip("the compiler did not vectorize the reduction loop: each thread still folds")
    wrong, right = "levels:fold/4,any", "levels:any/4,any"
    r = er.sum(x, structure=[wrong, right])
    assert not r.covers(vectorized, standard=wrong).all()
    assert error_of(vectorized, x) > model_bound(x, [("fold", "chunks", 4, None), ("any", "rest", 0, None)], U32)
    assert r.covers(vectorized, standard=right).all()
    rng = np.random.default_rng(9)
    for kind in range(3):
        y = random_data(rng, 10001, kind)
        assert er.sum(y, structure=right).covers(omp_sum("vectorized", y), standard=right).all()


# ---- BLAS dots as split-K chunks (np.dot, OpenBLAS in numpy's wheels) -----------------------------------------------

def test_blas_dots_are_not_folds():
    x = np.tile(interleaved_block(columns=32), 4)                    # 4 chunks of 512
    y = np.ones_like(x)
    chunks = list(zip(np.array_split(x, 4), np.array_split(y, 4)))
    parts = [F32(np.dot(a, b)) for a, b in chunks]
    if all(p == er.fold_sum(a) for p, (a, _) in zip(parts, chunks)):
        pytest.skip("np.dot folded each chunk sequentially on this machine")
    result = fold(parts, F32)
    wrong, right = "levels:fold/4,any", "levels:any/4,any"
    r = er.dot(x, y, structure=[wrong, right])
    assert not r.covers(result, standard=wrong).all()
    assert r.covers(result, standard=right).all()
    rng = np.random.default_rng(10)
    a, b = rng.standard_normal(4096).astype(F32), rng.standard_normal(4096).astype(F32)
    parts = [F32(np.dot(p, q)) for p, q in zip(np.array_split(a, 4), np.array_split(b, 4))]
    assert er.dot(a, b, structure=right).covers(fold(parts, F32), standard=right).all()


# ---- cub::BlockReduce's order, reproduced (no GPU here) ------------------------------------------------------------

def cub_block_sum(x, items=8, threads=256):
    """A block of 256 threads, each folding `items` consecutive terms, then cub::BlockReduce<float, 256> with its
    default algorithm BLOCK_REDUCE_WARP_REDUCTIONS: a shuffle-down tree in each warp of 32 (lane i adds lane
    i + 1, 2, 4, 8, 16) and warp 0's lane 0 folding the 8 warp aggregates in order (ApplyWarpAggregates in
    cub/block/specializations/block_reduce_warp_reductions.cuh)."""
    per_thread = x.reshape(threads, items)
    part = per_thread[:, 0].copy()
    for k in range(1, items):
        part = part + per_thread[:, k]
    lanes = part.reshape(threads // 32, 32)
    for offset in (1, 2, 4, 8, 16):
        nxt = lanes.copy()
        nxt[:, :32 - offset] = lanes[:, :32 - offset] + lanes[:, offset:]
        lanes = nxt
    return fold(lanes[:, 0], F32)


def test_cub_block_reduce_is_not_a_tree_of_minimal_height():
    thread = np.zeros(256, dtype=F32)
    thread[0] = 1                                  # warp 0, lane 0; each shuffle step adds T and rounds up
    thread[[1, 2, 4, 8, 16]] = T
    thread[32 * np.arange(1, 8)] = T               # each warp aggregate folded onto 1.0 rounds up too
    x = np.zeros((256, 8), dtype=F32)
    x[:, 7] = thread                               # the last item of each thread: its fold's bound stays ≈ u
    x = x.reshape(-1)
    result = cub_block_sum(x)
    wrong = "levels:fold:8,tree:256,any"
    rights = ["levels:fold:8,tree:32,fold:8,any", "levels:fold:8,tree@12:256,any"]
    r = er.sum(x, structure=[wrong] + rights)
    assert not r.covers(result, standard=wrong).all()
    assert error_of(result, x) > model_bound(x, [("fold", "consecutive", 8, None), ("tree", "consecutive", 256, None),
                                                 ("any", "rest", 0, None)], U32)
    for spelling in rights:
        assert r.covers(result, standard=spelling).all()
    rng = np.random.default_rng(14)
    for kind in range(3):
        y = random_data(rng, 2048, kind)
        ry = er.sum(y, structure=rights)
        assert all(ry.covers(cub_block_sum(y), standard=s).all() for s in rights)


# ---- inputs rounded before the sum: jax with x64 off, torch's 'medium' matmul precision ----------------------------

def centred(n, seed):
    x = np.random.default_rng(seed).standard_normal(n)
    return x - x.mean()                                              # s ≈ 0: the mixed bound is ≈ u32·|s|


def test_a_sum_of_inputs_rounded_to_float32_is_judged_on_the_rounded_inputs():
    x = centred(10_000, 1)
    x32 = x.astype(F32)                            # what jax does to float64 input with x64 off
    result = np.sum(x32)
    assert er.sum(x32).covers(result, standard="any_order").all()
    assert not er.sum(x).covers(result, standard="mixed:float64:float32").all()
    s, big_s, n = exact_sum(x), abs_sum(x), x.size
    bound = (n - 1) * U64 * big_s + U32 * (abs(s) + (n - 1) * U64 * big_s) + Fraction(1, 2 ** 150)
    assert error_of(result, x) > bound


def test_jax_with_x64_off_sums_float32_roundings_of_float64_input():
    jax = pytest.importorskip("jax", reason="jax is not installed; the numpy emulation above shows the principle")
    jnp = jax.numpy
    x = centred(10_000, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")            # "Explicitly requested dtype float64 ... will be truncated"
        xj = jnp.asarray(x)
    if xj.dtype != jnp.float32:
        pytest.skip("jax_enable_x64 is on here: float64 input stays float64")
    result = np.asarray(jax.device_get(jnp.sum(xj)))
    assert result.dtype == np.float32
    assert er.sum(x.astype(F32)).covers(result, standard="any_order").all()
    assert not er.sum(x).covers(result, standard="mixed:float64:float32").all()


def test_a_matmul_of_bfloat16_rounded_inputs_is_judged_on_the_rounded_inputs():
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes (bfloat16 for numpy) is not installed")
    rng = np.random.default_rng(15)
    a, b = rng.standard_normal((16, 256)).astype(F32), rng.standard_normal((256, 16)).astype(F32)
    a16, b16 = a.astype(ml_dtypes.bfloat16), b.astype(ml_dtypes.bfloat16)
    c = a16.astype(F32) @ b16.astype(F32)          # bfloat16 inputs, float32 products and sums (OpenBLAS sgemm)
    assert er.matmul(a16, b16).covers(c, standard="any_order", fma=True).all()
    assert er.matmul(a16.astype(F32), b16.astype(F32)).covers(c, standard="any_order", fma=True).all()
    assert er.matmul(a, b).covers(c, standard="any_order", fma=True).mean() < 0.5


def test_torch_medium_matmul_precision_multiplies_bfloat16_rounded_inputs():
    torch = pytest.importorskip("torch", reason="torch is not installed; the ml_dtypes emulation above shows it")
    rng = np.random.default_rng(16)
    a, b = rng.standard_normal((32, 256)).astype(F32), rng.standard_normal((256, 32)).astype(F32)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    previous = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("highest")
        highest = (ta @ tb).numpy()
        torch.set_float32_matmul_precision("medium")
        medium = (ta @ tb).numpy()
    finally:
        torch.set_float32_matmul_precision(previous)
    if np.array_equal(highest, medium):
        pytest.skip("torch computed this CPU matmul in float32 under 'medium' too (no bfloat16 kernel here)")
    a16 = ta.to(torch.bfloat16).to(torch.float32).numpy()
    b16 = tb.to(torch.bfloat16).to(torch.float32).numpy()
    assert er.matmul(a16, b16).covers(medium, standard="any_order", fma=True).all()
    assert not er.matmul(a, b).covers(medium, standard="any_order", fma=True).all()
