"""Outlined kernels: a node's code as a numba function of its own, in a module of its
own, named by the digest of that module's text; the generated code calls it.

The kernel is generated for canonical names (inputs `a0`, `a1`, ..., outputs `r0`, ...,
locals under `l_`, constants as parameters `c0`, ... in order of use), so its text
depends only on what it computes: every node computing the same thing calls the one
function, compiled once per process for each argument types, and called by symbol
name (`numba_backend.calls`). Its module lives in the cache like a graph's
(`numba_backend.cache`), numba's compiled code next to it, so another graph, in another
process, that calls it loads it instead of compiling it again.

A call boundary costs compile time (0.03-0.1 s per function: its own passes, LLVM
module, optimization and machine code), so only units whose reuse pays for it are
outlined: see `emit_node`.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Hashable

import attrs

from fgraph import Apply, Constant, Graph, Op
from numba_backend.nests import outline_nests
from numba_backend.registry import Kernel, ModuleBuilder, NodeInfo, numba_kernel
from numba_backend.source import module_text
from ops.fused import Fused
from ops.scan_op import Scan

OPTIONS = ("cache=True, error_model='numpy', nogil=True, no_cpython_wrapper=True, "
           "no_cfunc_wrapper=True")
"""numba's options for a kernel: it is only called by symbol from generated code, so it
needs neither numba's Python wrapper nor its C wrapper (together 30 ms of a trivial
function's 49 ms compile)."""

OUTLINE_FROM = 40
"""Statements from which a kernel of a large graph's own code (not a loop body's) is
outlined: a smaller one compiles inline in less than a function's fixed cost (about
30 ms, and 10 ms a call site). The HMM's three small fused kernels, outlined from 12
statements, cost its cold compile 0.15 s (1.45 -> 1.30 s) and its recompile after a
term edit 0.2 s, since the entry that calls them compiles again anyway."""

OUTLINE_REPEATED_FROM = 12
"""Statements from which a kernel that a large graph's nodes compute more than once is
outlined: one function, compiled once and called by each (twenty equal cumulative
sums: one kernel)."""

LARGE_GRAPH = 40
"""Nodes from which a graph outlines its kernels (see `OUTLINE_FROM`). A smaller graph
compiles in about a second, edited or not; outlining its kernels would add that fixed
cost to every cold compile (0.1 s of 0.6 s on the logistic regression)."""


def outlines_kernels(graph: Graph) -> bool:
    """Whether `graph`'s own large kernels are outlined: those of a large graph, whose
    edited versions then recompile only what changed."""
    return len(graph.nodes) >= LARGE_GRAPH


def repeated_kernels(graph: Graph) -> frozenset[Hashable]:
    """The kernels (`kernel_key`) that two or more of `graph`'s nodes compute."""
    counts = Counter(kernel_key(node) for node in graph.nodes)
    return frozenset(key for key, count in counts.items() if count > 1)


def kernel_key(node: Apply) -> Hashable:
    """What a node's outlined kernel depends on: its op, a fused op's up to the values of
    its constants (passed as arguments), and its input types. Equal keys may still differ
    in how values are held, which only costs a second kernel."""
    op = node.op
    computed = (op.inner_graph.structure_digest, op.destroy_map) if isinstance(op, Fused) else op
    return computed, tuple(variable.type for variable in node.inputs)


def emit_node(op: Op, node: NodeInfo, module: ModuleBuilder, key: Hashable) -> list[str]:
    """Statement lines computing `node`'s outputs: the kernel's own lines, or a call of
    the outlined kernel. Loops are always outlined: the largest units, which a model's
    graphs share (its density alone and with its gradient, its versions edited outside
    the loops). Other kernels are where the module outlines them (see
    `outlines_kernels`) and they have `OUTLINE_FROM` statements or more, or
    `OUTLINE_REPEATED_FROM` if the graph computes them more than once (`key`, the node's
    `kernel_key`, is among `module.repeated`). A loop body's kernels stay inline: each
    step would pay a call and allocate what the loop now allocates once."""
    if not isinstance(op, Scan) and not (module.outlines_kernels and _large(op, node, module, key)):
        return numba_kernel(op, node, module)
    kernel, constants = outline(op, node, module.parallel)
    module.kernels[kernel.name] = kernel
    passed = (module.constant(constant, node.prefix + scope) for scope, constant in constants)
    arguments = [*node.inputs, *passed]
    returned = "".join(f"{output}, " for output in node.outputs)
    return [f"{returned}= {kernel.name}({', '.join(arguments)})"]


def _large(op: Op, node: NodeInfo, module: ModuleBuilder, key: Hashable) -> bool:
    """Whether `op`'s kernel is large enough to outline (generated into a scratch
    builder: the module's constants and helpers stay those it uses)."""
    lines = numba_kernel(op, node, ModuleBuilder(module.parallel))
    statements = sum(len(statement.splitlines()) for statement in lines)
    return statements >= (OUTLINE_REPEATED_FROM if key in module.repeated else OUTLINE_FROM)


def outline(
    op: Op, node: NodeInfo, parallel: bool
) -> tuple[Kernel, list[tuple[str, Constant]]]:
    """The kernel computing `op` for `node`'s types, and the constants to pass it after
    the inputs (each with the scope the kernel named it in)."""
    local = attrs.evolve(  # all else as the node's: types, labels, how values are held
        node,
        inputs=tuple(f"a{k}" for k in range(len(node.inputs))),
        outputs=tuple(f"r{k}" for k in range(len(node.outputs))),
        prefix="l_",
    )
    inner = ModuleBuilder(parallel)
    body = numba_kernel(op, local, inner)
    constants = list(inner.constants)
    parameters = [*local.inputs, *inner.constants.values()]
    returned = "".join(f"{output}, " for output in local.outputs)
    lines = [*(f"    {line}" for statement in body for line in statement.splitlines()),
             f"    return ({returned})"]
    return outlined_function(parameters, lines, inner), constants


def outlined_function(parameters: list[str], lines: list[str], inner: ModuleBuilder) -> Kernel:
    """The kernel whose function takes `parameters` and runs `lines` (its body, indented,
    with its `return` if it returns anything), with the helpers and kernels of `inner`,
    the builder its lines were generated into."""
    code = outline_nests(lines, parameters, inner)

    def text(name: str) -> str:
        function = "\n".join([
            f"@numba.njit({OPTIONS})",
            f"def {name}_code({', '.join(parameters)}):",
            *code,
            "",
            "",
            f"{name}_call = KernelCall({name}_code)",
            "",
            "",
            "@intrinsic",
            f"def {name}(typingctx, {', '.join(parameters)}):",
            f"    return {name}_call.typed({', '.join(parameters)})",
        ])
        return module_text("one kernel, named by the digest of this text", inner, function + "\n")

    digest = hashlib.sha256(text("NAME").encode()).hexdigest()
    name = f"k_{digest[:20]}"
    return Kernel(name, f"fgraph_kernel_{digest[:20]}", digest, text(name),
                  tuple(inner.kernels.values()))
