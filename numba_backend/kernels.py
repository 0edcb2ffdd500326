"""Outlined kernels: a node's code as a numba function of its own, in a module of its
own, named by the digest of that module's text; the generated code calls it.

The kernel is generated for canonical names (inputs `a0`, `a1`, ..., outputs `r0`, ...,
locals under `l_`, constants as parameters `c0`, ... in order of use), so its text
depends only on what it computes: every node computing the same thing calls the one
function, compiled once per process for arrays of any layout, and called by symbol
name (`numba_backend.calls`). Its module lives in the cache like a graph's
(`numba_backend.cache`), numba's compiled code next to it, so another graph, in another
process, that calls it loads it instead of compiling it again.

A call boundary costs compile time (about 0.1 s per function on numba 0.68: its own
LLVM module, optimization and machine code), so only units whose reuse pays for it are
outlined: see `outlines`.
"""

from __future__ import annotations

import hashlib

from fgraph import Constant, Op
from numba_backend.registry import Kernel, ModuleBuilder, NodeInfo, numba_kernel
from numba_backend.source import module_text
from ops.scan_op import Scan

OPTIONS = "cache=True, error_model='numpy', nogil=True, no_cpython_wrapper=True"
"""numba's options for a kernel: it is only called from generated code, so it needs no
Python wrapper (which would cost a third of a small function's compile time)."""

def outlines(op: Op) -> bool:
    """Whether `op`'s kernel is outlined: loops, the largest units, which a model's
    graphs share (its density alone and with its gradient, and its versions edited
    outside the loops)."""
    return isinstance(op, Scan)


def emit_node(op: Op, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    """Statement lines computing `node`'s outputs: the kernel's own lines, or a call of
    the outlined kernel (see `outlines`)."""
    if not outlines(op):
        return numba_kernel(op, node, module)
    kernel, constants = outline(op, node, module.parallel)
    module.kernels[kernel.name] = kernel
    passed = (module.constant(constant, node.prefix + scope) for scope, constant in constants)
    arguments = [*node.inputs, *passed]
    returned = "".join(f"{output}, " for output in node.outputs)
    return [f"{returned}= {kernel.name}({', '.join(arguments)})"]


def outline(
    op: Op, node: NodeInfo, parallel: bool
) -> tuple[Kernel, list[tuple[str, Constant]]]:
    """The kernel computing `op` for `node`'s types, and the constants to pass it after
    the inputs (each with the scope the kernel named it in)."""
    local = NodeInfo(
        inputs=tuple(f"a{k}" for k in range(len(node.inputs))),
        outputs=tuple(f"r{k}" for k in range(len(node.outputs))),
        input_types=node.input_types,
        output_types=node.output_types,
        prefix="l_",
        input_labels=node.input_labels,
        scalar_inputs=node.scalar_inputs,
    )
    inner = ModuleBuilder(parallel)
    body = numba_kernel(op, local, inner)
    constants = list(inner.constants)
    parameters = [*local.inputs, *inner.constants.values()]
    kinds = [(t.dtype, -1 if node.holds_scalar(k) else t.ndim) for k, t in enumerate(node.input_types)]
    kinds += [(c.type.dtype, c.type.ndim) for _, c in constants]
    returned = "".join(f"{output}, " for output in local.outputs)
    code = [f"    {line}" for statement in body for line in statement.splitlines()]

    def text(name: str) -> str:
        function = "\n".join([
            f"@numba.njit({OPTIONS})",
            f"def {name}_code({', '.join(parameters)}):",
            *code,
            f"    return ({returned})",
            "",
            "",
            f"{name}_call = KernelCall({name}_code, 'fgraph_{name}', {tuple(kinds)!r})",
            "",
            "",
            "@intrinsic",
            f"def {name}(typingctx, {', '.join(parameters)}):",
            f"    return {name}_call.typed({', '.join(parameters)})",
        ])
        return module_text("one kernel, named by the digest of this text", inner, function + "\n")

    digest = hashlib.sha256(text("NAME").encode()).hexdigest()
    name = f"k_{digest[:20]}"
    kernel = Kernel(name, f"fgraph_kernel_{digest[:20]}", digest, text(name),
                    tuple(inner.kernels.values()))
    return kernel, constants
