"""Element loop nests lowered straight to LLVM IR, without numba's compiler passes.

numba compiles a statement in several passes (bytecode to IR, rewrites, type inference
by constraint propagation, lowering, dead-code and reference-count passes), each walking
the whole function: a loop nest over three elements costs 10 to 60 ms, and a model's
functions hold dozens of them. `element_nest` makes a nest one call of an intrinsic,
whose codegen walks the nest's Python AST once and writes its IR into the caller:

- loops are `for` over `range(...)`; element reads and writes `a[i, j]` compute the
  address from the array's strides (`cgutils.get_item_pointer2`, numba's own, so
  contiguous arrays keep their unit stride and the loop vectorizes as before), from
  its data pointer, shape and strides read once where the nest starts (`_Unpacked`);
- every operation and call is resolved by numba's typing context and lowered by
  numba's implementation of it (`context.get_function`), its operands cast to the
  signature's types as numba's lowering casts them: `a + b`, `np.isfinite(x)`,
  `exp_f64(x)` or an `njit` helper compute exactly what the same source compiled by
  numba computes. Resolutions are memoized per process (`_resolved`);
- views (`x[s]`, `x[1:, ::-1]`, `x[None, j]`, `dimshuffled`, `with_layout_of`) are a
  data pointer, lengths and strides (`_Unpacked` without a structure): no array is
  built, so no reference count is taken; such a view is never a value (passed on or
  returned), which `numba_backend.nests` guarantees by keeping those views numba's.

The subset is what element loops generate (see `numba_backend.nests`, which picks the
nests): assignments to names, to array elements and of views, `for` loops over ranges,
and expressions of names, numbers, arithmetic, comparisons, `and`/`or`, conditional
expressions, calls and `x.shape[k]`. A name keeps one type (numba would unify two);
anything else, found while typing the call, makes the intrinsic call the nest compiled
by numba as a function of its own instead (`compiled` in `element_nest`): slower to
compile, same values.
"""

from __future__ import annotations

import ast
import functools
import logging
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
import numba
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic
from numba.np.arrayobj import load_item, store_item

from numba_backend.intrinsics import ArrayFields, dimshuffled, with_layout_of
from numba_backend.vecmath import LIBM_EQUIVALENTS, VECTORIZED_MIN_LENGTH

BINARY = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow, ast.BitAnd: operator.and_, ast.BitOr: operator.or_,
    ast.BitXor: operator.xor, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
}
UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_,
         ast.Invert: operator.invert}
COMPARE = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
           ast.GtE: operator.ge, ast.Eq: operator.eq, ast.NotEq: operator.ne}


LOGGER = logging.getLogger(__name__)
"""Says, at DEBUG, which nests numba compiles instead and why."""


class Unsupported(Exception):
    """The nest uses something this lowering does not handle: numba compiles it."""


Value = tuple[types.Type, Any]
"""A value's numba type and its IR value (None while only typing)."""
Context = Any
"""numba's target or typing context (no type information)."""


@functools.lru_cache(maxsize=None)
def _resolved(typing: Context, function: Any, arguments: tuple[types.Type, ...]
              ) -> tuple[types.Type, Any]:
    """numba's function type of `function` and its signature for `arguments`."""
    function_type = typing.resolve_value_type(function)
    signature = typing.resolve_function_type(function_type, arguments, {})
    if signature is None:
        raise Unsupported(f"no signature of {function} for {arguments}")
    return function_type, signature


@attrs.frozen
class _Unpacked:
    """An array's fields, read once where the nest starts (arrays are never assigned in
    a nest): each element's address is then a few integer operations on these values,
    not a copy of the array's structure per access."""

    value: Any  # the array's structure; None for a view the nest makes (no meminfo)
    data: Any
    shape: tuple[Any, ...]
    strides: tuple[Any, ...]

    @classmethod
    def of(cls, context: Context, builder: ir.IRBuilder, kind: types.Array,
           value: Any) -> _Unpacked:
        structure = ArrayFields.of(context, builder, kind, value)
        return cls(value, structure.data,
                   tuple(cgutils.unpack_tuple(builder, structure.shape, kind.ndim)),
                   tuple(cgutils.unpack_tuple(builder, structure.strides, kind.ndim)))


@attrs.frozen
class _Slice:
    """A slice of a view being made: its bounds' expressions and its constant step."""

    lower: ast.expr | None
    upper: ast.expr | None
    step: int


