#!/usr/bin/env python3
"""er.sum and er.dot from Python against the C++ exact sum, PyPI's xsum, np.sum and np.dot (issue 5 "Performance";
issue 12 deliverables 3 and 4).

Every timed call runs in interleaved rounds: round r times each contender once, in a fixed order, so a noisy stretch
of a shared machine hits all of them alike; medians over the rounds are reported, as wall time and as the calling
process's CPU time (time.process_time: every thread, so that threads=2 shows its CPU cost too).

  sum      n = 10^3, 10^5, 10^7 float64 N(0,1): er.sum(x), er.sum(x).nearest(), the C++ exact reference on the same
           buffer (exactref._core._time_sum: exactref::sum, one pass for s, S and max|x|, measured inside the
           extension, so er.sum / C++ shows only what the Python layer adds), xsum (small accumulator, xsum_add of the
           array then xsum_round; skipped with a note when it is not installed: pip install xsum), np.sum.
           Fixed cost at 10^3: er.sum time minus the C++ time.
  threads  n = 10^7 float64 wide exponents (2^-40 .. 2^40, compute-bound) and N(0,1): er.sum(x, threads=t) and
           er.dot(x, y, threads=t) for t = 1, 2: the speed-up on two threads (the values are the same bits).
  dot      n = 10^7 float64 and float32 N(0,1): er.dot(x, y) against np.dot (run with OPENBLAS_NUM_THREADS=1 etc.:
           this script sets them before numpy loads, so np.dot is one BLAS thread).

Usage: .venv/bin/python bench/bench_python.py [--rounds 15] [--quick] [--check] [--covers] [--xsum-wide] [--batched] [--dot]
--dot times only the dot case, at n = 10^5 and 10^7 (ratios to np.dot in wall and CPU time).
--xsum-wide times er.sum(x).nearest() against xsum's small and large accumulators on wide exponents, 10^3 .. 10^8.
--check exits 1 when er.sum costs more than 1.5x the C++ exact sum at 10^7 (CPU time).
--scatter times the scatter and scan references against numpy (10^7 float64 N(0,1) values into 10^5 segments:
er.bincount and er.segment_sum on threads=1 and 2 vs np.bincount(ids, weights), with the medians of the per-round CPU
ratios; the same in float32 on one thread; 10^7 er.cumsum vs np.cumsum;
covers of both results) and measures the peak memory per output element (a fresh process each: VmHWM growth) for
10^6 segments of float32 and a 10^7 float32 cumsum.
--batched times a batched er.matmul against the unbatched product with the same output elements and K (issue 12:
within 2x per output element): (3000, 1, 2) @ (3000, 2, 1) vs (3000, 2) @ (2, 1), (1000, 4, 4) @ (1000, 4, 4) vs
(4000, 4) @ (4, 4), float32 and float64, each built alone and built then covering np.matmul's result.
--axis times er.sum(x, axis=1) (compact references, ~56 bytes per row) against the full references it built before
(one ~2.3 KB reference per row: exactref._core.sum(..., compact=False), the path structure= takes) for 10^6 x 10 and
10^4 x 10^3 float32 and float64 N(0,1) rows, covers() of rows folded in groups of 8 over both under any_order,
directed:any_order and levels:fold:8,any (full references with the data bound, compact with the flat bound, compact
keeping the data bound: structure=), and the peak memory per row of each (a fresh process each: VmHWM growth).
--covers times Reference.covers over arrays instead (elements judged per second; the cases interleaved round by round):
a 512 x 512 er.matmul result (K = 256, float32 and float64) under any_order and split_k:8, 2^18 row sums of 32 float32
terms under any_order and levels:fold/4,any (references built with that structure), and 2^18 runs of one sum.
"""

from __future__ import annotations

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ.setdefault(_v, "1")  # np.dot on one BLAS thread (read when numpy loads its BLAS)

import argparse  # noqa: E402
import inspect  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import exactref as er  # noqa: E402
from exactref import _core  # noqa: E402

try:
    import xsum  # PyPI xsum (Neal's superaccumulators)
except ImportError:  # pragma: no cover - optional
    xsum = None

HAS_THREADS = "threads" in inspect.signature(er.sum).parameters


def xsum_sum(x):
    acc = xsum.xsum_small_accumulator()
    xsum.xsum_add(acc, x)
    return xsum.xsum_round(acc)


