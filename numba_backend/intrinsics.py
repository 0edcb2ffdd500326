"""Operations that generated code needs and numba source cannot say, or says slowly.

`assoc_add` and `assoc_mul` are float addition and multiplication that LLVM may
reassociate. A running sum `total = total + x` is one long dependency chain that LLVM
must keep in order (IEEE addition is not associative), so it neither vectorizes nor
pipelines: about 8x slower than it could be. With the `reassoc` flag on that one
instruction, and nowhere else in the loop, LLVM splits the sum into vector lanes and
interleaved partial sums, as NumPy's pairwise sum does in spirit; every other operation
of the loop keeps its exact IEEE semantics (numba's `fastmath` would relax them all).
"""

from __future__ import annotations

from typing import Any, cast

import attrs
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic


def _same_float(a: Any, b: Any) -> bool:
    return isinstance(a, types.Float) and a == b


@intrinsic
def assoc_add(typingctx: object, a: Any, b: Any) -> Any:
    """`a + b` for two floats of one dtype, reassociable by the compiler."""
    if not _same_float(a, b):
        return None

    def codegen(context: object, builder: ir.IRBuilder, signature: object, args: Any) -> Any:
        return builder.fadd(args[0], args[1], flags=("reassoc",))

    return a(a, b), codegen


@intrinsic
def assoc_mul(typingctx: object, a: Any, b: Any) -> Any:
    """`a * b` for two floats of one dtype, reassociable by the compiler."""
    if not _same_float(a, b):
        return None

    def codegen(context: object, builder: ir.IRBuilder, signature: object, args: Any) -> Any:
        return builder.fmul(args[0], args[1], flags=("reassoc",))

    return a(a, b), codegen


@attrs.frozen
class ArrayFields:
    """An array structure's data pointer, shape and strides (tuple values), read straight
    off its value. numba's `make_array` proxy first stores the structure into a stack
    slot of its own, one per use, which LLVM's SROA and InstCombine then take apart
    again (a third of a generated function's own LLVM passes)."""

    data: ir.Value
    shape: ir.Value
    strides: ir.Value
    itemsize: ir.Value

    @classmethod
    def of(cls, context: Any, builder: ir.IRBuilder, kind: types.Array, value: Any) -> ArrayFields:
        model = context.data_model_manager[kind]
        return cls(*(model.get(builder, value, name)
                     for name in ("data", "shape", "strides", "itemsize")))


def view_value(context: Any, builder: ir.IRBuilder, source: types.Array, value: Any,
               result: types.Array, shape: list[ir.Value], strides: list[ir.Value]) -> Any:
    """The structure of a view of `value` (of type `source`) with `shape` and `strides`
    and as many elements: its memory, owner, data pointer and item size, built as a
    value (numba's `populate_array` fills a stack slot)."""
    model = context.data_model_manager[source]
    view = context.data_model_manager[result]
    built: Any = ir.Constant(view.get_value_type(), ir.Undefined)
    for name in ("meminfo", "parent", "nitems", "itemsize", "data"):
        built = view.set(builder, built, model.get(builder, value, name), name)
    intp = context.get_value_type(types.intp)
    built = view.set(builder, built, cgutils.pack_array(builder, shape, intp), "shape")
    return view.set(builder, built, cgutils.pack_array(builder, strides, intp), "strides")


@intrinsic
def new_array(typingctx: object, shape: Any, dtype: Any) -> Any:
    """`np.empty(shape, dtype)` (C order) as a single lowering step. numba's own
    `np.empty` is an overload whose implementation is compiled anew for every shape
    type and dtype, about 0.05 s each in a fresh process; a graph needs several."""
    if isinstance(shape, types.Integer):
        ndim = 1
    elif _integer_tuple(shape):
        ndim = len(shape)
    else:
        return None
    if not isinstance(dtype, (types.NumberClass, types.DType)):
        return None
    element = dtype.dtype
    array_type = types.Array(element, ndim, "C")

    def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> Any:
        lengths = ([_as_length(context, builder, args[0], shape)]
                   if isinstance(shape, types.Integer) else _lengths(context, builder, shape, args[0]))
        return allocated(context, builder, array_type, lengths)

    return array_type(shape, dtype), codegen