class _Lowering:
    """One walk over a nest: typing only (`builder` None) or emitting IR."""

    def __init__(self, typing: Context, namespace: Mapping[str, Any],
                 context: Context | None = None, builder: ir.IRBuilder | None = None,
                 per_step: bool = False, array_names: frozenset[str] = frozenset()):
        self.typing = typing
        self.namespace = namespace
        self.context = context
        self.builder = builder
        self.per_step = per_step  # innermost loops of unknown length choose libm when short
        self.libm = False  # emitting the short version: vecmath's functions as libm's
        self.array_names = array_names  # names typing found arrays: never emitted twice
        self.depth = 0  # loops around the statement being emitted
        self.types: dict[str, types.Type] = {}
        self.slots: dict[str, Any] = {}
        self.arrays: dict[str, _Unpacked] = {}
        self.views: set[str] = set()  # arrays the nest makes: no structure, never a value
        self.natural: set[str] = set()  # loop counters: indices from 0 up, never negative

    # -- names ---------------------------------------------------------------------------
    def bind(self, name: str, value: Value) -> None:
        """Assign `name`: its first value fixes its type (numba would unify a second)."""
        kind, ir_value = value
        known = self.types.get(name)
        if isinstance(kind, types.Array):
            if known is not None:
                raise Unsupported(f"{name}, an array, is assigned twice")
            self.types[name] = kind
            if isinstance(ir_value, _Unpacked):
                self.arrays[name] = ir_value
            elif self.builder is not None and self.context is not None:
                self.arrays[name] = _Unpacked.of(self.context, self.builder, kind, ir_value)
            return
        if known is None:
            self.types[name] = kind
            if self.builder is not None and self.context is not None:
                slot = cgutils.alloca_once(self.builder, self.context.get_value_type(kind),
                                           name=name)
                self.slots[name] = slot
        elif known != kind:
            raise Unsupported(f"{name} changes type from {known} to {kind}")
        if self.builder is not None:
            self.builder.store(ir_value, self.slots[name])

    def read(self, name: str) -> Value:
        kind = self.types.get(name)
        if kind is None:
            raise Unsupported(f"{name} read before it is assigned")
        if name in self.views:
            raise Unsupported(f"{name}, a view made in the nest, used as a value")
        if self.builder is None:
            return kind, None
        if name in self.arrays:
            return kind, self.arrays[name].value
        return kind, self.builder.load(self.slots[name])

    # -- statements ----------------------------------------------------------------------
    def statements(self, body: Sequence[ast.stmt]) -> None:
        for statement in body:
            match statement:
                case ast.Assign(targets=[ast.Name(id=name)], value=value):
                    self.natural.discard(name)  # a counter assigned may go negative
                    assigned = self.expression(value)
                    self.bind(name, assigned)
                    if isinstance(assigned[0], types.Array):
                        self.views.add(name)
                case ast.Assign(targets=[ast.Subscript(value=ast.Name(id=name),
                                                       slice=index)], value=value):
                    self.store(name, index, self.expression(value))
                case ast.For(target=ast.Name(id=counter), iter=ast.Call(
                        func=ast.Name(id="range"), args=bounds, keywords=[]),
                        body=loop_body, orelse=[]):
                    self.loop(counter, bounds, loop_body)
                case _:
                    raise Unsupported(ast.dump(statement))

    def loop(self, counter: str, bounds: list[ast.expr], body: list[ast.stmt]) -> None:
        step = 1
        if len(bounds) == 3:
            match bounds[2]:
                case ast.Constant(value=int(step)) if step != 0:
                    pass
                case ast.UnaryOp(op=ast.USub(), operand=ast.Constant(value=int(magnitude))):
                    step = -magnitude
                case _:
                    raise Unsupported("a range's step is not a constant")
        values = [self.integer(bound) for bound in bounds[:2]]
        start, stop = values if len(values) == 2 else ((types.intp, self._int(0)), values[0])
        match bounds:
            case [_]:
                from_zero = True
            case [ast.Constant(value=int(first)), *_]:
                from_zero = first >= 0
            case _:
                from_zero = False
        if from_zero and step > 0:
            self.natural.add(counter)
        else:
            self.natural.discard(counter)
        if self.builder is None:
            self.bind(counter, (types.intp, None))
            self.statements(body)
            return
        assert self.context is not None
        if (self.per_step or self.depth) and not self.libm and step == 1 and (
                self._calls_vecmath(body)) and (
                not all(isinstance(bound, ast.Constant) for bound in bounds[:2])):
            steps = self.builder.sub(stop[1], start[1])
            short = self.builder.icmp_signed("<", steps, self._int(VECTORIZED_MIN_LENGTH))
            with self.builder.if_else(short) as (one_at_a_time, vectorized):
                with one_at_a_time:
                    self.libm = True
                    self._emit_loop(counter, start[1], stop[1], step, body)
                    self.libm = False
                with vectorized:
                    self._emit_loop(counter, start[1], stop[1], step, body)
            return
        self._emit_loop(counter, start[1], stop[1], step, body)

    def _emit_loop(self, counter: str, start: Any, stop: Any, step: int,
                   body: list[ast.stmt]) -> None:
        assert self.builder is not None
        with cgutils.for_range_slice(self.builder, start, stop, self._int(step),
                                     inc=step > 0) as (index, _):
            self.bind(counter, (types.intp, index))
            self.depth += 1
            self.statements(body)
            self.depth -= 1

    def _calls_vecmath(self, body: list[ast.stmt]) -> bool:
        """Whether `body` is an innermost loop's (no loop inside, no view made: a view
        is bound once) calling a vecmath function."""
        calls = False
        for statement in body:
            for node in ast.walk(statement):
                if isinstance(node, ast.For):
                    return False
                if isinstance(node, ast.Name) and node.id in self.array_names and isinstance(
                        node.ctx, ast.Store):
                    return False
                if isinstance(node, ast.Call) and self._vecmath_function(node.func):
                    calls = True
        return calls

    def _vecmath_function(self, node: ast.expr) -> bool:
        try:
            return self.global_value(node) in LIBM_EQUIVALENTS
        except (Unsupported, TypeError):  # not a global, or unhashable
            return False

    def store(self, name: str, index: ast.expr, value: Value) -> None:
        array_type = self.array_type(name)
        pointer = self.element(name, array_type, index)
        if self.builder is not None and self.context is not None:
            converted = self.context.cast(self.builder, value[1], value[0], array_type.dtype)
            store_item(self.context, self.builder, array_type, converted, pointer)

    def array_type(self, name: str) -> types.Array:
        array_type = self.types.get(name)
        if array_type is None:
            raise Unsupported(f"{name} read before it is assigned")
        if not isinstance(array_type, types.Array):
            raise Unsupported(f"indexing {name}, a {array_type}")
        return array_type

    def element(self, name: str, array_type: types.Array, index: ast.expr) -> Any:
        """The address of `array[index]` (None while typing); negative indices count from
        the end, as numba's, except loop counters, which never are."""
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        if len(parts) != array_type.ndim:
            raise Unsupported(f"{len(parts)} indices into an array of {array_type.ndim} axes")
        indices = [self.integer(part) for part in parts]
        if self.builder is None or self.context is None:
            return None
        unpacked = self.arrays[name]
        fixed = []
        for part, (_, value), length in zip(parts, indices, unpacked.shape):
            if not self._never_negative(part):
                negative = self.builder.icmp_signed("<", value, self._int(0))
                value = self.builder.select(negative, self.builder.add(value, length), value)
            fixed.append(value)
        return cgutils.get_item_pointer2(self.context, self.builder, unpacked.data,
                                         unpacked.shape, unpacked.strides, array_type.layout,
                                         fixed)

    # -- views -------------------------------------------------------------------------
    def dimshuffled(self, source: ast.expr, order: str) -> Value:
        """`intrinsics.dimshuffled(source, order)` as unpacked fields, typed as there."""
        if not isinstance(source, ast.Name):
            raise Unsupported("dimshuffled of an expression")
        array_type = self.array_type(source.id)
        parts = order.split(",") if order else []
        named = [int(part) for part in parts if part != "x"]
        if len(set(named)) != len(named) or not all(0 <= a < array_type.ndim for a in named):
            raise Unsupported(f"dimshuffled order {order!r} of {array_type}")
        keeps_order = named == sorted(named) and array_type.layout in ("C", "F")
        result = array_type.copy(ndim=len(parts),
                                 layout=array_type.layout if keeps_order else "A")
        if self.builder is None:
            return result, None
        unpacked = self.arrays[source.id]
        one, zero = self._int(1), self._int(0)
        return result, _Unpacked(
            None, unpacked.data,
            tuple(one if part == "x" else unpacked.shape[int(part)] for part in parts),
            tuple(zero if part == "x" else unpacked.strides[int(part)] for part in parts))

    def subscript_view(self, name: str, index: ast.expr) -> Value:
        """`name[index]` with fewer integer indices than axes, slices or `None`s: the
        view numba's basic indexing makes (its type as numba's typing gives it), as
        unpacked fields: an offset data pointer, and per axis a length and a stride."""
        array_type = self.array_type(name)
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        entries: list[Any] = []
        kinds: list[types.Type] = []
        for part in parts:
            match part:
                case ast.Constant(value=None):
                    entries.append(None)
                    kinds.append(types.none)
                case ast.Slice(lower=lower, upper=upper, step=step):
                    constant = self._slice_step(step)
                    entries.append(_Slice(lower, upper, constant))
                    kinds.append(types.slice2_type if step is None else types.slice3_type)
                case _:
                    entries.append(self.integer(part))
                    kinds.append(types.intp)
        key = kinds[0] if len(kinds) == 1 else types.BaseTuple.from_types(kinds)
        try:
            _, signature = _resolved(self.typing, operator.getitem, (array_type, key))
        except Unsupported:
            raise
        except Exception as error:  # numba's typing errors: numba compiles the nest
            raise Unsupported(str(error)) from error
        if not isinstance(signature.return_type, types.Array):
            raise Unsupported(f"{name}[...] is not a view")
        if self.builder is None or self.context is None:
            return signature.return_type, None
        builder = self.builder
        unpacked = self.arrays[name]
        offset = self._int(0)
        shape: list[Any] = []
        strides: list[Any] = []
        axis = 0
        for part, entry in zip(parts, entries):
            if entry is None:
                shape.append(self._int(1))
                strides.append(self._int(0))
                continue
            length, stride = unpacked.shape[axis], unpacked.strides[axis]
            axis += 1
            if isinstance(entry, _Slice):
                start, count = self._slice_bounds(entry.lower, entry.upper, entry.step, length)
                offset = builder.add(offset, builder.mul(start, stride))
                shape.append(count)
                strides.append(builder.mul(stride, self._int(entry.step)))
                continue
            value = entry[1]
            if not self._never_negative(part):
                negative = builder.icmp_signed("<", value, self._int(0))
                value = builder.select(negative, builder.add(value, length), value)
            offset = builder.add(offset, builder.mul(value, stride))
        shape += unpacked.shape[axis:]
        strides += unpacked.strides[axis:]
        byte = ir.IntType(8).as_pointer()
        data = builder.bitcast(builder.gep(builder.bitcast(unpacked.data, byte), [offset]),
                               unpacked.data.type)
        return signature.return_type, _Unpacked(None, data, tuple(shape), tuple(strides))

    def _slice_step(self, step: ast.expr | None) -> int:
        match step:
            case None:
                return 1
            case ast.Constant(value=int(number)) if number != 0:
                return number
            case ast.UnaryOp(op=ast.USub(), operand=ast.Constant(value=int(number))) if number:
                return -number
        raise Unsupported("a slice's step is not a constant")

    def _slice_bounds(self, lower: ast.expr | None, upper: ast.expr | None, step: int,
                      length: Any) -> tuple[Any, Any]:
        """The first index and the count of `lower:upper:step` over `length` elements,
        clipped as Python clips a slice (`PySlice_AdjustIndices`), without branches."""
        assert self.builder is not None
        builder = self.builder

        def clipped(bound: ast.expr, low: Any, high: Any) -> Any:
            value = self.integer(bound)[1]
            negative = builder.icmp_signed("<", value, self._int(0))
            value = builder.select(negative, builder.add(value, length), value)
            value = builder.select(builder.icmp_signed("<", value, low), low, value)
            return builder.select(builder.icmp_signed(">", value, high), high, value)

        if step > 0:
            start = self._int(0) if lower is None else clipped(lower, self._int(0), length)
            stop = length if upper is None else clipped(upper, self._int(0), length)
            span = builder.sub(stop, start)
        else:
            last = builder.sub(length, self._int(1))
            start = last if lower is None else clipped(lower, self._int(-1), last)
            stop = self._int(-1) if upper is None else clipped(upper, self._int(-1), last)
            span = builder.sub(start, stop)
        span = builder.select(builder.icmp_signed("<", span, self._int(0)), self._int(0), span)
        magnitude = abs(step)
        count = builder.sdiv(builder.add(span, self._int(magnitude - 1)), self._int(magnitude))
        return start, count

    def _never_negative(self, index: ast.expr) -> bool:
        match index:
            case ast.Name(id=name):
                return name in self.natural
            case ast.Constant(value=int(number)):
                return number >= 0
        return False

    # -- expressions ---------------------------------------------------------------------
    def integer(self, node: ast.expr) -> Value:
        """An index or bound, as an intp."""
        kind, value = self.expression(node)
        if not isinstance(kind, types.Integer):
            raise Unsupported(f"an index of type {kind}")
        if self.builder is None or self.context is None:
            return types.intp, None
        return types.intp, self.context.cast(self.builder, value, kind, types.intp)

    def expression(self, node: ast.expr) -> Value:
        match node:
            case ast.Name(id=name):
                return self.read(name)
            case ast.Constant(value=bool(flag)):
                return self.constant(types.boolean, flag)
            case ast.Constant(value=int(number)):
                return self.constant(types.intp, number)
            case ast.Constant(value=float(number)):
                return self.constant(types.float64, number)
            case ast.BinOp(left=left, op=op, right=right) if type(op) in BINARY:
                return self.call(BINARY[type(op)], [self.expression(left),
                                                    self.expression(right)])
            case ast.UnaryOp(op=op, operand=operand) if type(op) in UNARY:
                return self.call(UNARY[type(op)], [self.expression(operand)])
            case ast.Compare(left=left, ops=ops, comparators=comparators):
                return self.comparison(left, ops, comparators)
            case ast.BoolOp(op=op, values=values):
                return self.boolean(isinstance(op, ast.Or), values)
            case ast.IfExp(test=test, body=chosen, orelse=other):
                return self.choice(test, chosen, other)
            case ast.Call(func=function, args=[source, ast.Constant(value=str(order))],
                          keywords=[]) if self.global_value(function) is dimshuffled:
                return self.dimshuffled(source, order)
            case ast.Call(func=function, args=[view, ast.Name(id=name)],
                          keywords=[]) if self.global_value(function) is with_layout_of:
                view_type, unpacked = self.expression(view)
                source_type = self.array_type(name)
                if not isinstance(view_type, types.Array):
                    raise Unsupported("with_layout_of of a scalar")
                if source_type.layout in ("C", "F"):
                    view_type = view_type.copy(layout=source_type.layout)
                return view_type, unpacked
            case ast.Call(func=function, args=arguments, keywords=[]):
                if any(isinstance(argument, ast.Starred) for argument in arguments):
                    raise Unsupported("a starred argument")
                called = self.global_value(function)
                if self.libm:
                    called = LIBM_EQUIVALENTS.get(called, called)
                return self.call(called, [self.expression(argument) for argument in arguments])
            case ast.Subscript(value=ast.Attribute(value=ast.Name(id=name), attr="shape"),
                               slice=ast.Constant(value=int(axis))):
                return self.length(name, axis)
            case ast.Subscript(value=ast.Name(id=name), slice=index) if _is_view(
                    index, self.array_type(name).ndim):
                return self.subscript_view(name, index)
            case ast.Subscript(value=ast.Name(id=name), slice=index):
                array_type = self.array_type(name)
                pointer = self.element(name, array_type, index)
                if self.builder is None or self.context is None:
                    return array_type.dtype, None
                return array_type.dtype, load_item(self.context, self.builder, array_type,
                                                   pointer)
            case ast.Attribute():
                value = self.global_value(node)
                if isinstance(value, bool | int | float):
                    return self.expression(ast.Constant(value=value))
        raise Unsupported(ast.dump(node))

    def constant(self, kind: types.Type, value: Any) -> Value:
        if self.builder is None or self.context is None:
            return kind, None
        return kind, self.context.get_constant(kind, value)

    def length(self, name: str, axis: int) -> Value:
        array_type = self.array_type(name)
        if not 0 <= axis < array_type.ndim:
            raise Unsupported(f"{name}.shape[{axis}]")
        if self.builder is None or self.context is None:
            return types.intp, None
        return types.intp, self.arrays[name].shape[axis]

    def global_value(self, node: ast.expr) -> Any:
        """The module global `node` names (a name, or attributes of one)."""
        match node:
            case ast.Name(id=name) if name in self.namespace:
                return self.namespace[name]
            case ast.Attribute(value=base, attr=attribute):
                found = getattr(self.global_value(base), attribute, None)
                if found is not None:
                    return found
        raise Unsupported(f"{ast.dump(node)} is not a global")

    def call(self, function: Any, arguments: list[Value]) -> Value:
        argument_types = tuple(kind for kind, _ in arguments)
        try:
            function_type, signature = _resolved(self.typing, function, argument_types)
        except Unsupported:
            raise
        except Exception as error:  # numba's typing errors: let numba compile the nest
            raise Unsupported(str(error)) from error
        if not isinstance(signature.return_type, (types.Number, types.Boolean)):
            raise Unsupported(f"{function} returns {signature.return_type}")
        if self.builder is None or self.context is None:
            return signature.return_type, None
        implementation = self.context.get_function(function_type, signature)
        values = [self.context.cast(self.builder, value, kind, wanted)
                  for (kind, value), wanted in zip(arguments, signature.args)]
        return signature.return_type, implementation(self.builder, values)

    def comparison(self, left: ast.expr, ops: list[ast.cmpop],
                   comparators: list[ast.expr]) -> Value:
        if any(type(op) not in COMPARE for op in ops):
            raise Unsupported("a comparison other than < <= > >= == !=")
        if len(ops) > 1:  # generated code writes none; numba compiles it
            raise Unsupported("a chained comparison")
        return self.call(COMPARE[type(ops[0])], [self.expression(left),
                                                 self.expression(comparators[0])])

    def truth(self, value: Value) -> Any:
        assert self.context is not None and self.builder is not None
        return self.context.cast(self.builder, value[1], value[0], types.boolean)

    def boolean(self, is_or: bool, operands: list[ast.expr]) -> Value:
        """`a or b` is a if a is true, else b (`and`: a if a is false), b computed only
        then, in the type both unify to."""
        first = self.expression(operands[0])
        if len(operands) == 1:
            return first

        def rest() -> Value:
            return self.boolean(is_or, operands[1:])

        if self.builder is None:
            return self._unified(first[0], rest()[0]), None
        keep_first = self.truth(first)
        if not is_or:
            keep_first = self.builder.not_(keep_first)
        return self._branches_of(keep_first, lambda: first, rest)

    def choice(self, test: ast.expr, chosen: ast.expr, other: ast.expr) -> Value:
        """`x if c else y`: only the chosen side is computed (a side may index out of
        range when not chosen), in the type both unify to."""
        condition = self.expression(test)
        if self.builder is None:
            return self._unified(self.expression(chosen)[0], self.expression(other)[0]), None
        return self._branches_of(self.truth(condition), lambda: self.expression(chosen),
                                 lambda: self.expression(other))

    def _unified(self, first: types.Type, second: types.Type) -> types.Type:
        unified = self.typing.unify_types(first, second)
        if unified is None or not isinstance(unified, (types.Number, types.Boolean)):
            raise Unsupported(f"{first} and {second} do not unify to a number")
        return unified

    def _branches_of(self, condition: Any, chosen: Callable[[], Value],
                     other: Callable[[], Value]) -> Value:
        assert self.builder is not None and self.context is not None
        builder = self.builder
        results: list[tuple[Value, Any]] = []
        with builder.if_else(condition) as (then, otherwise):
            with then:
                results.append((chosen(), builder.block))
            with otherwise:
                results.append((other(), builder.block))
        (kind_a, _), (kind_b, _) = (value for value, _ in results)
        unified = self._unified(kind_a, kind_b)
        # Cast in each branch's block, before its jump to the join block.
        merged = builder.phi(self.context.get_value_type(unified))
        for (kind, value), block in results:
            with builder.goto_block(block):
                cast = self.context.cast(builder, value, kind, unified)
            merged.add_incoming(cast, block)
        return unified, merged

    def _int(self, number: int) -> Any:
        """`number` as an intp constant (None while typing)."""
        return None if self.context is None else self.context.get_constant(types.intp, number)


