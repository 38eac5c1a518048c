#!/usr/bin/env python3
"""Checks of the `exactref` CLI (shared/DESIGN.md §6), one case per ctest registration (tests/cmake/cli.cmake).

    run_cli_test.py --cli PATH --data SHARED_DATA_DIR --work SCRATCH_DIR CASE

Every expected number is computed here, independently of the code under test, with Python's exact rationals
(fractions.Fraction): float32 values are read from the hex floats with float.fromhex (exact), float16 values are
decoded by struct's 'e' format (exact), and a float32 left fold is emulated by rounding each double sum to float32
with struct (a double holds the exact sum of two float32 values rounded once correctly: 53 >= 2*24 + 2, so the
emulation is exact). shared/data/README.md's published constants are checked as well.
"""
import argparse
import json
import math
import os
import resource
import shutil
import struct
import subprocess
import sys
import threading
from fractions import Fraction

U32 = Fraction(1, 2**24)  # unit roundoff of float32
CONTRACT_SUM_KEYS = {"n", "dtype", "exact", "nearest", "nearest_hex", "abs_sum", "any_order_bound"}
CONTRACT_VERDICT_KEYS = {"result", "covered", "error", "bound", "ulps"}
README_ORDER_RESULTS = ["0x1.e9ab46p+4", "0x1.e9ab26p+4", "0x1.e9ab46p+4", "0x1.e9aae2p+4", "0x1.e9abb4p+4"]


class Failure(Exception):
    pass


def check(condition, what):
    if not condition:
        raise Failure(what)


# ---- the independent oracle ------------------------------------------------------------------------------------------

def read_hex_floats(path):
    values = []
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                values.append(float.fromhex(line))
    return values


def to_f32(x):
    """Round a double to the nearest float32 (ties to even), as a double."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f32_from_bits(b):
    return struct.unpack("<f", struct.pack("<I", b))[0]


def next_up_f32(x):
    b = f32_bits(x)
    return f32_from_bits(b + 1 if x >= 0 else b - 1) if x != 0 else f32_from_bits(1)


def next_down_f32(x):
    return -next_up_f32(-x)


def round_fraction_to_f32(q):
    """Round-to-nearest-even of an exact rational into float32 (finite, normal range), by exact comparison."""
    x = to_f32(float(q))  # a neighbour of the answer; settle it exactly below
    while Fraction(x) > q:
        x = next_down_f32(x)
    while Fraction(next_up_f32(x)) <= q:
        x = next_up_f32(x)
    lo, hi = x, next_up_f32(x)
    if Fraction(lo) == q:
        return lo
    mid = (Fraction(lo) + Fraction(hi)) / 2
    if q < mid:
        return lo
    if q > mid:
        return hi
    return lo if f32_bits(lo) % 2 == 0 else hi


def exact_decimal(q):
    """The exact decimal expansion of a dyadic rational, the CLI's style ("-0.5", "12", "0.25")."""
    sign = "-" if q < 0 else ""
    q = abs(q)
    k = 0
    while (q * 10**k).denominator != 1:
        k += 1
    digits = str((q * 10**k).numerator)
    if k:
        digits = digits.rjust(k + 1, "0")
        digits = digits[:-k] + "." + digits[-k:]
    return sign + digits


def agrees_with_readme(text, published):
    """`published` (shared/data/README.md, digits followed by '…') is `text` rounded to its number of digits."""
    fraction_digits = len(published.split(".")[1]) if "." in published else 0
    return abs(Fraction(text) - Fraction(published)) <= Fraction(1, 2 * 10**fraction_digits)


def is_upward_rounding(printed, exact):
    """printed (a double) is exact rounded upward: not below it, and its predecessor is below it."""
    return Fraction(printed) >= exact and Fraction(math.nextafter(printed, -math.inf)) < exact


def case_zero_sign_and_ftz(cli, g, work):
    """--any-zero-sign: exact takes +0.0 for -0.0 terms (math.fsum's and numpy's answer); ftz: covers a sum of
    binary32 subnormals flushed to 0 (torch.sum under set_flush_denormal), which any_order rejects."""
    zeros = os.path.join(work, "zeros.txt")
    with open(zeros, "w") as f:
        f.write("-0.0 -0.0 -0.0 -0.0 -0.0\n")
    rc, out, err, shown = cli.run("covers", "--standard", "exact", zeros, "0.0", expect_rc=1)
    check("any_zero_sign" in out, f"exact's rejection of +0.0 names any_zero_sign\n{shown}")
    cli.run("covers", "--standard", "exact", "--any-zero-sign", zeros, "0.0", "-0.0", expect_rc=0)
    cli.run("covers", "--standard", "exact", "--any-zero-sign", zeros, "0x1p-1074", expect_rc=1)
    tiny = os.path.join(work, "tiny.txt")
    with open(tiny, "w") as f:
        f.write("\n".join(["1e-40"] * 1000) + "\n")
    cli.run("covers", "--dtype", "float32", tiny, "0", expect_rc=1)
    rc, out, err, shown = cli.run("covers", "--dtype", "float32", "--standard", "ftz:any_order", tiny, "0", "-0",
                                  expect_rc=0)
    check("ftz:any_order" in out, shown)
    rc, out, err, shown = cli.run("covers", "--standard", "ftz:exact", tiny, "0", expect_rc=2)
    check("ftz:" in err, shown)
    # --explain judges every candidate with --any-zero-sign too (and says so).
    rc, out, err, shown = cli.run("covers", "--standard", "exact", "--explain", zeros, "0.0", expect_rc=1)
    check(any(line.split()[:2] == ["exact", "NOT"] for line in out.splitlines() if line.startswith("  ")), shown)
    rc, out, err, shown = cli.run("covers", "--standard", "exact", "--any-zero-sign", "--explain", "--json", zeros,
                                  "0.0", expect_rc=0)
    listing = json.loads(out)["verdicts"][0]["explain"]
    check(all(e["covered"] for e in listing) and listing[0]["standard"] == "exact", shown)
    rc, out, err, shown = cli.run("covers", "--standard", "exact", "--any-zero-sign", "--explain", zeros, "0.0",
                                  expect_rc=0)
    check("every standard with --any-zero-sign" in out, shown)
    # ftz: on float64 terms far below 2^emin the flush-to-zero term alone reaches S: the advice names it.
    tiny64 = os.path.join(work, "tiny64.txt")
    with open(tiny64, "w") as f:
        f.write("\n".join(["1e-310"] * 1000) + "\n")
    rc, out, err, shown = cli.run("covers", "--standard", "ftz:any_order", tiny64, "0", expect_rc=0)
    check("the flush-to-zero term n·2^emin" in err and "vacuous from n =" not in err, shown)


# ---- running the CLI -------------------------------------------------------------------------------------------------

class Cli:
    def __init__(self, path, project_version=None):
        self.path = path
        self.project_version = project_version  # the CMake project's version, for --version

    def run(self, *args, stdin=None, expect_rc=None):
        p = subprocess.run([self.path, *args], input=stdin, capture_output=True, timeout=120)
        out, err = p.stdout.decode(), p.stderr.decode()
        shown = f"$ exactref {' '.join(args)}\n--- rc {p.returncode}\n--- stdout\n{out}\n--- stderr\n{err}"
        if expect_rc is not None:
            check(p.returncode == expect_rc, f"expected exit status {expect_rc}\n{shown}")
        return p.returncode, out, err, shown


def write_npy(path, descr, shape, payload, major=1, fortran=False):
    """A .npy file written by hand (numpy is not needed): magic, version, header padded to 64 bytes, data."""
    shape_text = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    header = f"{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape_text}, }}"
    length_bytes = 2 if major == 1 else 4
    while (10 - 2 + length_bytes + len(header) + 1) % 64:
        header += " "
    header += "\n"
    length = struct.pack("<H" if major == 1 else "<I", len(header))
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY" + bytes([major, 0]) + length + header.encode("latin1") + payload)


# ---- the facts the cases check against -------------------------------------------------------------------------------