def _integer_tuple(kind: Any) -> bool:
    """Whether `kind` types a tuple of integers (a shape)."""
    return isinstance(kind, types.BaseTuple) and all(isinstance(n, types.Integer) for n in kind)


def _lengths(context: Any, builder: ir.IRBuilder, kinds: types.BaseTuple, value: ir.Value
             ) -> list[ir.Value]:
    """The intp lengths of the shape tuple `value` (of type `kinds`, an `_integer_tuple`)."""
    return [_as_length(context, builder, item, cast(types.Integer, kind))
            for item, kind in zip(cgutils.unpack_tuple(builder, value, len(kinds)), kinds)]


def _c_strides(builder: ir.IRBuilder, itemsize: ir.Value, lengths: list[ir.Value]
               ) -> list[ir.Value]:
    """The strides of a C-contiguous array of `lengths` (none for a 0-d one)."""
    strides = [itemsize] if lengths else []
    for length in reversed(lengths[1:]):
        strides.append(builder.mul(strides[-1], length))
    return strides[::-1]


def _as_length(context: Any, builder: ir.IRBuilder, value: ir.Value, kind: types.Integer) -> ir.Value:
    """`value` as an intp length: an unsigned one of 64 bits must fit (numba's error)."""
    if not kind.signed and kind.bitwidth >= 64:
        limit = ir.Constant(value.type, 2**63 - 1)
        with cgutils.if_unlikely(builder, builder.icmp_unsigned(">", value, limit)):
            context.call_conv.return_user_exc(builder, ValueError,
                                              ("Cannot safely convert value to intp",))
    length: ir.Value = context.cast(builder, value, kind, types.intp)
    return length


def allocated(context: Any, builder: ir.IRBuilder, array_type: types.Array,
              lengths: list[ir.Value]) -> Any:
    """A new C-order array of `lengths` (intp values), as numba's `np.empty` makes it
    and with its errors, in two branches: numba checks each length for fitting intp and
    for being negative, each with a raise, and calls its allocator as a compiled
    function linked into the caller (an allocation cost 4 ms of compile)."""
    intp = context.get_value_type(types.intp)
    zero = ir.Constant(intp, 0)
    if lengths:
        negative = builder.icmp_signed("<", lengths[0], zero)
        for length in lengths[1:]:
            negative = builder.or_(negative, builder.icmp_signed("<", length, zero))
        with cgutils.if_unlikely(builder, negative):
            context.call_conv.return_user_exc(builder, ValueError,
                                              ("negative dimensions not allowed",))
    item = context.get_abi_sizeof(context.get_data_type(array_type.dtype))
    counts: list[ir.Value] = [ir.Constant(intp, 1)]  # elements, then bytes
    overflow: ir.Value = cgutils.false_bit
    for length in [*lengths, ir.Constant(intp, item)]:
        product = builder.smul_with_overflow(counts[-1], length)
        counts.append(builder.extract_value(product, 0))
        overflow = builder.or_(overflow, builder.extract_value(product, 1))
    nitems, size = counts[-2], counts[-1]
    with cgutils.if_unlikely(builder, overflow):
        context.call_conv.return_user_exc(builder, ValueError, (
            "array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum "
            "possible size.",))
    meminfo = context.nrt.meminfo_alloc_aligned(
        builder, size=size, align=context.get_preferred_array_alignment(array_type.dtype))
    data = context.nrt.meminfo_data(builder, meminfo)
    model = context.data_model_manager[array_type]
    structure = model.get_value_type()
    field_type = {name: structure.elements[model.get_field_position(name)]
                  for name in ("parent", "data")}
    built: Any = ir.Constant(structure, ir.Undefined)
    fields = {
        "meminfo": meminfo, "parent": ir.Constant(field_type["parent"], None),
        "nitems": nitems, "itemsize": ir.Constant(intp, item),
        "data": builder.bitcast(data, field_type["data"]),
        "shape": cgutils.pack_array(builder, lengths, intp),
        "strides": cgutils.pack_array(builder, _c_strides(builder, ir.Constant(intp, item),
                                                          lengths), intp),
    }
    for name, value in fields.items():
        built = model.set(builder, built, value, name)
    return built


