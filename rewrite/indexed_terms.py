"""Sums of scalar terms that differ only in constant indices, vectorized: one gather per
family of reads, one elementwise computation over the gathered vectors, one sum or one
scatter-add.

A model written as a Python loop over indexed parameters,
`sum(exp(x[i]) * w[i] + log1p(x[i] ** 2) * w[i + 1] for i in range(n))`, is a chain of
n scalar terms, and its gradient with respect to `x` a chain of n updates
`inc_subtensor(zeros_like(x)[i], g_i)` whose values `g_i` are again such terms. Left
alone, the compiled module holds n copies of each term, n copies of the zeros and an
n-input addition: what numba types grows with n, and faster than n (issue 19). These
rules turn

- a chain of additions of scalar terms of one *template* (the same elementwise
  operations on the same variables, reading `v[c]` with constant indices `c` that vary
  from term to term, and scalar constants that may vary) into `sum(template(v[idx]))`:
  one gather `v[idx]` per varying read, with `idx` a constant index vector;
- a chain of additions of updates of one buffer of zeros at single elements into that
  buffer incremented by the written values, split into their summands: one
  `AdvancedIncSubtensor` per template of them (an index vector and the vectorized
  values; repeated positions accumulate, as `np.add.at` does), then one increment per
  value that fits no template.

So the generated code no longer grows with n (index vectors and varying constants are
constants, which are arguments of the compiled function). A group needs `MIN_TERMS`
members: fewer scalar terms are cheaper as scalar code than as loops.

Values are kept up to the rounding of a reassociated sum (terms of one template are
summed together), and errors are kept: a gather checks its indices as the scalar reads
did (negative ones wrap, out-of-range ones raise `IndexError`). Why this is a rewrite
and where it runs: docs/architecture.md, "Sums of indexed terms".

The rules read clients (`@context_rule`): a chain is rewritten once, at its last
addition, and only the additions nothing else reads belong to it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import attrs
import numpy as np

from fgraph import Apply, Constant, Graph, Op, Variable
from fgraph.dtypes import is_inexact
from ops.advanced_subtensor import AdvancedIncSubtensor, AdvancedSubtensor
from ops.convert import constant
from ops.dimshuffle import left_pad_rank
from ops.elemwise import Elemwise
from ops.elementwise_functions import add
from ops.indexing import SYMBOLIC
from ops.reduction import Sum
from ops.scalar_ops import Add
from ops.subtensor import IncSubtensor, Subtensor
from rewrite.context import RewriteContext
from rewrite.engine import rewrite_graph
from rewrite.inc_subtensor import is_zeros
from rewrite.patterns import replacement
from rewrite.rules import RuleSet, context_rule

MIN_TERMS = 4
"""Fewest terms of one template worth vectorizing: measured cold, four terms of the
issue's model compile faster as gathers and loops than as scalar code (1.9 s against
2.3 s); fewer stay scalar code."""

MAX_TERM_NODES = 256
"""Most elementwise nodes a term may have: reading a term costs its size, so a bound
keeps a chain of n terms linear in n even when every term reaches a large shared
computation (such a term is left alone)."""


# --- terms and their templates -----------------------------------------------------------
@attrs.frozen
class ReadSlot:
    """A varying leaf of a template: a scalar read `base[c0, c1, ...]` with static ints."""

    base: Variable


@attrs.frozen
class ConstantSlot:
    """A varying leaf of a template: a scalar constant of this dtype."""

    dtype: str


@attrs.frozen
class Fixed:
    """A leaf every term of a template shares: the variable itself."""

    variable: Variable


@attrs.frozen
class Computed:
    """An elementwise node of a template, its inputs given by their position in it."""

    op: Op
    inputs: tuple[int, ...]


Entry = ReadSlot | ConstantSlot | Fixed | Computed


@attrs.frozen
class Term:
    """A scalar as a template (its entries in a deterministic post-order: equal for two
    terms that differ only in their varying leaves) and the varying leaves themselves,
    one per slot in the order of the template."""

    template: tuple[Entry, ...]
    leaves: tuple[Variable, ...]


def read_indices(variable: Variable) -> tuple[int, ...] | None:
    """The static indices of a scalar read `base[c0, c1, ...]` (one int per axis), or None."""
    match variable.owner:
        case Apply(op=Subtensor(idx_list=entries), inputs=(base,)) if variable.ndim == 0:
            indices = tuple(entry for entry in entries if isinstance(entry, int))
            if 0 < len(indices) == len(entries) == base.ndim:
                return indices
    return None


def _leaf(variable: Variable) -> Entry:
    if read_indices(variable) is not None:
        assert variable.owner is not None
        return ReadSlot(variable.owner.inputs[0])
    if isinstance(variable, Constant) and variable.ndim == 0:
        return ConstantSlot(variable.dtype)
    return Fixed(variable)


def _is_computed(variable: Variable) -> bool:
    """Whether `variable` is a scalar an elementwise node computes (part of a term)."""
    owner = variable.owner
    return (
        owner is not None
        and isinstance(owner.op, Elemwise)
        and not owner.op.destroy_map
        and not variable.type.shape
    )


def term_of(scalar: Variable) -> Term | None:
    """`scalar` as a template over its varying leaves; None when it reads no element of
    an array (constants alone are folded, not vectorized) or has more than
    `MAX_TERM_NODES` elementwise nodes.

    Elementwise nodes keep their sharing; leaves do not: each use of a leaf is an entry
    of its own, so that a leaf two uses happen to share in one term (`2.0 * x[1] ** 2.0`
    is one constant used twice, `x[0] * x[2 * 0]` one read) does not set that term
    apart from the others (`3.0 * x[2] ** 2.0`)."""
    # Computed variables by their node (single-output, and a node's hash is cached).
    position: dict[Apply, int] = {}
    template: list[Entry] = []
    leaves: list[Variable] = []

    def use(variable: Variable) -> int:
        if variable.owner is not None and variable.owner in position:
            return position[variable.owner]
        entry = _leaf(variable)
        if not isinstance(entry, Fixed):
            leaves.append(variable)
        template.append(entry)
        return len(template) - 1

    computed = 0
    stack: list[tuple[Apply, bool]] = []
    if _is_computed(scalar) and scalar.owner is not None:
        stack.append((scalar.owner, False))
    while stack:
        node, inputs_done = stack.pop()
        if node in position:
            continue
        if inputs_done:
            inputs = tuple(use(v) for v in node.inputs)
            position[node] = len(template)
            template.append(Computed(node.op, inputs))
            continue
        computed += 1
        if computed > MAX_TERM_NODES:
            return None
        stack.append((node, True))
        for variable in reversed(node.inputs):
            owner = variable.owner
            if owner is not None and owner not in position and _is_computed(variable):
                stack.append((owner, False))
    use(scalar)
    reads = any(isinstance(entry, ReadSlot) for entry in template)
    return Term(tuple(template), tuple(leaves)) if reads else None


def vectorized(terms: Sequence[Term]) -> Variable:
    """One vector holding the values of `terms` (of one template), in order: each slot's
    leaves become a gather with constant indices (reads) or a constant vector, or stay
    the leaf itself where every term has the same one."""
    slots = iter(zip(*(term.leaves for term in terms)))
    values: list[Variable] = []
    for entry in terms[0].template:
        match entry:
            case Fixed(variable=variable):
                values.append(variable)
            case ReadSlot(base=base):
                values.append(_gathered(base, next(slots)))
            case ConstantSlot(dtype=dtype):
                values.append(_stacked_constants(dtype, next(slots)))
            case Computed(op=op, inputs=inputs):
                operands = [values[k] for k in inputs]
                rank = max(operand.ndim for operand in operands)
                values.append(op(*(left_pad_rank(operand, rank) for operand in operands)))
    result = values[-1]
    assert result.ndim == 1, "every term of a group differs from the first in some leaf"
    return result


def _gathered(base: Variable, reads: tuple[Variable, ...]) -> Variable:
    """`base[idx0, idx1, ...]` for the scalar reads `reads` of `base` (the read itself
    when all are one)."""
    if all(read == reads[0] for read in reads):
        return reads[0]
    positions = [read_indices(read) for read in reads]
    axes = zip(*(indices for indices in positions if indices is not None))
    vectors = [constant(np.array(axis, dtype=np.int64)) for axis in axes]
    return AdvancedSubtensor((SYMBOLIC,) * base.ndim)(base, *vectors)


def _stacked_constants(dtype: str, scalars: tuple[Variable, ...]) -> Variable:
    if all(scalar == scalars[0] for scalar in scalars):
        return scalars[0]
    data = [scalar.data for scalar in scalars if isinstance(scalar, Constant)]
    return constant(np.array(data, dtype=dtype))


@attrs.frozen
class Group:
    """Terms of one template: their positions in the sequence they were found in, and
    the terms themselves."""

    positions: tuple[int, ...]
    terms: tuple[Term, ...]

    def sorted_by(self, key: Callable[[int, Term], tuple[tuple[int, ...], ...]]) -> Group:
        """The group with its members in the order of `key(position, term)`."""
        members = sorted(zip(self.positions, self.terms), key=lambda member: key(*member))
        return Group(tuple(k for k, _ in members), tuple(term for _, term in members))


def grouped(scalars: Sequence[Variable]) -> tuple[list[Group], list[int]]:
    """`scalars` split into groups of at least `MIN_TERMS` terms of one template (groups
    in order of first appearance, members in order) and the positions of the rest (in
    order). A group's terms must not all be one value (that is no vector)."""
    terms: dict[Variable, Term | None] = {}
    by_template: dict[tuple[Entry, ...], list[tuple[int, Term]]] = {}
    for number, scalar in enumerate(scalars):
        if scalar not in terms:
            terms[scalar] = term_of(scalar)
        term = terms[scalar]
        if term is not None:
            by_template.setdefault(term.template, []).append((number, term))
    groups = [
        Group(tuple(k for k, _ in members), tuple(term for _, term in members))
        for members in by_template.values()
        if len(members) >= MIN_TERMS and any(t.leaves != members[0][1].leaves for _, t in members)
    ]
    in_groups = {number for group in groups for number in group.positions}
    return groups, [number for number in range(len(scalars)) if number not in in_groups]


