"""Where op classes meet their numba code: `numba_kernel`, dispatched on the op's class.

A kernel receives the op, a `NodeInfo` (the names and types of the node's inputs and
outputs in the generated function) and the `ModuleBuilder` collecting module-level
helper functions, and returns the statement lines that assign the outputs. Kernels
inline their code into the function being generated where they can: every separate
njit function costs compile time (about 0.1 s each). Helpers, where needed, are named
after a hash of their source, so equal helpers are emitted once and the module text
depends only on the graph's structure. Some kernels are outlined instead, into modules
of their own (`numba_backend.kernels`): the builder records the ones a module calls.
"""

from __future__ import annotations

import functools
import hashlib

import attrs

from fgraph import Constant, Op, TensorType


class MissingKernelError(NotImplementedError):
    """An op has no numba kernel; there is no silent object-mode fallback."""


@attrs.frozen
class NodeInfo:
    """What a kernel needs to know about one node of the graph being compiled."""

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    input_types: tuple[TensorType, ...]
    output_types: tuple[TensorType, ...]
    prefix: str
    """Unique per node: prefix for local names in inlined code, since numba needs one type
    per variable name within a function."""
    input_labels: tuple[str, ...] = ()
    """How run-time errors name each input: the user's name of a graph input, or what
    computed it."""

    def label(self, k: int) -> str:
        """Input k as an error message names it (escaped for a single-quoted literal)."""
        text = self.input_labels[k] if k < len(self.input_labels) else f"input {k}"
        return text.replace("\\", "/").replace("'", "").replace("{", "(").replace("}", ")")


@attrs.frozen
class Kernel:
    """An outlined kernel: one function in a module of its own, both named by the digest
    of the module's text (`name` is the function's, `module_name` the module's)."""

    name: str
    module_name: str
    digest: str
    source: str
    kernels: tuple[Kernel, ...]
    """The kernels its own code calls (its module imports them)."""


class ModuleBuilder:
    """Accumulates helper functions, and the outlined kernels called, for one generated
    module (a private, local builder: it never escapes code generation)."""

    def __init__(self, parallel: bool = False, outlines_kernels: bool = False) -> None:
        self.helpers: dict[str, str] = {}
        self.kernels: dict[str, Kernel] = {}
        self.constants: dict[tuple[str, Constant], str] = {}
        self.parallel = parallel
        """Whether large element loops should run on all threads (`numba.prange`)."""
        self.outlines_kernels = outlines_kernels
        """Whether large kernels of this module's own code are outlined (loops always are:
        see `numba_backend.kernels.emit_node`)."""

    def constant(self, constant: Constant, scope: str) -> str:
        """The argument name through which the compiled function receives `constant`
        (values are passed at call time, never written into the source).

        Equal constants share an argument only within one `scope`: the graph's own (`""`)
        or one node's (its prefix). Compiled code is shared by graphs with equal structure
        digests, which record which constants are the same object within the graph and
        within each inner graph, but not across nodes: a graph whose two fused nodes
        happen to hold equal constants must take the same arguments as one whose do not.
        """
        return self.constants.setdefault((scope, constant), f"c{len(self.constants)}")

    def add_helper(self, template: str, *, fastmath: bool = False, parallel: bool = False) -> str:
        """Register a function whose source names itself `NAME`; return its real name."""
        options = "cache=True, error_model='numpy', nogil=True"
        if fastmath:
            options += ", fastmath=True"
        if parallel:
            options += ", parallel=True"
        decorated = f"@numba.njit({options})\n{template.strip()}\n"
        name = "k_" + hashlib.sha256(decorated.encode()).hexdigest()[:16]
        self.helpers.setdefault(name, decorated.replace("NAME", name))
        return name


@functools.singledispatch
def numba_kernel(op: Op, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    """Statement lines computing `node`'s outputs; registered per op class."""
    raise MissingKernelError(f"no numba kernel for {type(op).__name__} ({op})")


def dtype_expression(dtype: str) -> str:
    """The numba/NumPy spelling of a dtype in generated code."""
    return "np.bool_" if dtype == "bool" else f"np.{dtype}"


class Allocation(str):
    """The statement `target = new_array(shape, dtype)`, typed: code that rearranges
    statements (a loop allocating its body's buffers once, before the loop) finds the
    allocations among a kernel's lines by their type, never by reading the text.
    Kernels write the arrays of one axis or more they allocate for their outputs as
    one (a loop keeps any other allocation in its steps)."""

    target: str

    def __new__(cls, target: str, shape: str, dtype: str) -> Allocation:
        """`shape` is the shape's source (a tuple or an int), `dtype` the dtype's name."""
        text = f"{target} = new_array({shape}, {dtype_expression(dtype)})"
        statement = super().__new__(cls, text)
        statement.target = target
        return statement
