"""The Python side of a call to a compiled graph: a function generated for the graph's
input and output types that checks and converts the arguments, calls numba's entry
point for the signature compiled eagerly, and hands out fresh outputs.

Generated, since a call of small arguments is all overhead: numba's dispatcher types
every argument before it finds the one signature there is (1.6 us for two 0-d arrays
and three 0-d results, of which boxing the results as arrays is 0.75), and a generic
loop over the arguments costs about 0.1 us per argument and per output in Python
function calls. The generated caller tests each argument's type inline (`type(a0) is
float`, or an array's dtype, order and rank), calls the compiled code's entry point
directly (no dispatch: the arguments are exactly of its types), gets 0-d outputs as
numbers and makes each a 0-d array (0.09 us, against numba's 0.25 per array). A value
that is not already of the input's type takes the full conversion (`argument`), which
applies safe casts and names the input in its errors.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fgraph import TensorType, Variable, display_name

Array = np.ndarray[Any, np.dtype[Any]]

_NUMBER_TYPES: dict[str, tuple[type, ...]] = {
    "float64": (float, np.float64), "float32": (np.float32,), "int64": (np.int64,),
    "int32": (np.int32,), "bool": (bool, np.bool_),
}
"""Per dtype, the Python and NumPy scalar types that are exactly a 0-d input of it, which
numba's entry point unboxes as they are (a Python int for an int64 input also is, when
in range: the generated test checks that)."""


def make_caller(
    inputs: Sequence[Variable],
    outputs: Sequence[Variable],
    may_alias: Sequence[bool],
    entry: Callable[..., tuple[Any, ...]],
    constants: Sequence[Array],
    single_output: bool,
) -> Callable[..., Any]:
    """The function a call of the compiled graph runs: arguments by position or by input
    name (`positional`, only for a call with keywords); `inputs` are checked and converted,
    `entry` (the compiled entry point, taking them and then `constants`) is called, and
    its results made the outputs (one, or a list): 0-d ones as fresh 0-d arrays, those
    that `may_alias` marks copied where they share memory with an argument, a constant
    or an earlier output."""
    names: dict[str, Any] = {
        "entry": entry, "formatted": formatted, "unaliased": unaliased,
        "may_alias": tuple(v.ndim > 0 and shared for v, shared in zip(outputs, may_alias)),
        "count_error": functools.partial(count_error, tuple(inputs)),
        "positional": functools.partial(positional, tuple(inputs)),
        "ndarray": np.ndarray, "array": np.array,
    }
    parameters = [f"a{k}" for k in range(len(inputs))]
    lines = [
        "def call(*arguments, **keywords):",
        "    if keywords:",
        "        arguments = positional(arguments, keywords)",
        f"    if len(arguments) != {len(inputs)}:",
        "        raise count_error(len(arguments))",
    ]
    if inputs:
        lines.append(f"    {', '.join(parameters)}, = arguments")
    for k, variable in enumerate(inputs):
        names[f"convert{k}"] = functools.partial(argument, variable)
        lines += [f"    if not ({_exact_test(f'a{k}', variable.type, k, names)}):",
                  f"        a{k} = convert{k}(a{k})"]
    for k, constant in enumerate(constants):
        names[f"c{k}"] = constant
    passed = [*parameters, *(f"c{k}" for k in range(len(constants)))]
    lines += [
        "    try:",
        f"        r = entry({', '.join(passed)})",
        "    except (ValueError, IndexError) as error:",
        "        raise formatted(error) from None",
    ]
    if any(names["may_alias"]):
        lines.append(f"    r = unaliased(r, ({''.join(f'{p}, ' for p in passed)}), may_alias)")
    returned = []
    for k, variable in enumerate(outputs):
        if variable.ndim == 0:
            names[f"d{k}"] = np.dtype(variable.dtype)
            returned.append(f"array(r[{k}], d{k})")
        else:
            returned.append(f"r[{k}]")
    lines.append(f"    return {returned[0]}" if single_output else f"    return [{', '.join(returned)}]")
    exec("\n".join(lines), names)  # noqa: S102 (text made above from types only)
    call: Callable[..., Any] = names["call"]
    return call


def _exact_test(name: str, expected: TensorType, k: int, names: dict[str, Any]) -> str:
    """A Python expression true when the argument `name` is already exactly what the entry
    point takes for an input of type `expected` (registering the names it uses)."""
    if not expected.shape:
        names[f"n{k}"] = _NUMBER_TYPES.get(expected.dtype, ())
        test = f"type({name}) in n{k}"
        if expected.dtype == "int64":  # Python ints in range: the common index argument
            test += f" or (type({name}) is int and {-2**63} <= {name} < {2**63})"
        return test
    names[f"t{k}"] = np.dtype(expected.dtype)
    test = (f"type({name}) is ndarray and {name}.dtype is t{k} and {name}.flags.c_contiguous"
            f" and {name}.ndim == {expected.ndim}")
    for axis, length in enumerate(expected.shape):
        if length is not None:
            test += f" and {name}.shape[{axis}] == {length}"
    return test


def argument(variable: Variable, value: Any) -> Any:
    """`value` as the entry's signature compiled eagerly takes it (`entry_signature`): for
    a 0-d input a NumPy number of its dtype, for others an array of its type in native
    byte order and C order (`ascontiguousarray` would also turn a 0-d array into a 1-d
    one). Safe casts are applied; errors name the input."""
    expected = variable.type
    if not expected.shape and type(value) is np.ndarray and not value.shape and (
        value.dtype == expected.dtype
    ):
        return value[()]  # a 0-d array, say a 0-d output passed back in: its number
    converted = expected.filter(value, display_name(variable))
    if not expected.shape:
        return converted[()]
    return np.asarray(converted, dtype=expected.dtype, order="C")


def in_float16(
    call: Callable[..., Any], float16_outputs: tuple[int, ...], single_output: bool,
    *arguments: Any, **keywords: Any,
) -> Any:
    """`call`'s results with the outputs at `float16_outputs` (computed in float32, see
    `numba_backend.float16`) converted to float16, NumPy's dtype for them."""
    results = call(*arguments, **keywords)
    with np.errstate(over="ignore"):  # beyond float16's range is inf, as in NumPy
        if single_output:
            return results.astype(np.float16)
        for k in float16_outputs:
            results[k] = results[k].astype(np.float16)
    return results


