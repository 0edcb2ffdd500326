"""Variables: the values a graph computes with.

Four kinds, all frozen, all compared by identity (interning makes identity mean
structure for the interned ones):

- `Input`: a free value supplied by the caller; unique per creation, with a display name.
- `Param`: the i-th positional parameter of an inner graph; interned on (index, type), so
  two inner graphs over the same parameters share them and compare in O(outputs).
- `Constant`: a read-only array, interned on (dtype, shape, raw bytes): `-0.0` is not
  `0.0`, `1` is not `1.0`, and a `nan` constant equals itself.
- `Output` (in `fgraph.node`): the `index`-th output of an `Apply` node.

`Variable` carries NumPy's operators and methods; they build nodes through the op
library installed in `fgraph.operators`.
"""

from __future__ import annotations

import zlib
from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs
import numpy as np
import numpy.typing as npt

from fgraph.dtypes import as_dtype
from fgraph.frozen import Frozen
from fgraph.intern import InternedMeta, InternTable
from fgraph.operators import Axis, TensorLike, api
from fgraph.types import Shape, TensorType, format_shape

if TYPE_CHECKING:  # annotations only: fgraph.node imports this module
    from fgraph.node import Apply

ReadOnlyArray = np.ndarray[Any, np.dtype[Any]]


