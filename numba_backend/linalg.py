"""Kernels of the `MatrixOp`s: a loop over the broadcast batch axes around one LAPACK call
per matrix (`numba_backend.lapack`), which writes into a view of the preallocated output.

LAPACK's status comes back as an integer and is turned into an error here, where the
message can name the op and the input (a singular matrix, a matrix that is not positive
definite); shapes are checked once before the loop. Operands whose dtype differs from
the output's are converted first, since each routine takes one dtype.
"""

from __future__ import annotations

from collections.abc import Callable

from fgraph import Op
from numba_backend.registry import (
    Allocation, ModuleBuilder, NodeInfo, dtype_expression, no_input, numba_kernel,
    scalar_kernel, unequal,
)
from ops.determinants import Det, SLogDet
from ops.factorizations import QR, SVD, Cholesky, Eigh
from ops.lu import LUFactor, PivotPermutation
from ops.matrix_exponential import Expm
from ops.matrix_op import MatrixOp
from ops.solves import CholeskySolve, Inv, Solve, SolveTriangular

Lengths = tuple[str, ...]


def _lines(
    op: MatrixOp,
    node: NodeInfo,
    output_cores: Callable[[list[Lengths]], list[Lengths]],
    checks: Callable[[list[Lengths]], list[tuple[str, str]]],
    call: Callable[[list[str], list[str]], list[str]],
) -> list[str]:
    """The kernel: convert operands, check shapes, allocate outputs, loop over batches.

    `output_cores` gives each output's core lengths from the inputs' (source text),
    `checks` the pairs of lengths that must be equal, and `call` the statements
    for one batch element from the input and output views."""
    prefix = node.prefix
    batch_rank = op.batch_rank(node.input_types)
    output_dtype = node.output_types[0].dtype
    lines: list[str] = []
    inputs = list(node.inputs)
    for k, input_type in enumerate(node.input_types):
        if input_type.dtype != output_dtype:
            lines.append(f"{prefix}cast{k} = {inputs[k]}.astype({dtype_expression(output_dtype)})")
            inputs[k] = f"{prefix}cast{k}"
    cores = [
        tuple(node.length(k, batch_rank + axis) for axis in range(rank))
        for k, rank in enumerate(op.core_ranks)
    ]
    batch: list[str] = []
    pairs = checks(cores)
    for axis in range(batch_rank):
        sources = [k for k, t in enumerate(node.input_types) if t.shape[axis] != 1]
        batch.append(node.length(sources[0], axis) if sources else "1")
        pairs += [(node.length(other, axis), batch[-1]) for other in sources[1:]]
    if wrong := unequal(pairs):
        shapes = ", ".join("{}" for _ in inputs)
        labels = ", ".join(node.label(k) for k in range(len(inputs)))
        lines += [
            f"if {' or '.join(wrong)}:",
            f"    raise ValueError('{_name(op)} of {labels}: "
            f"the shapes do not fit (square matrices, equal contracted lengths, batch axes "
            f"equal or of static length 1): {shapes}', {', '.join(f'{x}.shape' for x in inputs)})",
        ]
    for k, (output, core) in enumerate(zip(node.outputs, output_cores(cores))):
        if node.makes_scalar(k):
            continue  # a plain scalar, which the call assigns
        shape = ", ".join([*batch, *core])
        lines.append(Allocation(output, f"({shape}{',' if shape else ''})",
                                node.output_types[k].dtype))
    indent = ""
    for axis in range(batch_rank):
        lines.append(f"{indent}for {prefix}j{axis} in range({batch[axis]}):")
        indent += "    "

    def view(name: str, static: tuple[int | None, ...] | None) -> str:
        if batch_rank == 0:
            return name
        index = [
            "0" if static is not None and static[axis] == 1 else f"{prefix}j{axis}"
            for axis in range(batch_rank)
        ]
        return f"{name}[{', '.join(index)}]"

    # Every call sees layout-'A' arrays and non-literal flags, so each LAPACK helper
    # compiles once per dtype, not once per layout and flag combination.
    input_views = [f"any_layout({view(name, t.shape)})" for name, t in zip(inputs, node.input_types)]
    def output_view(k: int) -> str:
        """Where the call writes output k: a matrix view, one element of the batched
        scalars, a 0-d array's element, or the plain scalar itself."""
        name = node.outputs[k]
        if node.output_types[k].ndim > batch_rank:
            return f"any_layout({view(name, None)})"
        if batch_rank:
            return view(name, None)
        return name if node.makes_scalar(k) else f"{name}[()]"

    output_views = [output_view(k) for k in range(len(node.outputs))]
    lines += [f"{indent}{line}" for line in call(input_views, output_views)]
    return lines


