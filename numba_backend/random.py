"""`RandomDraw` kernels: copy the state, fill the sample element by element from the
copy (`numba_backend.random_streams`, NumPy's algorithms on an explicit PCG64 state), and
return the copy as the new state. The input state is never written, so a state value
used twice gives the same numbers twice, as in `evaluate`."""

from __future__ import annotations

from numba_backend.registry import Allocation, ModuleBuilder, NodeInfo, numba_kernel
from ops.random_draw import RandomDraw

ELEMENT_DRAWS = {
    "random": "next_double",
    "standard_normal": "standard_normal",
    "standard_exponential": "standard_exponential",
    "standard_gamma": "standard_gamma",
    "beta": "beta",
    "binomial": "binomial",
    "poisson": "poisson",
    "integers": "integers",
}
"""Draws of one element at a time: the `random_streams` function for each."""


@numba_kernel.register
def _random_draw(op: RandomDraw, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    state, size, *parameters = node.inputs
    new_state, sample = node.outputs
    p = node.prefix
    sample_type = node.output_types[1]
    lengths = [f"{size}[{axis}]" for axis in range(len(op.shape))]
    lines = [f"{p}s = {state}.copy()"]
    if op.distribution == "permutation":
        lines += [Allocation(sample, f"({lengths[0]},)", "int64"),
                  f"permutation_into({p}s, {sample})"]
    elif op.distribution == "dirichlet":
        (alpha,) = parameters
        shape = ", ".join([*lengths, f"{alpha}.shape[0]"])
        lines += [
            Allocation(sample, f"({shape},)", "float64"),
            f"{p}rows = {sample}.reshape((-1, {alpha}.shape[0]))",
            f"for {p}r in range({p}rows.shape[0]):",
            f"    dirichlet_into({p}s, {alpha}, {p}rows[{p}r])",
        ]
    else:
        shape = "".join(f"{length}, " for length in lengths)
        lines.append(Allocation(sample, f"({shape})", sample_type.dtype))
        lines.append(f"{p}flat = {sample}.reshape(-1)")
        arguments = [f"{p}s"]
        for k, (name, parameter_type) in enumerate(zip(parameters, node.input_types[2:])):
            if parameter_type.ndim == 0:
                arguments.append(f"{name}[()]")
            else:
                lines.append(f"{p}a{k} = np.ascontiguousarray({name}).reshape(-1)")
                arguments.append(f"{p}a{k}[{p}i]")
        lines += [
            f"for {p}i in range({p}flat.shape[0]):",
            f"    {p}flat[{p}i] = {ELEMENT_DRAWS[op.distribution]}({', '.join(arguments)})",
        ]
    lines.append(f"{new_state} = {p}s")
    return lines
