"""Error models by name: ``standard="tree", height=5``, ``standard="levels:fold/4,any"`` and friends
(exactref/standard.h, DESIGN §3).

With u = 2^-p the unit roundoff of the accumulation format, n terms, exact sum s and S = Σ|t_i| (T = Σ|x_i·y_i|
for dot products), a result r is covered when |r - s| <= B, decided in exact rational arithmetic:

====================  ================================================  =============================================
standard=             bound B                                           source
====================  ================================================  =============================================
"exact"               r == RN(s) bit for bit                            IEEE 754-2019 §4.3.1
"faithful"            r is RD(s) or RU(s)                               —
"any_order"           (n-1)·u·S  (dots: n·u·T, or γ_n·T + underflow)    Rump, BIT 52 (2012); Lange–Rump, BIT 57 (2017);
                                                                        Jeannerod–Rump, SIMAX 34 (2013); Higham (3.5)
"tree", height=h      γ_h·S, γ_k = k·u/(1-k·u); h >= 0 (0: one term);   Higham, ASNA 2nd ed., §4.2
                      dots γ_{h+1}·T (the product's rounding)
"split_k", chunks=s   γ_{k+c-2}·S, k = ceil(K/s), c = min(s, K);       per-leaf depth form of Higham §4.2
                      combine="pairwise": γ_{k-1+ceil(log2 c)}·S;
                      dots: K products, one more for the product's
                      rounding and one more with initial=/c=
"levels:L1,...,Lm"    the kernel's structure: each level groups the     Lange–Rump (any), depth form of Higham §4.2
(levels="L1,...")     items below (":N" runs of N, "/N" N chunks, "%N"  (fold, tree), composed over the data's group
                      N interleaved groups) and combines each group by  sums (DESIGN §3, "Structured standards");
                      fold, tree or any; the bound comes from the data  never looser than the flat bound
                      (build the reference with it: structure=)
"mixed", acc=, out=   (n-1)·u_acc·S + u_out·(|s| + (n-1)·u_acc·S)       composition of the rows above
                      (base= another bound standard: B_base in acc)
"directed", base=     base with u replaced by 2u (any rounding mode);    Lange–Rump (2017); Higham §4.2
                      any_order: γ_{n-1}(2u)·S
====================  ================================================  =============================================
"""

from __future__ import annotations

from typing import Any, List, Optional

import numpy as np

from . import _core
from ._arrays import as_count, dtype_name

Standard = _core.Standard

_PARAMS = {
    "exact": (),
    "faithful": (),
    "any_order": (),
    "tree": ("height",),
    "split_k": ("chunks", "combine"),
    "mixed": ("acc", "out", "base"),
    "levels": ("levels", "acc", "out"),
}
_COMMON = ("directed", "ftz", "any_zero_sign", "fma")
_NAMES = ", ".join(repr(n) for n in (*_PARAMS, "directed"))
_LEVELS_EXAMPLE = ("e.g. 'levels:fold/4,any' (4 threads in static chunks, combined in any order) or "
                   "'levels:fold%65536,tree:256,any' (a grid-stride kernel, blocks of 256, atomics)")