class Variable(Frozen):
    """Base of every graph value. Subclasses are frozen attrs classes."""

    keyed_by_equality: ClassVar[bool] = True  # identity or interned: `==` is exact

    __slots__ = ()
    # Elementwise `==` would break hashing; use `ops.eq` / `ops.neq` instead.
    __array_priority__ = 1000.0  # so `ndarray + variable` defers to `variable.__radd__`

    @property
    def type(self) -> TensorType:
        raise NotImplementedError

    @property
    def owner(self) -> Apply | None:
        """The node computing this variable, or None for inputs, params and constants."""
        return None

    @property
    def index(self) -> int:
        """Position among its owner's outputs (0 for root variables)."""
        return 0

    @property
    def dtype(self) -> str:
        return self.type.dtype

    @property
    def ndim(self) -> int:
        return self.type.ndim

    @property
    def static_shape(self) -> Shape:
        return self.type.shape

    # -- arithmetic ---------------------------------------------------------------
    def __add__(self, other: TensorLike) -> Variable:
        return api().binary("add", self, other)

    def __radd__(self, other: TensorLike) -> Variable:
        return api().binary("add", other, self)

    def __sub__(self, other: TensorLike) -> Variable:
        return api().binary("sub", self, other)

    def __rsub__(self, other: TensorLike) -> Variable:
        return api().binary("sub", other, self)

    def __mul__(self, other: TensorLike) -> Variable:
        return api().binary("mul", self, other)

    def __rmul__(self, other: TensorLike) -> Variable:
        return api().binary("mul", other, self)

    def __truediv__(self, other: TensorLike) -> Variable:
        return api().binary("true_div", self, other)

    def __rtruediv__(self, other: TensorLike) -> Variable:
        return api().binary("true_div", other, self)

    def __floordiv__(self, other: TensorLike) -> Variable:
        return api().binary("int_div", self, other)

    def __rfloordiv__(self, other: TensorLike) -> Variable:
        return api().binary("int_div", other, self)

    def __mod__(self, other: TensorLike) -> Variable:
        return api().binary("mod", self, other)

    def __rmod__(self, other: TensorLike) -> Variable:
        return api().binary("mod", other, self)

    def __pow__(self, other: TensorLike) -> Variable:
        return api().binary("pow", self, other)

    def __rpow__(self, other: TensorLike) -> Variable:
        return api().binary("pow", other, self)

    def __matmul__(self, other: TensorLike) -> Variable:
        return api().binary("matmul", self, other)

    def __rmatmul__(self, other: TensorLike) -> Variable:
        return api().binary("matmul", other, self)

    def __neg__(self) -> Variable:
        return api().unary("neg", self)

    def __abs__(self) -> Variable:
        return api().unary("abs", self)

    def __invert__(self) -> Variable:
        return api().unary("invert", self)

    def __and__(self, other: TensorLike) -> Variable:
        return api().binary("and", self, other)

    def __rand__(self, other: TensorLike) -> Variable:
        return api().binary("and", other, self)

    def __or__(self, other: TensorLike) -> Variable:
        return api().binary("or", self, other)

    def __ror__(self, other: TensorLike) -> Variable:
        return api().binary("or", other, self)

    def __xor__(self, other: TensorLike) -> Variable:
        return api().binary("xor", self, other)

    def __rxor__(self, other: TensorLike) -> Variable:
        return api().binary("xor", other, self)

    # -- comparisons (elementwise; `==` stays identity) --------------------------------
    def __lt__(self, other: TensorLike) -> Variable:
        return api().binary("lt", self, other)

    def __le__(self, other: TensorLike) -> Variable:
        return api().binary("le", self, other)

    def __gt__(self, other: TensorLike) -> Variable:
        return api().binary("gt", self, other)

    def __ge__(self, other: TensorLike) -> Variable:
        return api().binary("ge", self, other)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *operands: Any, **kwargs: Any) -> Any:
        """NumPy's ufuncs build fgraph's nodes: `np.exp(x)` is `pt.exp(x)`, `np.add(a, x)`
        and `a + x` are `pt.add(a, x)`; a ufunc fgraph has no function for, a ufunc
        method (`np.add.reduce`: use `pt.sum`) or `out=` is an error naming it. So
        `x == array` and `array == x` are `pt.eq` too (NumPy answers for Variable's `==`,
        which has no answer of its own), while `x == y` of two variables stays an
        identity test (variables are dict keys)."""
        if method != "__call__" or kwargs:
            arguments = ", ".join(sorted(kwargs))
            used = f"numpy.{ufunc.__name__}.{method}" if method != "__call__" else (
                f"numpy.{ufunc.__name__} with {arguments}")
            raise TypeError(f"{used} is not supported on symbolic variables; use the "
                            "ops functions (pt.sum, pt.exp, ...) and return new variables")
        return api().ufunc(ufunc.__name__, operands)

    def __bool__(self) -> bool:
        raise TypeError(
            "a symbolic variable has no truth value: select elementwise with pt.where "
            "(pt.switch), compare elementwise with pt.eq / pt.neq / <, or compare variables "
            "with `is`"
        )

    # -- indexing and shape ----------------------------------------------------------
    def __getitem__(self, index: Any) -> Variable:
        return api().getitem(self, index)

    def __iter__(self) -> Any:
        raise TypeError(api().not_iterable(self))

    def __len__(self) -> int:
        length = self.type.shape[0] if self.type.ndim else None
        if length is None:
            raise TypeError(f"len() of {self}: its first axis has no static length")
        return length

    @property
    def T(self) -> Variable:
        return api().transpose(self, None)

    @property
    def shape(self) -> Variable:
        """The symbolic shape vector (int64); static lengths are in `.type.shape`."""
        return api().shape(self)

    def transpose(self, *axes: int) -> Variable:
        return api().transpose(self, axes if axes else None)

    def reshape(self, *shape: Any) -> Variable:
        target = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        return api().reshape(self, target)

    def astype(self, dtype: npt.DTypeLike) -> Variable:
        return api().astype(self, as_dtype(dtype))

    def flatten(self) -> Variable:
        return api().flatten(self)

    def clip(self, lo: TensorLike | None, hi: TensorLike | None) -> Variable:
        """Values limited to [lo, hi], as `numpy.clip`."""
        return api().method("clip", self, lo, hi)

    def dot(self, other: TensorLike) -> Variable:
        """`numpy.dot` of this and `other`."""
        return api().method("dot", self, other)

    def squeeze(self, axis: int | Sequence[int] | None = None) -> Variable:
        """Length-1 axes removed (all statically known ones by default)."""
        return api().method("squeeze", self, axis)

    def cumsum(self, axis: int | None = None) -> Variable:
        """Running sum along `axis` (of the flattened array by default)."""
        return api().method("cumsum", self, axis)

    def round(self, decimals: int = 0) -> Variable:
        """Rounded half to even to `decimals` places, as `numpy.round`."""
        return api().method("round", self, decimals)

    def dimshuffle(self, *order: int | str) -> Variable:
        """PyTensor's `dimshuffle`: output axis i takes input axis `order[i]`; "x" inserts
        a new axis of length 1."""
        return api().method("dimshuffle", self, *order)

    @property
    def real(self) -> Variable:
        """The real part, as `numpy.ndarray.real` (`pt.real`)."""
        return api().method("real", self)

    @property
    def imag(self) -> Variable:
        """The imaginary part, as `numpy.ndarray.imag` (`pt.imag`)."""
        return api().method("imag", self)

    def conj(self) -> Variable:
        """The complex conjugate, as `numpy.ndarray.conj` (`pt.conj`)."""
        return api().method("conj", self)

    def eval(self, inputs: Mapping[Variable, Any] | None = None) -> ReadOnlyArray:
        """This variable's value, given values for the inputs it depends on (PyTensor's
        `eval`, through the reference evaluator)."""
        # Here, not at the top: the evaluator walks nodes of variables, so it imports
        # this module (the lowest of the graph's); `eval` is a convenience on top of it.
        from fgraph.evaluation import evaluate

        return evaluate([self], inputs or {})[0]

    # -- reductions --------------------------------------------------------------------
    def sum(self, axis: Axis = None, keepdims: bool = False) -> Variable:
        return api().reduce("sum", self, axis, keepdims)

    def prod(self, axis: Axis = None, keepdims: bool = False) -> Variable:
        return api().reduce("prod", self, axis, keepdims)

    def mean(self, axis: Axis = None, keepdims: bool = False) -> Variable:
        return api().reduce("mean", self, axis, keepdims)

    def max(self, axis: Axis = None, keepdims: bool = False) -> Variable:
        return api().reduce("max", self, axis, keepdims)

    def min(self, axis: Axis = None, keepdims: bool = False) -> Variable:
        return api().reduce("min", self, axis, keepdims)

    def all(self, axis: Axis = None, keepdims: bool = False) -> Variable:
        return api().reduce("all", self, axis, keepdims)

    def any(self, axis: Axis = None, keepdims: bool = False) -> Variable:
        return api().reduce("any", self, axis, keepdims)

    def var(self, axis: Axis = None, keepdims: bool = False) -> Variable:
        return api().reduce("var", self, axis, keepdims)

    def std(self, axis: Axis = None, keepdims: bool = False) -> Variable:
        return api().reduce("std", self, axis, keepdims)

    def argmax(self, axis: Axis = None, keepdims: bool = False) -> Variable:
        return api().arg_reduce("argmax", self, axis, keepdims)

    def argmin(self, axis: Axis = None, keepdims: bool = False) -> Variable:
        return api().arg_reduce("argmin", self, axis, keepdims)