def read_positions(term: Term) -> tuple[tuple[int, ...], ...]:
    """The indices a term reads, slot by slot."""
    return tuple(indices for leaf in term.leaves if (indices := read_indices(leaf)) is not None)


# --- chains of additions -------------------------------------------------------------------
def _is_addition(node: Apply | None) -> bool:
    match node:
        case Apply(op=Elemwise(scalar_op=Add(), destroy_map=())):
            return True
    return False


def _only_read_by(variable: Variable, reader: Apply, context: RewriteContext) -> bool:
    clients = context.clients(variable)
    return len(clients) == 1 and clients[0][0] == reader and not context.is_output(variable)


def summands_of(total: Variable, context: RewriteContext) -> list[Variable]:
    """The summands of the chain of additions computing `total`, left to right (`total`
    alone if it is no addition). An addition belongs to the chain if the addition above
    it is its only reader: a partial sum read elsewhere is a summand (computed once)."""
    if total.owner is None or not _is_addition(total.owner):
        return [total]
    summands: list[Variable] = []
    stack = [(v, total.owner) for v in reversed(total.owner.inputs)]
    while stack:
        variable, reader = stack.pop()
        owner = variable.owner
        if (
            owner is not None
            and _is_addition(owner)
            and variable.type == total.type
            and _only_read_by(variable, reader, context)
        ):
            stack.extend((v, owner) for v in reversed(owner.inputs))
        else:
            summands.append(variable)
    return summands


