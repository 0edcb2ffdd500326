"""NumPy's order statistics and covariances: `median`, `quantile`, `percentile` (NumPy's
default method, "linear"), `cov`, `corrcoef`.

All are compositions: the order statistics sort along the reduced axes (moved last and
merged into one) and read the neighbours of each quantile's position with an index,
so they compile like `sort` and indexing do and differentiate through the sort (the
cotangent goes back to the elements the value interpolates between, as NumPy's value
is piecewise linear in them); the covariances are a centring and a matrix product.
The formulas are NumPy's own, operation for operation, so values agree to the last
bit where the summation order does.
"""

from __future__ import annotations

import numpy as np

from fgraph import DTypeError, ShapeError, Variable
from fgraph.dtypes import is_complex, is_inexact
from fgraph.operators import Axis, TensorLike
from ops.convert import as_tensor
from ops.dimshuffle import DimShuffle, expand_dims, transpose
from ops.elementwise_functions import cast, clip, eq, floor, ge, isnan, maximum, mod, sqrt, where
from ops.join import concatenate
from ops.matmul_op import matmul
from ops.numpy_functions import diagonal
from ops.reduction import mean, merge_axes_last, normalize_axes, restore_axes
from ops.shape_vector import shape_i
from ops.sort_ops import sort


def _ordered(a: TensorLike, axis: Axis, what: str) -> tuple[Variable, Variable, tuple[int, ...]]:
    """The input as NumPy's statistics take it (integers and bools as float64), and its
    values sorted along the reduced `axes` merged into the last one, and those axes."""
    variable = as_tensor(a, name=what)
    if not is_inexact(variable.dtype):
        variable = cast(variable, "float64")
    if is_complex(variable.dtype):
        raise DTypeError(f"{what}: complex values have no order, got {variable.type}")
    axes = normalize_axes(axis, variable.ndim, what)
    merged = merge_axes_last(variable, axes)
    if merged.type.shape[-1] == 0:
        raise ShapeError(f"{what}: the reduced axes {axes} of {variable.type} hold no elements")
    return variable, sort(merged), axes


def _nan_where_any(ordered: Variable, value: Variable, trailing: int) -> Variable:
    """`value` with NaN for the groups holding a NaN (sorted last), as NumPy's statistics
    give; `trailing` axes of `value` (the quantiles') come after the groups' axes."""
    has_nan = isnan(ordered[..., -1])
    if trailing:
        has_nan = DimShuffle((*range(has_nan.ndim), *(None,) * trailing))(has_nan)
    return where(has_nan, np.nan, value)


