"""
exactref._core: the C++ exact references, covers() and error models (internal; use exactref).
"""

from collections.abc import Sequence
from typing import Annotated

import numpy
from numpy.typing import NDArray


class Standard:
    """
    An error model: which results a correct implementation may return (exactref/standard.h). Build one with exactref.standard(name, **params).
    """

    @property
    def name(self) -> str:
        """
        The CLI spelling, which exactref.standard() reads back: 'tree:5', 'split_k:4:pairwise', 'directed:any_order', 'levels:fold/4,any', 'mixed:float32:float16:levels:fold/8,any+fma'.
        """

    @property
    def rule(self) -> str:
        """
        How it decides: 'exact' (r == RN(s)), 'faithful' (RD(s) or RU(s)) or 'bound' (|r - s| <= B).
        """

    @property
    def levels(self) -> list[tuple[str, str, int, int | None]]:
        """
        The reduction's structure from the leaves up, one (order, groups, size, height) per level: order 'fold', 'tree' or 'any'; groups 'consecutive' (':N'), 'chunks' ('/N'), 'interleaved' ('%N') or 'rest' (the last level); size the N (0 for rest); height a tree level's height, or None. [] for exact and faithful. 'levels:fold/4,any' -> [('fold', 'chunks', 4, None), ('any', 'rest', 0, None)].
        """

    @property
    def structure(self) -> str | None:
        """
        The structure alone in the levels spelling ('levels:fold/4,any'; any_order is 'levels:any'), None for exact and faithful.
        """

    @property
    def structured(self) -> bool:
        """
        True when the bound comes from the data's group sums (levels:...): the reference must be built with it, er.sum(x, structure=...).
        """

    @property
    def kind(self) -> str:
        """
        The classic name, derived: 'exact', 'faithful', 'any_order', 'tree', 'split_k', 'mixed' or 'levels' (a structured standard).
        """

    @property
    def height(self) -> int:
        """tree:H: H; 0 for every other standard."""

    @property
    def chunks(self) -> int:
        """split_k:S: S; 0 for every other standard."""

    @property
    def combine(self) -> str:
        """split_k: 'pairwise' or 'any_order'; 'any_order' for the others."""

    @property
    def acc(self) -> str | None:
        """mixed: the accumulation dtype name, else None."""

    @property
    def out(self) -> str | None:
        """mixed: the output (result) dtype name, else None."""

    @property
    def directed(self) -> bool: ...

    @property
    def ftz(self) -> bool:
        """
        True for ftz: (flush-to-zero hardware: subnormal inputs and results flushed; sums only).
        """

    @property
    def fma(self) -> bool: ...

    @property
    def any_zero_sign(self) -> bool: ...

    def __repr__(self) -> str: ...

    def __eq__(self, arg: Standard, /) -> bool: ...

    def __getstate__(self) -> tuple[str, bool]: ...

    def __setstate__(self, arg: tuple, /) -> None: ...

def exact() -> Standard: ...

def faithful() -> Standard: ...

def any_order() -> Standard: ...

def tree(height: int) -> Standard: ...

def split_k(chunks: int, combine: str) -> Standard: ...

def mixed(acc: str, out: str, base: Standard | None) -> Standard: ...

def directed(base: Standard) -> Standard: ...

def ftz(base: Standard) -> Standard: ...

def parse_standard(text: str) -> Standard: ...

def with_options(standard: Standard, any_zero_sign: bool, fma: bool) -> Standard: ...

class Sensitivity:
    """
    What a check can see (exactref/covers.h): the bound B relative to |s|, to S = Σ|t_i| (T for dots) and to the largest term.
    """

    @property
    def of_sum(self) -> float:
        """B / |s| (inf when s = 0 < B)"""

    @property
    def of_abs_sum(self) -> float:
        """B / S (>= 1: the check is vacuous)"""

    @property
    def of_largest(self) -> float:
        """
        B / max|t_i|; nan when the reference does not know its largest term (dots, matrix products)
        """

    def __repr__(self) -> str: ...

class Verdict:
    """
    The decision of covers() for one result and the exact numbers behind it (exactref/covers.h).
    """

    @property
    def covered(self) -> bool: ...

    @property
    def standard(self) -> str:
        """the standard's name"""

    @property
    def result_dtype(self) -> str: ...

    @property
    def result(self) -> str:
        """r: shortest round-trip decimal and C99 hex float"""

    @property
    def exact(self) -> str:
        """s: the exact sum, every decimal digit"""

    @property
    def error_exact(self) -> str:
        """r - s exactly, as a decimal ('' when r or s is not finite)"""

    @property
    def error(self) -> float:
        """r - s rounded to nearest binary64"""

    @property
    def bound(self) -> float:
        """B rounded upward to binary64 (never below the exact bound)"""

    @property
    def ratio(self) -> float:
        """|r - s| / B (0 when both are 0, inf when B = 0 < |r - s|)"""

    @property
    def ulps(self) -> float:
        """(r - s) / ulp(RN(s)) in the result's format"""

    @property
    def reason(self) -> str: ...

    @property
    def vacuous(self) -> bool:
        """
        B >= S (or B infinite): no lost or doubled part of the terms can be seen, not even a result of 0 (never for exact and faithful)
        """

    @property
    def sensitivity(self) -> Sensitivity:
        """B against |s|, S and the largest term (exactref.Sensitivity)"""

    @property
    def advice(self) -> str:
        """
        when vacuous: a tighter standard or a smaller n that would see something
        """

    def __bool__(self) -> bool: ...

    def message(self) -> str: ...

    def __str__(self) -> str: ...

    def __repr__(self) -> str: ...