def cpp_sum(x):
    """Seconds (wall, cpu) of exactref::sum measured inside the extension."""
    ((w, c),) = _core._time_sum(x, 1)
    return w, c


def interleaved(contenders, rounds, inner=1, samples_out=None):
    """{label: (median wall, median cpu)} per call; contenders: list of (label, fn); fn returning a (wall, cpu) pair
    reports its own time (the C++ timer). `inner` calls per sample for short calls. samples_out (a dict): receives
    {label: ([wall per round], [cpu per round])}, for per-round ratios."""
    samples = {label: ([], []) for label, _ in contenders}
    for label, fn in contenders:  # warm up
        fn()
    for _ in range(rounds):
        for label, fn in contenders:
            w0, c0 = time.perf_counter(), time.process_time()
            own = None
            for _ in range(inner):
                own = fn()
            w1, c1 = time.perf_counter(), time.process_time()
            if isinstance(own, tuple):
                w, c = own
            else:
                w, c = (w1 - w0) / inner, (c1 - c0) / inner
            samples[label][0].append(w)
            samples[label][1].append(c)
    if samples_out is not None:
        samples_out.update(samples)
    return {k: (statistics.median(a), statistics.median(b)) for k, (a, b) in samples.items()}


def show_round_ratios(samples, base):
    """The median and range of each contender's per-round CPU-time ratio to `base` (the same round, so a noisy
    stretch of a shared machine moves both)."""
    for label, (_, cpu) in samples.items():
        if label == base:
            continue
        ratios = sorted(c / b for c, b in zip(cpu, samples[base][1]))
        print(f"  {label:36s} cpu / {base}: median {statistics.median(ratios):.2f} per round "
              f"({ratios[0]:.2f} .. {ratios[-1]:.2f}, {len(ratios)} rounds)")


def show(title, results, base=None):
    print(title)
    for label, (w, c) in results.items():
        ratio = (f"   {w / results[base][0]:6.2f}x {base} (cpu {c / results[base][1]:.2f}x)"
                 if base and label != base else "")
        print(f"  {label:36s} wall {fmt(w)}   cpu {fmt(c)}{ratio}")


def fmt(s):
    return f"{s * 1e3:9.3f} ms" if s >= 1e-4 else f"{s * 1e6:9.2f} us"


def wide(rng, n):
    return np.ldexp(rng.uniform(1, 2, n), rng.integers(-40, 41, n)) * rng.choice([-1.0, 1.0], n)


def cpp_sum_inner(x, inner):
    """The C++ exact sum timed inside the extension, `inner` calls per sample in one timed loop (the clock reads of
    _time_sum, a system call for the thread CPU clock, would be a visible part of a 10^3-term call)."""
    if hasattr(_core, "_time_sum_loop"):
        return lambda: _core._time_sum_loop(x, inner)
    def run():  # builds from before _time_sum_loop
        times = _core._time_sum(x, inner)
        return statistics.median(w for w, _ in times), statistics.median(c for _, c in times)
    return run


def xsum_large_sum(x):
    acc = xsum.xsum_large_accumulator()
    xsum.xsum_add(acc, x)
    return xsum.xsum_round(acc)


