"""A compiled graph inside the user's own compiled code, with no Python in between:

- `numba_function`: an njit function the user's `@numba.njit` code calls (a sampler's
  loop, an optimizer): inputs as numbers (0-d) and arrays, outputs as numbers (0-d) and
  fresh arrays; one output alone, several as a tuple.
- `cfunc`: a C function over buffers, `int64 f(void **inputs, int64 *shapes, void
  **outputs, int64 *sizes)`, for a C or Rust caller (see `CALL_CONTRACT`).
- `low_level_callable`: `double f(int n, double *x, void *user_data)`, the signature
  SciPy's `LowLevelCallable` takes in `scipy.integrate.quad`.

Each calls the graph's entry function as compiled for the Python call (one compile
serves all), through its address: numba would otherwise link the entry's IR into the
caller and compile it again (seconds for a large graph). The graph's constants are bound
by their addresses too. Both addresses belong to this process, so the code holding them
must never reach a disk cache: numba's `add_dynamic_addr` marks it (and any function
calling it, which links it) as not cacheable, and numba then warns and compiles instead.
The functions are compiled on first use (numba's own compile, 0.04-0.3 s), not
when the graph is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numba
import numpy as np
import scipy
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.errors import TypingError
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array
from numba.np.numpy_support import as_dtype

from fgraph import Graph, TensorType, Variable, display_name
from fgraph.op import Array
from fgraph.types import format_shape

CALL_CONTRACT = """\
int64_t f(void **inputs, int64_t *shapes, void **outputs, int64_t *sizes)

inputs[k]   input k's elements, C order, of its dtype (a 0-d input: one element)
shapes      the lengths of the inputs that have axes, one after the other
            (input 0's, then input 1's, ...; 0-d inputs have none)
outputs[k]  where output k's elements are written, C order, of its dtype; no
            output buffer may overlap an input's
sizes[k]    how many elements outputs[k] has room for: output k's size exactly
returns     0: done; 1: a length is negative or differs from the static length
            the input's type declares; 2: computing failed (lengths that do not fit
            together, an index out of bounds, a failed factorization: call the
            Python function with the same values for the message); 3: a size in
            `sizes` differs from its output's. Nothing is written unless 0."""
"""The C function `cfunc` compiles, as its docstring and the documentation state it."""


def numba_function(
    dispatcher: numba.Dispatcher,
    signature: tuple[Any, ...],
    graph: Graph,
    constants: Sequence[Array],
    single_output: bool,
    may_alias: Sequence[bool],
) -> numba.Dispatcher:
    """An njit function computing `graph`'s outputs from its inputs: numbers for 0-d
    inputs (safe casts applied), arrays of the input's rank and dtype (or one that casts
    safely; other layouts than C order are copied) for the others, checked against
    static lengths. 0-d outputs are numbers, the others arrays that share no memory with
    an argument, a constant or another output (`may_alias` ones are copied)."""
    namespace: dict[str, Any] = {
        "entry": _entry_call(dispatcher, signature, quiet=False), "ValueError": ValueError,
    }
    parameters = [f"a{k}" for k in range(len(graph.inputs))]
    lines = [f"def graph_function({', '.join(parameters)}):"]
    for k, variable in enumerate(graph.inputs):
        namespace[f"as_input{k}"] = _as_input(variable)
        lines.append(f"    i{k} = as_input{k}(a{k})")
        for axis, length in enumerate(variable.type.shape):
            if length is not None:
                message = (f"{display_name(variable)}: expected shape "
                           f"{format_shape(variable.type.shape)}, got length other than "
                           f"{length} along axis {axis}")
                lines += [f"    if i{k}.shape[{axis}] != {length}:",
                          f"        raise ValueError({message!r})"]
    passed = [f"i{k}" for k in range(len(graph.inputs))] + _bound_constants(constants, namespace)
    lines.append(f"    r = entry(({''.join(f'{p}, ' for p in passed)}))")
    returned = [
        f"r[{k}].copy()" if shared and variable.ndim else f"r[{k}]"
        for k, (variable, shared) in enumerate(zip(graph.outputs, may_alias))
    ]
    lines.append(f"    return {returned[0]}" if single_output else f"    return ({', '.join(returned)},)")
    exec("\n".join(lines), namespace)  # noqa: S102 (text made above from types only)
    compiled: numba.Dispatcher = numba.njit(nogil=True)(namespace["graph_function"])
    return compiled