@intrinsic
def array_of(typingctx: object, values: Any, dtype: Any) -> Any:
    """A new 1-d array of `dtype` holding the numbers of the tuple `values`, as
    `np.array(list(values), dtype)`, whose list and conversion numba compiles anew in
    every helper using one (the LAPACK helpers pass their integer arguments so)."""
    if not isinstance(values, types.BaseTuple) or not all(
        isinstance(value, (types.Integer, types.Float, types.Boolean)) for value in values
    ):
        return None
    if not isinstance(dtype, (types.NumberClass, types.DType)):
        return None
    element = dtype.dtype
    array_type = types.Array(element, 1, "C")

    def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> Any:
        length = context.get_constant(types.intp, len(values))
        array = allocated(context, builder, array_type, [length])
        data = ArrayFields.of(context, builder, array_type, array).data
        items = cgutils.unpack_tuple(builder, args[0], len(values))
        for position, (item, item_type) in enumerate(zip(items, values)):
            pointer = builder.gep(data, [context.get_constant(types.intp, position)])
            builder.store(context.cast(builder, item, item_type, element), pointer)
        return array

    return array_type(values, dtype), codegen


@intrinsic
def with_layout_of(typingctx: object, view: Any, source: Any) -> Any:
    """`view` typed with `source`'s memory order (C or Fortran), for views that differ
    from their source only by dropped or inserted length-1 axes, which keep its order.
    numba types `x[:, 0]` and `x[:, None]` as arbitrarily strided ('A'), so an element
    loop reading them loses vectorization (0.75 ms of the logistic benchmark's 1.8)."""
    arrays = isinstance(view, types.Array) and isinstance(source, types.Array)
    if not arrays:
        return None
    result = view.copy(layout=source.layout) if source.layout in ("C", "F") else view

    def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> Any:
        return impl_ret_borrowed(context, builder, result, args[0])

    return result(view, source), codegen


@intrinsic(prefer_literal=True)
def dimshuffled(typingctx: object, array: Any, order: Any) -> Any:
    """DimShuffle's view of `array`: `order` is a literal string naming, per axis of the
    view, the axis of `array` it is, or `x` for a new axis of length 1 (`"x,1,0"`); axes
    it does not name (of length 1) are dropped. The view keeps `array`'s memory order
    (C or Fortran) when the named axes keep theirs. A few instructions: numba's own
    spelling, `x[0, :][None, :]`, is typed and lowered index by index (15-20 ms of
    compile a view, against about 3), and its `transpose(axes)` took 2.5 s to compile
    on its first use in a process."""
    if not isinstance(array, types.Array) or not isinstance(order, types.StringLiteral):
        return None
    parts = order.literal_value.split(",") if order.literal_value else []
    named = [int(part) for part in parts if part != "x"]
    if len(set(named)) != len(named) or not all(0 <= axis < array.ndim for axis in named):
        return None
    keeps_order = named == sorted(named) and array.layout in ("C", "F")
    result = array.copy(ndim=len(parts), layout=array.layout if keeps_order else "A")

    def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> Any:
        source = ArrayFields.of(context, builder, array, args[0])
        shape = cgutils.unpack_tuple(builder, source.shape, array.ndim)
        strides = cgutils.unpack_tuple(builder, source.strides, array.ndim)
        one, zero = (context.get_constant(types.intp, value) for value in (1, 0))
        view = view_value(context, builder, array, args[0], result,
                          [one if part == "x" else shape[int(part)] for part in parts],
                          [zero if part == "x" else strides[int(part)] for part in parts])
        return impl_ret_borrowed(context, builder, result, view)

    return result(array, order), codegen