def chain_summands(node: Apply, context: RewriteContext) -> list[Variable] | None:
    """The summands of the chain of additions ending at `node`; None when `node` is no
    addition or one inside a longer chain (a chain is rewritten once, at its end)."""
    if not _is_addition(node):
        return None
    clients = context.clients(node.out)
    if len(clients) == 1 and not context.is_output(node.out):
        reader = clients[0][0]
        if _is_addition(reader) and reader.out.type == node.out.type:
            return None
    return summands_of(node.out, context)


def _total(values: Sequence[Variable]) -> Variable:
    total = values[0]
    for value in values[1:]:
        total = add(total, value)
    return total


@context_rule(Elemwise)
def sum_of_indexed_terms(node: Apply, context: RewriteContext) -> Sequence[Variable] | None:
    """t(v[c_1]) + t(v[c_2]) + ... + rest -> sum(t(v[[c_1, c_2, ...]])) + rest, for at
    least `MIN_TERMS` scalar terms of one template `t` (see the module docstring). The
    terms are summed in the order of the positions they read."""
    if node.out.ndim != 0 or not is_inexact(node.out.dtype):
        return None
    summands = chain_summands(node, context)
    if summands is None or len(summands) < MIN_TERMS:
        return None
    groups, rest = grouped(summands)
    if not groups:
        return None
    sums = [
        Sum((0,))(vectorized(group.sorted_by(lambda _, term: read_positions(term)).terms))
        for group in groups
    ]
    return replacement(_total([*sums, *(summands[k] for k in rest)]), node.out)


@attrs.frozen
class ScalarUpdate:
    """A buffer of zeros with one element, at static `indices`, set to or incremented by
    the scalar `value`."""

    zeros: Variable
    value: Variable
    indices: tuple[int, ...]