class Gauss:
    def __init__(self, data_dir):
        self.path = os.path.join(data_dir, "gauss10k_f32.txt")
        self.values = read_hex_floats(self.path)
        self.n = len(self.values)
        self.exact = sum(Fraction(v) for v in self.values)
        self.abs_sum = sum(abs(Fraction(v)) for v in self.values)
        self.bound = (self.n - 1) * U32 * self.abs_sum
        self.nearest = round_fraction_to_f32(self.exact)
        self.orders_path = os.path.join(data_dir, "gauss10k_orders.txt")

    def order_results(self):
        results = []
        with open(self.orders_path) as f:
            for line in f:
                idx = [int(t) for t in line.split("#", 1)[0].replace(",", " ").split()]
                if not idx:
                    continue
                acc = 0.0
                for i in idx:
                    acc = to_f32(acc + self.values[i])
                results.append(acc)
        return results


# ---- the cases -------------------------------------------------------------------------------------------------------

def case_sum_text(cli, g, work):
    _, out, _, shown = cli.run("sum", "--dtype", "float32", g.path, expect_rc=0)
    lines = dict(line.split(None, 1) for line in out.splitlines() if line.strip())
    check(g.n == 10000, "the data file has 10000 values")
    check(lines.get("n") == "10000", f"n\n{shown}")
    check(lines.get("dtype") == "float32", f"dtype\n{shown}")
    check(lines.get("exact") == exact_decimal(g.exact), f"exact must be {exact_decimal(g.exact)}\n{shown}")
    check(agrees_with_readme(lines["exact"], "30.604261366177525"), f"README's exact sum\n{shown}")
    check(float.hex(g.nearest) == "0x1.e9ab0e0000000p+4", "README's nearest float32")
    check(lines.get("nearest", "").split()[:2] == ["30.604261", "(0x1.e9ab0ep+4)"], f"nearest\n{shown}")
    check(lines.get("abs_sum") == exact_decimal(g.abs_sum), f"abs_sum must be {exact_decimal(g.abs_sum)}\n{shown}")
    check(agrees_with_readme(lines["abs_sum"], "7923.04427817354"), f"README's sum of |x|\n{shown}")
    bound = float(lines.get("any_order_bound", "nan").split()[0])
    check(agrees_with_readme(repr(bound), "4.72203014716"), f"README's bound 4.72203014716...\n{shown}")
    check(is_upward_rounding(bound, g.bound), f"bound must be (n-1)u*S = {float(g.bound)!r} rounded up\n{shown}")


def case_sum_json_and_stdin(cli, g, work):
    with open(g.path, "rb") as f:
        text = f.read()
    for args, stdin in [(("sum", "--json", "--dtype", "float32", g.path), None),
                        (("sum", "--json", "--dtype", "float32", "-"), text)]:
        _, out, _, shown = cli.run(*args, stdin=stdin, expect_rc=0)
        j = json.loads(out)
        check(set(j) == CONTRACT_SUM_KEYS, f"keys must be {sorted(CONTRACT_SUM_KEYS)}\n{shown}")
        check(j["n"] == 10000 and j["dtype"] == "float32", f"n, dtype\n{shown}")
        check(j["exact"] == exact_decimal(g.exact), f"exact\n{shown}")
        check(j["nearest"] == "30.604261" and j["nearest_hex"] == "0x1.e9ab0ep+4", f"nearest\n{shown}")
        check(float.fromhex(j["nearest_hex"]) == g.nearest and float(j["nearest"]) != g.nearest
              and to_f32(float(j["nearest"])) == g.nearest, f"nearest reads back to RN(s) in float32\n{shown}")
        check(j["abs_sum"] == exact_decimal(g.abs_sum), f"abs_sum\n{shown}")
        check(is_upward_rounding(j["any_order_bound"], g.bound), f"bound rounded up\n{shown}")


def case_sum_float16(cli, g, work):
    # 0.1 and 0.2 round once into float16; their exact sum and its nearest float16 come from struct's 'e' decoding.
    path = os.path.join(work, "half.txt")
    with open(path, "w") as f:
        f.write("0.1, 0.2\n")
    _, out, _, shown = cli.run("sum", "--json", "--dtype", "float16", path, expect_rc=0)
    j = json.loads(out)
    h01 = struct.unpack("<e", struct.pack("<H", 0x2E66))[0]  # float16 nearest 0.1 (numpy: np.float16(0.1))
    h02 = struct.unpack("<e", struct.pack("<H", 0x3266))[0]
    check(j["exact"] == exact_decimal(Fraction(h01) + Fraction(h02)), f"exact float16 sum\n{shown}")
    check(j["dtype"] == "float16" and j["nearest"] == "0.2998" and j["nearest_hex"] == "0x1.33p-2",
          f"nearest float16 of 0.0999755859375 + 0.199951171875 = 0.2999267578125 is 0x1.33p-2 = 0.29980...\n{shown}")


def case_covers_orders(cli, g, work):
    results = g.order_results()
    hexes = [float.hex(r).replace("0000000p", "p") for r in results]
    check([f32_bits(r) for r in results] == [f32_bits(float.fromhex(h)) for h in README_ORDER_RESULTS],
          f"the five left folds must give README's results, got {hexes}")
    for r in results:
        check(abs(Fraction(r) - g.exact) <= g.bound, "each order result is within the any-order bound")
    _, out, _, shown = cli.run("covers", g.path, *README_ORDER_RESULTS, "--dtype", "float32", expect_rc=0)
    lines = [line for line in out.splitlines() if "COVERED" in line]
    check(len(lines) == 5 and all(line.startswith("COVERED ") for line in lines), f"five COVERED lines\n{shown}")
    check("5 of 5 results covered by any_order" in out, f"summary line\n{shown}")
    # The same results as decimals: each decimal rounds once into float32 to the same value.
    decimals = [repr(r) for r in results]
    cli.run("covers", g.path, *decimals, "--dtype", "float32", "--standard", "any_order", expect_rc=0)


def check_bound_edges(cli, g, bound, standard):
    """The float32 results nearest to s ± bound from inside are covered; one step further out is not."""
    hi = round_fraction_to_f32(g.exact + bound)
    if Fraction(hi) > g.exact + bound:
        hi = next_down_f32(hi)
    lo = round_fraction_to_f32(g.exact - bound)
    if Fraction(lo) < g.exact - bound:
        lo = next_up_f32(lo)
    for inside, outside in [(hi, next_up_f32(hi)), (lo, next_down_f32(lo))]:
        check(abs(Fraction(inside) - g.exact) <= bound < abs(Fraction(outside) - g.exact), "edge pair")
        cli.run("covers", g.path, float.hex(inside), "--dtype", "float32", "--standard", standard, expect_rc=0)
        _, out, _, shown = cli.run("covers", g.path, float.hex(outside), "--dtype", "float32", "--standard", standard,
                                   expect_rc=1)
        check("NOT COVERED" in out and standard in out, f"one float32 past the {standard} bound\n{shown}")


def case_covers_not_covered(cli, g, work):
    _, out, _, shown = cli.run("covers", g.path, "40", "--dtype", "float32", expect_rc=1)
    check("NOT COVERED" in out and "40 (0x1.4p+5)" in out, f"a far-off result is reported\n{shown}")
    # One covered and one not: exit 1, both verdicts printed.
    _, out, _, shown = cli.run("covers", g.path, "0x1.e9ab46p+4", "-1.5", "--dtype", "float32", expect_rc=1)
    check("1 of 2 results covered" in out, f"mixed verdicts\n{shown}")
    # The exact edge of the any-order bound: the largest float32 within s + B is covered, the next one is not;
    # likewise below s - B. Decided exactly, so no tolerance is involved.
    check_bound_edges(cli, g, g.bound, "any_order")
    # exact and faithful: RN(s) is exact; the other faithful neighbour is faithful but not exact.
    rn = float.hex(g.nearest)
    other = float.hex(next_up_f32(g.nearest) if Fraction(g.nearest) < g.exact else next_down_f32(g.nearest))
    cli.run("covers", g.path, rn, "--dtype", "float32", "--standard", "exact", expect_rc=0)
    cli.run("covers", g.path, other, "--dtype", "float32", "--standard", "exact", expect_rc=1)
    cli.run("covers", g.path, other, "--dtype", "float32", "--standard", "faithful", expect_rc=0)
    # A tree of height 14 (pairwise over 10000 values): γ_14·S with γ_k = k·u/(1 - k·u) (Higham §4.2), much smaller
    # than the any-order bound; the worst of the five order results (83 ulps off) is still inside it.
    gamma14 = 14 * U32 / (1 - 14 * U32)
    check_bound_edges(cli, g, gamma14 * g.abs_sum, "tree:14")
    cli.run("covers", g.path, README_ORDER_RESULTS[4], "--dtype", "float32", "--standard", "tree:14", expect_rc=0)
    # Negative specials are results, not options.
    _, out, _, shown = cli.run("covers", g.path, "-inf", "-nan", "--dtype", "float32", expect_rc=1)
    check(out.count("NOT COVERED") == 2 and "-inf (-inf)" in out, f"-inf and -nan as results\n{shown}")