class ReferenceList:
    """Internal: a flat list of exact references (use exactref.Reference)."""

    def __len__(self) -> int: ...

    @property
    def term_dtype(self) -> str: ...

    @property
    def is_dot(self) -> bool: ...

    def counts(self, index: Annotated[NDArray[numpy.int64], dict(shape=(None,), order='C', device='cpu', writable=False)]) -> object: ...

    def exact_parts(self, i: int) -> tuple[str, bool, bytes, int]: ...

    def abs_sum_parts(self, i: int) -> tuple[str, bool, bytes, int]: ...

    def structures(self, i: int) -> list[str]: ...

    def exact_decimal(self, i: int) -> str: ...

    def nearest_value(self, i: int, dtype: str, rounding: str) -> float: ...

    def nearest_bits(self, index: Annotated[NDArray[numpy.int64], dict(shape=(None,), order='C', device='cpu', writable=False)], dtype: str, rounding: str) -> object: ...

    def bound(self, index: Annotated[NDArray[numpy.int64], dict(shape=(None,), order='C', device='cpu', writable=False)], standard: Standard, dtype: str) -> object: ...

    def covers(self, index: Annotated[NDArray[numpy.int64], dict(shape=(None,), order='C', device='cpu', writable=False)], results: Annotated[NDArray, dict(writable=False)], as_dtype: str | None, standard: Standard) -> object: ...

    @property
    def is_compact(self) -> bool: ...

    @property
    def judges_whole(self) -> bool: ...

    def covers_whole(self, results: Annotated[NDArray, dict(writable=False)], as_dtype: str | None, standard: Standard) -> object: ...

    def covers_detail(self, index: Annotated[NDArray[numpy.int64], dict(shape=(None,), order='C', device='cpu', writable=False)], results: Annotated[NDArray, dict(writable=False)], as_dtype: str | None, standard: Standard) -> object: ...

    def verdict(self, i: int, results: Annotated[NDArray, dict(writable=False)], j: int, as_dtype: str | None, standard: Standard) -> Verdict: ...

    def explain(self, i: int, results: Annotated[NDArray, dict(writable=False)], j: int, as_dtype: str | None, any_zero_sign: bool = False) -> list[Verdict]: ...

    def ulp_error(self, index: Annotated[NDArray[numpy.int64], dict(shape=(None,), order='C', device='cpu', writable=False)], results: Annotated[NDArray, dict(writable=False)], as_dtype: str | None) -> object: ...

    def export_states(self, index: Annotated[NDArray[numpy.int64], dict(shape=(None,), order='C', device='cpu', writable=False)]) -> list[tuple[int, str, bool, bool, int, bool, tuple[bool, bytes, int, int, int, int, bool, bool, bool], tuple[bool, bytes, int, int, int, int, bool, bool, bool], float | None, list[tuple[str, list[float], int]]]]:
        """
        Internal (pickling): the exact state of each indexed reference, every field.
        """

def references_from_states(term_dtype: str, is_dot: bool, states: Sequence[tuple[int, str, bool, bool, int, bool, tuple[bool, bytes, int, int, int, int, bool, bool, bool], tuple[bool, bytes, int, int, int, int, bool, bool, bool], float | None, Sequence[tuple[str, Sequence[float], int]]]], compact: bool = False) -> ReferenceList:
    """
    Internal (unpickling): rebuilds references from export_states(); ValueError for a state that does not read back the same. compact: into a compact_reference_array (48 bytes per element), as the pickled list was, where every state fits one (sums without structured bounds).
    """

def sum(x: Annotated[NDArray, dict(writable=False)], as_dtype: str | None, reduce: int, structures: Sequence[Standard], threads: int, compact: bool = True) -> ReferenceList:
    """
    Internal: exact references of x summed over its last `reduce` axes (one per remaining element, C order), each with the data bounds of the structured standards `structures`; contiguous blocks on up to `threads` threads (0: EXACTREF_NUM_THREADS, OMP_NUM_THREADS, every core). Without structures and with compact (the default) they are kept in a compact_reference_array (~56 bytes per element), else as full references (~2.3 KB each; tests and benchmarks compare the two).
    """