def positional(
    inputs: Sequence[Variable], arguments: tuple[Any, ...], keywords: dict[str, Any]
) -> tuple[Any, ...]:
    """The arguments in input order, from `arguments` (the first inputs) and `keywords`
    (by input name, as `f(x=..., w=...)`): a call with keywords takes this detour, one
    without goes straight to the generated caller. Errors name the inputs."""
    by_name: dict[str, int] = {}
    for k, variable in enumerate(inputs):
        name = getattr(variable, "name", None)
        if name is not None:
            by_name[name] = -1 if name in by_name else k  # -1: two inputs have it
    if len(arguments) > len(inputs):
        raise count_error(tuple(inputs), len(arguments))
    slots: list[Any] = [*arguments, *([_MISSING] * (len(inputs) - len(arguments)))]
    for name, value in keywords.items():
        if name not in by_name:
            known = ", ".join(display_name(variable) for variable in inputs)
            raise TypeError(f"no input is named {name!r}; the inputs are ({known})")
        k = by_name[name]
        if k < 0:
            raise TypeError(f"several inputs are named {name!r}: pass them by position")
        if k < len(arguments):
            raise TypeError(f"input {name!r} given twice: as argument {k + 1} and by name")
        slots[k] = value
    missing = [display_name(inputs[k]) for k, value in enumerate(slots) if value is _MISSING]
    if missing:
        raise TypeError(f"missing arguments for inputs {', '.join(missing)}")
    return tuple(slots)


_MISSING = object()


def count_error(inputs: tuple[Variable, ...], got: int) -> TypeError:
    names = ", ".join(display_name(variable) for variable in inputs)
    return TypeError(f"expected {len(inputs)} arguments ({names}), got {got}")


def formatted(error: ValueError | IndexError) -> ValueError | IndexError:
    """A run-time error of the generated code with its message completed: the code raises
    a message with `{}` slots and the lengths it saw as further arguments (numba builds no
    strings at run time); other errors pass unchanged."""
    message, *values = error.args or ("",)
    if not isinstance(message, str) or not values or message.count("{}") != len(values):
        return error
    return type(error)(message.format(*values))


def unaliased(
    results: Sequence[Any], arguments: Sequence[Any], may_share: Sequence[bool]
) -> list[Any]:
    """Copy any array output that may share memory with an argument, a constant or an
    earlier output (views, pass-through inputs, repeated outputs); numbers (0-d outputs)
    share nothing."""
    arrays = [argument for argument in arguments if isinstance(argument, np.ndarray)]
    outputs: list[Any] = []
    for result, check in zip(results, may_share):
        shared = check and isinstance(result, np.ndarray)
        if shared and (not result.flags.writeable or _shares_memory(result, arrays, outputs)):
            result = result.copy()
        outputs.append(result)
    return outputs


def _shares_memory(array: Array, *groups: Sequence[Any]) -> bool:
    for group in groups:
        for other in group:
            if isinstance(other, np.ndarray) and np.may_share_memory(array, other):
                return True
    return False