def case_covers_json(cli, g, work):
    results = README_ORDER_RESULTS + ["40"]
    _, out, _, shown = cli.run("covers", g.path, *results, "--dtype", "float32", "--json", expect_rc=1)
    j = json.loads(out)
    check(j["covered"] is False, f"not all covered\n{shown}")
    check(len(j["verdicts"]) == 6, f"one verdict per result\n{shown}")
    ulp = Fraction(2) ** -19  # ulp of RN(s) = 30.6 in float32: 2^(4 - 23)
    for text, v in zip(results, j["verdicts"]):
        check(CONTRACT_VERDICT_KEYS <= set(v), f"verdict keys {sorted(CONTRACT_VERDICT_KEYS)}\n{shown}")
        r = to_f32(float.fromhex(text)) if text.startswith("0x") else to_f32(float(text))
        err = Fraction(r) - g.exact
        check(v["covered"] == (abs(err) <= g.bound), f"covered for {text}\n{shown}")
        check(float.fromhex(v["result_hex"]) == r and to_f32(float(v["result"])) == r, f"result {text}\n{shown}")
        check(v["error"] == float(err), f"error of {text} must be {float(err)!r} (r - s rounded to nearest)\n{shown}")
        check(v["error_exact"] == exact_decimal(err), f"exact error of {text}\n{shown}")
        check(v["ulps"] == float(err / ulp), f"ulps of {text} must be {float(err / ulp)!r}\n{shown}")
        check(is_upward_rounding(v["bound"], g.bound), f"bound rounded up\n{shown}")
    _, out, _, shown = cli.run("covers", g.path, *README_ORDER_RESULTS, "--dtype", "float32", "--json", expect_rc=0)
    check(json.loads(out)["covered"] is True, f"all five covered\n{shown}")


def case_npy_input(cli, g, work):
    payload = b"".join(struct.pack("<f", v) for v in g.values)
    for major in (1, 2, 3):
        path = os.path.join(work, f"gauss_v{major}.npy")
        write_npy(path, "<f4", (100, 100), payload, major=major)
        _, out, _, shown = cli.run("sum", "--json", path, expect_rc=0)  # dtype from the file
        j = json.loads(out)
        check(j["dtype"] == "float32" and j["n"] == 10000 and j["exact"] == exact_decimal(g.exact),
              f".npy {major}.0 gives the text file's exact sum\n{shown}")
        cli.run("covers", path, *README_ORDER_RESULTS, expect_rc=0)
    path = os.path.join(work, "gauss_v1.npy")
    _, _, err, shown = cli.run("sum", "--dtype", "float64", path, expect_rc=2)
    check("holds float32 values but dtype float64 was requested" in err, f"dtype mismatch\n{shown}")
    # float64 .npy of the same values: same exact sum, nearest now in float64.
    path64 = os.path.join(work, "gauss_f8.npy")
    write_npy(path64, "<f8", (10000,), b"".join(struct.pack("<d", v) for v in g.values))
    _, out, _, shown = cli.run("sum", "--json", path64, expect_rc=0)
    j = json.loads(out)
    check(j["dtype"] == "float64" and j["exact"] == exact_decimal(g.exact) and float(j["nearest"]) == float(g.exact),
          f"float64 .npy\n{shown}")
    # .npy through stdin.
    with open(path, "rb") as f:
        _, out, _, shown = cli.run("sum", "--json", "-", stdin=f.read(), expect_rc=0)
    check(json.loads(out)["exact"] == exact_decimal(g.exact), f".npy on stdin\n{shown}")
    # Refused: Fortran order, an integer dtype, big-endian, truncated data.
    bad = [("fortran.npy", dict(descr="<f4", shape=(2, 2), payload=payload[:16], fortran=True), "Fortran order"),
           ("int.npy", dict(descr="<i4", shape=(4,), payload=payload[:16]), "unsupported dtype '<i4'"),
           ("big.npy", dict(descr=">f4", shape=(4,), payload=payload[:16]), "big-endian"),
           ("short.npy", dict(descr="<f4", shape=(10000,), payload=payload[:4000]), "truncated")]
    for name, kw, message in bad:
        p = os.path.join(work, name)
        write_npy(p, kw["descr"], kw["shape"], kw["payload"], fortran=kw.get("fortran", False))
        _, _, err, shown = cli.run("sum", p, expect_rc=2)
        check(message in err and name in err, f"'{message}' naming the file\n{shown}")


def case_bad_input(cli, g, work):
    path = os.path.join(work, "bad.txt")
    with open(path, "w") as f:
        f.write("# three good numbers, then a typo\n1.0\n2.0, 3.0\n4.O\n")
    for command in (["sum", path], ["covers", path, "10"]):
        _, out, err, shown = cli.run(*command, expect_rc=2)
        check(f"{path}:4: not a number: '4.O'" in err, f"file:line and the text\n{shown}")
        check(out == "", f"nothing on stdout\n{shown}")
    _, _, err, shown = cli.run("covers", g.path, "30.6", "--standard", "bogus", expect_rc=2)
    check("unknown standard 'bogus'" in err and "any_order" in err and "tree:H" in err,
          f"unknown standard lists the accepted ones\n{shown}")
    _, _, err, shown = cli.run("covers", g.path, "30.6", "abc", "--dtype", "float32", expect_rc=2)
    check("RESULT 2: not a number: 'abc'" in err, f"a result that is not a number\n{shown}")
    _, _, err, shown = cli.run("sum", os.path.join(work, "no-such-file.txt"), expect_rc=2)
    check("cannot open" in err and "no-such-file.txt" in err, f"missing file\n{shown}")
    _, _, err, shown = cli.run("sum", "--dtype", "float128", g.path, expect_rc=2)
    check("unknown dtype 'float128'" in err, f"unknown dtype\n{shown}")
    # usage errors: the same "exactref: error:" form, and where to find the usage
    for args, what, usage in ((), "subcommand", "exactref --help"),                          \
                             (("covers", g.path), "RESULT", "exactref covers --help"),       \
                             (("sum", g.path, "--no-such-flag"), "--no-such-flag", "exactref sum --help"):
        _, out, err, shown = cli.run(*args, expect_rc=2)
        check(err.startswith("exactref: error: ") and what in err and f"Run '{usage}'" in err and out == "",
              f"usage error names what is wrong and where the usage is\n{shown}")
    _, out, _, shown = cli.run("--help", expect_rc=0)
    check("sum" in out and "covers" in out, f"help lists the subcommands\n{shown}")


def run_raw(cli, args, **kw):
    """Runs the CLI with subprocess keywords of the caller's choice (stdin from a pipe, a closed stdin, pass_fds)."""
    p = subprocess.run([cli.path, *args], capture_output=True, timeout=120, **kw)
    out, err = p.stdout.decode(), p.stderr.decode()
    return p.returncode, out, err, f"$ exactref {' '.join(args)}\n--- rc {p.returncode}\n--- stdout\n{out}\n--- stderr\n{err}"