def _is_view(index: ast.expr, ndim: int) -> bool:
    """Whether `x[index]` on an array of `ndim` axes is a view (a slice, a `None`, or
    fewer indices than axes), not an element."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    return len(parts) < ndim or any(
        isinstance(part, ast.Slice) or (isinstance(part, ast.Constant) and part.value is None)
        for part in parts)


@functools.lru_cache(maxsize=None)
def _parsed(source: str) -> list[ast.stmt]:
    """The statements of a nest, parsed when it is first typed (not when its module is
    imported: a module loaded from numba's cache never types its nests)."""
    return ast.parse(source).body


def element_nest(namespace: Mapping[str, Any], parameters: Sequence[str],
                 results: Sequence[str], source: str, per_step: bool = False) -> Any:
    """An intrinsic running the loop nest `source` (statements), which reads and writes
    the caller's `parameters` (names, passed in this order) and returns the values of
    `results` after it (names it assigns that the caller reads after it: parameters
    carried through, or values it computes): one value alone, several as a tuple,
    nothing if none. `namespace` resolves the global names the nest calls
    (the generated module's globals). An innermost loop of unknown length that calls
    vecmath's functions runs in two versions, libm's below `VECTORIZED_MIN_LENGTH`
    steps and vecmath's (vectorized) from there, where it is likely short: inside
    another loop (the last axis of an array of several) or in a nest run once
    `per_step` of a loop (a loop body's, whose lengths are those of one step's values,
    often a handful). A loop alone in a nest that is not per step, the whole of a
    vector, is assumed long."""
    fallback: list[Any] = []

    def compiled() -> Any:
        """The nest as an njit function of its own, for what this lowering lacks."""
        if not fallback:
            returned = results[0] if len(results) == 1 else ", ".join(results)
            text = (f"def nest({', '.join(parameters)}):\n"
                    + "".join(f"    {line}\n" for line in source.splitlines())
                    + f"    return ({returned})\n")
            scope = dict(namespace)
            exec(text, scope)  # noqa: S102 - the backend's own generated source
            fallback.append(numba.njit(error_model="numpy", nogil=True,
                                       no_cpython_wrapper=True)(scope["nest"]))
        return fallback[0]

    def typer(typingctx: Context, *arguments: types.Type) -> Any:
        lowering = _Lowering(typingctx, namespace)
        try:
            for name, kind in zip(parameters, arguments):
                lowering.bind(name, (kind, None))
            lowering.statements(_parsed(source))
            if any(name in lowering.views for name in results):
                raise Unsupported("a view made in the nest is read after it")
            returned = [lowering.types[name] for name in results]
            if any(kind != arguments[parameters.index(name)]
                   for name, kind in zip(results, returned) if name in parameters):
                raise Unsupported("a carried value changes type")
        except Unsupported as reason:
            LOGGER.debug("numba compiles the nest %r: %s", source, reason)
            function_type = types.Dispatcher(compiled())
            signature = typingctx.resolve_function_type(function_type, arguments, {})

            def call_compiled(context: Context, builder: ir.IRBuilder, sig: Any,
                              args: Sequence[Any]) -> Any:
                return context.get_function(function_type, sig)(builder, args)

            return signature, call_compiled
        arrays = frozenset(name for name, kind in lowering.types.items()
                           if isinstance(kind, types.Array))
        result: types.Type = (types.void if not results else returned[0]
                              if len(results) == 1 else types.Tuple(tuple(returned)))
        signature = result(*arguments)

        def codegen(context: Context, builder: ir.IRBuilder, sig: Any,
                    args: Sequence[Any]) -> Any:
            lowering = _Lowering(context.typing_context, namespace, context, builder,
                                 per_step, arrays)
            for name, kind, value in zip(parameters, sig.args, args):
                lowering.bind(name, (kind, value))
            lowering.statements(_parsed(source))
            values = [lowering.read(name)[1] for name in results]
            if not results:
                return context.get_dummy_value()
            if len(results) == 1:
                return values[0]
            return context.make_tuple(builder, sig.return_type, values)

        return signature, codegen

    return intrinsic(_variadic(typer, len(parameters)))


def _variadic(typer: Callable[..., Any], count: int) -> Callable[..., Any]:
    """`typer` with `count` named parameters: numba's intrinsic takes its arity from the
    signature of the function it wraps (no *args)."""
    names = [f"p{k}" for k in range(count)]
    text = (f"def nest_typer(typingctx, {', '.join(names)}):\n"
            f"    return typer(typingctx, {', '.join(names)})\n")
    scope: dict[str, Any] = {"typer": typer}
    exec(text, scope)  # noqa: S102 - a fixed template
    return scope["nest_typer"]  # type: ignore[no-any-return]

