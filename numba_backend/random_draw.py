"""`RandomDraw` kernels: copy the state, check the parameters as NumPy does, fill the
sample from the copy (`numba_backend.random_streams` and `random_distributions`, NumPy's
algorithms on an explicit PCG64 state), and return the copy as the new state. The input
state is never written, so a state value used twice gives the same numbers twice, as in
`evaluate`.

Nothing here is per distribution: each `ops.random_draw.Distribution` names its compiled
draw, how it fills the sample (`layout`) and NumPy's checks of its parameters."""

from __future__ import annotations

from numba_backend.loops import fresh_copy
from numba_backend.registry import Allocation, ModuleBuilder, NodeInfo, numba_kernel
from ops.random_draw import Check, Distribution, RandomDraw


@numba_kernel.register
def _random_draw(op: RandomDraw, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    state, size, *parameters = node.inputs
    new_state, sample = node.outputs
    p = node.prefix
    spec = op.spec
    lengths = [f"{size}[{axis}]" for axis in range(len(op.shape))]
    event = spec.event_parameter
    trailing = [] if event is None else [f"{parameters[event]}.shape[0]"]
    shape = "".join(f"{length}, " for length in [*lengths, *trailing])
    lines = [*fresh_copy(f"{p}s", state, node.input_types[0], f"{p}c"),
             Allocation(sample, f"({shape})", spec.dtype)]
    if spec.layout == "whole":
        return [*lines, f"{spec.kernel}({p}s, {sample})", f"{new_state} = {p}s"]
    # each parameter as the draw of one element (or row) reads it, at index {p}i
    arguments: list[str] = []
    per_element = False
    for k, (name, declared, parameter_type) in enumerate(zip(parameters, spec.parameters, node.input_types[2:])):
        if declared.rank == 1:
            arguments.append(name)
        elif parameter_type.ndim == 0:
            arguments.append(f"{name}[()]")
        else:
            lines.append(f"{p}a{k} = reshaped({name}, (-1,))")
            arguments.append(f"{p}a{k}[{p}i]")
            per_element = True
    checks = _check_lines(op, spec, arguments)
    if spec.layout == "rows":
        assert event is not None
        lines.append(f"{p}rows = reshaped({sample}, (-1, {parameters[event]}.shape[0]))")
        count, call = f"{p}rows.shape[0]", f"{spec.kernel}({p}s, {', '.join(arguments)}, {p}rows[{p}i])"
    else:
        lines.append(f"{p}flat = reshaped({sample}, (-1,))")
        count, call = f"{p}flat.shape[0]", f"{p}flat[{p}i] = {spec.kernel}({', '.join([f'{p}s', *arguments])})"
    if not per_element:
        lines += checks
    lines.append(f"for {p}i in range({count}):")
    if per_element:
        lines += [f"    {line}" for line in checks]
    return [*lines, f"    {call}", f"{new_state} = {p}s"]


def _check_lines(op: RandomDraw, spec: Distribution, arguments: list[str]) -> list[str]:
    """NumPy's checks of the parameters, on the numbers one draw reads, raising
    `evaluate`'s message."""
    values = dict(zip(spec.names, arguments))
    return [line for check in spec.checks for line in _check(op, check, values)]


def _check(op: RandomDraw, check: Check, values: dict[str, str]) -> list[str]:
    message = f"random.{op.distribution}: {check.message}"
    return [f"if not ({check.condition.format(**values)}):", f"    raise ValueError({message!r})"]