def check_gauss_sum(g, rc, out, shown, what):
    check(rc == 0, f"{what}: exit 0\n{shown}")
    j = json.loads(out)
    check(j["n"] == g.n and j["exact"] == exact_decimal(g.exact), f"{what}: all {g.n} values, exact sum\n{shown}")


def feed_fifo(path, data):
    """Writes data into the FIFO from a thread (open blocks until the CLI opens it for reading); returns a function
    that waits for the writer, releasing it first if the CLI never opened the FIFO."""
    def write():
        try:
            with open(path, "wb") as f:
                f.write(data)
        except BrokenPipeError:
            pass
    t = threading.Thread(target=write, daemon=True)
    t.start()

    def finish():
        t.join(0.5)
        if t.is_alive():  # the reader never came: open the read end ourselves so open() in the writer returns
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            t.join(10)
            os.close(fd)
    return finish


def case_stream_input(cli, g, work):
    # Inputs that cannot seek back to their start: a pipe named /dev/stdin, a FIFO, a pipe named /dev/fd/N (what
    # bash's process substitution <(...) passes). They used to read as n = 0 with exit 0. The gauss data (about
    # 150 KB as text, 40 KB as .npy) is more than one read of a pipe.
    with open(g.path, "rb") as f:
        text = f.read()
    npy_path = os.path.join(work, "gauss.npy")
    write_npy(npy_path, "<f4", (10000,), b"".join(struct.pack("<f", v) for v in g.values))
    with open(npy_path, "rb") as f:
        npy = f.read()
    for data, what in ((text, "text"), (npy, ".npy")):
        rc, out, _, shown = run_raw(cli, ["sum", "--json", "--dtype", "float32", "/dev/stdin"], input=data)
        check_gauss_sum(g, rc, out, shown, f"{what} through a pipe named /dev/stdin")
        fifo = os.path.join(work, "data.fifo")
        if os.path.exists(fifo):
            os.remove(fifo)
        os.mkfifo(fifo)
        finish = feed_fifo(fifo, data)
        rc, out, _, shown = run_raw(cli, ["sum", "--json", "--dtype", "float32", fifo])
        finish()
        os.remove(fifo)
        check_gauss_sum(g, rc, out, shown, f"{what} through a FIFO")
        r, w = os.pipe()
        writer = threading.Thread(target=lambda: (_write_all(w, data), os.close(w)))
        writer.start()
        rc, out, _, shown = run_raw(cli, ["sum", "--json", "--dtype", "float32", f"/dev/fd/{r}"], pass_fds=(r,))
        writer.join(10)
        os.close(r)
        check_gauss_sum(g, rc, out, shown, f"{what} through a pipe named /dev/fd/{r}")
    # The reviewer's case, through bash's own process substitution, where bash is there: exact, so 0 is not covered.
    if shutil.which("bash"):
        p = subprocess.run(["bash", "-c", "exec \"$0\" covers <(printf '1 2 3\\n') 0 --standard exact", cli.path],
                           capture_output=True, timeout=120)
        out = p.stdout.decode()
        check(p.returncode == 1 and "n = 3" in out and "NOT COVERED" in out,
              f"process substitution: n = 3, 0 is not the exact sum 6\n{out}{p.stderr.decode()}")
    # A closed standard input is an error, not an empty array: '-' reads fd 0 through stdio, /dev/stdin cannot be
    # opened at all.
    for source, message in (("-", "<stdin>: cannot read standard input"), ("/dev/stdin", "/dev/stdin")):
        rc, out, err, shown = run_raw(cli, ["sum", source], stdin=None, preexec_fn=lambda: os.close(0))
        check(rc == 2 and message in err and out == "", f"closed stdin read as '{source}': exit 2\n{shown}")
    # A read error of a file: reading /proc/self/mem at offset 0 fails with EIO.
    if os.path.exists("/proc/self/mem"):
        _, out, err, shown = cli.run("sum", "/proc/self/mem", expect_rc=2)
        check("/proc/self/mem: read error" in err and out == "", f"a read error names the file\n{shown}")


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def case_npy_header_limits(cli, g, work):
    # 13 bytes claiming a 4 GiB header: exit 2 at once, without touching memory for it. The old reader zeroed a 4 GiB
    # std::string first (4 GiB resident; under an address-space limit, exit 3 std::bad_alloc). The peak resident size
    # of the child is checked rather than an address-space limit, which AddressSanitizer builds cannot run under (its
    # shadow memory reserves terabytes of address space). This is the case's first child: ru_maxrss is its peak.
    path = os.path.join(work, "h.npy")
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x02\x00\xf0\xff\xff\xff{")
    rc, out, err, shown = run_raw(cli, ["sum", path])
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB on Linux
    check(rc == 2 and "h.npy: .npy header too large" in err and "4294967280" in err and out == "",
          f"a header length of 4294967280 is refused as too large\n{shown}")
    check(peak_mib < 512, f"reading a 13-byte .npy file peaked at {peak_mib:.0f} MiB resident (limit 512)\n{shown}")
    # numpy's cap, 10000 header bytes: a valid header exactly that long is read; one byte longer is refused.
    dict_text = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }"
    for length, ok in ((10000, True), (10001, False)):
        header = (dict_text + " " * (length - len(dict_text) - 1) + "\n").encode()
        p = os.path.join(work, f"h{length}.npy")
        with open(p, "wb") as f:
            f.write(b"\x93NUMPY\x02\x00" + struct.pack("<I", length) + header + struct.pack("<3d", 1, 2, 0.5))
        rc, out, err, shown = run_raw(cli, ["sum", "--json", p])
        if ok:
            check(rc == 0 and json.loads(out)["exact"] == "3.5", f"a {length}-byte header is read\n{shown}")
        else:
            check(rc == 2 and "header too large" in err, f"a {length}-byte header is refused\n{shown}")


def case_npy_descr(cli, g, work):
    values = [0.1, -2.5e-3, 5e-324]  # every double is exact as a Fraction
    exact = exact_decimal(sum(Fraction(v) for v in values))
    native_little = sys.byteorder == "little"
    # numpy's spellings of the float dtypes (np.dtype(descr)); '=', '|' and none mean the host's byte order.
    for descr, fmt, dtype in (("<d", "<d", "float64"), ("=f8", "<d", "float64"), ("|f8", "<d", "float64"),
                              ("<f", "<f", "float32"), ("<e", "<e", "float16"), ("float64", "<d", "float64")):
        if not native_little and descr[0] != "<":
            continue
        p = os.path.join(work, "spelling.npy")
        data = [struct.unpack(fmt, struct.pack(fmt, v))[0] for v in values]  # rounded into the dtype by struct
        write_npy(p, descr, (3,), b"".join(struct.pack(fmt, v) for v in data))
        _, out, _, shown = cli.run("sum", "--json", p, expect_rc=0)
        j = json.loads(out)
        check(j["dtype"] == dtype and j["exact"] == exact_decimal(sum(Fraction(v) for v in data)),
              f"descr '{descr}' is {dtype}\n{shown}")
    check(exact_decimal(sum(Fraction(v) for v in values)) == exact, "oracle")
    # ml_dtypes' bfloat16 is saved as '<V2': only --dtype bfloat16 says what the bytes are.
    bf16_bits = [0x3F80, 0xC000, 0x0001]  # 1, -2, 2^-133 (the smallest bfloat16 subnormal)
    p = os.path.join(work, "bf16.npy")
    write_npy(p, "<V2", (3,), b"".join(struct.pack("<H", b) for b in bf16_bits))
    _, out, _, shown = cli.run("sum", "--json", "--dtype", "bfloat16", p, expect_rc=0)
    want = sum(Fraction(struct.unpack("<f", struct.pack("<I", b << 16))[0]) for b in bf16_bits)
    check(json.loads(out)["exact"] == exact_decimal(want), f"'<V2' read as bfloat16 when asked\n{shown}")
    for args in ((), ("--dtype", "float16")):
        _, _, err, shown = cli.run("sum", *args, p, expect_rc=2)
        check("'<V2' is raw 2-byte data" in err and "--dtype bfloat16" in err, f"'<V2' refused, with the fix\n{shown}")
    # Text after the dict, and a descr with a NUL in it (shown escaped, not cut at the NUL).
    p = os.path.join(work, "garbage.npy")
    with open(p, "wb") as f:
        header = "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), } garbage".ljust(117) + "\n"
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + struct.pack("<d", 1))
    _, _, err, shown = cli.run("sum", p, expect_rc=2)
    check("text after the closing '}'" in err, f"text after the header dict\n{shown}")
    p = os.path.join(work, "nul.npy")
    write_npy(p, "<f8\0x", (1,), struct.pack("<d", 1))
    _, _, err, shown = cli.run("sum", p, expect_rc=2)
    check("unsupported dtype '<f8\\x00x'" in err, f"a NUL in the descr is escaped\n{shown}")