def cfunc(
    dispatcher: numba.Dispatcher,
    signature: tuple[Any, ...],
    graph: Graph,
    constants: Sequence[Array],
) -> numba.CFunc:
    """numba's `CFunc` of the C function `CALL_CONTRACT` states (`.address`, `.ctypes`)."""
    namespace: dict[str, Any] = {
        "entry": _entry_call(dispatcher, signature, quiet=True), "carray": numba.carray,
    }
    lines = ["def graph_cfunc(inputs, shapes, outputs, sizes):"]
    offset = 0
    for k, variable in enumerate(graph.inputs):
        namespace[f"t{k}"] = np.dtype(variable.dtype).type
        if variable.ndim == 0:
            lines.append(f"    i{k} = carray(inputs[{k}], (1,), t{k})[0]")
            continue
        lengths = [f"shapes[{offset + axis}]" for axis in range(variable.ndim)]
        for name, length in zip(lengths, variable.type.shape):
            lines += [f"    if {name} {'< 0' if length is None else f'!= {length}'}:",
                      "        return 1"]
        lines.append(f"    i{k} = carray(inputs[{k}], ({''.join(f'{n}, ' for n in lengths)}), t{k})")
        offset += variable.ndim
    passed = [f"i{k}" for k in range(len(graph.inputs))] + _bound_constants(constants, namespace)
    lines += [f"    ok, r = entry(({''.join(f'{p}, ' for p in passed)}))", "    if not ok:", "        return 2"]
    for k, variable in enumerate(graph.outputs):
        size = "1" if variable.ndim == 0 else f"r[{k}].size"
        lines += [f"    if sizes[{k}] != {size}:", "        return 3"]
    namespace["write_flat"] = _write_flat
    for k, variable in enumerate(graph.outputs):
        namespace[f"u{k}"] = np.dtype(variable.dtype).type
        size = "1" if variable.ndim == 0 else f"r[{k}].size"
        written = f"carray(outputs[{k}], ({size},), u{k})"
        lines.append(f"    {written}[0] = r[{k}]" if variable.ndim == 0 else f"    write_flat(r[{k}], {written})")
    lines.append("    return 0")
    exec("\n".join(lines), namespace)  # noqa: S102 (text made above from types only)
    buffers, counts = types.CPointer(types.voidptr), types.CPointer(types.int64)
    return numba.cfunc(types.int64(buffers, counts, buffers, counts), nogil=True)(
        namespace["graph_cfunc"]
    )


