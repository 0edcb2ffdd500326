"""Where op classes meet their numba code: `numba_kernel`, dispatched on the op's class.

A kernel receives the op, a `NodeInfo` (the names and types of the node's inputs and
outputs in the generated function) and the `ModuleBuilder` collecting module-level
helper functions, and returns the statement lines that assign the outputs. Kernels
inline their code into the function being generated where they can: every separate
njit function costs compile time (about 0.1 s each). Helpers, where needed, are named
after a hash of their source, so equal helpers are emitted once and the module text
depends only on the graph's structure. Some kernels are outlined instead, into modules
of their own (`numba_backend.kernels`): the builder records the ones a module calls.

A 0-d value is a 0-d array unless both the kernel computing it and one reading it are
marked `scalar_kernel` (likewise a value of one element, such as a scalar given an axis
to broadcast along, for the kernels that take those): then it is a plain numba scalar
(`NodeInfo.scalar_inputs`, `NodeInfo.scalar_outputs`), which numba types and lowers at
a fraction of an array's cost (no allocation, no indexing). Shape vectors are tuples of
integers on the same terms. `emit_block` decides, and makes an array of a scalar or a
tuple for the kernels that need one.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

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
    computed it, and its type."""
    input_names: tuple[str, ...] = ()
    """The same without the types, for a kernel naming values after its inputs (a loop
    names its body's params after the values feeding them; empty: unknown)."""
    scalar_inputs: tuple[bool, ...] = ()
    """Per input, whether its name holds a plain numba scalar (or, for a shape vector, a
    tuple) rather than an array (only for inputs a `scalar_kernel` reads so; empty:
    none)."""
    scalar_outputs: tuple[bool, ...] = ()
    """Per output, whether the kernel is to make it a plain numba scalar (or a tuple)
    rather than an array (only a `scalar_kernel` is asked; empty: none)."""
    input_lengths: tuple[tuple[Hashable, ...], ...] = ()
    """Per input, per axis, where its length is read off (`rewrite.lengths.length_root`):
    inputs with equal keys have equal lengths there by construction (empty: unknown)."""
    input_counts: tuple[Hashable | None, ...] = ()
    """Per input, where a 0-d input that is a length (`ShapeI`) is read off, in the keys
    of `input_lengths` (None for other inputs; empty: unknown): a loop's step count
    that is a sequence's length is never negative nor more than its rows."""

    def label(self, k: int) -> str:
        """Input k as an error message names it (escaped for a single-quoted literal)."""
        return message_text(self.input_labels[k] if k < len(self.input_labels) else f"input {k}")

    def scalar(self, k: int) -> str:
        """The value of input k, 0-d or of one element (static lengths all 1), as a
        scalar expression: its name, or its one element read off the array."""
        name = self.inputs[k]
        return name if self.holds_scalar(k) else f"{name}[{element_index(self.input_types[k])}]"

    def holds_scalar(self, k: int) -> bool:
        """Whether input k's name holds a plain scalar."""
        return bool(self.scalar_inputs) and self.scalar_inputs[k]

    def same_length(self, k: int, other: int, axis: int) -> bool:
        """Whether inputs k and `other` have equal lengths along `axis` by construction
        (so a run-time check of it cannot fail)."""
        if not self.input_lengths:
            return False
        return self.input_lengths[k][axis] == self.input_lengths[other][axis]

    def length(self, k: int, axis: int) -> str:
        """Input k's length along `axis` as source text: its static length as a literal,
        else read off the first array input (and axis) whose length has the same root
        (`input_lengths`). Lengths equal by construction are so one expression, and a
        comparison of two of them is dropped by `unequal`: a run-time check costs numba
        most where it cannot fail, in loop bodies of static shapes (each raise is a
        function exit releasing every live array: the Kalman filter's gradient loop
        compiled in 6 s with its 24 checks of 2 x 2 products, 3 s without)."""
        static = self.input_types[k].shape[axis]
        if static is not None:
            return str(static)
        if self.input_lengths:
            root = self.input_lengths[k][axis]
            for other, roots in enumerate(self.input_lengths):
                if root in roots and not self.holds_scalar(other):
                    return f"{self.inputs[other]}.shape[{roots.index(root)}]"
        return f"{self.inputs[k]}.shape[{axis}]"

    def makes_scalar(self, k: int) -> bool:
        """Whether output k is to be a plain scalar."""
        return bool(self.scalar_outputs) and self.scalar_outputs[k]

    def assign_scalar(self, k: int, value: str) -> list[str]:
        """Lines giving output k (0-d or of one element) the scalar `value`: a plain
        scalar of the output's dtype when `scalar_outputs` asks for one (`value` is cast,
        except to float64, which the caller makes sure `value` has), else a fresh array."""
        name, dtype = self.outputs[k], dtype_expression(self.output_types[k].dtype)
        if self.makes_scalar(k):
            exact = self.output_types[k].dtype == "float64" or is_call(value, dtype)
            return [f"{name} = {value if exact else f'{dtype}({value})'}"]
        return one_element_array(name, value, self.output_types[k])


