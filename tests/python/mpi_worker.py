"""The MPI program behind test_mpi.py, run by mpirun on P ranks: exactref.mpi against exactref in one process.

Every rank generates the whole data from the seed, so the one-process answer (er.sum, er.dot, er.tree_sum of the
concatenated data) is known on every rank without trusting any communication; each rank passes its slice. The
references are compared by their exact states (export_states: both accumulators, counts, special values, signed
zeros), the trees by their bits. Failures print the rank and the case (seed, distribution); the exit code is 1 on
every rank when any rank failed.
"""

import sys

import numpy as np
from mpi4py import MPI

import exactref as er
import exactref.mpi  # noqa: F401 - er.mpi

try:
    import ml_dtypes
    BF16 = ml_dtypes.bfloat16
except ImportError:  # bfloat16 only with ml_dtypes
    BF16 = None

COMM = MPI.COMM_WORLD
RANK, P = COMM.Get_rank(), COMM.Get_size()
failures = 0
checks = 0


def expect(ok, what):
    global failures, checks
    checks += 1
    if not ok:
        failures += 1
        print(f"mpi_worker: rank {RANK}: FAIL {what}", flush=True)


def distribution(n, kind, seed):
    """Offsets of a contiguous distribution: 0 balanced (np.array_split), 1 random cuts (ranks often empty),
    2 all on the last rank, 3 tiny pieces at the front (many ranks inside one leaf)."""
    rng = np.random.default_rng(seed)
    if kind == 0:
        cuts = [len(c) for c in np.array_split(np.zeros(n), P)]
        return np.concatenate([[0], np.cumsum(cuts)]).astype(int).tolist()
    if kind == 1:
        inner = rng.integers(0, n + 1, P - 1)
    elif kind == 2:
        inner = np.zeros(P - 1, dtype=int)
    else:
        inner = np.minimum(rng.integers(0, 41, P - 1), n)
    return [0, *sorted(int(v) for v in inner), n]


def values(n, seed, dtype, binades=40):
    rng = np.random.default_rng(seed)
    v = rng.uniform(1, 2, n) * np.exp2(rng.integers(-binades // 2, binades // 2 + 1, n)) * rng.choice([-1.0, 1.0], n)
    v[rng.integers(0, 64, n) == 0] = 0.0
    return v.astype(dtype)


def state(r):
    return r._refs.export_states(np.zeros(1, dtype=np.int64))[0]


def bits(v):
    return np.asarray(v).tobytes()


def mine(x, offsets):
    return x[offsets[RANK]:offsets[RANK + 1]]


def check_references_and_trees():
    dtypes = [np.float64, np.float32, np.float16] + ([BF16] if BF16 is not None else [])
    for dtype in dtypes:
        binades = 12 if dtype == np.float16 else 40
        wide = dtype == np.float64  # every distribution and four shapes; the other formats a sample of both
        shapes = ("halving256", "fold16", "halving4", "fold2") if wide else ("halving256", "fold2")
        for seed, n in enumerate([0, 1, 2049]):
            x, y = values(n, seed, dtype, binades), values(n, seed + 100, dtype, binades)
            whole, whole_dot = state(er.sum(x)), state(er.dot(x, y))
            trees = {s: bits(er.tree_sum(x, s)) for s in shapes}
            for kind in (range(4) if wide else (1, 3)):
                offsets = distribution(n, kind, seed * 7 + kind)
                where = f"{np.dtype(dtype).name}, seed {seed}, n {n}, distribution {kind}, offsets {offsets}"
                expect(state(er.mpi.sum(COMM, mine(x, offsets))) == whole, "mpi.sum differs: " + where)
                got_dot = er.mpi.dot(COMM, mine(x, offsets), mine(y, offsets))
                expect(state(got_dot) == whole_dot, "mpi.dot differs: " + where)
                for s, want in trees.items():
                    expect(bits(er.mpi.tree_sum(COMM, mine(x, offsets), s)) == want, f"mpi.tree_sum {s}: " + where)
    # float16 accumulated in float32, and other ops
    x = values(3001, 9, np.float16, 12)
    for kind in range(4):
        offsets = distribution(x.size, kind, kind)
        got = er.mpi.tree_sum(COMM, mine(x, offsets), "halving256", acc="float32")
        expect(bits(got) == bits(er.tree_sum(x, "halving256", acc="float32")), f"float16 in float32, {offsets}")
        got = er.mpi.tree_sum(COMM, mine(x, offsets), "fold16", op="max")
        expect(bits(got) == bits(er.tree_sum(x, "fold16", op="max")), f"max, {offsets}")


def check_specials():
    n = 2 * P + 3
    neg = np.full(n, -0.0)
    with_inf = np.ones(n)
    with_inf[-1] = np.inf
    with_nan = np.ones(n)
    with_nan[n // 2] = np.nan
    for name, x, want in [("all -0.0", neg, "-0"), ("+Inf on the last rank", with_inf, "inf"),
                          ("NaN in the middle", with_nan, "nan")]:
        for kind in range(3):
            offsets = distribution(n, kind, 5 + kind)
            r = er.mpi.sum(COMM, mine(x, offsets))
            expect(state(r) == state(er.sum(x)) and r.decimal == want, f"{name}: {r.decimal}, {offsets}")
    lone = np.array([-0.0])
    offsets = distribution(1, 1, 3)
    expect(bits(er.mpi.tree_sum(COMM, mine(lone, offsets))) == bits(np.float64(-0.0)), "lone -0.0, halving")
    expect(bits(er.mpi.tree_sum(COMM, mine(lone, offsets), "fold16")) == bits(np.float64(0.0)), "lone -0.0, fold")


def expect_error(what, call, needles):
    try:
        call()
        expect(False, what + ": no exception")
    except ValueError as e:
        for needle in needles:
            expect(needle in str(e), f"{what}: message {str(e)!r} lacks {needle!r}")
    r = er.mpi.sum(COMM, np.arange(8.0)[distribution(8, 0, 0)[RANK]:distribution(8, 0, 0)[RANK + 1]])
    expect(r.decimal == "28", what + ": the next call went wrong")


def check_errors():
    last = P - 1
    expect_error("dot lengths differ on the last rank",
                 lambda: er.mpi.dot(COMM, np.ones(2), np.ones(1 if RANK == last else 2)),
                 ["exactref.mpi.dot", f"rank {last}"])
    expect_error("a bad array on rank 0", lambda: er.mpi.sum(COMM, ["a"] if RANK == 0 else np.ones(2)),
                 ["exactref.mpi.sum: rank 0"])
    if P >= 2:
        expect_error("float32 on the last rank",
                     lambda: er.mpi.sum(COMM, np.ones(2, np.float32 if RANK == last else np.float64)),
                     [f"rank {last} has dtype float32 but rank 0 has float64"])
        expect_error("fold16 on the last rank",
                     lambda: er.mpi.tree_sum(COMM, np.ones(2), "fold16" if RANK == last else "halving256"),
                     [f"rank {last} has shape fold16 but rank 0 has halving256"])


def check_planted():
    x = values(5000, 77, np.float64)
    offsets = distribution(x.size, 0, 0)
    part = mine(x, offsets) if RANK != P - 1 else x[:0]
    expect(state(er.mpi.sum(COMM, part)) != state(er.sum(x)), "planted: a dropped part gave the whole reference")


check_references_and_trees()
check_specials()
check_errors()
check_planted()
total = COMM.allreduce(failures)
all_checks = COMM.allreduce(checks)
if RANK == 0:
    print(f"mpi_worker on {P} ranks: {all_checks} checks, {total} failed", flush=True)
sys.exit(1 if total else 0)