def case_text_forms(cli, g, work):
    p = os.path.join(work, "bom.txt")
    with open(p, "wb") as f:
        f.write(b"\xef\xbb\xbf0.5, 0.25\n")
    _, out, _, shown = cli.run("sum", "--json", p, expect_rc=0)
    check(json.loads(out)["exact"] == "0.75", f"a UTF-8 BOM at the start is skipped\n{shown}")
    p = os.path.join(work, "cr.txt")
    with open(p, "wb") as f:
        f.write(b"1\r2\rx\r")
    _, out, err, shown = cli.run("sum", p, expect_rc=2)
    check(f"{p}:3: not a number: 'x'" in err, f"a lone CR ends a line\n{shown}")
    with open(p, "wb") as f:
        f.write(b"1 # one\r2 # two\r\n4\r")
    _, out, _, shown = cli.run("sum", "--json", p, expect_rc=0)
    check(json.loads(out)["exact"] == "7", f"a comment ends at a lone CR\n{shown}")


def case_usage_errors(cli, g, work):
    _, out, err, shown = cli.run("frob", expect_rc=2)
    check("unknown subcommand 'frob'" in err and "sum" in err and out == "", f"unknown subcommand\n{shown}")
    rc, out, err, shown = cli.run("--version")
    if rc == 0:
        check(out.strip() == f"exactref {cli.project_version}", f"--version prints the project's version\n{shown}")
    else:
        check(rc == 2 and "does not know its version" in err and "subcommand" not in err,
              f"--version is refused clearly when the build has no version\n{shown}")
    # The help texts: covers' first line is a whole sentence; sum has no results, and --dtype is the data's format.
    _, out, _, shown = cli.run("covers", "--help", expect_rc=0)
    first = out.splitlines()[0]
    check(first.startswith("judges computed sums") and first.endswith("1 when one is not"), shown)
    check("--results FILE" in out and "--skip-rows N" in out, shown)
    _, out, _, shown = cli.run("sum", "--help", expect_rc=0)
    check("format the data is read into" in out and "results" not in out.split("Exit status")[0], shown)
    _, out, err, shown = cli.run("sum", "--dtype=", g.path, expect_rc=2)
    check("the value of --dtype is empty" in err and out == "", f"an empty --dtype= is named\n{shown}")
    # docs/cli.md, "Which H for tree:H": below ceil(log2 10000) = 14 the tree cannot hold the data.
    _, out, err, shown = cli.run("covers", g.path, "30.6", "--dtype", "float32", "--standard", "tree:13", expect_rc=2)
    check("a tree of height 13 holds at most 8192 terms" in err and out == "", f"tree:13 for 10000 terms\n{shown}")


def case_covers_input_as_given(cli, g, work):
    # main() puts a blank before negative numbers so that CLI11 keeps them positional; the JSON 'input' is the text
    # as given all the same.
    results = ["-1.5", "-inf", "-0x1p+0", "0x1.e9ab46p+4", "-nan"]
    _, out, _, shown = cli.run("covers", g.path, *results, "--dtype", "float32", "--json", expect_rc=1)
    inputs = [v["input"] for v in json.loads(out)["verdicts"]]
    check(inputs == results, f"inputs as given: {inputs}\n{shown}")
    _, out, _, shown = cli.run("covers", g.path, *results, "--dtype", "float32", expect_rc=1)
    lines = [line for line in out.splitlines() if "COVERED" in line and "results covered" not in line]
    shown_results = [line.split("COVERED", 1)[1].split()[0] for line in lines]
    check(shown_results == ["-1.5", "-inf", "-1", "30.604315", "nan"], f"text output results\n{shown}")
    # A FILE whose name is a negative number is read under that name.
    path = os.path.join(work, "-1")
    with open(path, "w") as f:
        f.write("0.5 0.25\n")
    p = subprocess.run([cli.path, "sum", "--json", "-1"], capture_output=True, timeout=120, cwd=work)
    check(p.returncode == 0 and json.loads(p.stdout)["exact"] == "0.75",
          f"a file named -1\n{p.stdout.decode()}{p.stderr.decode()}")


# ---- structured standards, what a check can see, explain ----------------------------------------------------------

U16 = Fraction(1, 2**11)  # unit roundoff of float16


def to_f16(x):
    """Round a double to the nearest float16 (ties to even; struct's 'e' packing is correctly rounded), as a double."""
    return struct.unpack("<e", struct.pack("<e", x))[0]


def gamma(k, u):
    return k * u / (1 - k * u)


def rounded_up_double(q):
    d = float(q)
    return d if Fraction(d) >= q else math.nextafter(d, math.inf)


def fold(values, rounding, start=0.0):
    """A left fold with every addition rounded by `rounding` (to_f32 or to_f16: a double holds the exact sum of two
    such values, so rounding it once is the correctly rounded addition)."""
    acc = start
    for v in values:
        acc = rounding(acc + v)
    return acc


def static_chunks(n, threads):
    """OpenMP's static schedule, as "/N" of DESIGN §3: n = q·N + r, the first r chunks hold q + 1 terms."""
    q, r = divmod(n, threads)
    bounds, start = [], 0
    for t in range(threads):
        end = start + q + (1 if t < r else 0)
        bounds.append((start, end))
        start = end
    return bounds


def ratio_of_bound(value, bound, denominator):
    """value is RN(B/denominator) for an exact B whose upward rounding is `bound`: B lies in (pred(bound), bound], so
    RN(B/d) lies between RN(pred(bound)/d) and RN(bound/d) (rounding is monotonic)."""
    lo = float(Fraction(math.nextafter(bound, 0)) / denominator)
    return lo <= value <= float(Fraction(bound) / denominator)


def hex32(x):
    return float.hex(to_f32(x))


def write_values(path, values):
    with open(path, "w") as f:
        f.write("\n".join(float.hex(v) for v in values) + "\n")