def unequal(pairs: Iterable[tuple[str, str]]) -> list[str]:
    """The conditions `a != b` of the pairs of lengths (`NodeInfo.length`) that are not
    one expression: those that can be true at run time."""
    return [f"{a} != {b}" for a, b in pairs if a != b]


def message_text(text: str) -> str:
    """`text` made safe inside a single-quoted literal of an error message with `{}`
    slots (see `caller.formatted`): no backslashes, quotes or braces."""
    return text.replace("\\", "/").replace("'", "").replace("{", "(").replace("}", ")")


def one_element_array(name: str, value: str, of_type: TensorType) -> list[str]:
    """Lines making `name` a fresh array of `of_type` (0-d or of one element) holding
    the scalar `value`."""
    shape = "(" + "".join("1, " for _ in of_type.shape) + ")"
    return [f"{name} = new_array({shape}, {dtype_expression(of_type.dtype)})",
            f"{name}[{element_index(of_type)}] = {value}"]


def element_index(of_type: TensorType) -> str:
    """The subscript of the one element of a 0-d or one-element array: `()`, `0, 0`."""
    return ", ".join("0" for _ in of_type.shape) if of_type.ndim else "()"


def is_size_one(of_type: TensorType) -> bool:
    """Whether every length is statically 1 (0-d included): one element."""
    return all(length == 1 for length in of_type.shape)


def is_short_vector(of_type: TensorType) -> bool:
    """Whether a value is a vector of static length, as shape vectors are."""
    return of_type.ndim == 1 and of_type.shape[0] is not None


def vector_array(name: str, entries: str, of_type: TensorType) -> list[str]:
    """Lines making `name` a fresh vector of `of_type` (of static length) holding the
    entries of the tuple `entries`."""
    length = of_type.shape[0]
    lines = [f"{name} = new_array({length}, {dtype_expression(of_type.dtype)})"]
    return lines + [f"{name}[{k}] = {entries}[{k}]" for k in range(length or 0)]


PARALLEL_OPTIONS = (
    "{'prange': True, 'comprehension': False, 'reduction': False, 'inplace_binop': False, "
    "'setitem': False, 'numpy': False, 'stencil': False, 'fusion': False}"
)
"""numba's `parallel` options for a function with `numba.prange` loops: only those loops
run in parallel; numba does not rewrite anything else into parallel loops (the
generated code has no array expressions worth it, and each costs compile time)."""


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

    def __init__(self, parallel: bool = False, outlines_kernels: bool = False,
                 repeated: frozenset[Hashable] = frozenset()) -> None:
        self.helpers: dict[str, str] = {}
        self.kernels: dict[str, Kernel] = {}
        self.constants: dict[tuple[str, Constant], str] = {}
        self.scalars: set[str] = set()
        """Names the code assigns a scalar only (a fused body's constants, read from their
        packed array): element nests take those reads in (`numba_backend.nests`)."""
        self.parallel = parallel
        """Whether large element loops should run on all threads (`numba.prange`)."""
        self.outlines_kernels = outlines_kernels
        """Whether large kernels of this module's own code are outlined (loops always are:
        see `numba_backend.kernels.emit_node`)."""
        self.repeated = repeated
        """The kernels two or more of the graph's nodes compute
        (`numba_backend.kernels.repeated_kernels`): outlined from a smaller size."""

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
            options += f", parallel={PARALLEL_OPTIONS}"
        decorated = f"@numba.njit({options})\n{template.strip()}\n"
        name = "k_" + hashlib.sha256(decorated.encode()).hexdigest()[:16]
        self.helpers.setdefault(name, decorated.replace("NAME", name))
        return name