@attrs.frozen(eq=False, repr=False)
class Input(Variable):
    """A free variable of a graph, supplied by the caller. Unique per creation."""

    type: TensorType
    name: str | None = None

    def __repr__(self) -> str:
        return f"Input({self.name or '?'}: {self.type})"


class _ParamMeta(InternedMeta):
    _table = InternTable["Param"]("Param")

    def _intern_key(cls, *args: Any, **kwargs: Any) -> tuple[Hashable, tuple[object, ...]]:
        return _param_key(*args, **kwargs)


def _param_key(index: object, type: object) -> tuple[Hashable, tuple[object, ...]]:
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or index < 0:
        raise TypeError(f"Param index must be a non-negative int, got {index!r}")
    if not isinstance(type, TensorType):
        raise TypeError(f"Param type must be a TensorType, got {type!r}")
    key = (int(index), type)
    return key, key


@attrs.frozen(eq=False, repr=False)
class Param(Variable, metaclass=_ParamMeta):
    """The `index`-th positional parameter of an inner graph (interned on index and type)."""

    index: int
    type: TensorType

    def __repr__(self) -> str:
        return f"Param({self.index}: {self.type})"

    def __reduce__(self) -> tuple[object, ...]:
        return (Param, (self.index, self.type))


class _ConstantMeta(InternedMeta):
    _table = InternTable["Constant"]("Constant")

    def _intern_key(cls, *args: Any, **kwargs: Any) -> tuple[Hashable, tuple[object, ...]]:
        return _constant_key(*args, **kwargs)