def low_level_callable(
    dispatcher: numba.Dispatcher,
    signature: tuple[Any, ...],
    graph: Graph,
    constants: Sequence[Array],
) -> scipy.LowLevelCallable:
    """`double f(int n, double *x, void *user_data)` as a `scipy.LowLevelCallable`, for a
    graph of one float64 0-d output whose inputs are float64 numbers (x holds them in
    order, n their count, as `quad` passes the variable then `args`) or one float64
    vector (x holds its n elements). NaN when n does not fit or computing fails."""
    inputs, outputs = graph.inputs, graph.outputs
    numbers = all(v.type == TensorType("float64", ()) for v in inputs)
    vector = len(inputs) == 1 and inputs[0].dtype == "float64" and inputs[0].ndim == 1
    if len(outputs) != 1 or outputs[0].type != TensorType("float64", ()) or not (numbers or vector):
        given = ", ".join(str(v.type) for v in inputs)
        raise TypeError(
            "low_level_callable computes a float64 number from float64 numbers or from one "
            f"float64 vector: this graph takes ({given}) and gives "
            f"({', '.join(str(v.type) for v in outputs)})"
        )
    namespace: dict[str, Any] = {
        "entry": _entry_call(dispatcher, signature, quiet=True), "carray": numba.carray,
        "nan": np.nan,
    }
    lines = ["def graph_low_level(n, x, user_data):"]
    if vector:
        length = inputs[0].type.shape[0]
        lines += [f"    if n {'< 0' if length is None else f'!= {length}'}:", "        return nan",
                  "    i0 = carray(x, (n,))"]
    else:
        lines += [f"    if n != {len(inputs)}:", "        return nan"]
        lines += [f"    i{k} = x[{k}]" for k in range(len(inputs))]
    passed = [f"i{k}" for k in range(len(inputs))] + _bound_constants(constants, namespace)
    lines += [f"    ok, r = entry(({''.join(f'{p}, ' for p in passed)}))", "    return r[0] if ok else nan"]
    exec("\n".join(lines), namespace)  # noqa: S102 (text made above from types only)
    compiled = numba.cfunc(
        types.float64(types.intc, types.CPointer(types.float64), types.voidptr), nogil=True
    )(namespace["graph_low_level"])
    function = compiled.ctypes
    function.compiled = compiled  # the machine code lives as long as the callable
    return scipy.LowLevelCallable(function, signature="double (int, double *, void *)")


def _bound_constants(constants: Sequence[Array], namespace: dict[str, Any]) -> list[str]:
    """The expressions passing `constants` to the entry (registering the intrinsics they
    call in `namespace`, which keeps the arrays alive as long as the function)."""
    for k, constant in enumerate(constants):
        namespace[f"constant{k}"] = _bound_array(constant)
    return [f"constant{k}()" for k in range(len(constants))]


def _bound_array(array: Array) -> Any:
    """An intrinsic of no arguments giving `array` (of numba's type for it, the type the
    entry was compiled for) from its address: no reference counting, as the array
    outlives the code (the intrinsic holds it)."""
    array_type = numba.typeof(array)
    assert isinstance(array_type, types.Array)

    def typer(typingctx: Any) -> Any:
        def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
            made = make_array(array_type)(context, builder)
            address = context.add_dynamic_addr(builder, array.ctypes.data, info="fgraph constant")
            lengths = [context.get_constant(types.intp, n) for n in array.shape]
            steps = [context.get_constant(types.intp, n) for n in array.strides]
            populate_array(
                made,
                data=builder.bitcast(address, made.data.type),
                shape=cgutils.pack_array(builder, lengths, context.get_value_type(types.intp)),
                strides=cgutils.pack_array(builder, steps, context.get_value_type(types.intp)),
                itemsize=context.get_constant(types.intp, array.itemsize),
                meminfo=None,
            )
            return made._getvalue()

        return array_type(), codegen

    return intrinsic(typer)  # which holds `typer`, whose code holds `array`


def _entry_call(dispatcher: numba.Dispatcher, signature: tuple[Any, ...], quiet: bool) -> Any:
    """An intrinsic calling the entry compiled for `signature` through its address, given
    a tuple of exactly those argument types. It raises the entry's errors in its caller, or, if
    `quiet`, gives `(ok, outputs)`: on an error ok is false, the outputs zeros (null
    arrays, which nothing frees), and a dynamic exception's memory is freed (a C caller
    has nobody to raise to)."""
    compiled = dispatcher.overloads[signature]
    address = compiled.library.get_pointer_to_function(compiled.fndesc.llvm_func_name)
    outputs = compiled.signature.return_type
    returned = types.Tuple((types.boolean, outputs)) if quiet else outputs

    def typer(typingctx: Any, arguments: Any) -> Any:
        if not isinstance(arguments, types.BaseTuple) or tuple(arguments) != signature:
            raise TypingError(f"the entry takes a tuple of {signature}, got {arguments}")

        def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
            values = [builder.extract_value(args[0], k) for k in range(len(signature))]
            function_type = context.call_conv.get_function_type(outputs, signature)
            pointer = context.add_dynamic_addr(builder, address, info="fgraph entry function")
            callee = builder.bitcast(pointer, function_type.as_pointer())
            status, result = context.call_conv.call_function(
                builder, callee, outputs, signature, values
            )
            if not quiet:
                with cgutils.if_unlikely(builder, status.is_error):
                    context.call_conv.return_status_propagate(builder, status)
                return result
            with builder.if_then(status.is_user_exc, likely=False):
                _free_dynamic_exception(context, builder, status.excinfoptr)
            return context.make_tuple(builder, returned, [status.is_ok, result])

        return returned(arguments), codegen

    typer.__name__ = "graph entry"
    return intrinsic(typer)


