"""Graph -> the Python source of one module: helper kernels plus one entry function.

The entry function takes the graph inputs, then the constants, and returns a tuple of
outputs; 0-d inputs and outputs are plain numba scalars (numbers), the others arrays. Names are positional (`i0`, `c0`, `v3_0`) and helpers are named by content
hash, so the source depends only on the graph's structure, which its structure digest
(constants counted by dtype and shape only) names. Outlined kernels (`kernels.py`) are
modules of their own, which this module imports.
"""

from __future__ import annotations

import attrs

from fgraph import Graph, Variable
from fgraph.op import Array
from numba_backend.block import emit_block
from numba_backend.kernels import outlines_kernels, repeated_kernels
from numba_backend.nests import outline_nests
from numba_backend.registry import Kernel, ModuleBuilder
from numba_backend.source import module_text


@attrs.frozen
class GeneratedModule:
    """The module source, the entry function's name, the constant arrays to pass, and the
    outlined kernels it calls, directly or not (each after the kernels it calls)."""

    source: str
    entry: str
    constants: tuple[Array, ...]
    kernels: tuple[Kernel, ...] = ()

    @property
    def text(self) -> str:
        """Everything generated: the kernels' modules, then the graph's."""
        kernels = (f"# {kernel.module_name}\n{kernel.source}\n" for kernel in self.kernels)
        return "".join(kernels) + self.source


def entry_name(graph: Graph, parallel: bool = False) -> str:
    """The entry function's (and module's) name: from the structure digest, and whether
    loops run in parallel (the two compile to different code)."""
    return f"fgraph_{graph.structure_digest[:20]}" + ("_parallel" if parallel else "")


def generate(graph: Graph, parallel: bool = False) -> GeneratedModule:
    """Generate the module computing `graph` (which should already be optimized); with
    `parallel`, its large element loops run on all threads."""
    module = ModuleBuilder(parallel, outlines_kernels(graph), repeated_kernels(graph))
    names: dict[Variable, str] = {variable: f"i{k}" for k, variable in enumerate(graph.inputs)}
    body = emit_block(graph, names, module, plain_ends=True)
    returned = "".join(f"{names[output]}, " for output in graph.outputs)
    constants = list(module.constants)  # every constant is named by now, in name order
    arguments = [f"i{k}" for k in range(len(graph.inputs))] + list(module.constants.values())
    entry = entry_name(graph, parallel)
    code = [*(f"    {line}" for statement in body for line in statement.splitlines()),
            f"    return ({returned})"]
    lines = [f"def {entry}({', '.join(arguments)}):", *outline_nests(code, arguments, module)]
    # Python calls the entry through numba's Python wrapper; nothing takes its C wrapper.
    decorator = "@numba.njit(cache=True, error_model='numpy', no_cfunc_wrapper=True)\n"
    entry_source = decorator + "\n".join(lines) + "\n"
    source = module_text("named by the structure digest", module, entry_source)
    return GeneratedModule(
        source, entry, tuple(constant.data for _, constant in constants), _load_order(module)
    )


def _load_order(module: ModuleBuilder) -> tuple[Kernel, ...]:
    """Every kernel `module` calls, directly or through others, each after the ones its
    own module imports."""
    ordered: dict[str, Kernel] = {}
    pending = [(kernel, False) for kernel in reversed(list(module.kernels.values()))]
    while pending:
        kernel, expanded = pending.pop()
        if kernel.name in ordered:
            continue
        if expanded:
            ordered[kernel.name] = kernel
        else:
            pending.append((kernel, True))
            pending.extend((k, False) for k in reversed(kernel.kernels) if k.name not in ordered)
    return tuple(ordered.values())