def scalar_update(variable: Variable) -> ScalarUpdate | None:
    """`variable` as a `ScalarUpdate`, if it is one (of its own type: no broadcasting)."""
    match variable.owner:
        case Apply(op=IncSubtensor(idx_list=entries, destroy_map=()), inputs=(zeros, value)):
            indices = tuple(entry for entry in entries if isinstance(entry, int))
            if (
                value.ndim == 0
                and len(indices) == len(entries) == zeros.ndim
                and zeros.type == variable.type
                and is_zeros(zeros)
            ):
                return ScalarUpdate(zeros, value, indices)
    return None


@context_rule(Elemwise)
def sum_of_scalar_updates(node: Apply, context: RewriteContext) -> Sequence[Variable] | None:
    """set(zeros[c_1], g_1) + set(zeros[c_2], g_2) + ... + rest -> zeros incremented at
    c_1, c_2, ... by g_1, g_2, ... + rest: one buffer instead of n updated copies of the
    zeros (see `scattered`)."""
    if node.out.ndim == 0 or not is_inexact(node.out.dtype):
        return None
    summands = chain_summands(node, context)
    if summands is None:
        return None
    updates: dict[Variable, list[tuple[ScalarUpdate, Apply]]] = {}
    for summand in summands:
        found = scalar_update(summand)
        if found is not None and found.zeros.type == node.out.type:
            assert summand.owner is not None
            updates.setdefault(found.zeros, []).append((found, summand.owner))
    merged = {zeros: writes for zeros, writes in updates.items() if len(writes) > 1}
    if not merged:
        return None
    rest = [
        summand for summand in summands
        if (found := scalar_update(summand)) is None or found.zeros not in merged
    ]
    scatters = [scattered(zeros, writes, context) for zeros, writes in merged.items()]
    return replacement(_total([*scatters, *rest]), node.out)


def scattered(
    zeros: Variable, writes: Sequence[tuple[ScalarUpdate, Apply]], context: RewriteContext
) -> Variable:
    """`zeros` incremented by each write's value at its indices.

    A value that is a sum (the cotangent of a read used by several terms) is written
    summand by summand, and the summands of all writes are grouped by template: each
    group is one vectorized scatter-add (groups written at the same positions, the
    pullbacks of one read in several places of a term, add up first), the summands in
    no group one increment per write."""
    parts: list[Variable] = []
    write_of: list[int] = []  # the write each part belongs to
    for number, (write, node) in enumerate(writes):
        split = _is_addition(write.value.owner) and _only_read_by(write.value, node, context)
        summands = summands_of(write.value, context) if split else [write.value]
        parts += summands
        write_of += [number] * len(summands)
    groups, rest = grouped(parts)
    by_positions: dict[tuple[tuple[int, ...], ...], Variable] = {}
    for group in groups:
        ordered = group.sorted_by(lambda part, _: (writes[write_of[part]][0].indices,))
        positions = tuple(writes[write_of[part]][0].indices for part in ordered.positions)
        values = vectorized(ordered.terms)
        earlier = by_positions.get(positions)
        by_positions[positions] = values if earlier is None else add(earlier, values)
    result = zeros
    for positions, values in by_positions.items():
        vectors = [constant(np.array(axis, dtype=np.int64)) for axis in zip(*positions)]
        result = AdvancedIncSubtensor((SYMBOLIC,) * zeros.ndim)(result, values, *vectors)
    left: dict[int, list[Variable]] = {}
    for part in rest:
        left.setdefault(write_of[part], []).append(parts[part])
    split_into = Counter(write_of)
    for number, remaining in left.items():
        write = writes[number][0]
        whole = len(remaining) == split_into[number]  # no summand went to a group
        value = write.value if whole else _total(remaining)
        result = IncSubtensor(write.indices)(result, value)
    return result


INDEXED_TERMS = RuleSet("indexed_terms", (sum_of_indexed_terms, sum_of_scalar_updates))
"""Chains of indexed scalar terms and of their pullbacks, vectorized."""


def indexed_terms(graph: Graph) -> Graph:
    """The `INDEXED_TERMS` pass, on graphs that index with static ints at all: its rules
    read clients, so a pass sweeps the whole graph, which graphs without indexing (most
    array programs) are spared."""
    if not any(isinstance(node.op, (Subtensor, IncSubtensor)) for node in graph.nodes):
        return graph
    return rewrite_graph(graph, INDEXED_TERMS)