def _free_dynamic_exception(context: Any, builder: ir.IRBuilder, excinfo: Any) -> None:
    """Free what a raised exception with values known at run time allocated (numba frees
    it when it makes the Python exception; a static exception's record is a constant)."""
    info = builder.load(excinfo)
    dynamic = builder.icmp_signed(">", builder.extract_value(info, 4), ir.IntType(32)(0))
    with builder.if_then(dynamic):
        context.nrt.free(builder, builder.extract_value(info, 2))
        context.nrt.free(builder, builder.bitcast(excinfo, cgutils.voidptr_t))


def _as_input(variable: Variable) -> Any:
    """An intrinsic giving an argument as the entry takes it for `variable`: a number of
    its dtype, or a C-ordered array of its rank and dtype (copied unless it is one); a
    value of another kind, rank, or a dtype that does not cast safely fails to compile
    with a message naming the input."""
    expected = variable.type
    dtype = numba.from_dtype(np.dtype(expected.dtype))
    scalar_type = np.dtype(expected.dtype).type
    target = types.Array(dtype, expected.ndim, "C") if expected.ndim else dtype

    def typer(typingctx: Any, value: Any) -> Any:
        given = types.unliteral(value)
        element = given.dtype if isinstance(given, types.Array) else given
        fits = isinstance(given, types.Array) == bool(expected.ndim) and (
            not isinstance(given, types.Array) or given.ndim == expected.ndim
        )
        if not fits or not isinstance(element, (types.Number, types.Boolean)) or not np.can_cast(
            as_dtype(element), np.dtype(expected.dtype), "safe"
        ):
            kind = "a number" if not expected.ndim else f"an array of {expected.ndim} axes"
            raise TypingError(
                f"{display_name(variable)}: expected {kind} of dtype {expected.dtype} "
                f"(type {expected}), got {value}"
            )

        def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
            if not isinstance(given, types.Array):
                return context.cast(builder, args[0], given, dtype)
            if given.layout == "C" and given.dtype == dtype:  # read-only or not: the
                return impl_ret_borrowed(context, builder, target, args[0])  # entry never writes it
            return context.compile_internal(builder, _c_order_copy(scalar_type), target(given), args)

        return target(value), codegen

    typer.__name__ = f"input {display_name(variable)}"  # as numba's errors name it
    return intrinsic(typer)


@numba.njit(nogil=True)
def _write_flat(values: Array, out: Array) -> None:
    """`values`' elements in C order into the vector `out` (numba compiles `out[...] =
    values` with its general broadcasting in 1.5 s, this loop in 0.08 s)."""
    position = 0
    for value in values.flat:
        out[position] = value
        position += 1


def _c_order_copy(scalar_type: type) -> Any:
    """A function copying an array of any layout and a dtype that casts safely into a
    fresh C-ordered array of `scalar_type` (numba's `astype` keeps Fortran order, and
    `result[...] = array` compiles in 2 s, this loop in 0.1 s)."""

    def copy(array: Array) -> Array:
        result: Array = np.empty(array.shape, scalar_type)
        for index in np.ndindex(array.shape):
            result[index] = array[index]
        return result

    return copy
