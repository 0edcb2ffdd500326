"""`einsum`: NumPy's Einstein summation, lowered to diagonals, sums, transposes, reshapes
and one batched `MatMul` per pair of operands, so it needs no kernel of its own,
differentiates through its parts and compiles to BLAS calls.

An axis of static length 1 whose index has another length elsewhere broadcasts; it is
dropped first, since an operand constant along an index is what broadcasting means.
Every later step then sees each index with one true length. Operands are contracted
left to right. Before each contraction, indices that neither the other operand, the
later operands nor the output need are summed away; then the indices both operands
share and something later needs are batch axes, those they share and nothing later
needs are contracted, and the rest are each side's free axes:
(batch, free_left, contracted) @ (batch, contracted, free_right) is one product.
"""

from __future__ import annotations

import string
from collections.abc import Sequence

import attrs

from fgraph import ShapeError, Variable, promote
from fgraph.operators import TensorLike
from ops.convert import as_tensor
from ops.dimshuffle import squeeze, transpose
from ops.elementwise_functions import cast
from ops.matmul_op import MatMul
from ops.numpy_functions import diagonal
from ops.reduction import any as reduce_any
from ops.reduction import sum as reduce_sum
from ops.reshape_ops import reshape

_LETTERS = set(string.ascii_letters)
_ELLIPSIS_LABELS = "".join(chr(0x3B1 + k) for k in range(64))
"""Labels standing for the axes an ellipsis covers, as many as NumPy's 64 axes (non-ASCII
characters from the Greek block: never user indices)."""


@attrs.frozen
class Term:
    """An operand and the index of each of its axes."""

    value: Variable
    indices: str

    def length(self, index: str) -> Variable | int:
        """The static length where known, else the symbolic one (for `reshape`)."""
        axis = self.indices.index(index)
        static = self.value.type.shape[axis]
        return static if static is not None else self.value.shape[axis]


def einsum(subscripts: str, *operands: TensorLike) -> Variable:
    """Einstein summation over `operands` as `numpy.einsum` (explicit `"ij,jk->ik"` and
    implicit `"ij,jk"` modes, `...` broadcasting, repeated indices within an operand
    taking diagonals); lowered to `MatMul` and shape ops."""
    values = [as_tensor(x, name="einsum operand") for x in operands]
    inputs, output = _parse(subscripts, values)
    _check_lengths(subscripts, values, inputs)
    stretched = _stretched_indices(values, inputs)
    terms = [_diagonals(_without_broadcast_axes(Term(v, i), stretched))
             for v, i in zip(_in_common_dtype(values), inputs)]
    terms = [_summed_alone(term, _needed_elsewhere(terms, k, output))
             for k, term in enumerate(terms)]
    result = terms[0]
    for k, term in enumerate(terms[1:], start=1):
        later = set(output).union(*(t.indices for t in terms[k + 1:]))
        result = _contract(result, term, later)
    result = _sum_over(result, set(result.indices) - set(output))
    order = [result.indices.index(index) for index in output]
    return result.value if order == list(range(len(order))) else transpose(result.value, order)


def _in_common_dtype(values: list[Variable]) -> list[Variable]:
    """The operands cast to their common dtype, as `numpy.einsum` computes: a sum taken
    within one operand must not wrap in its narrower integers or count bools as bools."""
    dtype = promote(*(v.dtype for v in values))
    return [v if v.dtype == dtype else cast(v, dtype) for v in values]


def _parse(subscripts: str, values: list[Variable]) -> tuple[list[str], str]:
    """Each operand's indices and the output's, with ellipses replaced by labels."""
    text = subscripts.replace(" ", "")
    explicit = "->" in text
    left, _, right = text.partition("->")
    parts = left.split(",")
    if len(parts) != len(values):
        raise ValueError(
            f"einsum {subscripts!r}: {len(parts)} operand subscripts for {len(values)} operands"
        )
    covered = max(
        (v.ndim - len(p.replace("...", "")) for p, v in zip(parts, values) if "..." in p), default=0
    )
    ellipsis = _ELLIPSIS_LABELS[:covered]
    inputs = []
    for part, value in zip(parts, values):
        labels = part.replace("...", "")
        if not set(labels) <= _LETTERS or part.count("...") > 1:
            raise ValueError(
                f"einsum {subscripts!r}: invalid subscripts {part!r} (letters and one '...')"
            )
        rank = value.ndim - len(labels)
        if rank < 0 or (rank > 0 and "..." not in part):
            raise ValueError(
                f"einsum {subscripts!r}: subscripts {part!r} for an operand of rank {value.ndim}"
            )
        inputs.append(part.replace("...", ellipsis[covered - rank:]))
    if not explicit:
        counts = "".join(inputs)
        once = (i for i in set(counts) if counts.count(i) == 1 and i in _LETTERS)
        return inputs, ellipsis + "".join(sorted(once))
    if not set(right.replace("...", "")) <= _LETTERS or right.count("...") > 1:
        raise ValueError(f"einsum {subscripts!r}: invalid output subscripts {right!r}")
    if ellipsis and "..." not in right:
        raise ValueError(
            f"einsum {subscripts!r}: the output needs '...' for the {covered} axes it covers"
        )
    output = right.replace("...", ellipsis)
    if len(set(output)) != len(output):
        raise ValueError(f"einsum {subscripts!r}: an output index repeats")
    missing = set(output) - set("".join(inputs))
    if missing:
        raise ValueError(
            f"einsum {subscripts!r}: output indices {sorted(missing)} are in no operand"
        )
    return inputs, output


