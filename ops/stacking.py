"""NumPy's stacking shortcuts and the rank raisers they rest on: `atleast_1d`,
`atleast_2d`, `atleast_3d`, `hstack`, `vstack`, `dstack`, `column_stack`.

Each is new axes (`expand_dims`) and one `concatenate`, as in NumPy's own definitions,
so it differentiates, vectorizes and compiles like those; lengths may be unknown.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import overload

from fgraph import Variable
from fgraph.operators import TensorLike
from ops.convert import as_tensor
from ops.dimshuffle import expand_dims
from ops.join import concatenate


def _at_least_1d(variable: Variable) -> Variable:
    return expand_dims(variable, 0) if variable.ndim == 0 else variable


def _at_least_2d(variable: Variable) -> Variable:
    """Scalars become (1, 1), vectors (1, N), as `numpy.atleast_2d`."""
    if variable.ndim == 0:
        return expand_dims(variable, (0, 1))
    return expand_dims(variable, 0) if variable.ndim == 1 else variable


def _at_least_3d(variable: Variable) -> Variable:
    """Scalars become (1, 1, 1), vectors (1, N, 1), matrices (M, N, 1), as
    `numpy.atleast_3d`."""
    if variable.ndim == 0:
        return expand_dims(variable, (0, 1, 2))
    if variable.ndim == 1:
        return expand_dims(variable, (0, 2))
    return expand_dims(variable, 2) if variable.ndim == 2 else variable


def _each(
    raise_rank: Callable[[Variable], Variable], name: str, arrays: Sequence[TensorLike]
) -> list[Variable]:
    return [raise_rank(as_tensor(array, name=name)) for array in arrays]


def _one_or_all(results: list[Variable]) -> Variable | tuple[Variable, ...]:
    return results[0] if len(results) == 1 else tuple(results)


@overload
def atleast_1d(array: TensorLike, /) -> Variable: ...
@overload
def atleast_1d(
    array: TensorLike, other: TensorLike, /, *more: TensorLike
) -> tuple[Variable, ...]: ...
def atleast_1d(*arrays: TensorLike) -> Variable | tuple[Variable, ...]:
    """Each input with at least one axis (a scalar becomes a vector of length 1), as
    `numpy.atleast_1d`: one result for one input, a tuple for several."""
    return _one_or_all(_each(_at_least_1d, "atleast_1d", arrays))


@overload
def atleast_2d(array: TensorLike, /) -> Variable: ...
@overload
def atleast_2d(
    array: TensorLike, other: TensorLike, /, *more: TensorLike
) -> tuple[Variable, ...]: ...
def atleast_2d(*arrays: TensorLike) -> Variable | tuple[Variable, ...]:
    """Each input with at least two axes, new ones in front (a vector of length N
    becomes (1, N)), as `numpy.atleast_2d`: one result for one input, a tuple for
    several."""
    return _one_or_all(_each(_at_least_2d, "atleast_2d", arrays))


@overload
def atleast_3d(array: TensorLike, /) -> Variable: ...
@overload
def atleast_3d(
    array: TensorLike, other: TensorLike, /, *more: TensorLike
) -> tuple[Variable, ...]: ...
def atleast_3d(*arrays: TensorLike) -> Variable | tuple[Variable, ...]:
    """Each input with at least three axes, as `numpy.atleast_3d`: a vector of length N
    becomes (1, N, 1), an (M, N) matrix (M, N, 1); one result for one input, a tuple
    for several."""
    return _one_or_all(_each(_at_least_3d, "atleast_3d", arrays))


def hstack(tensors: Sequence[TensorLike]) -> Variable:
    """Tensors joined column-wise, as `numpy.hstack`: along axis 0 for vectors (and
    scalars, made vectors), along axis 1 otherwise."""
    variables = _each(_at_least_1d, "hstack", tensors)
    if not variables:
        raise ValueError("hstack: needs at least one tensor")
    return concatenate(variables, axis=0 if variables[0].ndim == 1 else 1)


def vstack(tensors: Sequence[TensorLike]) -> Variable:
    """Tensors joined row-wise (along axis 0) after `atleast_2d`, as `numpy.vstack`:
    vectors of length N become rows (1, N)."""
    variables = _each(_at_least_2d, "vstack", tensors)
    if not variables:
        raise ValueError("vstack: needs at least one tensor")
    return concatenate(variables, axis=0)


def dstack(tensors: Sequence[TensorLike]) -> Variable:
    """Tensors joined depth-wise (along axis 2) after `atleast_3d`, as `numpy.dstack`."""
    variables = _each(_at_least_3d, "dstack", tensors)
    if not variables:
        raise ValueError("dstack: needs at least one tensor")
    return concatenate(variables, axis=2)


def column_stack(tensors: Sequence[TensorLike]) -> Variable:
    """Vectors as the columns of a matrix, joined along axis 1 with matrices (and
    higher ranks) as they are, as `numpy.column_stack`; scalars count as vectors of
    length 1."""
    variables = [as_tensor(tensor, name="column_stack") for tensor in tensors]
    if not variables:
        raise ValueError("column_stack: needs at least one tensor")
    columns = [expand_dims(v, 1) if v.ndim == 1 else _at_least_2d(v) for v in variables]
    return concatenate(columns, axis=1)
