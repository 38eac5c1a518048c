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
    def kind(self) -> str: ...

    @property
    def height(self) -> int: ...

    @property
    def chunks(self) -> int: ...

    @property
    def combine(self) -> str: ...

    @property
    def acc(self) -> str | None: ...

    @property
    def out(self) -> str | None: ...

    @property
    def directed(self) -> bool: ...

    @property
    def fma(self) -> bool: ...

    @property
    def allow_negative_zero(self) -> bool: ...

    @property
    def name(self) -> str:
        """
        The CLI spelling: 'tree:5', 'split_k:4:pairwise', 'directed:any_order'.
        """

    def __repr__(self) -> str: ...

    def __eq__(self, arg: Standard, /) -> bool: ...

    def __getstate__(self) -> tuple[str, int, int, str, str | None, str | None, bool, bool, bool]: ...

    def __setstate__(self, arg: tuple[str, int, int, str, str | None, str | None, bool, bool, bool], /) -> None: ...

def exact() -> Standard: ...

def faithful() -> Standard: ...

def any_order() -> Standard: ...

def tree(height: int) -> Standard: ...

def split_k(chunks: int, combine: str) -> Standard: ...

def mixed(acc: str, out: str) -> Standard: ...

def directed(base: Standard) -> Standard: ...

def parse_standard(text: str) -> Standard: ...

def with_options(standard: Standard, allow_negative_zero: bool, fma: bool) -> Standard: ...

class Verdict:
    """
    The decision of covers() for one result and the exact numbers behind it (exactref/covers.h).
    """

    @property
    def covered(self) -> bool: ...

    @property
    def standard(self) -> str: ...

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

    def exact_decimal(self, i: int) -> str: ...

    def nearest_bits(self, index: Annotated[NDArray[numpy.int64], dict(shape=(None,), order='C', device='cpu', writable=False)], dtype: str, rounding: str) -> object: ...

    def bound(self, index: Annotated[NDArray[numpy.int64], dict(shape=(None,), order='C', device='cpu', writable=False)], standard: Standard, dtype: str) -> object: ...

    def covers(self, index: Annotated[NDArray[numpy.int64], dict(shape=(None,), order='C', device='cpu', writable=False)], results: Annotated[NDArray, dict(writable=False)], as_dtype: str | None, standard: Standard) -> object: ...

    def covers_detail(self, index: Annotated[NDArray[numpy.int64], dict(shape=(None,), order='C', device='cpu', writable=False)], results: Annotated[NDArray, dict(writable=False)], as_dtype: str | None, standard: Standard) -> object: ...

    def verdict(self, i: int, results: Annotated[NDArray, dict(writable=False)], j: int, as_dtype: str | None, standard: Standard) -> Verdict: ...

    def ulp_error(self, index: Annotated[NDArray[numpy.int64], dict(shape=(None,), order='C', device='cpu', writable=False)], results: Annotated[NDArray, dict(writable=False)], as_dtype: str | None) -> object: ...

    def export_states(self, index: Annotated[NDArray[numpy.int64], dict(shape=(None,), order='C', device='cpu', writable=False)]) -> list[tuple[int, str, bool, bool, int, bool, tuple[bool, bytes, int, int, int, int, bool, bool, bool], tuple[bool, bytes, int, int, int, int, bool, bool, bool]]]:
        """
        Internal (pickling): the exact state of each indexed reference, every field.
        """

def references_from_states(term_dtype: str, is_dot: bool, states: Sequence[tuple[int, str, bool, bool, int, bool, tuple[bool, bytes, int, int, int, int, bool, bool, bool], tuple[bool, bytes, int, int, int, int, bool, bool, bool]]]) -> ReferenceList:
    """
    Internal (unpickling): rebuilds references from export_states(); ValueError for a state that does not read back the same.
    """

def sum(x: Annotated[NDArray, dict(writable=False)], as_dtype: str | None, reduce: int) -> ReferenceList:
    """
    Internal: exact references of x summed over its last `reduce` axes (one per remaining element, C order).
    """

def host_view(x: Annotated[NDArray, dict(writable=False)], as_dtype: str | None, what: str) -> tuple[object, str]: ...

def dot(x: Annotated[NDArray, dict(writable=False)], y: Annotated[NDArray, dict(writable=False)], as_dtype: str | None, initial: Annotated[NDArray, dict(writable=False)] | None) -> ReferenceList: ...

def matmul(batch: Sequence[tuple[Annotated[NDArray, dict(writable=False)], Annotated[NDArray, dict(writable=False)], Annotated[NDArray, dict(writable=False)] | None]], as_dtype: str | None, method: str) -> ReferenceList: ...

def tree_reduce(x: Annotated[NDArray, dict(writable=False)], as_dtype: str | None, op: str, shape: str, acc: str | None, mask: Annotated[NDArray[numpy.bool_], dict(shape=(None,), order='C', device='cpu', writable=False)] | None) -> tuple[int, str]: ...

def tree_height(shape: str, n: int) -> int: ...

def tree_shape_name(shape: str) -> str: ...

def fold_sum(x: Annotated[NDArray, dict(writable=False)], as_dtype: str | None, acc: str | None) -> tuple[int, str]: ...

def kahan_sum(x: Annotated[NDArray, dict(writable=False)], as_dtype: str | None, acc: str | None) -> tuple[int, str]: ...

def pairwise_sum(x: Annotated[NDArray, dict(writable=False)], as_dtype: str | None, acc: str | None) -> tuple[int, str]: ...