def sum_contiguous(x: object, threads: int) -> object:
    """
    Internal: the exact reference of a whole C-contiguous native float64/32/16 array read in place, or None for any other input (er.sum's fast path).
    """

def host_view(x: Annotated[NDArray, dict(writable=False)], as_dtype: str | None, what: str) -> tuple[object, str]: ...

def dot(x: Annotated[NDArray, dict(writable=False)], y: Annotated[NDArray, dict(writable=False)], as_dtype: str | None, initial: Annotated[NDArray, dict(writable=False)] | None, structures: Sequence[Standard], threads: int) -> ReferenceList: ...

def matmul(a: Annotated[NDArray, dict(writable=False)], b: Annotated[NDArray, dict(writable=False)], c: Annotated[NDArray, dict(writable=False)] | None, as_dtype: str | None, method: str, threads: int) -> ReferenceList: ...

def matmul_engine() -> str: ...

def segment_sum(values: Annotated[NDArray, dict(writable=False)], segment_ids: Annotated[NDArray, dict(shape=(None,), order='C', device='cpu', writable=False)], num_segments: int, initial: Annotated[NDArray, dict(writable=False)] | None, as_dtype: str | None, threads: int = 0) -> ReferenceList:
    """
    Internal: exactref::segment_sum (ids outside [0, num_segments) dropped, as jax.ops.segment_sum).
    """

def scatter_add(initial: Annotated[NDArray, dict(writable=False)], initial_shape: Sequence[int], dim: int, index: Annotated[NDArray, dict(shape=(None,), order='C', device='cpu', writable=False)], index_shape: Sequence[int], src: Annotated[NDArray, dict(writable=False)], src_shape: Sequence[int], as_dtype: str | None, threads: int = 0) -> ReferenceList:
    """Internal: exactref::scatter_add (torch.Tensor.scatter_add_)."""

def index_add(initial: Annotated[NDArray, dict(writable=False)], initial_shape: Sequence[int], dim: int, index: Annotated[NDArray, dict(shape=(None,), order='C', device='cpu', writable=False)], source: Annotated[NDArray, dict(writable=False)], source_shape: Sequence[int], as_dtype: str | None, threads: int = 0) -> ReferenceList:
    """Internal: exactref::index_add (torch.Tensor.index_add_)."""

def add_at(initial: Annotated[NDArray, dict(writable=False)], indices: Annotated[NDArray, dict(shape=(None,), order='C', device='cpu', writable=False)], values: Annotated[NDArray, dict(writable=False)], as_dtype: str | None, threads: int = 0) -> ReferenceList:
    """Internal: exactref::add_at (np.add.at on a 1-D array)."""

def bincount(x: Annotated[NDArray, dict(shape=(None,), order='C', device='cpu', writable=False)], weights: Annotated[NDArray, dict(writable=False)], minlength: int, as_dtype: str | None, threads: int = 0) -> ReferenceList:
    """Internal: exactref::bincount (np.bincount with weights)."""

def embedding_bag(weight: Annotated[NDArray, dict(writable=False)], num_embeddings: int, dim: int, indices: Annotated[NDArray, dict(shape=(None,), order='C', device='cpu', writable=False)], offsets: Annotated[NDArray, dict(shape=(None,), order='C', device='cpu', writable=False)], include_last_offset: bool, as_dtype: str | None, threads: int = 0) -> ReferenceList:
    """
    Internal: exactref::embedding_bag_sum (torch.nn.functional.embedding_bag, mode='sum').
    """

def scan(x: Annotated[NDArray, dict(writable=False)], shape: Sequence[int], axis: int, inclusive: bool, as_dtype: str | None) -> ReferenceList:
    """Internal: exactref::inclusive_scan / exclusive_scan along axis."""

def tree_reduce(x: Annotated[NDArray, dict(writable=False)], as_dtype: str | None, op: str, shape: str, acc: str | None, mask: Annotated[NDArray[numpy.bool_], dict(shape=(None,), order='C', device='cpu', writable=False)] | None) -> tuple[int, str]: ...

def tree_height(shape: str, n: int) -> int: ...

def tree_shape_name(shape: str) -> str: ...

def fold_sum(x: Annotated[NDArray, dict(writable=False)], as_dtype: str | None, acc: str | None) -> tuple[int, str]: ...

def kahan_sum(x: Annotated[NDArray, dict(writable=False)], as_dtype: str | None, acc: str | None) -> tuple[int, str]: ...

def pairwise_sum(x: Annotated[NDArray, dict(writable=False)], as_dtype: str | None, acc: str | None) -> tuple[int, str]: ...

def order_free(n: int, dtype: str, seed: int, structure: Standard | None) -> object:
    """
    Order-free terms (exactref/testing.h) as raw bits: uint64/uint32/uint16 for float64/float32/float16 and bfloat16.
    """

def order_free_max_terms(dtype: str) -> int: ...