def _square(k: int) -> Callable[[list[Lengths]], list[tuple[str, str]]]:
    return lambda cores: [(cores[k][0], cores[k][1])]


def _raise_on(condition: str, message: str) -> list[str]:
    return [f"if {condition}:", f"    raise LinAlgError('{message}')"]


def _flag(value: bool) -> str:
    """A flag argument typed `bool`, not `Literal[bool]` (which numba compiles apart)."""
    return f"np.bool_({value})"


def _name(op: Op) -> str:
    """The op as an error message names it (no braces: messages are format strings)."""
    return str(op).replace("{", "(").replace("}", ")")


@numba_kernel.register
def _cholesky(op: Cholesky, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    p = node.prefix
    return _lines(
        op, node, lambda cores: [cores[0]], _square(0),
        lambda a, out: [
            f"{p}info = cholesky_into({a[0]}, {out[0]}, {_flag(op.lower)})",
            *_raise_on(f"{p}info != 0",
                       f"{_name(op)} of {node.label(0)}: the matrix is not positive definite"),
        ],
    )


def _system_checks(cores: list[Lengths]) -> list[tuple[str, str]]:
    (rows, columns), (right_rows, _) = cores[0], cores[1]
    return [(rows, columns), (right_rows, rows)]


def _solve_kernel(op: MatrixOp, node: NodeInfo, call: str, singular: str) -> list[str]:
    p = node.prefix
    return _lines(
        op, node, lambda cores: [(cores[0][0], cores[1][1])], _system_checks,
        lambda a, out: [
            f"{p}info = {call.format(*a, out[0])}",
            *_raise_on(f"{p}info != 0", f"{_name(op)} of {node.label(0)}: {singular}"),
        ],
    )


@numba_kernel.register
def _solve_triangular(op: SolveTriangular, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    flags = ", ".join(_flag(flag) for flag in (op.lower, op.trans, op.unit_diagonal))
    call = f"solve_triangular_into({{}}, {{}}, {{}}, {flags})"
    return _solve_kernel(op, node, call, "the triangular matrix is singular")


@numba_kernel.register
def _solve(op: Solve, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    return _solve_kernel(op, node, "solve_into({}, {}, {})", "the matrix is singular")


@numba_kernel.register
def _cho_solve(op: CholeskySolve, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    p = node.prefix
    return _lines(
        op, node, lambda cores: [(cores[0][0], cores[1][1])], _system_checks,
        lambda a, out: [
            f"{p}singular = False",
            f"for {p}d in range({a[0]}.shape[0]):",
            f"    {p}singular = {p}singular or {a[0]}[{p}d, {p}d] == 0",
            *_raise_on(f"{p}singular",
                       f"{_name(op)} of {node.label(0)}: the Cholesky factor is singular"),
            f"cho_solve_into({a[0]}, {a[1]}, {out[0]}, {_flag(op.lower)})",
        ],
    )


@numba_kernel.register
def _inv(op: Inv, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    p = node.prefix
    return _lines(
        op, node, lambda cores: [cores[0]], _square(0),
        lambda a, out: [
            f"{p}info = inv_into({a[0]}, {out[0]})",
            *_raise_on(f"{p}info != 0", f"{_name(op)} of {node.label(0)}: the matrix is singular"),
        ],
    )


@numba_kernel.register
@scalar_kernel(reads=no_input)
def _det(op: Det, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    """The determinant of one matrix may be a plain scalar (no 0-d array allocated)."""
    return _lines(
        op, node, lambda cores: [()], _square(0), lambda a, out: [f"{out[0]} = det({a[0]})"],
    )


@numba_kernel.register
@scalar_kernel(reads=no_input)
def _slogdet(op: SLogDet, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    """Sign and log-determinant of one matrix may be plain scalars (in a loop body, two
    0-d arrays allocated each step were)."""
    p = node.prefix
    return _lines(
        op, node, lambda cores: [(), ()], _square(0),
        lambda a, out: [
            f"{p}sign, {p}logabsdet = slogdet({a[0]})",
            f"{out[0]} = {p}sign",
            f"{out[1]} = {p}logabsdet",
        ],
    )


@numba_kernel.register
def _eigh(op: Eigh, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    p = node.prefix
    return _lines(
        op, node, lambda cores: [cores[0][:1], cores[0]], _square(0),
        lambda a, out: [
            f"{p}info = eigh_into({a[0]}, {out[0]}, {out[1]}, {_flag(op.lower)})",
            *_raise_on(f"{p}info != 0",
                       f"{_name(op)} of {node.label(0)}: the eigenvalue iteration did not converge"),
        ],
    )


@numba_kernel.register
def _svd(op: SVD, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    p = node.prefix

    def output_cores(cores: list[Lengths]) -> list[Lengths]:
        m, n = cores[0]
        k = f"min({m}, {n})"
        if not op.compute_uv:
            return [(k,)]
        if op.full_matrices:
            return [(m, m), (k,), (n, n)]
        return [(m, k), (k,), (k, n)]

    def call(a: list[str], out: list[str]) -> list[str]:
        if op.compute_uv:
            routine = f"svd_into({a[0]}, {out[0]}, {out[1]}, {out[2]}, {_flag(op.full_matrices)})"
        else:
            routine = f"svd_values_into({a[0]}, {out[0]})"
        return [
            f"{p}info = {routine}",
            *_raise_on(f"{p}info != 0",
                       f"{_name(op)} of {node.label(0)}: the singular value iteration did not converge"),
        ]

    return _lines(op, node, output_cores, lambda cores: [], call)


@numba_kernel.register
def _qr(op: QR, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    def output_cores(cores: list[Lengths]) -> list[Lengths]:
        m, n = cores[0]
        k = m if op.complete else f"min({m}, {n})"
        return [(m, k), (k, n)]

    return _lines(
        op, node, output_cores, lambda cores: [],
        lambda a, out: [f"qr_into({a[0]}, {out[0]}, {out[1]}, {_flag(op.complete)})"],
    )


@numba_kernel.register
def _lu_factor(op: LUFactor, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    p = node.prefix

    def output_cores(cores: list[Lengths]) -> list[Lengths]:
        m, n = cores[0]
        return [(m, n), (f"min({m}, {n})",)]

    return _lines(
        op, node, output_cores, lambda cores: [],
        lambda a, out: [
            f"{p}info = lu_factor_into({a[0]}, {out[0]}, {out[1]})",
            *_raise_on(f"{p}info != 0",
                       f"{_name(op)} of {node.label(0)}: the matrix is too long for LAPACK"),
        ],
    )


@numba_kernel.register
def _pivot_permutation(op: PivotPermutation, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    """One row of pivots at a time, over the flattened batch axes."""
    (pivots,), (out,) = node.inputs, node.outputs
    p = node.prefix
    rank = node.input_types[0].ndim
    lead = " * ".join(f"{pivots}.shape[{axis}]" for axis in range(rank - 1)) or "1"
    return [
        f"{p}k = {pivots}.shape[{rank - 1}]",
        f"{p}rows = {lead}",
        f"{p}flat = reshaped({pivots}, ({p}rows, {p}k))",
        Allocation(out, f"{pivots}.shape", "int32"),
        f"{p}result = reshaped({out}, ({p}rows, {p}k))",
        f"for {p}r in range({p}rows):",
        f"    {p}info = pivot_rows_into({p}flat[{p}r], {p}result[{p}r])",
        f"    if {p}info != 0:",
        f"        raise ValueError('{_name(op)} of {node.label(0)}: a pivot is outside [0, k), "
        f"at position', {p}info - 1, 'of', {p}k)",
    ]


@numba_kernel.register
def _expm(op: Expm, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    p = node.prefix
    return _lines(
        op, node, lambda cores: [cores[0]], _square(0),
        lambda a, out: [
            f"{p}info = expm_into({a[0]}, {out[0]})",
            *_raise_on(f"{p}info != 0",
                       f"{_name(op)} of {node.label(0)}: the Pade approximant is singular"),
        ],
    )
