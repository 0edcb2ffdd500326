from typing import Any

import numpy as np

_Array = np.ndarray[Any, np.dtype[Any]]

class LinAlgError(ValueError): ...

def solve_triangular(
    a: _Array,
    b: _Array,
    trans: int | str = ...,
    lower: bool = ...,
    unit_diagonal: bool = ...,
    overwrite_b: bool = ...,
    check_finite: bool = ...,
) -> _Array: ...
def cho_solve(
    c_and_lower: tuple[_Array, bool], b: _Array, overwrite_b: bool = ..., check_finite: bool = ...
) -> _Array: ...
def solve(
    a: _Array, b: _Array, lower: bool = ..., overwrite_a: bool = ..., overwrite_b: bool = ...,
    check_finite: bool = ..., assume_a: str = ...,
) -> _Array: ...
