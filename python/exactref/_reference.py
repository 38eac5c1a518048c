"""exactref.Reference: exact references of sums, dot products and matrix products, one per output element.

A Reference has a shape: () for er.sum(x) and er.dot(x, y), the remaining axes for er.sum(x, axis=...), (m, n) for
er.matmul(a, b). It indexes like a numpy array (r[i], r[:, 0], iteration). covers() takes one result per element,
a stack of k runs of shape (k, *r.shape) in one call, or results that broadcast to r.shape; it refuses results that
would broadcast the references themselves (see Reference, "Shapes of results").

Each element holds, exactly: s (the sum of the terms; for dots and GEMMs the terms are the exact products),
S = Σ|t_i| over the finite terms, n, the input dtype and the special-value state (NaN, +Inf, -Inf terms, all -0.0);
for sums also max|x_i|, and the data-dependent bounds of the structured standards it was built with (structure=).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Iterator, List, Tuple, Union

import numpy as np

from . import _core
from ._arrays import dtype_name, host_array, numpy_dtype
from ._hints import exactly_as, narrower_format_hint
from ._standards import _flag, standard as make_standard

_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}
# Reference.nearest of one value: numpy's scalar of the format from the binary64 number equal to the rounded value
# (the conversion is exact: the value is representable). bfloat16 (ml_dtypes) takes the general path.
_SCALAR_TYPES = {"float64": np.float64, "float32": np.float32, "float16": np.float16}
_CANONICAL = frozenset(("float64", "float32", "float16", "bfloat16"))


def _fraction(parts: Tuple[str, bool, bytes, int], specials: bool = True) -> Union[Fraction, float]:
    state, negative, magnitude, exponent = parts
    if specials and state != "finite":
        return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}[state]
    m = int.from_bytes(magnitude, "little")
    if negative:
        m = -m
    return Fraction(m << exponent) if exponent >= 0 else Fraction(m, 1 << -exponent)


class Reference:
    """Exact references, one per output element (shape ``()`` for a single sum or dot product).

    Built by er.sum, er.dot and er.matmul, and by the scatter-adds and scans (er.segment_sum, er.scatter_add,
    er.index_add, er.add_at, er.bincount, er.embedding_bag, er.cumsum: docs/scatter.md); not constructed directly.

    Attributes: shape, ndim, size, dtype (the input's dtype name), count (n, the number of terms), is_dot,
    exact (s as fractions.Fraction), abs_sum (Σ|t_i| as Fraction; inf/nan with special terms), decimal (s as an exact decimal string), structures
    (the structured standards it was built with).
    Methods: covers(result, standard=..., **params), verdict(...), explain(result), bound(standard, **params),
    nearest(dtype).

    Shapes of results (covers, verdict, ulp_error, exactref.testing.assert_covers): a result array of shape
    r.shape gives one result per element; (k, ..., *r.shape) is a stack of runs, each of r.shape exactly; a shape
    that broadcasts TO r.shape (a scalar, a row of a 2-D Reference) stands for every element it covers. Any other
    shape is a ValueError naming both shapes: numpy would broadcast (4, 1) against (4,) to (4, 4) and judge every
    result against every reference; squeeze such results first (np.squeeze, keepdims=False).

    Pickling keeps every element's exact state (n, dtype, dot-product fields, both accumulators with their special
    counts and signed-zero state, the largest term, the structured bounds), so References cross process boundaries
    (multiprocessing, pytest-xdist).
    """

    __slots__ = ("_refs", "_index", "_whole")

    def __init__(self, refs: Any, index: np.ndarray, whole: bool = False) -> None:
        self._refs = refs
        self._index = index
        # index is np.arange(len(refs)) reshaped: every element once, in order (covers() then needs no index array)
        self._whole = whole

    # ---- shape and indexing ------------------------------------------------------------------------------------------

    @property
    def shape(self) -> Tuple[int, ...]:
        """The shape of the output: () for a single reference."""
        return self._index.shape

    @property
    def ndim(self) -> int:
        return self._index.ndim

    @property
    def size(self) -> int:
        return int(self._index.size)

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d Reference (a single sum)")
        return self.shape[0]

    def __getitem__(self, key: Any) -> "Reference":
        """r[i], r[i, j], r[:, 0], r[mask]: the references of those elements, as numpy indexing selects them."""
        return Reference(self._refs, np.asarray(self._index[key]))

    def __iter__(self) -> Iterator["Reference"]:
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d Reference (a single sum)")
        for i in range(self.shape[0]):
            yield self[i]

    def _flat(self) -> np.ndarray:
        return np.ascontiguousarray(self._index, dtype=np.int64).ravel()

    def _shaped(self, values: np.ndarray) -> Any:
        out = values.reshape(self.shape)
        return out[()] if self.ndim == 0 else out

    # ---- what the references hold --------------------------------------------------------------------------------------

    @property
    def dtype(self) -> str:
        """The input's dtype name: 'float64', 'float32', 'float16' or 'bfloat16'."""
        return self._refs.term_dtype

    @property
    def is_dot(self) -> bool:
        """True for er.dot and er.matmul references (terms are exact products)."""
        return self._refs.is_dot

    @property
    def count(self) -> Any:
        """n, the number of terms (zeros and specials included): int for a 0-d Reference, else an int64 array."""
        counts = self._refs.counts(self._flat()).astype(np.int64)
        return int(counts[0]) if self.ndim == 0 else counts.reshape(self.shape)

    def _objects(self, get: Any) -> Any:
        if self.ndim == 0:
            return get(int(self._index))
        out = np.empty(self.shape, dtype=object)
        for pos, i in np.ndenumerate(self._index):
            out[pos] = get(int(i))
        return out

    @property
    def exact(self) -> Any:
        """s, the exact sum, as a fractions.Fraction (built from the accumulator's binary digits: no rounding).

        When special terms decide the value it is a float instead: math.nan (a NaN term, or both +Inf and -Inf
        terms), math.inf or -math.inf. An exact zero is Fraction(0) (the sign of zero is in nearest()).
        Array References give an object array of these.
        """
        return self._objects(lambda i: _fraction(self._refs.exact_parts(i)))

    @property
    def abs_sum(self) -> Any:
        """Σ|t_i| over every term, exactly, as a fractions.Fraction (object array for array References).

        Special terms, as the C++ reference.abs_sum and the CLI's abs_sum report them: math.inf when a term is
        +Inf or -Inf (|±Inf| = +Inf), math.nan when a term is NaN (|NaN| is NaN; NaN wins over Inf). The bounds of
        covers() use S, the finite part (the sum over the finite terms): special terms are judged by the
        special-value rules instead (DESIGN §3).

        >>> er.sum(np.array([2.0, np.inf, 3.0])).abs_sum
        inf
        """
        return self._objects(lambda i: _fraction(self._refs.abs_sum_parts(i)))

    @property
    def structures(self) -> List[str]:
        """The structures (levels spelling, 'levels:fold/4,any') whose data bounds this Reference holds: those of
        er.sum(x, structure=...) / er.dot(x, y, structure=...), in the order given; [] when built without. The same
        for every element."""
        if self.size == 0:
            return []
        return list(self._refs.structures(int(self._flat()[0])))

    @property
    def decimal(self) -> Any:
        """s as an exact decimal string, every digit ('30.604261366177525...'; 'nan', 'inf', '-inf', '-0')."""
        return self._objects(self._refs.exact_decimal)

    def nearest(self, dtype: Any = None, rounding: str = "nearest") -> Any:
        """s correctly rounded to `dtype` (default: the input's dtype), IEEE 754-2019 §4.3.

        dtype: a numpy dtype, scalar type or name as np.dtype reads it ('float' and float are float64, 'single' and
        'f4' float32, 'half' float16), or 'bfloat16'.

        rounding: "nearest" (ties to even), "toward_zero", "upward", "downward". Overflow gives ±Inf or ±max as the
        mode dictates; special terms give NaN/±Inf. An exact zero s takes the sign IEEE 754-2019 §6.3 gives a sum:
        -0.0 when every term was -0.0 (every mode); otherwise +0.0, except under "downward" (roundTowardNegative),
        where an exact zero of terms of mixed signs or of cancelling terms ([+0.0, -0.0], [1.0, -1.0]) is -0.0; only
        all +0.0 terms stay +0.0 there. The empty sum (n = 0) is +0.0 in every mode. A non-zero s that rounds to
        zero (a narrower dtype) keeps the sign of s.

        >>> er.sum(np.array([1.0, -1.0])).nearest(rounding="downward")
        np.float64(-0.0)
        Returns a numpy scalar for a 0-d Reference, else an array of the Reference's shape.

        >>> er.sum(np.array([0.1, 0.2])).nearest()
        np.float64(0.30000000000000004)
        """
        name = (self._refs.term_dtype if dtype is None
                else dtype if isinstance(dtype, str) and dtype in _CANONICAL else dtype_name(dtype))
        if self._index.ndim == 0 and name in _SCALAR_TYPES:  # one value: no index or bits arrays (exact: see C++)
            return _SCALAR_TYPES[name](self._refs.nearest_value(int(self._index), name, rounding))
        target = numpy_dtype(name)
        bits = self._refs.nearest_bits(self._flat(), name, rounding)
        return self._shaped(bits.astype(_UINT[target.itemsize]).view(target))

    # ---- checking results --------------------------------------------------------------------------------------------

    def _standard(self, standard: Any, params: dict, result_dtype: str) -> Any:
        return make_standard(standard, result_dtype=result_dtype, **params)

    def _pair(self, result: Any, dtype: Any = None) -> Tuple[Tuple[int, ...], np.ndarray, np.ndarray, str]:
        shape, flat, name = self._results(result, dtype)
        index = np.ascontiguousarray(np.broadcast_to(self._index, shape), dtype=np.int64).ravel()
        return shape, index, flat, name

    def _results(self, result: Any, dtype: Any = None) -> Tuple[Tuple[int, ...], np.ndarray, str]:
        res, name = host_array(result, "result")
        if dtype is not None:
            target = dtype_name(dtype, "dtype")
            if target != name:
                values = res.view(numpy_dtype("bfloat16")) if name == "bfloat16" else res  # from its uint16 storage
                converted = exactly_as(values, target)
                if converted is None:
                    raise ValueError(f"dtype={target!r}: the results ({name}) are not all exactly {target} values; "
                                     f"dtype= names the format the results were computed in and never rounds them")
                res, name = host_array(converted, "result")
        shape = results_shape(res.shape, self.shape)
        flat = np.ascontiguousarray(np.broadcast_to(res, shape)).ravel()
        return shape, flat, name

    def covers(self, result: Any, standard: Any = "any_order", *, dtype: Any = None, **params: Any) -> np.ndarray:
        """Is each result within the error model `standard` of its exact reference? Decided in exact arithmetic.

        result: a float16/float32/float64/bfloat16 array (numpy, DLPack, Python float); its dtype is the result
            format, unless dtype= names it. Its shape is one of (see exactref.Reference, "Shapes of results"):
              r.shape               one result per reference element;
              (k, ..., *r.shape)    a stack of runs, each of the Reference's shape exactly;
              any shape that broadcasts TO r.shape, e.g. a scalar: one result for every element it stands for.
            A shape that would broadcast the references themselves, such as (4, 1) against (4,) (giving (4, 4):
            every result against every reference), is refused: squeeze it (np.squeeze, keepdims=False).
        dtype: None (the result's own dtype) or the format the results were computed in ('float32', np.float32,
            'bfloat16', ...): a float32 result held as a Python float or float64 array is judged as float32 with
            dtype='float32' (its bounds use u = 2^-24). Every result must be exactly a value of that format (a
            ValueError otherwise: nothing is rounded).
        standard, params: see exactref.standard: "any_order" (default), "exact", "faithful", "tree" (height=),
            "split_k" (chunks=, combine=), "mixed" (acc=, out=, base=), "directed" (base=), a structured standard
            "levels:fold/4,any" (levels=; the Reference must be built with it: er.sum(x, structure=...));
            directed=True, any_zero_sign=True, fma=True on any of them.
        Returns a numpy bool array of r.shape, or of the stack's shape (0-d for a single result: use .all() or
        bool()).

        Speed: a binary64 filter with proven margins decides almost every element in C++ (GIL released); the rest
        goes to the exact comparison, so the verdicts are exact (docs/algorithms/covers-filter.md).

        Special values (DESIGN §3): a NaN term makes only NaN covered; +Inf terms only +Inf; both only NaN. With
        finite terms ±Inf is covered only when overflow is reachable, and -0.0 only when every term is -0.0.
        Raises ValueError for a result shape that does not fit r.shape (above), a standard that does not apply to the
        result's dtype (mixed's out) or to the reference (tree: more than 2^h terms; a structured standard the
        Reference was not built with, or whose groups do not fit n); TypeError for a wrong dtype or parameter, or a
        numpy masked array.

        >>> r = er.sum(values)                    # float32 values
        >>> r.covers(er.asarray(run), standard="any_order").all()
        True
        """
        if self._whole and self._refs.judges_whole:  # every element in order: runs of results, read in place
            shape, flat, name = self._results(result, dtype)
            model = self._standard(standard, params, name)
            covered = self._refs.covers_whole(flat, "bfloat16" if name == "bfloat16" else None, model)
            return covered.view(np.bool_).reshape(shape)
        shape, index, flat, name = self._pair(result, dtype)
        model = self._standard(standard, params, name)
        covered = self._refs.covers(index, flat, "bfloat16" if name == "bfloat16" else None, model)
        return covered.view(np.bool_).reshape(shape)

    def _detail(self, result: Any, standard: Any, params: dict, dtype: Any = None) -> Tuple:
        shape, index, flat, name = self._pair(result, dtype)
        model = self._standard(standard, params, name)
        as_dtype = "bfloat16" if name == "bfloat16" else None
        covered, ratio, error, ulps = self._refs.covers_detail(index, flat, as_dtype, model)
        return shape, index, flat, as_dtype, model, covered.view(np.bool_), ratio

    def ratios(self, result: Any, standard: Any = "any_order", *, dtype: Any = None, **params: Any) -> np.ndarray:
        """|r - s| / B for each result: how far inside (<= 1) or outside (> 1) the bound B of `standard` it lies.

        Arguments, result shapes and errors as in covers(). Returns a float64 array of the shape covers() returns
        (0-d for a single result), consistent with it element by element: ratio <= 1 exactly where covers() is
        True. The value is the exact ratio rounded to binary64 (display precision); where that rounding would cross
        1 against the exact verdict, it is 1.0 for a covered result and the next binary64 above 1 for a rejected
        one.
          0    r == s exactly (and the sign rules accept it), and every covered result of "exact" and "faithful"
               (their B is 0: the ratio says only covered or not);
          inf  B = 0 and r != s; a rejected result of "exact"/"faithful"; a zero of the wrong sign; a rejected NaN
               or ±Inf result, or a finite result where special terms decide (a NaN or Inf term).
        A NaN or ±Inf result that the special-value rules cover (DESIGN §3) is 0.

        >>> er.sum(np.array([0.1, 0.2, 0.3])).ratios(np.array([0.6, 0.5999999999999999]))
        array([0.20833333, 1.04166667])
        """
        shape, index, flat, as_dtype, model, covered, ratio = self._detail(result, standard, params, dtype)
        ratio = np.array(ratio, dtype=np.float64)
        ratio[covered & ~(ratio <= 1.0)] = 1.0
        ratio[~covered & (ratio <= 1.0)] = np.nextafter(1.0, 2.0)
        return ratio.reshape(shape)

    def hint(self, result: Any, standard: Any = "any_order", **params: Any) -> str:
        """'' or a hint for a rejected result that is exactly a value of a narrower format and is covered when
        judged as that format ("hint: the result is exactly representable in float32 and is covered when judged
        as float32: pass a np.float32 or dtype='float32'"): the usual cause is a float32 result turned into a
        Python float. For one result (the worst when given several); never changes a verdict. No hint names a
        format in which the check is vacuous (B >= S: it would cover any result, 0 included), as in the CLI."""
        shape, index, flat, as_dtype, model, covered, ratio = self._detail(result, standard, params)
        if flat.size == 0 or covered.all():
            return ""
        worst = worst_position(covered, ratio)
        return self._hint_at(index[worst], flat[worst], as_dtype or flat.dtype.name, standard, params)

    def _hint_at(self, i: int, value: Any, result_dtype: str, standard: Any, params: dict) -> str:
        one = Reference(self._refs, np.asarray(int(i), dtype=np.int64))

        def covered_as(converted: Any) -> bool:
            # Covered, by a check that could see a lost term: never a hint towards a vacuous check (B >= S, which
            # covers everything, 0 included), the rule of exactref::suggest_narrower_format and the CLI's hint.
            try:
                v = one.verdict(converted, standard, **params)
            except (ValueError, TypeError):  # a standard that does not apply to that format
                return False
            return bool(v.covered) and not bool(v.vacuous)
        return narrower_format_hint(np.asarray(value), result_dtype, covered_as)

    def verdict(self, result: Any, standard: Any = "any_order", *, dtype: Any = None, **params: Any) -> Any:
        """The full verdict (an exactref.Verdict) for the worst result: the first violation with the largest ratio,
        or the largest ratio when all are covered. See covers() for arguments.

        Fields: covered, standard (its name), result_dtype, result, exact (every digit), error_exact, error, bound
        (B rounded upward), ratio (|r - s| / B), ulps, reason (when a special-value rule decided); what the check
        can see: vacuous (B >= S or B infinite: no lost or doubled part of the terms can be seen, not even a result
        of 0; never for exact and faithful), sensitivity (an exactref.Sensitivity: of_sum = B/|s|, of_abs_sum = B/S,
        of_largest = B/max|x_i|, nan for dots and matrix products; zeros for exact and faithful), advice (when
        vacuous: a tighter standard or a smaller n that would see something). message() is the multi-line text
        assert_covers shows, with a "sees" line. For a rejected result that is exactly a value of a narrower format
        covered in that format (a float32 result passed as a Python float), r.hint(result, standard) gives the
        hint line that assert_covers adds; the Verdict itself judges the format it was given.
        Raises ValueError when there is no result to judge (an empty result, or an empty Reference)."""
        shape, index, flat, as_dtype, model, covered, ratio = self._detail(result, standard, params, dtype)
        if flat.size == 0:
            raise ValueError(f"verdict: no results to judge: the results have shape {shape} (the references "
                             f"{self.shape}); covers() of an empty result is an empty array")
        worst = worst_position(covered, ratio)
        return self._refs.verdict(int(index[worst]), flat, worst, as_dtype, model)

    def explain(self, result: Any, *, any_zero_sign: bool = False) -> List[Any]:
        """Every standard of a fixed list judged on one result (exactref::explain, covers.h): exact, faithful,
        tree:ceil(log2 n), split_k:s for s = 2, 4, ..., 256 (s < n), any_order, directed:any_order,
        mixed:float32:OUT for float16/bfloat16 results, and each structure the Reference was built with (plain and
        directed). The ones that cover the result come first, tightest first (exact, then faithful, then by bound),
        then the ones that reject it, by ratio. Standards that do not apply (a format that cannot hold the terms)
        are left out.

        result: one value (a scalar or an array of one element; its dtype is the result format) against a
            Reference of one element (0-d, or r[i] of an array Reference).
        any_zero_sign: True judges every candidate with either sign of an exact zero (as covers(...,
            any_zero_sign=True)): exact and faithful then take +0.0 for a sum of -0.0 terms, numpy's answer.
        Returns a list of exactref.Verdict (see verdict(): standard, covered, bound, ratio, vacuous, sensitivity,
        ...).
        Raises ValueError when the Reference or the result has more than one element.

        >>> [(v.standard, v.covered) for v in er.sum(x).explain(np.float32(er.fold_sum(x)))][:2]
        [('tree:14', True), ('split_k:128', True)]
        """
        if self.size != 1:
            raise ValueError(f"explain: the Reference has shape {self.shape}: explain judges one result against one "
                             f"reference; pick an element, r[i].explain(result[i])")
        shape, index, flat, name = self._pair(result)
        if flat.size != 1:
            raise ValueError(f"explain: the result has shape {shape}: pass one result (a scalar)")
        as_dtype = "bfloat16" if name == "bfloat16" else None
        return list(self._refs.explain(int(index[0]), flat, 0, as_dtype, _flag(any_zero_sign, "any_zero_sign")))

    def bound(self, standard: Any = "any_order", *, dtype: Any = None, **params: Any) -> Any:
        """The bound B of `standard` for results of `dtype`, rounded upward to binary64 (never below the exact B).

        dtype: the format the result is computed in (numpy's names, or 'bfloat16'): a standard's bound depends on
            it (u = 2^-p of that format, DESIGN §3), so a float32 result of bfloat16 terms has the float32 bound,
            bound("any_order", dtype="float32") = (n-1)·2^-24·S, not the bfloat16 one. A Reference does not know the
            result's format, so the default is the input's dtype (mixed: its out=); covers(), verdict(), ratios()
            and assert_covers always use the result's dtype (or their dtype=), which is the bound verdict().bound
            shows.
        Returns a float for a 0-d
        Reference, else a float64 array. 0 for exact and faithful; inf when the model gives no finite bound
        (k·u >= 1 in γ_k); nan when special terms decide (no bound applies).

        >>> er.sum(values).bound("any_order")     # 10,000 float32 N(0,1) values: (n-1)·2^-24·Σ|x|
        4.722030147...
        """
        model = self._standard(standard, params, self.dtype if dtype is None else dtype_name(dtype))
        if dtype is None:
            dtype = model.out if model.kind == "mixed" and model.out else self.dtype
        name = dtype_name(dtype)
        bounds = self._refs.bound(self._flat(), model, name)
        return float(bounds[0]) if self.ndim == 0 else bounds.reshape(self.shape)

    def ulp_error(self, result: Any) -> np.ndarray:
        """(r - s) / ulp(RN(s)) in the result's format for each result (see exactref.ulp_error); result shapes as
        in covers()."""
        shape, index, flat, name = self._pair(result)
        errors = self._refs.ulp_error(index, flat, "bfloat16" if name == "bfloat16" else None)
        return errors.reshape(shape)

    # ---- pickling ----------------------------------------------------------------------------------------------------

    def __reduce__(self) -> Tuple[Any, Tuple[Any, ...]]:
        """Pickles the exact state of the elements this Reference uses (not the whole list it indexes into): each
        element's n, term dtype, dot-product fields, both accumulators (value, term count, NaN seen, +Inf and
        -Inf counts, signed-zero state), its largest term and its structured bounds, about 100 bytes per element, so multiprocessing and pytest-xdist can send
        References. A matmul Reference is built element by element for this; pickle r[idx] to send a sample of a
        large product. Unpickling raises ValueError for a state exactref did not write."""
        used, inverse = np.unique(self._index, return_inverse=True)
        states = self._refs.export_states(np.ascontiguousarray(used, dtype=np.int64))
        return _rebuild, (self._refs.term_dtype, self._refs.is_dot, states,
                          np.asarray(inverse, dtype=np.int64).reshape(self.shape), self._refs.is_compact)

    def __repr__(self) -> str:
        kind = "dot" if self.is_dot else "sum"
        if self.ndim == 0:
            return f"<exactref.Reference {kind} of {self.count} {self.dtype} terms: {self.decimal}>"
        return f"<exactref.Reference {kind}, shape {self.shape}, {self.dtype} terms>"