def _flag(value: Any, what: str) -> bool:
    """directed=, ftz=, any_zero_sign=, fma=: True or False only (a string such as 'no' is truthy, so refuse it)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"{what}={value!r}: expected True or False")


def _cli_spelling(name: str) -> str:
    """The CLI spelling with its dtype names read as numpy reads them ('mixed:float:half' is float64 -> float16, also
    before a base: 'mixed:single:half:levels:fold/4,any'), rewritten with the canonical names the C++ parser takes."""
    suffix = "+fma" if name.endswith("+fma") else ""
    parts = name[:len(name) - len(suffix)].split(":")
    head = 0
    for prefix in ("ftz", "directed"):
        if parts[head:head + 1] == [prefix]:
            head += 1
    if parts[head:head + 1] == ["mixed"] and len(parts) >= head + 3:
        parts[head + 1] = dtype_name(parts[head + 1], "acc")
        parts[head + 2] = dtype_name(parts[head + 2], "out")
    return ":".join(parts) + suffix


def _levels_spelling(levels: Any) -> str:
    """levels= of standard='levels': 'fold/4,any', 'levels:fold/4,any' or a sequence of level spellings
    ['fold/4', 'any']."""
    if isinstance(levels, str):
        text = levels
    elif isinstance(levels, (list, tuple)) and levels and all(isinstance(level, str) for level in levels):
        text = ",".join(levels)
    else:
        raise TypeError(f"levels={levels!r}: expected the levels as a string ('fold/4,any') or a list of level "
                        f"spellings (['fold/4', 'any']), {_LEVELS_EXAMPLE}")
    return text if text.startswith("levels:") else "levels:" + text


def _mixed(acc: Any, out: Any, result_dtype: Optional[str], base: Optional[Standard], what: str) -> Standard:
    """base (a bound standard, any_order when None) accumulated in acc and rounded once to out (default: the result's
    dtype)."""
    out = out if out is not None else result_dtype
    if out is None:
        raise TypeError(f"{what} needs out=dtype, the format the result was rounded to")
    return _core.mixed(dtype_name(acc, "acc"), dtype_name(out, "out"), base)


def standard(name: Any = "any_order", *, result_dtype: Optional[str] = None, **params: Any) -> Standard:
    """An error model from its name and parameters.

    name: "exact", "faithful", "any_order", "tree" (height=h), "split_k" (chunks=s, combine="any_order" |
          "pairwise"), "levels" (levels="fold/4,any" or ["fold/4", "any"]: a structured standard), "mixed"
          (acc=dtype, out=dtype, out defaulting to the result's dtype; base= a bound standard, any_order by default,
          and the base's parameters), "directed" (base=name and the base's parameters); or the CLI spelling
          "tree:5", "split_k:4:pairwise", "mixed:float32:float16", "directed:any_order", "levels:fold/4,any",
          "mixed:float32:float16:levels:fold/8,any", "directed:levels:fold%65536,tree:256,any", "...+fma"; or a
          Standard (returned as is).
    levels: the structure of the reduction from the leaves up (DESIGN §3, "Structured standards"): levels
          separated by commas, each an order (fold: a left fold; tree: a tree of minimal height; any: any order,
          atomics) followed by how its groups are formed (":N" consecutive groups of N items, "/N" N nearly equal
          consecutive chunks as OpenMP's static schedule, "%N" N interleaved groups as a grid-stride loop); the last
          level has no suffix. Its bound comes from the data's group sums, so the reference must be built with it:
          er.sum(x, structure="levels:fold/4,any") (covers() of a reference built without it is a ValueError).
    height: an integer from 0 to 2**64 - 1, the most roundings on a path from a term to the root; 0 is a single term
          (γ_0 = 0: only s itself is covered), and covers() refuses a reference with more than 2^h terms.
    chunks: an integer from 1 to 2**64 - 1.
    acc, out: dtypes as numpy names them (np.dtype(name): 'float' and 'double' are float64, 'single' float32, 'half'
          float16), numpy dtypes or scalar types, or 'bfloat16'; the dtype names of a CLI spelling are read the same
          way ("mixed:single:half").
    acc=, out= also go with "levels" and with a CLI spelling of a bound standard: er.standard("levels:fold/4,any",
          acc="float32", out="float16") is "mixed:float32:float16:levels:fold/4,any".
    Every bound standard also takes directed=True (u -> 2u, any rounding mode or truncation; Lange–Rump 2017),
    ftz=True (the CLI prefix 'ftz:': flush-to-zero hardware, as fast-math GPU code, FTZ/DAZ CPUs and
    torch.set_flush_denormal(True); subnormal inputs and results flushed; B = γ_D·S + n·2^emin_in +
    (n-1)·(1+γ_{D-1})·2^emin_acc with D the structure's depth, sums only; docs/standards.md) and fma=True (dot
    products computed with fused multiply-adds); every standard takes any_zero_sign=True (exact and faithful take
    either sign of an exact zero: math.fsum and numpy's, torch's and jax's sums of -0.0 terms return +0.0; bound
    standards take -0.0 whenever 0 is within B; allow_negative_zero= is its older name). Each takes True or False
    only.
    result_dtype: the result's dtype name, the default of mixed's out.
    A Standard pickles (multiprocessing, pytest-xdist) and compares with ==.

    Raises TypeError for a parameter the standard does not take (naming those it does), a flag that is not a bool or
    a dtype that is not one of the four formats; ValueError for an unknown name, a value out of range, or a spelling
    the C++ parser refuses (its message shows the accepted spellings: an unknown level order, a group count of 0, a
    last level with a group suffix, 'directed:' or 'mixed:' on exact or faithful).

    >>> er.standard("tree", height=5).name
    'tree:5'
    >>> er.standard("levels", levels="fold/4,any", directed=True).name
    'directed:levels:fold/4,any'
    """
    if isinstance(name, Standard):
        if params:
            raise TypeError(f"standard={name.name!r} is already built; pass parameters with a name instead")
        return name
    if not isinstance(name, str):
        raise TypeError(f"standard={name!r}: expected a name ({_NAMES}) or an exactref.Standard")
    if "allow_negative_zero" in params:  # the older name of any_zero_sign
        if "any_zero_sign" in params:
            raise TypeError("pass any_zero_sign= only (allow_negative_zero= is its older name)")
        params["any_zero_sign"] = params.pop("allow_negative_zero")
    flags = {k: _flag(params.pop(k), k) for k in _COMMON if k in params}
    if ":" in name or name.endswith("+fma"):  # the CLI's spellings: 'tree:5', 'any_order+fma'
        mix = {k: params.pop(k) for k in ("acc", "out") if k in params}
        if params:
            raise TypeError(f"standard={name!r} spells its parameters in the name (acc= and out= may go with it); "
                            f"got {_listing(params)} too")
        built = _core.parse_standard(_cli_spelling(name))
        if mix:
            if "acc" not in mix:
                raise TypeError(f"standard={name!r}: out= goes with acc=, the accumulation format")
            built = _mixed(mix["acc"], mix.get("out"), result_dtype, built, f"standard={name!r}")
        for flag in ("directed", "ftz", "any_zero_sign", "fma"):  # a keyword may add what the name lacks, not undo it
            if flags.get(flag) is False and getattr(built, flag):
                raise ValueError(f"standard={name!r} has {flag} in its spelling, and {flag}=False contradicts it: "
                                 f"leave one of them out")
        if flags.get("directed") and not built.directed:
            built = _core.directed(built)
        if flags.get("ftz") and not built.ftz:
            built = _core.ftz(built)
        return _core.with_options(built, flags.get("any_zero_sign", built.any_zero_sign),
                                  flags.get("fma", built.fma))
    if name == "directed":
        base = params.pop("base", "any_order")
        return standard(base, result_dtype=result_dtype, directed=True,
                        **{k: v for k, v in flags.items() if k != "directed"}, **params)
    if name == "mixed" and "base" in params:
        if "acc" not in params:
            raise TypeError("standard='mixed' needs acc=dtype, the accumulation format (and out=dtype, the result's "
                            "format, by default the result's dtype)")
        acc, out, base = params.pop("acc"), params.pop("out", None), params.pop("base")
        inner = standard(base, result_dtype=result_dtype, **flags, **params)  # the flags are the base's too
        return _mixed(acc, out, result_dtype, inner, "standard='mixed'")
    if name not in _PARAMS:
        raise ValueError(f"standard={name!r}: expected one of {_NAMES}, or a CLI spelling such as 'tree:5' or "
                         f"'levels:fold/4,any'")
    accepted = _PARAMS[name]
    unknown = [k for k in params if k not in accepted]
    if unknown:
        takes = ", ".join(f"{k}=" for k in (*accepted, *_COMMON))
        raise TypeError(f"standard={name!r} takes {takes}; got {_listing({k: params[k] for k in unknown})}")
    if name == "exact":
        built = _core.exact()
    elif name == "faithful":
        built = _core.faithful()
    elif name == "any_order":
        built = _core.any_order()
    elif name == "tree":
        if "height" not in params:
            raise TypeError("standard='tree' needs height=h: the largest number of roundings on a path from an "
                            "element to the root (exactref.tree_height gives it for the library's trees)")
        built = _core.tree(as_count(params["height"], "height", 0, f"standard={name!r}: "))
    elif name == "split_k":
        if "chunks" not in params:
            raise TypeError("standard='split_k' needs chunks=s: the number of chunks the terms were split into")
        combine = params.get("combine", "any_order")
        if combine not in ("any_order", "pairwise"):
            raise ValueError(f"standard='split_k': combine={combine!r}: expected 'any_order' (atomics, any order) "
                             f"or 'pairwise'")
        built = _core.split_k(as_count(params["chunks"], "chunks", 1, f"standard={name!r}: "), combine)
    elif name == "levels":
        if "levels" not in params:
            raise TypeError(f"standard='levels' needs levels=..., the structure from the leaves up, {_LEVELS_EXAMPLE}")
        built = _core.parse_standard(_levels_spelling(params["levels"]))
        if "acc" in params:
            built = _mixed(params["acc"], params.get("out"), result_dtype, built, "standard='levels'")
        elif "out" in params:
            raise TypeError("standard='levels': out= goes with acc=, the accumulation format")
    else:  # mixed
        if "acc" not in params:
            raise TypeError("standard='mixed' needs acc=dtype, the accumulation format (and out=dtype, the result's "
                            "format, by default the result's dtype)")
        out = params.get("out", result_dtype)
        if out is None:
            raise TypeError("standard='mixed' needs out=dtype, the format the result was rounded to")
        built = _core.mixed(dtype_name(params["acc"], "acc"), dtype_name(out, "out"), None)
    if flags.get("directed"):
        built = _core.directed(built)
    if flags.get("ftz"):
        built = _core.ftz(built)
    if flags.get("any_zero_sign") or flags.get("fma"):
        built = _core.with_options(built, flags.get("any_zero_sign", False), flags.get("fma", False))
    return built


def _listing(params: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in params.items())


def structures(structure: Any, what: str = "structure") -> List[Standard]:
    """The structured standards of ``structure=`` (er.sum, er.dot): None (none), one spelling or Standard, or a list
    or tuple of them; each must be structured (levels:...; a mixed:/directed: prefix or +fma may come with it: the
    reference holds the bound of the structure for every accumulation format and rounding). Repeated structures are
    kept once.

    Raises ValueError for a standard that is not structured (exact, faithful and the flat any_order, tree:H,
    split_k:S get their bound from n and S, not from the data) or a spelling the parser refuses; TypeError for an
    item that is neither a string nor a Standard."""
    if structure is None:
        return []
    items = [structure] if isinstance(structure, (str, Standard)) else structure
    if not isinstance(items, (list, tuple)):
        raise TypeError(f"{what}={structure!r}: expected a structured standard ('levels:fold/4,any'), an "
                        f"exactref.Standard, or a list of them")
    out: List[Standard] = []
    seen = set()
    for item in items:
        if not isinstance(item, (str, Standard)):
            raise TypeError(f"{what}: {item!r} is neither a standard's spelling nor an exactref.Standard")
        model = standard(item)
        if not model.structured:
            raise ValueError(f"{what}={item!r}: '{model.name}' is not a structured standard: its bound does not come "
                             f"from the data (exact and faithful compare encodings; any_order, tree:H and split_k:S "
                             f"need only n and S): give the kernel's structure in the levels spelling, "
                             f"{_LEVELS_EXAMPLE}, or leave {what}= out")
        if model.structure not in seen:
            seen.add(model.structure)
            out.append(model)
    return out