@intrinsic
def any_layout(typingctx: object, array: Any) -> Any:
    """`array` typed as arbitrarily strided ('A') and writable. A helper called with C,
    Fortran and strided arguments, constants (read-only) or not, then compiles once
    instead of once per combination (about 0.3-0.6 s each, cold); the LAPACK helpers
    copy their operands anyway and write only into their outputs."""
    if not isinstance(array, types.Array):
        return None
    result = array.copy(layout="A", readonly=False)

    def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> Any:
        return impl_ret_borrowed(context, builder, result, args[0])

    return result(array), codegen


@intrinsic
def reshaped(typingctx: object, array: Any, shape: Any) -> Any:
    """`array` in C order with the lengths of the tuple `shape`, of which one may be -1
    (the caller has checked that the sizes agree): a view of a C-contiguous `array`,
    else a copy. numba spells it `np.ascontiguousarray(array).reshape(shape)`: the first
    an overload whose implementation each process compiles, the second a helper each
    reshape links in, both optimized again in every function using them."""
    if not isinstance(array, types.Array) or not _integer_tuple(shape):
        return None
    viewed = array.layout == "C"
    result = array.copy(ndim=len(shape), layout="C", readonly=not array.mutable and viewed)

    def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> Any:
        intp = context.get_value_type(types.intp)
        source = ArrayFields.of(context, builder, array, args[0])
        old_shape = cgutils.unpack_tuple(builder, source.shape, array.ndim)
        size: ir.Value = ir.Constant(intp, 1)
        for length in old_shape:
            size = builder.mul(size, length)
        lengths = _lengths(context, builder, shape, args[1])
        known: ir.Value = ir.Constant(intp, 1)
        for length in lengths:
            free = builder.icmp_signed("==", length, ir.Constant(intp, -1))
            known = builder.select(free, known, builder.mul(known, length))
        nonzero = builder.select(builder.icmp_signed("==", known, ir.Constant(intp, 0)),
                                 ir.Constant(intp, 1), known)
        inferred = builder.sdiv(size, nonzero)
        lengths = [builder.select(builder.icmp_signed("==", length, ir.Constant(intp, -1)),
                                  inferred, length) for length in lengths]
        if viewed:
            strides = _c_strides(builder, source.itemsize, lengths)
            view = view_value(context, builder, array, args[0], result, lengths, strides)
            return impl_ret_borrowed(context, builder, result, view)
        copy = allocated(context, builder, result, lengths)
        target = ArrayFields.of(context, builder, result, copy).data
        strides = cgutils.unpack_tuple(builder, source.strides, array.ndim)
        position = cgutils.alloca_once_value(builder, ir.Constant(intp, 0))
        with cgutils.loop_nest(builder, old_shape, intp) as indices:
            read = cgutils.get_item_pointer2(context, builder, source.data, old_shape, strides,
                                             array.layout, list(indices))
            at = builder.load(position)
            builder.store(builder.load(read), builder.gep(target, [at]))
            builder.store(builder.add(at, ir.Constant(intp, 1)), position)
        return copy

    return result(array, shape), codegen


@intrinsic
def broadcast_view(typingctx: object, array: Any, shape: Any) -> Any:
    """`np.broadcast_to(array, shape)`: a read-only view with stride 0 along the axes it
    stretches (new leading ones, or ones of length 1), a ValueError for a shape it does
    not fit or a negative length. numba's `np.broadcast_to` is an overload each process
    compiles per argument types, then optimizes again in each function using it."""
    if not isinstance(array, types.Array) or not _integer_tuple(shape) or len(shape) < array.ndim:
        return None
    result = types.Array(array.dtype, len(shape), "A", readonly=True)

    def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> Any:
        intp = context.get_value_type(types.intp)
        zero, one = ir.Constant(intp, 0), ir.Constant(intp, 1)
        source = ArrayFields.of(context, builder, array, args[0])
        old_shape = cgutils.unpack_tuple(builder, source.shape, array.ndim)
        old_strides = cgutils.unpack_tuple(builder, source.strides, array.ndim)
        lengths = _lengths(context, builder, shape, args[1])
        new_axes = len(shape) - array.ndim
        bad: ir.Value = cgutils.false_bit
        strides: list[ir.Value] = []
        nitems: ir.Value = one
        for axis, length in enumerate(lengths):
            bad = builder.or_(bad, builder.icmp_signed("<", length, zero))
            nitems = builder.mul(nitems, length)
            if axis < new_axes:
                strides.append(zero)
                continue
            old = old_shape[axis - new_axes]
            same = builder.icmp_signed("==", old, length)
            bad = builder.or_(bad, builder.not_(builder.or_(
                same, builder.icmp_signed("==", old, one))))
            strides.append(builder.select(same, old_strides[axis - new_axes], zero))
        with cgutils.if_unlikely(builder, bad):
            context.call_conv.return_user_exc(builder, ValueError, (
                "operands could not be broadcast together with remapped shapes",))
        view = view_value(context, builder, array, args[0], result, lengths, strides)
        view = context.data_model_manager[result].set(builder, view, nitems, "nitems")
        return impl_ret_borrowed(context, builder, result, view)

    return result(array, shape), codegen