def case_covers_structured(cli, g, work):
    # 4 threads, static chunks of 2500, each folded in float32, the chunk results combined in the order the atomics
    # ran. The flat depth form of this structure is γ_{2499+3}·S (Higham §4.2); the data bound is never looser.
    structure = "levels:fold/4,any"
    flat = gamma(2499 + 3, U32) * g.abs_sum
    chunks = [fold(g.values[a:b], to_f32) for a, b in static_chunks(g.n, 4)]
    honest = fold([chunks[2], chunks[0], chunks[3], chunks[1]], to_f32)
    check(abs(Fraction(honest) - g.exact) <= flat, "oracle: the honest result is within the flat bound")
    _, out, err, shown = cli.run("covers", g.path, hex32(honest), "--dtype", "float32", "--standard", structure,
                                 expect_rc=0)
    check(f"standard  {structure}  (float32, n = 10000)" in out and "COVERED " in out and "vacuous" not in out
          and err == "", f"the honest 4-thread result is covered, the check is not vacuous\n{shown}")
    check("sees      a fault only if it moves the sum by more than B = " in out, f"what the check can see\n{shown}")
    _, out, _, shown = cli.run("covers", g.path, hex32(honest), "--dtype", "float32", "--standard", structure,
                               "--json", expect_rc=0)
    v = json.loads(out)["verdicts"][0]
    check(v["covered"] is True and v["vacuous"] is False and v["advice"] == "", f"JSON verdict\n{shown}")
    check(0 < v["bound"] <= float(flat) and set(v["sensitivity"]) == {"of_sum", "of_abs_sum", "of_largest"},
          f"the data bound is positive and never above the flat bound {float(flat)!r}\n{shown}")
    largest = max(abs(x) for x in g.values)
    sens = v["sensitivity"]
    check(sens["of_largest"] == v["bound"] / largest and ratio_of_bound(sens["of_abs_sum"], v["bound"], g.abs_sum)
          and ratio_of_bound(sens["of_sum"], v["bound"], abs(g.exact)),
          f"sensitivity: B/max|x| (binary64 division), B/S and B/|s| (the exact B, rounded once)\n{shown}")
    # The thread that never reported: its chunk's exact sum is beyond twice the flat bound, so no bound of the
    # structure can cover the result without it.
    lost = sum(Fraction(x) for x in g.values[7500:])
    check(abs(lost) > 2 * flat, "oracle: the lost chunk is a visible fault for this data")
    dropped = fold([chunks[2], chunks[0], chunks[1]], to_f32)
    _, out, _, shown = cli.run("covers", g.path, hex32(dropped), "--dtype", "float32", "--standard", structure,
                               expect_rc=1)
    check("NOT COVERED" in out and f"0 of 1 results covered by {structure}" in out, f"a lost chunk\n{shown}")
    # One lost term: within any_order's bound (which says it cannot see a lost term that small) but beyond the
    # structure's flat bound.
    lo, hi = static_chunks(g.n, 4)[3]
    chosen = None
    for j in range(lo, hi):
        last = fold(g.values[lo:j] + g.values[j + 1:hi], to_f32)
        result = fold([chunks[2], chunks[0], last, chunks[1]], to_f32)
        error = abs(Fraction(result) - g.exact)
        if flat < error <= g.bound:
            chosen = (j, result)
            break
    check(chosen is not None, "oracle: some term of the last chunk is a fault any_order cannot see")
    j, result = chosen
    _, out, _, shown = cli.run("covers", g.path, hex32(result), "--dtype", "float32", expect_rc=0)
    check("COVERED " in out and "B = 4.72203 (1.31x the largest |x|" in out
          and "a lost term smaller than B cannot be seen" in out,
          f"any_order covers the result without term {j} ({g.values[j]!r}) and says what it cannot see\n{shown}")
    _, out, _, shown = cli.run("covers", g.path, hex32(result), "--dtype", "float32", "--standard", structure,
                               expect_rc=1)
    check("NOT COVERED" in out, f"{structure} rejects the result without term {j}\n{shown}")
    # The prefixes compose: directed (u -> 2u) covers what round-to-nearest covers.
    cli.run("covers", g.path, hex32(honest), "--dtype", "float32", "--standard", "directed:" + structure, expect_rc=0)
    # float16 data accumulated in float32 by 4 threads, the result rounded once to float16.
    path = os.path.join(work, "half.txt")
    half = [to_f16(x) for x in g.values[:2000]]
    write_values(path, half)
    parts = [fold(half[a:b], to_f32) for a, b in static_chunks(len(half), 4)]
    mixed_result = to_f16(fold([parts[3], parts[1], parts[0], parts[2]], to_f32))
    _, out, _, shown = cli.run("covers", path, float.hex(mixed_result), "--dtype", "float16", "--standard",
                               "mixed:float32:float16:" + structure, expect_rc=0)
    check("standard  mixed:float32:float16:levels:fold/4,any  (float16, n = 2000)" in out, f"mixed over levels\n{shown}")


def case_covers_vacuous(cli, g, work):
    # The example at a size a test can afford: the float32 sum of 10^8 values said COVERED for 0 and for 1e8,
    # because (n - 1)·u >= 1 once n > 2^24 + 1. In float16 that happens past n = 2^11 + 1: 3000 positive values.
    values = [to_f16(abs(x)) for x in g.values[:3000]]
    path = os.path.join(work, "positive_half.txt")
    write_values(path, values)
    n = len(values)
    s = sum(Fraction(x) for x in values)  # = S: every term positive
    bound = (n - 1) * U16 * s
    check(bound >= s, "oracle: any_order is vacuous here")
    doubled = to_f16(float(2 * s))
    for r in (0.0, doubled):
        check(abs(Fraction(r) - s) <= bound, f"oracle: {r!r} is within the any_order bound")
    args = ("covers", path, "0", float.hex(doubled), "--dtype", "float16")
    _, out, err, shown = cli.run(*args, expect_rc=0)
    lines = [line for line in out.splitlines() if "COVERED" in line and "results covered" not in line]
    check(len(lines) == 2 and all(line.startswith("COVERED ") and line.endswith("[vacuous]") for line in lines),
          f"both are covered, and marked vacuous\n{shown}")
    check("sees      nothing: the check is VACUOUS" in out, f"the sees line says it\n{shown}")
    check(err.count("exactref: warning: any_order is vacuous for this input: no lost or doubled part of the terms "
                    "can be seen") == 1 and "levels:fold/T,any" in err and "any_order in float16 is vacuous from n = 2049 on"
          in err, f"one warning on stderr, with the advice\n{shown}")
    _, out, err, shown = cli.run(*args, "--json", expect_rc=0)
    for v in json.loads(out)["verdicts"]:
        check(v["vacuous"] is True and v["advice"] and v["advice"] in err, f"JSON vacuous and advice\n{shown}")
        sens = v["sensitivity"]
        check(sens["of_abs_sum"] == float((n - 1) * U16) and sens["of_sum"] == sens["of_abs_sum"],
              f"B/S = (n-1)u = {float((n - 1) * U16)!r} exactly, and s = S\n{shown}")
        check(sens["of_largest"] == rounded_up_double(bound) / max(values), f"B/max|x|\n{shown}")
    # The structure of a 64-thread kernel sees the fault: its flat bound γ_{46+63}·S (k = ceil(3000/64) = 47) is
    # below s, so neither 0 nor 2s is covered, whatever the data bound (never looser than the flat one).
    flat = gamma(46 + 63, U16) * s
    check(flat < s / 2, "oracle: the structure's flat bound is far below s")
    structure = "levels:fold/64,any"
    _, out, err, shown = cli.run(*args, "--standard", structure, expect_rc=1)
    check(out.count("NOT COVERED") == 2 and "vacuous" not in out and err == "",
          f"{structure} rejects 0 and 2s, and is not vacuous\n{shown}")
    parts = [fold(values[a:b], to_f16) for a, b in static_chunks(n, 64)]
    honest = fold(parts[::-1], to_f16)
    _, out, _, shown = cli.run("covers", path, float.hex(honest), "--dtype", "float16", "--standard", structure,
                               "--json", expect_rc=0)
    v = json.loads(out)["verdicts"][0]
    check(v["covered"] and v["vacuous"] is False and 0 < v["sensitivity"]["of_abs_sum"] <= float(gamma(109, U16)),
          f"the honest 64-thread float16 result is covered\n{shown}")