def _constant_key(data: object) -> tuple[Hashable, tuple[object, ...]]:
    """Copy once into immutable bytes; key on (dtype, shape, raw bytes).

    The array is a view of a `bytes` object, so nobody can turn its WRITEABLE flag back on
    (an array owning its memory allows that), and the intern key, which shares the buffer,
    cannot be corrupted. Byte order is made native so equal values have equal bytes.
    """
    source = np.asarray(data)
    dtype = np.dtype(as_dtype(source.dtype))  # rejects object/str arrays with a clear error
    raw = source.astype(dtype, copy=False).tobytes(order="C")
    array: ReadOnlyArray = np.frombuffer(raw, dtype=dtype).reshape(source.shape)
    return _ConstantKey(array), (array,)


class _ConstantKey:
    """Exact intern key of a constant: dtype, shape and raw bytes compared without copying
    (so `-0.0` and `0.0` differ and a `nan` matches the same `nan`)."""

    __slots__ = ("dtype", "shape", "raw", "_hash")

    def __init__(self, array: ReadOnlyArray) -> None:
        self.dtype = array.dtype.name
        self.shape = array.shape
        self.raw = array.reshape(-1).view(np.uint8).data
        self._hash = hash((self.dtype, self.shape, zlib.crc32(self.raw)))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, _ConstantKey)
            and self.dtype == other.dtype
            and self.shape == other.shape
            and self.raw == other.raw
        )


def _already_normalized(data: object) -> ReadOnlyArray:
    """Typing shim: the metaclass has already turned `data` into a read-only array."""
    if not isinstance(data, np.ndarray):
        raise TypeError(f"Constant data must be normalized by construction, got {data!r}")
    return data


@attrs.frozen(eq=False, repr=False)
class Constant(Variable, metaclass=_ConstantMeta):
    """A read-only array known when the graph is built: `Constant(array_like)`, copied once.
    To choose the dtype, pass an array: `Constant(np.asarray(1, dtype="float32"))`."""

    data: ReadOnlyArray = attrs.field(converter=_already_normalized)
    type: TensorType = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "type", TensorType(self.data.dtype.name, self.data.shape))

    @property
    def value(self) -> ReadOnlyArray:
        return self.data

    def __repr__(self) -> str:
        if self.data.size <= 8:
            return f"Constant({np.array2string(self.data, separator=', ')}: {self.type})"
        return f"Constant({self.type.dtype}{format_shape(self.type.shape)})"

    def __reduce__(self) -> tuple[object, ...]:
        return (Constant, (np.array(self.data),))


def display_name(variable: Variable) -> str:
    """How errors and printouts name a variable: an input's name, `p0` for a param."""
    if isinstance(variable, Input):
        return variable.name or "<unnamed input>"
    if isinstance(variable, Param):
        return f"p{variable.index}"
    return repr(variable)


def error_name(variable: Variable, names: Mapping[Variable, str] | None = None) -> str:
    """How run-time errors name a variable: by `names` where it has one there (a loop
    body's params are named after the user's variables that feed them), an input by its
    name, a constant as such, a computed value by its op and the named values it reads."""
    named = names or {}
    found = named.get(variable)
    if found is not None:
        return found
    if isinstance(variable, Constant):
        return "a constant"
    owner = variable.owner
    if owner is None:
        return display_name(variable)
    read = [error_name(v, named) for v in owner.inputs if isinstance(v, Input) or v in named]
    return f"the result of {owner.op}" + (f" of {', '.join(read)}" if read else "")