def xsum_wide_cases(rounds, rng):
    """er.sum(x, threads=1).nearest() against xsum's small and large accumulators on float64 wide exponents
    (2^-40 .. 2^40), n = 10^3 .. 10^8: the per-exponent bins (Step F5) against Neal's large accumulator."""
    if not xsum:
        print("xsum not installed (pip install xsum): skipped")
        return
    for n in (10**3, 10**5, 10**7, 10**8):
        x = wide(rng, n)
        assert float(er.sum(x).nearest()) == xsum_large_sum(x)
        res = interleaved([("er.sum(x).nearest()", lambda: er.sum(x, threads=1).nearest()),
                           ("xsum small accumulator", lambda: xsum_sum(x)),
                           ("xsum large accumulator", lambda: xsum_large_sum(x))],
                          rounds if n < 10**7 else max(3, rounds // 3), max(1, 10**5 // n))
        show(f"sum, float64 wide exponents, n = {n:,} (one thread)", res, "xsum large accumulator")


def timed(fn):
    """(wall, cpu) seconds of one call."""
    w0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w0, time.process_time() - c0


def covers_cases(rounds):
    """Reference.covers over arrays, interleaved: every case once per round; medians of elements per second."""
    rng = np.random.default_rng(20261201)
    cases = []
    for dtype in (np.float32, np.float64):
        a = rng.standard_normal((512, 256)).astype(dtype)
        b = rng.standard_normal((256, 512)).astype(dtype)
        ref, c = er.matmul(a, b), (a @ b).astype(dtype)
        for standard in ("any_order", "split_k:8"):
            cases.append((f"matmul 512x512 {np.dtype(dtype).name} {standard}", ref, c, standard))
    x = rng.standard_normal((1 << 18, 32)).astype(np.float32)
    rows = er.sum(x, axis=1, structure="levels:fold/4,any")
    folded = x.reshape(-1, 4, 8).sum(axis=2, dtype=np.float32).sum(axis=1, dtype=np.float32)
    for standard in ("any_order", "levels:fold/4,any"):
        cases.append((f"row sums 2^18 x 32 float32 {standard}", rows, folded, standard))
    # Compact reference arrays (segment sums, scans): any_order, a structured standard (its flat bound per element)
    # and a directed one; the first covers() builds the array's kept filter summaries (the warm-up below).
    values = rng.standard_normal(10**7).astype(np.float32)
    ids = rng.integers(0, 10**6, 10**7)
    segs = er.segment_sum(values, ids, num_segments=10**6)
    got_segs = np.zeros(10**6, np.float32)
    np.add.at(got_segs, ids, values)
    scan = er.cumsum(values)
    got_scan = np.cumsum(values, dtype=np.float32)
    for standard in ("any_order", "levels:fold:8,any", "directed:any_order"):
        cases.append((f"segment_sum 10^6 of 10^7 float32 {standard}", segs, got_segs, standard))
        cases.append((f"cumsum 10^7 float32 {standard}", scan, got_scan, standard))
    one = er.sum(x[0])
    runs = np.full(1 << 18, np.float32(x[0].sum(dtype=np.float32)))
    cases.append(("runs 2^18 of one sum float32 any_order", one, runs, "any_order"))
    for _, ref, res, standard in cases:
        ref.covers(res, standard=standard)  # warm up
    times = {label: [] for label, *_ in cases}
    for _ in range(rounds):
        for label, ref, res, standard in cases:
            wall, cpu = timed(lambda: ref.covers(res, standard=standard))
            times[label].append((wall, cpu, res.size))
    print(f"Reference.covers over arrays, {rounds} interleaved rounds, medians (elements judged per second)")
    for label, ts in times.items():
        wall, cpu, size = statistics.median([t[0] for t in ts]), statistics.median([t[1] for t in ts]), ts[0][2]
        print(f"  {label:44s} wall {wall * 1e3:8.2f} ms  {size / wall / 1e6:7.2f} M/s   cpu {size / cpu / 1e6:7.2f} M/s")


# The start of every peak-memory snippet: status(key) in bytes, from /proc/self/status (Linux).
_STATUS_SNIPPET = """
import sys, numpy as np, exactref as er
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024
    return 0
"""

_PEAK_SNIPPET = _STATUS_SNIPPET + """
kind, n, m = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(1)
x = rng.standard_normal(n).astype(np.float32)
ids = rng.integers(0, m, n) if kind == "segments" else None
open("/proc/self/clear_refs", "w").write("5")  # resets VmHWM to the current RSS
base = status("VmRSS:")
r = er.segment_sum(x, ids, num_segments=m) if kind == "segments" else er.cumsum(x)
print((status("VmHWM:") - base) / r.size)
"""


def run_snippet(snippet, *args):
    """The number a snippet prints, run in a fresh process with args."""
    import subprocess
    out = subprocess.run([sys.executable, "-c", snippet, *map(str, args)], check=True, capture_output=True,
                         text=True).stdout
    return float(out.strip())


def peak_bytes_per_element(kind, n, m):
    return run_snippet(_PEAK_SNIPPET, kind, n, m)


def scatter_cases(rounds, rng):
    n, m = 10**7, 10**5
    x = rng.standard_normal(n)
    ids = rng.integers(0, m, n)
    threaded = "threads" in inspect.signature(er.bincount).parameters
    one = {"threads": 1} if threaded else {}
    contenders = [("np.bincount(ids, weights)", lambda: np.bincount(ids, x, minlength=m)),
                  ("er.bincount(ids, weights)", lambda: er.bincount(ids, x, minlength=m, **one)),
                  ("er.segment_sum(x, ids, m)", lambda: er.segment_sum(x, ids, num_segments=m, **one))]
    if threaded:
        contenders += [("er.bincount threads=2", lambda: er.bincount(ids, x, minlength=m, threads=2)),
                       ("er.segment_sum threads=2", lambda: er.segment_sum(x, ids, num_segments=m, threads=2))]
    samples = {}
    res = interleaved(contenders, rounds, samples_out=samples)
    show(f"scatter, float64 N(0,1), {n:,} values into {m:,} segments (threads=1 unless named)", res,
         "np.bincount(ids, weights)")
    show_round_ratios(samples, "np.bincount(ids, weights)")
    x32 = x.astype(np.float32)
    contenders = [("np.bincount(ids, weights) float32", lambda: np.bincount(ids, x32, minlength=m)),
                  ("er.bincount float32", lambda: er.bincount(ids, x32, minlength=m, **one)),
                  ("er.segment_sum float32", lambda: er.segment_sum(x32, ids, num_segments=m, **one))]
    samples = {}
    res = interleaved(contenders, rounds, samples_out=samples)
    show(f"scatter, float32 N(0,1), {n:,} values into {m:,} segments (threads=1; np.bincount converts to float64)",
         res, "np.bincount(ids, weights) float32")
    show_round_ratios(samples, "np.bincount(ids, weights) float32")
    res = interleaved([("np.cumsum(x)", lambda: np.cumsum(x)), ("er.cumsum(x)", lambda: er.cumsum(x))], rounds)
    show(f"scan, float64 N(0,1), n = {n:,}", res, "np.cumsum(x)")
    counts, scan = er.bincount(ids, x, minlength=m), er.cumsum(x)
    got_counts, got_scan = np.bincount(ids, x, minlength=m), np.cumsum(x)
    res = interleaved([("bincount covers (10^5 elements)", lambda: counts.covers(got_counts)),
                       ("cumsum covers (10^7 elements)", lambda: scan.covers(got_scan))], max(3, rounds // 3))
    for label, size in (("bincount covers (10^5 elements)", m), ("cumsum covers (10^7 elements)", n)):
        wall, cpu = res[label]
        print(f"  {label:36s} {size / wall / 1e6:8.2f} M elements/s (wall)")
    assert counts.covers(got_counts).all() and scan.covers(got_scan).all()
    print("peak memory per output element (fresh process, VmHWM growth while building it):")
    print(f"  10^6 segments of 10^7 float32 values: {peak_bytes_per_element('segments', n, 10**6):6.1f} bytes")
    print(f"  cumsum of 10^7 float32 values:         {peak_bytes_per_element('cumsum', n, 0):6.1f} bytes")


def batched_cases(rounds, rng):
    """A batch of small products against one product of as many output elements with the same K."""
    print(f"{rounds} interleaved rounds, medians; per output element: batched / unbatched")
    for dtype in (np.float32, np.float64):
        for (bshape_a, bshape_b), (ushape_a, ushape_b) in [(((3000, 1, 2), (3000, 2, 1)), ((3000, 2), (2, 1))),
                                                           (((1000, 4, 4), (1000, 4, 4)), ((4000, 4), (4, 4)))]:
            a3, b3 = rng.standard_normal(bshape_a).astype(dtype), rng.standard_normal(bshape_b).astype(dtype)
            a2, b2 = rng.standard_normal(ushape_a).astype(dtype), rng.standard_normal(ushape_b).astype(dtype)
            c3, c2 = np.matmul(a3, b3), np.matmul(a2, b2)
            res = interleaved([("batched", lambda: er.matmul(a3, b3, threads=1)),
                               ("unbatched", lambda: er.matmul(a2, b2, threads=1)),
                               ("batched + covers", lambda: er.matmul(a3, b3, threads=1).covers(c3, fma=True)),
                               ("unbatched + covers", lambda: er.matmul(a2, b2, threads=1).covers(c2, fma=True))],
                              rounds)
            title = f"{np.dtype(dtype).name} {bshape_a} @ {bshape_b} vs {ushape_a} @ {ushape_b} ({c3.size} elements)"
            print(title)
            for label, (w, c) in res.items():
                print(f"  {label:22s} cpu {fmt(c)}  {c / c3.size * 1e6:7.3f} us/element")
            print(f"  batched / unbatched (cpu): build {res['batched'][1] / res['unbatched'][1]:.2f}x, with covers "
                  f"{res['batched + covers'][1] / res['unbatched + covers'][1]:.2f}x")


_AXIS_PEAK_SNIPPET = _STATUS_SNIPPET + """
from exactref import _core
compact, rows, cols, dtype = sys.argv[1] == "compact", int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
x = np.random.default_rng(1).standard_normal((rows, cols)).astype(dtype)
open("/proc/self/clear_refs", "w").write("5")  # resets VmHWM to the current RSS
base = status("VmRSS:")
r = er.sum(x, axis=1) if compact else er.Reference(_core.sum(x, None, 1, [], 1, False), np.arange(rows))
print((status("VmHWM:") - base) / rows)
"""


def axis_cases(rounds, rng):
    from exactref import _core

    def full(x, structures=()):  # the references er.sum(x, axis=1) built before: one full reference per row
        models = er._structures(list(structures)) if structures else []
        return er.Reference(_core.sum(x, None, 1, models, 1, False), np.arange(x.shape[0]))

    def folded_in_eights(x):  # each row folded in groups of 8, the groups added in order: levels:fold:8,any covers it
        out = np.zeros(x.shape[0], x.dtype)
        for g in range(0, x.shape[1], 8):
            part = np.zeros(x.shape[0], x.dtype)
            for j in range(g, min(g + 8, x.shape[1])):
                part += x[:, j]
            out += part
        return out

    for rows, cols in ((10**6, 10), (10**4, 10**3)):
        for dtype in (np.float32, np.float64):
            x = rng.standard_normal((rows, cols)).astype(dtype)
            name = np.dtype(dtype).name
            res = interleaved([("full references (before)", lambda: full(x)),
                               ("er.sum(x, axis=1) compact", lambda: er.sum(x, axis=1, threads=1)),
                               ("np.sum(x, axis=1)", lambda: np.sum(x, axis=1))], rounds)
            show(f"axis sums, {name} N(0,1), {rows:,} x {cols:,}", res, "full references (before)")
            got = folded_in_eights(x)
            structure = "levels:fold:8,any"
            refs = {"full": full(x), "compact": er.sum(x, axis=1),
                    "full structured": full(x, [structure]),
                    "compact structured": er.sum(x, axis=1, structure=structure)}
            cases = [("any_order, full references", refs["full"], "any_order"),
                     ("any_order, compact", refs["compact"], "any_order"),
                     ("directed:any_order, compact", refs["compact"], "directed:any_order"),
                     (f"{structure}, full (data bound)", refs["full structured"], structure),
                     (f"{structure}, compact (flat bound)", refs["compact"], structure),
                     (f"{structure}, compact (data bound)", refs["compact structured"], structure)]
            res = interleaved([(label, (lambda r=r, m=m: r.covers(got, standard=m))) for label, r, m in cases],
                              max(3, rounds // 3))
            for label, (wall, cpu) in res.items():
                print(f"  covers {label:38s} {rows / wall / 1e6:8.2f} M elements/s (wall)  {rows / cpu / 1e6:8.2f} (cpu)")
            assert all(r.covers(got, standard=m).all() for _, r, m in cases)
            del refs
            print("  peak memory per row (fresh process, VmHWM growth while building): compact "
                  f"{run_snippet(_AXIS_PEAK_SNIPPET, 'compact', rows, cols, name):7.1f} bytes, full "
                  f"{run_snippet(_AXIS_PEAK_SNIPPET, 'full', min(rows, 10**5), cols, name):7.1f} bytes")


def dot_cases(rounds, rng, sizes):
    """er.dot(x, y) against np.dot on one BLAS thread, float64 and float32 N(0,1), interleaved rounds."""
    one = {"threads": 1} if HAS_THREADS else {}
    for n in sizes:
        for dt in (np.float64, np.float32):
            x = rng.standard_normal(n).astype(dt)
            y = rng.standard_normal(n).astype(dt)
            res = interleaved([("np.dot (1 BLAS thread)", lambda: np.dot(x, y)),
                               ("er.dot(x, y)", lambda: er.dot(x, y, **one))], rounds, 1 if n >= 10**6 else 20)
            show(f"dot, {np.dtype(dt).name} N(0,1), n = {n:,} (one thread)", res, "np.dot (1 BLAS thread)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scatter", action="store_true", help="scatter and scan references against numpy")
    ap.add_argument("--axis", action="store_true", help="axis sums: compact references against full ones")
    ap.add_argument("--covers", action="store_true", help="time Reference.covers over arrays instead")
    ap.add_argument("--batched", action="store_true", help="batched er.matmul vs the unbatched product")
    ap.add_argument("--xsum-wide", action="store_true", help="er.sum vs xsum on wide exponents, 10^3 .. 10^8")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--seed", type=int, default=20240602)
    ap.add_argument("--quick", action="store_true", help="n = 10^3 and 10^5 only")
    ap.add_argument("--dot", action="store_true", help="only er.dot vs np.dot, float64 and float32, 10^5 and 10^7")
    ap.add_argument("--check", action="store_true", help="exit 1 if er.sum > 1.5x the C++ sum at 10^7")
    args = ap.parse_args()
    if args.covers:
        covers_cases(args.rounds)
        return 0
    if args.dot:
        dot_cases(args.rounds, np.random.default_rng(args.seed), (10**5, 10**7))
        return 0
    for chosen, cases in ((args.batched, batched_cases), (args.axis, axis_cases), (args.scatter, scatter_cases),
                          (args.xsum_wide, xsum_wide_cases)):
        if chosen:
            cases(args.rounds, np.random.default_rng(args.seed))
            return 0
    rng = np.random.default_rng(args.seed)
    print(f"{args.rounds} interleaved rounds, medians; BLAS threads {os.environ['OPENBLAS_NUM_THREADS']}; "
          f"xsum {'installed' if xsum else 'not installed (pip install xsum)'}; threads= "
          f"{'supported' if HAS_THREADS else 'not supported by this build'}; cores {os.cpu_count()}")
    worst = 0.0
    for n in ([10**3, 10**5] if args.quick else [10**3, 10**5, 10**7]):
        x = rng.standard_normal(n)
        inner = max(1, 10**5 // n)
        one = {"threads": 1} if HAS_THREADS else {}
        contenders = [("C++ exactref::sum", cpp_sum_inner(x, inner)),
                      ("er.sum(x)", lambda: er.sum(x, **one)),
                      ("er.sum(x).nearest()", lambda: er.sum(x, **one).nearest())]
        if xsum:
            contenders.append(("xsum small accumulator", lambda: xsum_sum(x)))
        contenders.append(("np.sum", lambda: np.sum(x)))
        res = interleaved(contenders, args.rounds, inner)
        show(f"sum, float64 N(0,1), n = {n:,} (one thread)", res, "C++ exactref::sum")
        fixed = res["er.sum(x)"][0] - res["C++ exactref::sum"][0]
        fixed_n = res["er.sum(x).nearest()"][0] - res["C++ exactref::sum"][0]
        print(f"  Python cost above C++: er.sum {fixed * 1e6:.2f} us, er.sum().nearest() {fixed_n * 1e6:.2f} us")
        if n == 10**7:
            worst = res["er.sum(x)"][1] / res["C++ exactref::sum"][1]
    if not args.quick and HAS_THREADS:
        for name, x in (("wide exponents", wide(rng, 10**7)), ("N(0,1)", rng.standard_normal(10**7))):
            y = rng.standard_normal(10**7)
            res = interleaved([("er.sum threads=1", lambda: er.sum(x, threads=1)),
                               ("er.sum threads=2", lambda: er.sum(x, threads=2)),
                               ("er.dot threads=1", lambda: er.dot(x, y, threads=1)),
                               ("er.dot threads=2", lambda: er.dot(x, y, threads=2))], max(5, args.rounds // 2))
            show(f"threads, float64 {name}, n = 10,000,000", res)
            print(f"  speed-up on 2 threads: sum {res['er.sum threads=1'][0] / res['er.sum threads=2'][0]:.2f}x, "
                  f"dot {res['er.dot threads=1'][0] / res['er.dot threads=2'][0]:.2f}x (wall)")
    if not args.quick:
        dot_cases(args.rounds, rng, (10**7,))
    if args.check and worst > 1.5:
        print(f"FAIL: er.sum costs {worst:.3f}x the C++ exact sum (limit 1.5)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
