#!/usr/bin/env python3
"""er.sum from Python against exactref::sum in C++ on the same buffer (issue 5, "Performance": er.sum on a 10^7-element
float64 array must cost at most 1.5x the C++ exact sum, with no copy of contiguous input).

The C++ side is timed inside the extension (exactref._core._time_sum) on the very array er.sum reads, so the ratio
shows only what the Python layer adds. Both sides are timed alternately, R rounds, as wall time and as the calling
thread's CPU time (the CPU ratio is the robust one on a shared machine); medians are reported. With --cpp-bench PATH
the Google Benchmark binary bench_sum (reference/float64/gauss/10000000: the same distribution, its own data) is run
too, as a cross-check of the in-extension C++ time.

Usage: .venv/bin/python bench/bench_python.py [--n 10000000] [--rounds 15] [--check] [--cpp-bench build/default/bench/bench_sum]
--check exits 1 when the median CPU ratio for contiguous float64 exceeds 1.5.
--covers times Reference.covers over arrays instead (elements judged per second; the cases interleaved round by round):
a 512 x 512 er.matmul result (K = 256, float32 and float64) under any_order and split_k:8, 2^18 row sums of 32 float32
terms under any_order and levels:fold/4,any (references built with that structure), and 2^18 runs of one sum.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

import numpy as np

import exactref as er
from exactref import _core


def timed(fn):
    w0, c0 = time.perf_counter(), time.thread_time()
    fn()
    c1, w1 = time.thread_time(), time.perf_counter()
    return w1 - w0, c1 - c0


def median(xs):
    return statistics.median(xs)


def compare(x, rounds):
    """Alternating rounds of er.sum(x) and the in-extension C++ timer; returns medians (wall, cpu) of each."""
    er.sum(x)
    _core._time_sum(x, 1)
    py_wall, py_cpu, cpp_wall, cpp_cpu = [], [], [], []
    for _ in range(rounds):
        w, c = timed(lambda: er.sum(x))
        py_wall.append(w)
        py_cpu.append(c)
        ((w, c),) = _core._time_sum(x, 1)
        cpp_wall.append(w)
        cpp_cpu.append(c)
    return median(py_wall), median(py_cpu), median(cpp_wall), median(cpp_cpu)


def plain(label, fn, rounds):
    fn()
    walls, cpus = zip(*(timed(fn) for _ in range(rounds)))
    return label, median(walls), median(cpus)


def run_cpp_bench(path):
    out = subprocess.run([path, "--benchmark_filter=^reference/float64/gauss/10000000$", "--benchmark_format=json",
                          "--benchmark_repetitions=5", "--benchmark_report_aggregates_only=true"],
                         capture_output=True, text=True, check=True)
    for b in json.loads(out.stdout)["benchmarks"]:
        if b.get("aggregate_name") == "median":
            scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b["time_unit"]]
            return b["real_time"] * scale, b["cpu_time"] * scale
    raise RuntimeError("bench_sum printed no median")


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
        wall, cpu, size = median([t[0] for t in ts]), median([t[1] for t in ts]), ts[0][2]
        print(f"  {label:44s} wall {wall * 1e3:8.2f} ms  {size / wall / 1e6:7.2f} M/s   cpu {size / cpu / 1e6:7.2f} M/s")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--covers", action="store_true", help="time Reference.covers over arrays instead")
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--seed", type=int, default=20240602)
    ap.add_argument("--check", action="store_true", help="exit 1 if the CPU ratio exceeds 1.5")
    ap.add_argument("--cpp-bench", help="path of the bench_sum binary, for a cross-check")
    args = ap.parse_args()
    if args.covers:
        covers_cases(args.rounds)
        return 0

    x = np.random.default_rng(args.seed).standard_normal(args.n)
    py_wall, py_cpu, cpp_wall, cpp_cpu = compare(x, args.rounds)
    ratio_cpu, ratio_wall = py_cpu / cpp_cpu, py_wall / cpp_wall
    print(f"n = {args.n:,} float64 N(0,1), seed {args.seed}, {args.rounds} alternating rounds, medians")
    print(f"  er.sum (Python)           wall {py_wall * 1e3:8.2f} ms   cpu {py_cpu * 1e3:8.2f} ms")
    print(f"  exactref::sum (C++)       wall {cpp_wall * 1e3:8.2f} ms   cpu {cpp_cpu * 1e3:8.2f} ms")
    print(f"  ratio Python / C++        wall {ratio_wall:8.3f}      cpu {ratio_cpu:8.3f}      (limit 1.5)")

    rows = [
        plain("er.sum float32 (contiguous)", lambda: er.sum(x32), args.rounds) for x32 in [x.astype(np.float32)]
    ] + [
        plain("er.sum float64 x[::2] (strided, in place)", lambda: er.sum(x[::2]), args.rounds),
        plain("er.sum float64 (1000, n/1000), axis=1", lambda: er.sum(x.reshape(1000, -1), axis=1), args.rounds),
        plain("er.sum float64 column sums (gathered)", lambda: er.sum(x.reshape(-1, 1000), axis=0),
              args.rounds),
        plain("np.sum float64 (for scale)", lambda: np.sum(x), args.rounds),
    ]
    for label, wall, cpu in rows:
        print(f"  {label:42s} wall {wall * 1e3:8.2f} ms   cpu {cpu * 1e3:8.2f} ms")
    if args.cpp_bench:
        wall, cpu = run_cpp_bench(args.cpp_bench)
        print(f"  bench_sum reference/float64/gauss/10000000  wall {wall * 1e3:8.2f} ms   cpu {cpu * 1e3:8.2f} ms"
              f"   (er.sum cpu / this: {py_cpu / cpu:.3f})")
    if args.check and ratio_cpu > 1.5:
        print(f"FAIL: er.sum costs {ratio_cpu:.3f}x the C++ exact sum (limit 1.5)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