#: The C++ name of an array of references (reference_array); the same class here.
ReferenceArray = Reference


def _rebuild(term_dtype: str, is_dot: bool, states: Any, index: np.ndarray, compact: bool = False) -> Reference:
    """Unpickles a Reference: the C++ side rebuilds each element and checks that it reads back the same state; a
    compact one (scatter-adds, scans, axis sums) goes back into compact cells (pickles written without the flag load
    as full references)."""
    return Reference(_core.references_from_states(term_dtype, is_dot, states, compact), index)


def results_shape(result: Tuple[int, ...], reference: Tuple[int, ...]) -> Tuple[int, ...]:
    """The shape covers() judges for results of shape `result` against references of shape `reference`:

      result == reference, or result broadcasts TO reference (a scalar, a row): reference;
      result == (k, ..., *reference), a stack of runs: result.
    Any other shape would broadcast the references themselves (result (4, 1) against references (4,) gives (4, 4),
    every result against every reference): ValueError, naming both shapes."""
    ref_ndim = len(reference)
    if len(result) > ref_ndim and tuple(result[len(result) - ref_ndim:]) == tuple(reference):
        return tuple(result)  # a stack of runs
    try:
        joint = np.broadcast_shapes(result, reference)
    except ValueError:
        raise ValueError(f"result of shape {result} does not match the reference's shape {reference}: pass one "
                         f"result per reference element (shape {reference}), or a stack of k runs (shape "
                         f"(k, *{reference}))") from None
    if joint == tuple(reference):
        return joint
    raise ValueError(f"result of shape {result} would broadcast the reference's shape {reference} to {joint}, "
                     f"judging results against references they were not computed for: pass one result per reference "
                     f"element (shape {reference}{_reshape_advice(tuple(result), tuple(reference))}), or a stack of "
                     f"k runs (shape (k, *{reference}))")


def _reshape_advice(result: tuple, reference: tuple) -> str:
    """How to get a result of the reference's shape. When the two differ only by axes of length one and the
    Reference holds the extra ones (built with keepdims=True, the result computed without), squeezing the result
    would not help: reshape it, or reduce with keepdims=True too. Otherwise squeeze it (a keepdims=True result
    against a keepdims=False Reference)."""
    if [d for d in result if d != 1] == [d for d in reference if d != 1] and reference.count(1) > result.count(1):
        return (f": result.reshape({reference}); the Reference keeps the reduced axes (keepdims=True): compute the "
                f"result with keepdims=True as well, or build the Reference with keepdims=False")
    return ": np.squeeze(result), or keepdims=False in the reduction that computed it"


def worst_position(covered: np.ndarray, ratio: np.ndarray) -> int:
    """Flat index of the worst element: violations first, then the largest ratio, the first on ties (NaN as 0)."""
    ratio = np.where(np.isnan(ratio), 0.0, ratio)
    if not covered.all():
        ratio = np.where(covered, -1.0, ratio)
    return int(np.argmax(ratio))