def _check_lengths(subscripts: str, values: list[Variable], inputs: list[str]) -> None:
    """Each index has one static length. Across operands a length 1 broadcasts, as in
    NumPy; within one operand (a diagonal) it does not: NumPy rejects `"ii"` on (1, 3)."""
    lengths: dict[str, int] = {}
    for value, indices in zip(values, inputs):
        own: dict[str, int] = {}
        for index, length in zip(indices, value.type.shape):
            if length is None:
                continue
            if own.setdefault(index, length) != length:
                raise ShapeError(
                    f"einsum {subscripts!r}: repeated index {index!r} of {indices!r} has "
                    f"lengths {own[index]} and {length}"
                )
            if length != 1 and lengths.setdefault(index, length) != length:
                raise ShapeError(
                    f"einsum {subscripts!r}: index {index!r} has lengths {lengths[index]} and {length}"
                )


def _stretched_indices(values: list[Variable], inputs: list[str]) -> set[str]:
    """The indices some operand has with a length other than a static 1 (a longer or an
    unknown one): where another operand has them with static length 1, it broadcasts."""
    return {index for value, indices in zip(values, inputs)
            for index, length in zip(indices, value.type.shape) if length != 1}


def _without_broadcast_axes(term: Term, stretched: set[str]) -> Term:
    """Drop the axes of static length 1 that broadcast against a longer one elsewhere: the
    operand does not vary along that index, so the index is no longer its concern."""
    dropped = [axis for axis, (index, length) in enumerate(zip(term.indices, term.value.type.shape))
               if length == 1 and index in stretched]
    if not dropped:
        return term
    kept = "".join(i for axis, i in enumerate(term.indices) if axis not in dropped)
    return Term(squeeze(term.value, dropped), kept)


def _diagonals(term: Term) -> Term:
    """Take the diagonal over each index repeated within the operand."""
    while True:
        repeated = next((i for i in term.indices if term.indices.count(i) > 1), None)
        if repeated is None:
            return term
        first = term.indices.index(repeated)
        second = term.indices.index(repeated, first + 1)
        value = diagonal(term.value, 0, first, second)
        rest = "".join(i for k, i in enumerate(term.indices) if k not in (first, second))
        term = Term(value, rest + repeated)


def _needed_elsewhere(terms: list[Term], k: int, output: str) -> set[str]:
    """The indices anything but term k needs: the other terms' and the output's."""
    return set(output).union(*(term.indices for j, term in enumerate(terms) if j != k))


def _sum_over(term: Term, indices: set[str]) -> Term:
    """Sum over `indices` in the (common) dtype, as `numpy.einsum` accumulates (not
    `numpy.sum`'s wider integers): bools by logical or, integers wrapped back."""
    axes = tuple(k for k, i in enumerate(term.indices) if i in indices)
    if not axes:
        return term
    kept = "".join(i for i in term.indices if i not in indices)
    if term.value.dtype == "bool":
        return Term(reduce_any(term.value, axis=axes), kept)
    total = reduce_sum(term.value, axis=axes)
    return Term(total if total.dtype == term.value.dtype else cast(total, term.value.dtype), kept)


def _summed_alone(term: Term, needed: set[str]) -> Term:
    """Sum away the indices nothing else needs: no product has to carry them."""
    return _sum_over(term, set(term.indices) - needed)


def _product(lengths: Sequence[Variable | int]) -> Variable | int:
    total: Variable | int = 1
    for length in lengths:
        total = length if isinstance(total, int) and total == 1 else total * length
    return total


def _arranged(term: Term, batch: list[str], first: list[str], second: list[str]) -> Variable:
    """`term` transposed to (batch, first, second) and reshaped to one axis per batch
    index and two more: the product of `first`'s lengths and of `second`'s (no reshape
    when each group is one index: a plain matrix product stays a bare `MatMul`)."""
    order = [term.indices.index(i) for i in (*batch, *first, *second)]
    moved = term.value if order == list(range(len(order))) else transpose(term.value, order)
    if len(first) == len(second) == 1:
        return moved
    return reshape(moved, [*(term.length(i) for i in batch),
                           _product([term.length(i) for i in first]),
                           _product([term.length(i) for i in second])])


def _contract(left: Term, right: Term, later: set[str]) -> Term:
    """One `MatMul`: shared indices needed `later` are batch axes, other shared ones are
    contracted, the rest are free."""
    left = _summed_alone(left, later | set(right.indices))
    right = _summed_alone(right, later | set(left.indices))
    shared = [i for i in left.indices if i in right.indices]
    batch = [i for i in shared if i in later]
    contracted = [i for i in shared if i not in later]
    free_left = [i for i in left.indices if i not in shared]
    free_right = [i for i in right.indices if i not in shared]
    product = MatMul()(_arranged(left, batch, free_left, contracted),
                       _arranged(right, batch, contracted, free_right))
    indices = "".join((*batch, *free_left, *free_right))
    if len(free_left) == len(free_right) == 1:
        return Term(product, indices)
    shape = [*(left.length(i) for i in (*batch, *free_left)),
             *(right.length(i) for i in free_right)]
    return Term(reshape(product, shape), indices)
