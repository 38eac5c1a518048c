"""Error models by name: ``standard="tree", height=5`` and friends (exactref/standard.h, DESIGN §3).

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
"mixed", acc=, out=   (n-1)·u_acc·S + u_out·(|s| + (n-1)·u_acc·S)       composition of the rows above
"directed", base=     base with u replaced by 2u (any rounding mode)    Lange–Rump (2017)
====================  ================================================  =============================================
"""

from __future__ import annotations

from typing import Any, Optional

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
    "mixed": ("acc", "out"),
}
_COMMON = ("directed", "allow_negative_zero", "fma")
_NAMES = ", ".join(repr(n) for n in (*_PARAMS, "directed"))


def _flag(value: Any, what: str) -> bool:
    """directed=, allow_negative_zero=, fma=: True or False only (a string such as 'no' is truthy, so refuse it)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"{what}={value!r}: expected True or False")


def _cli_spelling(name: str) -> str:
    """The CLI spelling with its dtype names read as numpy reads them ('mixed:float:half' is float64 -> float16),
    rewritten with the canonical names the C++ parser takes."""
    parts = name.split(":")
    head = 1 if parts[0] == "directed" else 0
    if parts[head:head + 1] == ["mixed"] and len(parts) == head + 3:
        parts[head + 1] = dtype_name(parts[head + 1], "acc")
        parts[head + 2] = dtype_name(parts[head + 2], "out")
    return ":".join(parts)


def standard(name: Any = "any_order", *, result_dtype: Optional[str] = None, **params: Any) -> Standard:
    """An error model from its name and parameters.

    name: "exact", "faithful", "any_order", "tree" (height=h), "split_k" (chunks=s, combine="any_order" |
          "pairwise"), "mixed" (acc=dtype, out=dtype, out defaulting to the result's dtype), "directed" (base=name and
          the base's parameters); or the CLI spelling "tree:5", "split_k:4:pairwise", "mixed:float32:float16",
          "directed:any_order"; or a Standard (returned as is).
    height: an integer from 0 to 2**64 - 1, the most roundings on a path from a term to the root; 0 is a single term
          (γ_0 = 0: only s itself is covered), and covers() refuses a reference with more than 2^h terms.
    chunks: an integer from 1 to 2**64 - 1.
    acc, out: dtypes as numpy names them (np.dtype(name): 'float' and 'double' are float64, 'single' float32, 'half'
          float16), numpy dtypes or scalar types, or 'bfloat16'; the dtype names of a CLI spelling are read the same
          way ("mixed:single:half").
    Every standard also takes directed=True (u -> 2u, any rounding mode or truncation; Lange–Rump 2017),
    allow_negative_zero=True (accept -0.0 for an exact zero, as FTZ hardware gives) and fma=True (dot products
    computed with fused multiply-adds); each takes True or False only.
    result_dtype: the result's dtype name, the default of mixed's out.
    A Standard pickles (multiprocessing, pytest-xdist) and compares with ==.

    Raises TypeError for a parameter the standard does not take (naming those it does), a flag that is not a bool or
    a dtype that is not one of the four formats; ValueError for an unknown name or a value out of range.

    >>> er.standard("tree", height=5).name
    'tree:5'
    """
    if isinstance(name, Standard):
        if params:
            raise TypeError(f"standard={name.name!r} is already built; pass parameters with a name instead")
        return name
    if not isinstance(name, str):
        raise TypeError(f"standard={name!r}: expected a name ({_NAMES}) or an exactref.Standard")
    flags = {k: _flag(params.pop(k), k) for k in _COMMON if k in params}
    if ":" in name:
        if params:
            raise TypeError(f"standard={name!r} spells its parameters in the name; got {_listing(params)} too")
        built = _core.parse_standard(_cli_spelling(name))
        if flags.get("directed") and not built.directed:
            built = _core.directed(built)
        return _core.with_options(built, flags.get("allow_negative_zero", built.allow_negative_zero),
                                  flags.get("fma", built.fma))
    if name == "directed":
        base = params.pop("base", "any_order")
        return standard(base, result_dtype=result_dtype, directed=True,
                        **{k: v for k, v in flags.items() if k != "directed"}, **params)
    if name not in _PARAMS:
        raise ValueError(f"standard={name!r}: expected one of {_NAMES}, or a CLI spelling such as 'tree:5'")
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
    else:  # mixed
        if "acc" not in params:
            raise TypeError("standard='mixed' needs acc=dtype, the accumulation format (and out=dtype, the result's "
                            "format, by default the result's dtype)")
        out = params.get("out", result_dtype)
        if out is None:
            raise TypeError("standard='mixed' needs out=dtype, the format the result was rounded to")
        built = _core.mixed(dtype_name(params["acc"], "acc"), dtype_name(out, "out"))
    if flags.get("directed"):
        built = _core.directed(built)
    if flags.get("allow_negative_zero") or flags.get("fma"):
        built = _core.with_options(built, flags.get("allow_negative_zero", False), flags.get("fma", False))
    return built


def _listing(params: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in params.items())
