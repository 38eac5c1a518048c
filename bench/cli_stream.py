#!/usr/bin/env python3
"""Benchmark (not a test) of the CLI's streaming input: peak RSS and throughput of `exactref sum` on a 10^8-element
float32 .npy (400 MB; from a file and from a pipe) and on a 10^7-line float64 text file, generated in a scratch
directory and deleted afterwards. Numbers go to docs/performance.md ("CLI streaming").

    bench/cli_stream.py --cli build/default/apps/exactref [--dir /tmp] [--n 100000000] [--lines 10000000]
"""
import argparse
import os
import random
import resource
import struct
import subprocess
import sys
import tempfile
import time


def run(cli, args, stdin_path=None):
    code = ("import resource,subprocess,sys,time\n"
            "f=open(sys.argv[1],'rb') if sys.argv[1] else None\n"
            "t=time.perf_counter();p=subprocess.run(sys.argv[2:],stdin=f,stdout=subprocess.DEVNULL);"
            "t=time.perf_counter()-t\n"
            "print(t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, p.returncode)\n")
    out = subprocess.run([sys.executable, "-c", code, stdin_path or "", cli, *args], capture_output=True, check=True)
    seconds, rss_kb, rc = out.stdout.split()
    assert rc == b"0", f"exactref {' '.join(args)} failed"
    return float(seconds), int(rss_kb) / 1024


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--cli", required=True)
    a.add_argument("--dir", default=tempfile.gettempdir())
    a.add_argument("--n", type=int, default=100_000_000)
    a.add_argument("--lines", type=int, default=10_000_000)
    o = a.parse_args()
    rng = random.Random(15)
    npy = os.path.join(o.dir, "exactref_bench_stream.npy")
    txt = os.path.join(o.dir, "exactref_bench_stream.txt")
    try:
        block = struct.pack("<65536f", *(rng.gauss(0, 1) for _ in range(65536)))
        header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % o.n
        header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
        with open(npy, "wb") as f:
            f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
            for _ in range(o.n // 65536):
                f.write(block)
            f.write(block[: 4 * (o.n % 65536)])
        lines = "\n".join(repr(rng.gauss(0, 1)) for _ in range(100_000)) + "\n"
        with open(txt, "w") as f:
            for _ in range(o.lines // 100_000):
                f.write(lines)
        for what, args, stdin, path in (("npy file", ["sum", npy], None, npy), ("npy pipe", ["sum", "-"], npy, npy),
                                        ("text float64", ["sum", txt], None, txt),
                                        ("text float32", ["sum", "--dtype", "float32", txt], None, txt)):
            seconds, mb = run(o.cli, args, stdin)
            size = os.path.getsize(path) / 1e6
            print(f"{what:14} {size:8.0f} MB  {seconds:7.2f} s  {size / seconds:8.0f} MB/s  peak RSS {mb:6.1f} MB")
    finally:
        for p in (npy, txt):
            if os.path.exists(p):
                os.remove(p)


if __name__ == "__main__":
    main()