PER_TUPLE = 25
"""Lengths per tuple given to `first_below` or `first_unequal`: generated code groups
more into several, since CPython builds a tuple of more than 30 names through a list,
which numba does not type as a tuple."""


@intrinsic
def first_below(typingctx: object, bound: Any, lengths: Any) -> Any:
    """The position of the first of `lengths` (integers, in tuples nested as the caller
    likes: CPython builds a tuple of more than 30 names through a list) below `bound`,
    or how many there are: a loop's check of its sequences' rows as one comparison
    each and no branch. Written as `0 if a < n else 1 if b < n else ...`, each
    conditional was blocks and a merge for numba to type and lower (0.15 s of a loop
    kernel with 15 sequences)."""
    if not isinstance(bound, types.Integer):
        return None
    flat: list[tuple[int, ...]] = []  # the path of each length in the nested tuples
    pending: list[tuple[Any, tuple[int, ...]]] = [(lengths, ())]
    while pending:
        kind, path = pending.pop()
        if isinstance(kind, types.BaseTuple):
            pending += [(item, (*path, k)) for k, item in reversed(list(enumerate(kind)))]
        elif isinstance(kind, types.Integer):
            flat.append(path)
        else:
            return None

    def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> Any:
        bound_value = context.cast(builder, args[0], bound, types.intp)
        below: list[ir.Value] = []
        for path in flat:
            value, kind = args[1], lengths
            for k in path:
                value, kind = builder.extract_value(value, k), kind[k]
            below.append(builder.icmp_signed(
                "<", context.cast(builder, value, kind, types.intp), bound_value))
        return _first_true(context, builder, below)

    return types.intp(bound, lengths), codegen


@intrinsic
def first_unequal(typingctx: object, lengths: Any, wanted: Any) -> Any:
    """The position of the first of `lengths` unequal to the length `wanted` at the same
    position (two tuples of as many integers), or how many there are: an element loop's
    checks of its inputs' lengths as one comparison each and one raise (each raise is an
    exit numba types and lowers: 10 checks took 0.07 s of a 0.5 s entry)."""
    pairs = (lengths, wanted)
    if not all(isinstance(kind, types.BaseTuple) for kind in pairs) or len(lengths) != len(wanted):
        return None
    if not all(isinstance(item, types.Integer) for kind in pairs for item in kind):
        return None

    def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> Any:
        unequal: list[ir.Value] = []
        for position in range(len(lengths)):
            got, expected = (
                context.cast(builder, builder.extract_value(value, position), kind[position],
                             types.intp)
                for value, kind in zip(args, pairs))
            unequal.append(builder.icmp_signed("!=", got, expected))
        return _first_true(context, builder, unequal)

    return types.intp(lengths, wanted), codegen


def _first_true(context: Any, builder: ir.IRBuilder, tests: list[ir.Value]) -> ir.Value:
    """The position of the first true of `tests` (booleans), or how many there are: a
    chain of selects, no branch."""
    result: ir.Value = context.get_constant(types.intp, len(tests))
    for position in reversed(range(len(tests))):
        result = builder.select(tests[position], context.get_constant(types.intp, position),
                                result)
    return result