def case_covers_explain(cli, g, work):
    rn = float.hex(g.nearest)
    _, out, _, shown = cli.run("covers", g.path, rn, "--dtype", "float32", "--standard", "exact", "--explain",
                               expect_rc=0)
    lines = out.splitlines()
    at = next((i for i, line in enumerate(lines) if line.startswith("explain   30.604261 (0x1.e9ab0ep+4)")), None)
    check(at is not None, f"an explain block for the result\n{shown}")
    block = [line.split() for line in lines[at + 1:] if line.startswith("  ")]
    check(block[0][:2] == ["exact", "COVERED"] and block[1][:2] == ["faithful", "COVERED"],
          f"RN(s): exact first, then faithful\n{shown}")
    check(all(row[1] == "COVERED" for row in block), f"RN(s) is covered by every standard\n{shown}")
    names = [row[0] for row in block]
    for name in ("tree:14", "split_k:2", "split_k:256", "any_order", "directed:any_order"):
        check(name in names, f"{name} among the candidates\n{shown}")
    _, out, _, shown = cli.run("covers", g.path, rn, "40", "--dtype", "float32", "--standard", "levels:fold/4,any",
                               "--explain", "--json", expect_rc=1)
    first, far = json.loads(out)["verdicts"]
    listing = first["explain"]
    check([e["standard"] for e in listing[:2]] == ["exact", "faithful"] and all(e["covered"] for e in listing),
          f"JSON explain of RN(s)\n{shown}")
    bounds = [e["bound"] for e in listing[2:]]
    check(bounds == sorted(bounds), f"tightest first\n{shown}")
    by_name = {e["standard"]: e for e in listing}
    check(set(listing[0]) == {"standard", "covered", "bound", "ratio", "vacuous", "reason"}, f"explain keys\n{shown}")
    check("levels:fold/4,any" in by_name and "directed:levels:fold/4,any" in by_name,
          f"the reference's structure is a candidate\n{shown}")
    check(is_upward_rounding(by_name["any_order"]["bound"], g.bound)
          and is_upward_rounding(by_name["tree:14"]["bound"], gamma(14, U32) * g.abs_sum),
          f"candidate bounds are the exact bounds rounded up\n{shown}")
    # 40 is 9.40 from s: within directed:any_order's γ_{n-1}(2u)·S = 9.46 (Higham's γ with 2u), beyond every other
    # candidate's bound.
    error = abs(Fraction(40) - g.exact)
    check(g.bound < error <= gamma(g.n - 1, 2 * U32) * g.abs_sum, "oracle: 40 is covered by directed:any_order only")
    listing = far["explain"]
    check([e["standard"] for e in listing if e["covered"]] == ["directed:any_order"],
          f"40: only directed:any_order covers it, listed first\n{shown}")
    check({e["standard"] for e in listing[-2:]} == {"exact", "faithful"} and listing[-1]["ratio"] is None,
          f"exact and faithful (ratio inf: null) come last\n{shown}")
    ratios = [e["ratio"] for e in listing[1:] if e["ratio"] is not None]
    check(ratios == sorted(ratios), f"rejecting standards by ratio\n{shown}")


def case_structured_errors(cli, g, work):
    for standard, message in (
            ("levels:foo/4,any", "unknown level order 'foo' in standard 'levels:foo/4,any'"),
            ("levels:fold/0,any", "bad group count '0' in standard 'levels:fold/0,any': expected a positive integer"),
            ("levels:fold/4", "the last level combines all that is left: it has no group suffix"),
            ("levels:fold,any", "level 1 has no group suffix"),
            ("levels:", "has no levels"),
            ("levels:fold/20000,any", "asks for 20000 groups of 10000 items, so a group would be empty: give at most "
                                      "10000"),
            ("directed:exact", "exact and faithful compare encodings and take no structure"),
            ("mixed:float32:float16:exact", "exact and faithful compare encodings")):
        _, out, err, shown = cli.run("covers", g.path, "30.6", "--dtype", "float32", "--standard", standard,
                                     expect_rc=2)
        check(err.startswith("exactref: error: ") and message in err and out == "",
              f"--standard {standard}: exit 2 with '{message}'\n{shown}")
        if standard in ("levels:foo/4,any", "levels:fold/4", "levels:fold,any", "levels:"):
            check("ORDER is fold, tree or any" in err and "e.g. levels:fold/4,any" in err,
                  f"the accepted spelling\n{shown}")


def case_sum_abs_sum_specials(cli, g, work):
    # One rule in every face (issue 15, item 7): abs_sum is Σ|x_i| over every term, so an infinite term (of either
    # sign) makes it inf and a NaN term nan (|NaN| is NaN, and it wins over Inf); er.Reference.abs_sum agrees
    # (tests/python/test_faces.py). Finite terms give the exact decimal.
    for values, expected in (("2, inf, 3", "inf"), ("2, -inf, 3", "inf"), ("inf, -inf", "inf"),
                             ("2, nan, 3", "nan"), ("nan, inf", "nan"), ("2, -0.5, 3", "5.5")):
        path = os.path.join(work, "abs_sum_specials.txt")
        with open(path, "w") as f:
            f.write(values + "\n")
        _, out, _, shown = cli.run("sum", "--json", path, expect_rc=0)
        check(json.loads(out)["abs_sum"] == expected, f"abs_sum of [{values}] is {expected}\n{shown}")
# ---- streaming, warnings, hints (issue 15) ------------------------------------------------------------------------

def peak_rss_mb(cli_path, args, stdin_path=None):
    """Runs the CLI in a child and returns (rc, stdout, stderr, peak RSS in MB of that child alone)."""
    code = ("import resource,subprocess,sys\n"
            "f=open(sys.argv[1],'rb') if sys.argv[1] else None\n"
            "p=subprocess.run(sys.argv[2:],stdin=f,capture_output=True)\n"
            "sys.stderr.write(p.stderr.decode());sys.stdout.write(p.stdout.decode())\n"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
            "sys.exit(p.returncode)\n")
    p = subprocess.run([sys.executable, "-c", code, stdin_path or "", cli_path, *args], capture_output=True,
                       timeout=300)
    err_lines = p.stderr.decode().strip().splitlines()
    return p.returncode, p.stdout.decode(), "\n".join(err_lines[:-1]), int(err_lines[-1]) / 1024