def median(a: TensorLike, axis: Axis = None, keepdims: bool = False) -> Variable:
    """The median over `axis` (all axes by default; an int or a tuple), as `numpy.median`:
    the middle element of the sorted values, or the mean of the two middle ones; NaN for
    groups holding a NaN; integers give float64. An empty group is an error (NumPy
    gives NaN with a warning). The gradient goes to the middle element(s)."""
    variable, ordered, axes = _ordered(a, axis, "median")
    length = ordered.type.shape[-1]
    if length is not None:
        upper = ordered[..., length // 2]
        middle = upper if length % 2 else (ordered[..., (length - 1) // 2] + upper) / 2
    else:
        count = shape_i(ordered, -1)
        upper = ordered[..., count // 2]
        lower = ordered[..., (count - 1) // 2]
        middle = where(eq(mod(count, 2), 1), upper, (lower + upper) / 2)
    result = _nan_where_any(ordered, middle, 0)
    return restore_axes(result, axes, variable.ndim) if keepdims else result


def quantile(
    a: TensorLike, q: TensorLike, axis: Axis = None, method: str = "linear",
    keepdims: bool = False,
) -> Variable:
    """The `q`-th quantiles (0 <= q <= 1) over `axis`, as `numpy.quantile` with its
    default method "linear": the sorted values interpolated at position `(n - 1) q`
    (NumPy's `_lerp`, bit for bit). `q`'s axes come first in the result; NaN for groups
    holding a NaN; a Python float `q` keeps a float32 input float32. An empty group is an
    error, as in NumPy. Levels given as a variable are not checked (NumPy raises): one
    outside [0, 1] gives the end value. Differentiable in `a` (through the sort) and in
    `q`."""
    return _quantile(a, q, axis, method, keepdims, "quantile", 1)


def percentile(
    a: TensorLike, q: TensorLike, axis: Axis = None, method: str = "linear",
    keepdims: bool = False,
) -> Variable:
    """The `q`-th percentiles (0 <= q <= 100), as `numpy.percentile`: `quantile` at
    `q / 100`."""
    return _quantile(a, q, axis, method, keepdims, "percentile", 100)


def _quantile(
    a: TensorLike, q: TensorLike, axis: Axis, method: str, keepdims: bool, what: str,
    scale: int,
) -> Variable:
    if method != "linear":
        raise ValueError(f"{what}: only NumPy's default method 'linear' is supported, "
                         f"got {method!r}")
    weak = isinstance(q, (int, float)) and not isinstance(q, bool)
    levels = _levels(q, what, scale)
    variable, ordered, axes = _ordered(a, axis, what)
    dtype = variable.dtype if weak else np.result_type(variable.dtype, levels.dtype).name
    ordered = cast(ordered, dtype)
    length = ordered.type.shape[-1]
    last: int | Variable = length - 1 if length is not None else shape_i(ordered, -1) - 1
    # NumPy's virtual index (n - 1) q, its floor and the neighbour above, clipped into
    # the array (NumPy points both at an end instead: the same values).
    position = cast(last, levels.dtype) * levels
    below = floor(position)
    previous = cast(clip(below, 0, last), "int64")
    following = cast(clip(below + 1, 0, last), "int64")
    gamma = cast(position - below, dtype)
    low, high = ordered[..., previous], ordered[..., following]
    step = high - low
    value = where(ge(gamma, 0.5), high - step * (1 - gamma), low + step * gamma)
    value = _nan_where_any(ordered, value, levels.ndim)
    groups = value.ndim - levels.ndim
    value = transpose(value, [*range(groups, value.ndim), *range(groups)])
    if keepdims:
        value = restore_axes(value, tuple(levels.ndim + a for a in axes),
                             levels.ndim + variable.ndim)
    return value


def _levels(q: TensorLike, what: str, scale: int) -> Variable:
    """The quantile levels as fractions (floats), checked against [0, 1] when known."""
    if isinstance(q, Variable):
        levels = q if is_inexact(q.dtype) else cast(q, "float64")
        if is_complex(levels.dtype):
            raise DTypeError(f"{what}: q must be real, got {q.type}")
        return levels / scale if scale != 1 else levels
    array = np.asarray(q)
    if array.dtype.kind not in "iuf":
        raise TypeError(f"{what}: q must be real numbers, got {q!r}")
    fractions = np.true_divide(array, scale) if scale != 1 else array
    if fractions.dtype.kind != "f":
        fractions = fractions.astype(np.float64)
    if not np.all((fractions >= 0) & (fractions <= 1)):
        range_text = "[0, 1]" if scale == 1 else f"[0, {scale}]"
        kind = "Quantiles" if scale == 1 else "Percentiles"
        raise ValueError(f"{what}: {kind} must be in the range {range_text}, got {q!r}")
    return as_tensor(fractions, name=f"{what} q")


def cov(
    m: TensorLike, y: TensorLike | None = None, rowvar: bool = True, bias: bool = False,
    ddof: int | None = None,
) -> Variable:
    """The covariance matrix of the variables in `m` (and `y`), as `numpy.cov`: rows are
    variables and columns observations (the other way round with `rowvar=False`),
    normalized by `n - ddof` (`ddof` 1 by default, 0 with `bias`; a divisor <= 0 gives
    inf / NaN, as NumPy). Float64 at least, as NumPy. A 1-D input is one variable; one
    variable gives a 0-d result. NumPy's special cases by run-time shape follow the
    static shape: with `rowvar=False` a matrix of one row is one variable only when
    that row count is static, and the result is squeezed only when the count of
    variables is statically 1."""
    variables = _variables(m, rowvar, "cov")
    if y is not None:
        variables = concatenate([variables, _variables(y, rowvar, "cov y")], axis=0)
    degrees = (0 if bias else 1) if ddof is None else ddof
    count = variables.type.shape[1]
    centered = variables - mean(variables, axis=1, keepdims=True)
    product = matmul(centered, transpose(centered, [1, 0]))
    if count is not None:
        # NumPy multiplies by the reciprocal of the divisor, inf when it is <= 0.
        scaled = product * (1 / (count - degrees) if count > degrees else np.inf)
    else:
        divisor = maximum(cast(shape_i(variables, 1), "float64") - degrees, 0)
        scaled = product * (1 / divisor)
    if variables.type.shape[0] == 1:
        return scaled[0, 0]
    return scaled


def _variables(m: TensorLike, rowvar: bool, what: str) -> Variable:
    """`m` as a float64 matrix with one variable per row, as `numpy.cov` arranges it."""
    variable = as_tensor(m, name=what)
    if variable.ndim > 2:
        raise ShapeError(f"{what}: expected a vector or a matrix, got {variable.type}")
    if is_complex(variable.dtype):
        raise DTypeError(f"{what}: complex inputs are not supported, got {variable.type}")
    if variable.dtype != "float64":
        variable = cast(variable, "float64")
    while variable.ndim < 2:
        variable = expand_dims(variable, 0)
    if not rowvar and variable.type.shape[0] != 1:
        variable = transpose(variable, [1, 0])
    return variable


def corrcoef(x: TensorLike, y: TensorLike | None = None, rowvar: bool = True) -> Variable:
    """Pearson correlation coefficients, as `numpy.corrcoef`: `cov` divided by the
    standard deviations along rows and then columns, clipped to [-1, 1] (NumPy's
    `bias` and `ddof` are not taken: they cancel out and NumPy deprecates them)."""
    covariance = cov(x, y, rowvar)
    if covariance.ndim == 0:
        return covariance / covariance
    deviation = sqrt(diagonal(covariance))
    scaled = covariance / expand_dims(deviation, 1)
    scaled = scaled / expand_dims(deviation, 0)
    return clip(scaled, -1, 1)