@functools.singledispatch
def numba_kernel(op: Op, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    """Statement lines computing `node`'s outputs; registered per op class."""
    raise MissingKernelError(f"no numba kernel for {type(op).__name__} ({op})")


KernelFunction = TypeVar("KernelFunction", bound=Callable[..., list[str]])
ScalarReads = Callable[[Op, int], bool]
"""Whether a kernel reads 0-d input k of a node of this op as a scalar."""


@attrs.frozen
class ScalarUse:
    """What a `scalar_kernel` does with plain scalars."""

    reads: ScalarReads
    makes: bool
    size_one: bool
    """Whether it also reads and makes values of one element (static lengths all 1) as
    scalars, not only 0-d ones."""
    vectors: ScalarReads
    """Which vector inputs of static length (shape vectors) it reads only by constant
    subscripts (`v[k]`), which a tuple has as well as an array."""
    makes_vectors: bool
    """Whether it makes its vector output a tuple when asked (`NodeInfo.scalar_outputs`)."""


_SCALAR_KERNELS: dict[Callable[..., list[str]], ScalarUse] = {}


def every_input(op: Op, k: int) -> bool:
    return True


def no_input(op: Op, k: int) -> bool:
    return False


def only_input(position: int) -> ScalarReads:
    """Holds for input `position` alone."""

    def reads(op: Op, k: int) -> bool:
        return k == position

    return reads


def inputs_from(position: int) -> ScalarReads:
    """Holds for input `position` and every later one (index inputs, say)."""

    def reads(op: Op, k: int) -> bool:
        return k >= position

    return reads


def scalar_kernel(
    reads: ScalarReads = every_input,
    makes: bool = True,
    size_one: bool = False,
    vectors: ScalarReads = no_input,
    makes_vectors: bool = False,
) -> Callable[[KernelFunction], KernelFunction]:
    """Marks a kernel that reads through `NodeInfo.scalar` its 0-d inputs for which
    `reads(op, k)` holds (so it may be handed plain scalars there) and, if it `makes`
    scalars, gives its 0-d outputs through `NodeInfo.assign_scalar` (so it may be asked
    for plain scalars: see `NodeInfo.scalar_outputs`); with `size_one`, the same for
    inputs and outputs of one element. Shape vectors likewise: those for which
    `vectors(op, k)` holds may be handed as tuples, and a kernel that `makes_vectors`
    may be asked for a tuple."""

    def mark(kernel: KernelFunction) -> KernelFunction:
        _SCALAR_KERNELS[kernel] = ScalarUse(reads, makes, size_one, vectors, makes_vectors)
        return kernel

    return mark


def scalar_use(op: Op) -> ScalarUse | None:
    """What the kernel of `op` does with plain scalars; None if it is not a
    `scalar_kernel` (then it neither reads nor makes them)."""
    return _SCALAR_KERNELS.get(numba_kernel.dispatch(type(op)))


def dtype_expression(dtype: str) -> str:
    """The numba/NumPy spelling of a dtype in generated code."""
    return "np.bool_" if dtype == "bool" else f"np.{dtype}"


def is_call(expression: str, function: str) -> bool:
    """Whether `expression` is one call of `function` (a cast that needs no second one)."""
    if not expression.startswith(function + "(") or not expression.endswith(")"):
        return False
    depth = 0
    for position, character in enumerate(expression[len(function) :], len(function)):
        depth += {"(": 1, ")": -1}.get(character, 0)
        if depth == 0:
            return position == len(expression) - 1
    return False


class Allocation(str):
    """The statement `target = new_array(shape, dtype)`, typed: code that rearranges
    statements (a loop allocating its body's buffers once, before the loop) finds the
    allocations among a kernel's lines by their type, never by reading the text.
    Kernels write the arrays of one axis or more they allocate for their outputs as
    one (a loop keeps any other allocation in its steps)."""

    target: str
    shape: str
    """The source of the shape, a tuple (a loop allocating the buffer of a value of
    unknown lengths once prefixes it with the number of slots)."""
    dtype: str

    def __new__(cls, target: str, shape: str, dtype: str) -> Allocation:
        """`shape` is the shape's source (a tuple), `dtype` the dtype's name."""
        text = f"{target} = new_array({shape}, {dtype_expression(dtype)})"
        statement = super().__new__(cls, text)
        statement.target, statement.shape, statement.dtype = target, shape, dtype
        return statement