def case_stream_memory(cli, g, work):
    # 3·10^7 float32 values (120 MB): the pattern 1.5, -0.25, 2^-20, 3.0 repeated; exact sum known in rationals.
    pattern = [1.5, -0.25, 2.0**-20, 3.0]
    reps = 7_500_000
    path = os.path.join(work, "big.npy")
    block = struct.pack("<4f", *pattern) * 250_000
    header_rows = 4 * reps
    write_npy(path, "<f4", (header_rows,), b"")
    with open(path, "ab") as f:
        for _ in range(reps // 250_000):
            f.write(block)
    exact = reps * sum(Fraction(v) for v in pattern)
    try:
        for stdin in (None, path):
            args = ["sum", "--json", "-" if stdin else path]
            rc, out, err, mb = peak_rss_mb(cli.path, args, stdin)
            check(rc == 0, f"exit 0 for {args}: {err}")
            j = json.loads(out)
            check(j["n"] == header_rows and Fraction(j["exact"]) == exact,
                  f"exact sum {j['exact']} (n {j['n']}), expected {exact} ({'stdin' if stdin else 'file'})")
            check(mb <= 64, f"peak RSS {mb:.1f} MB > 64 MB for {'stdin' if stdin else 'file'}")
        rc, out, err, mb = peak_rss_mb(cli.path, ["covers", path, str(float(exact))])
        check(rc == 0 and mb <= 64, f"covers streams: rc {rc}, {mb:.1f} MB\n{out}{err}")
    finally:
        os.remove(path)


def case_parse_warnings(cli, g, work):
    path = os.path.join(work, "range.txt")
    with open(path, "w") as f:
        f.write("1.0\n1e400\n-1e400 1e-400\n0.0 0e7 0x0p+0\n1e5\n")
    rc, out, err, shown = cli.run("sum", path, expect_rc=0)
    check("2 finite numbers" in err and "overflowed to +-inf in float64 (the first on line 2)" in err, shown)
    check("1 non-zero number" in err and "underflowed to 0 in float64 (the first on line 3)" in err, shown)
    rc, out, err, shown = cli.run("sum", "--dtype", "float16", path, expect_rc=0)
    check("3 finite numbers" in err and "in float16 (the first on line 2)" in err, shown)
    rc, out, err, shown = cli.run("sum", g.path, expect_rc=0)
    check("warning" not in err, f"no warning for clean data\n{shown}")
    # RESULT arguments get the same warning as numbers in a file, counted by argument.
    rc, out, err, shown = cli.run("covers", "--dtype", "float32", g.path, "30.6", "1e40", "-1e-50", "0x0p+0", "inf",
                                  "1e39", expect_rc=1)
    check("2 finite numbers in the RESULT arguments overflowed to +-inf in float32 (the first is RESULT 2)" in err,
          shown)
    check("1 non-zero number in the RESULT arguments underflowed to 0 in float32 (the first is RESULT 3)" in err,
          shown)
    rc, out, err, shown = cli.run("covers", "--dtype", "float32", g.path, "30.6", "0", "-0.0", "inf", "-inf", "nan",
                                  expect_rc=1)
    check("warning" not in err, f"zeros and specials as written are no warning\n{shown}")


def case_skip_rows_and_header(cli, g, work):
    path = os.path.join(work, "data.csv")
    with open(path, "w") as f:
        f.write("x,y\n1.5,2.25\n-0.75\n")
    rc, out, err, shown = cli.run("sum", path, expect_rc=2)
    check(f"{path}:1: not a number: 'x'" in err and "skip it with --skip-rows 1" in err, shown)
    rc, out, err, shown = cli.run("sum", "--skip-rows", "1", "--json", path, expect_rc=0)
    check(json.loads(out)["exact"] == "3" and json.loads(out)["n"] == 3, shown)
    with open(path, "w") as f:
        f.write("1\n2\nbad\n")
    rc, out, err, shown = cli.run("sum", path, expect_rc=2)
    check(f"{path}:3: not a number: 'bad'" in err and "--skip-rows" not in err, f"no header advice mid-file\n{shown}")
    npy = os.path.join(work, "one.npy")
    write_npy(npy, "<f8", (1,), struct.pack("<d", 1.0))
    rc, out, err, shown = cli.run("sum", "--skip-rows", "1", npy, expect_rc=2)
    check("skipping rows applies to text input only" in err, shown)
    # The count is a non-negative integer below 2^64 (CLI11 alone read "-1" as 2^64 - 1 and skipped everything).
    for args in (("--skip-rows", "-1"), ("--skip-rows=-5",), ("--skip-rows", "x")):
        rc, out, err, shown = cli.run("sum", *args, path, expect_rc=2)
        check("--skip-rows takes a non-negative count" in err and out == "", shown)
    rc, out, err, shown = cli.run("sum", "--skip-rows", "18446744073709551616", path, expect_rc=2)
    check("--skip-rows 18446744073709551616 is too large (at most 2^64 - 1" in err, shown)
    # Skipping every line leaves nothing to read: a warning, and the sum of nothing.
    rc, out, err, shown = cli.run("sum", "--skip-rows", "5", "--json", path, expect_rc=0)
    check(f"warning: --skip-rows 5 skipped all 3 lines of {path}" in err and json.loads(out)["n"] == 0, shown)
    with open(path, "w") as f:
        f.write("h\n1\n2")  # the last line without its line end counts
    rc, out, err, shown = cli.run("sum", "--skip-rows", "3", path, expect_rc=0)
    check(f"skipped all 3 lines of {path}" in err, shown)
    rc, out, err, shown = cli.run("sum", "--skip-rows", "2", path, expect_rc=0)
    check("skipped all" not in err, f"one line left to read: no warning\n{shown}")


def case_too_large(cli, g, work):
    rc, out, err, shown = cli.run("covers", "--standard", "tree:99999999999999999999", g.path, "1", expect_rc=2)
    check("too large (at most 2^64 - 1 = 18446744073709551615)" in err, shown)
    rc, out, err, shown = cli.run("covers", "--standard", "tree:18446744073709551615", g.path, "1")
    check("too large" not in err, f"2^64 - 1 itself is not too large\n{shown}")


def case_results_file(cli, g, work):
    results = [float.fromhex(h) for h in README_ORDER_RESULTS]
    path = os.path.join(work, "results.txt")
    with open(path, "w") as f:
        f.write("# computed sums\n" + "\n".join(x.hex() for x in results) + "\n")
    rc, out, err, shown = cli.run("covers", "--dtype", "float32", "--json", "--results", path, g.path, expect_rc=0)
    j = json.loads(out)
    check(len(j["verdicts"]) == 5 and all(v["covered"] for v in j["verdicts"]), shown)
    with open(path, "a") as f:
        f.write("40.5\n")  # 9.9 from the sum, beyond the bound 4.72
    rc, out, err, shown = cli.run("covers", "--dtype", "float32", "--json", "--results", path, g.path, "30.604263",
                                  expect_rc=1)
    j = json.loads(out)
    check([v["covered"] for v in j["verdicts"]] == [True] * 6 + [False], shown)
    rc, out, err, shown = cli.run("covers", g.path, expect_rc=2)
    check("RESULT (or --results FILE)" in err, shown)
    with open(path, "a") as f:
        f.write("zz\n")
    rc, out, err, shown = cli.run("covers", "--dtype", "float32", "--results", path, g.path, expect_rc=2)
    check(f"--results: {path}:8: not a number: 'zz'" in err, shown)
    # A results file with no numbers is an error that names it, with or without RESULTs on the command line.
    empty = os.path.join(work, "empty.txt")
    with open(empty, "w") as f:
        f.write("# nothing yet\n")
    for source, args in ((empty, ()), ("/dev/null", ()), (empty, ("30.6",))):
        rc, out, err, shown = cli.run("covers", "--dtype", "float32", "--results", source, g.path, *args, expect_rc=2)
        check(f"--results: no results to judge in {source}" in err and "RESULT arguments" in err and out == "",
              f"an empty --results file is exit 2\n{shown}")
    # Standard input is read once: FILE and --results cannot both be '-'.
    rc, out, err, shown = cli.run("covers", "-", "--results", "-", stdin=b"1\n2\n", expect_rc=2)
    check("only one of FILE and --results can be '-'" in err and out == "", shown)
    # A .npy of results in another dtype: the message says where the result format came from.
    npy = os.path.join(work, "results64.npy")
    write_npy(npy, "<f8", (1,), struct.pack("<d", 30.6))
    rc, out, err, shown = cli.run("covers", "--dtype", "float32", "--results", npy, g.path, expect_rc=2)
    check(f"{npy} holds float64 values, but the results are judged in float32 (--dtype float32)" in err, shown)
    data32 = os.path.join(work, "gauss.npy")
    write_npy(data32, "<f4", (g.n,), struct.pack(f"<{g.n}f", *g.values))
    rc, out, err, shown = cli.run("covers", "--results", npy, data32, expect_rc=2)
    check(f"judged in float32 (the format of the data in {data32})" in err and "was requested" not in err,
          f"no --dtype was given: none is said to be requested\n{shown}")


def case_narrower_hint(cli, g, work):
    # The float32 left fold of the data, judged as float64 (the default for text): rejected, with a hint.
    r = README_ORDER_RESULTS[1]
    rc, out, err, shown = cli.run("covers", "--json", g.path, r, expect_rc=1)
    check(json.loads(out)["verdicts"][0]["hint_dtype"] == "float32", shown)
    check("hint: " + r + " is a float32 value" in err and "--dtype float32" in err, shown)
    rc, out, err, shown = cli.run("covers", "--dtype", "float32", g.path, r, expect_rc=0)
    check("hint" not in err, f"no hint for a covered result\n{shown}")
    # A float64 value far from the sum: rejected, no hint (not a float32 value).
    rc, out, err, shown = cli.run("covers", g.path, "0x1.e9ab0fadf2ecfp+5", expect_rc=1)
    check("hint" not in err, f"no hint for a float64 result\n{shown}")
    # 40 is a float16 value, but any_order read in float16 is vacuous for 10000 terms ((n-1)·2^-11 >= 1: it covers
    # 0 too): no hint towards a check that cannot see anything.
    rc, out, err, shown = cli.run("covers", "--dtype", "float32", "--json", g.path, "40", expect_rc=1)
    check(json.loads(out)["verdicts"][0]["hint_dtype"] is None and "hint" not in err,
          f"no hint towards a vacuous float16 check\n{shown}")


CASES = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--project-version", help="the CMake project's version, which --version prints")
    parser.add_argument("case", choices=sorted(CASES))
    a = parser.parse_args()
    work = os.path.join(a.work, a.case)
    os.makedirs(work, exist_ok=True)
    try:
        CASES[a.case](Cli(a.cli, a.project_version), Gauss(a.data), work)
    except Failure as e:
        print(f"FAILED cli.{a.case}: {e}", file=sys.stderr)
        return 1
    print(f"ok cli.{a.case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
