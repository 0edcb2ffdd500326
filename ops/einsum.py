"""`einsum`: NumPy's Einstein summation, lowered to diagonals, sums, transposes, reshapes
and one batched `MatMul` per pair of operands, so it needs no kernel of its own,
differentiates through its parts and compiles to BLAS calls.

Operands are contracted left to right. Before each contraction, indices that neither
the other operand, the later operands nor the output need are summed away; then the
indices both operands share and something later needs are batch axes, those they share
and nothing later needs are contracted, and the rest are each side's free axes:
(batch, free_left, contracted) @ (batch, contracted, free_right) is one product.
"""

from __future__ import annotations

import string
from collections.abc import Sequence

import attrs

from fgraph import ShapeError, Variable
from fgraph.operators import TensorLike
from ops.convert import as_tensor
from ops.dimshuffle import transpose
from ops.matmul import MatMul
from ops.numpy_functions import diagonal
from ops.reduction import sum as reduce_sum
from ops.reshape import reshape

_LETTERS = set(string.ascii_letters)
_ELLIPSIS_LABELS = "".join(chr(0x3B1 + k) for k in range(24))
"""Labels standing for the axes an ellipsis covers (Greek letters: never user indices)."""


@attrs.frozen
class Term:
    """An operand and the index of each of its axes."""

    value: Variable
    indices: str

    def length(self, index: str) -> Variable | int:
        axis = self.indices.index(index)
        static = self.value.type.shape[axis]
        return static if static is not None else self.value.shape[axis]


def einsum(subscripts: str, *operands: TensorLike) -> Variable:
    """Einstein summation over `operands` as `numpy.einsum` (explicit `"ij,jk->ik"` and
    implicit `"ij,jk"` modes, `...` broadcasting, repeated indices within an operand
    taking diagonals); lowered to `MatMul` and shape ops."""
    values = [as_tensor(x, name="einsum operand") for x in operands]
    inputs, output = _parse(subscripts, values)
    terms = [_summed_alone(_diagonals(Term(v, i)), _needed_elsewhere(inputs, k, output))
             for k, (v, i) in enumerate(zip(values, inputs))]
    _check_lengths(subscripts, terms)
    result = terms[0]
    for k, term in enumerate(terms[1:], start=1):
        later = set(output).union(*inputs[k + 1:])
        result = _contract(result, term, later)
    result = _sum_over(result, set(result.indices) - set(output))
    order = [result.indices.index(index) for index in output]
    return result.value if order == list(range(len(order))) else transpose(result.value, order)


def _needed_elsewhere(inputs: list[str], k: int, output: str) -> set[str]:
    """The indices anything but operand k needs: the other operands' and the output's."""
    return set(output).union(*(indices for j, indices in enumerate(inputs) if j != k))


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
        if not set(labels) <= _LETTERS or part.count("...") > 1 or "." in labels:
            raise ValueError(
                f"einsum {subscripts!r}: invalid subscripts {part!r} (letters and one '...')"
            )
        rank = value.ndim - len(labels)
        if rank < 0 or (rank > 0 and "..." not in part):
            raise ValueError(
                f"einsum {subscripts!r}: subscripts {part!r} for an operand of rank {value.ndim}"
            )
        inputs.append(part.replace("...", ellipsis[covered - rank:]))
    if explicit:
        labels = right.replace("...", "")
        if not set(labels) <= _LETTERS or "." in labels:
            raise ValueError(f"einsum {subscripts!r}: invalid output subscripts {right!r}")
        output = right.replace("...", ellipsis)
        if len(set(output)) != len(output):
            raise ValueError(f"einsum {subscripts!r}: an output index repeats")
        missing = set(output) - set("".join(inputs))
        if missing:
            raise ValueError(
                f"einsum {subscripts!r}: output indices {sorted(missing)} are in no operand"
            )
    else:
        counts = "".join(inputs)
        once = (i for i in set(counts) if counts.count(i) == 1 and i in _LETTERS)
        output = ellipsis + "".join(sorted(once))
    return inputs, output


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


def _sum_over(term: Term, indices: set[str]) -> Term:
    axes = tuple(k for k, i in enumerate(term.indices) if i in indices)
    if not axes:
        return term
    kept = "".join(i for i in term.indices if i not in indices)
    return Term(reduce_sum(term.value, axis=axes), kept)


def _summed_alone(term: Term, needed: set[str]) -> Term:
    return _sum_over(term, set(term.indices) - needed)


def _check_lengths(subscripts: str, terms: list[Term]) -> None:
    lengths: dict[str, int] = {}
    for term in terms:
        for index, length in zip(term.indices, term.value.type.shape):
            if length is None or length == 1:
                continue
            if lengths.setdefault(index, length) != length:
                raise ShapeError(
                    f"einsum {subscripts!r}: index {index!r} has lengths {lengths[index]} and {length}"
                )


def _product(lengths: Sequence[Variable | int]) -> Variable | int:
    total: Variable | int = 1
    for length in lengths:
        total = length if isinstance(total, int) and total == 1 else total * length
    return total


def _contract(left: Term, right: Term, later: set[str]) -> Term:
    left = _summed_alone(left, later | set(right.indices))
    right = _summed_alone(right, later | set(left.indices))
    shared = [i for i in left.indices if i in right.indices]
    batch = [i for i in shared if i in later]
    contracted = [i for i in shared if i not in later]
    free_left = [i for i in left.indices if i not in shared]
    free_right = [i for i in right.indices if i not in shared]

    def length(index: str) -> Variable | int:
        """An index's length from an operand where it is not a broadcast length 1."""
        for term in (left, right):
            if index in term.indices and term.value.type.shape[term.indices.index(index)] != 1:
                return term.length(index)
        return 1

    def arranged(term: Term, first: list[str], second: list[str]) -> Variable:
        order = [term.indices.index(i) for i in (*batch, *first, *second)]
        moved = term.value if order == list(range(len(order))) else transpose(term.value, order)
        batch_lengths = [term.length(i) for i in batch]
        return reshape(moved, [*batch_lengths, _product([length(i) for i in first]),
                               _product([length(i) for i in second])])

    product = MatMul()(arranged(left, free_left, contracted), arranged(right, contracted, free_right))
    shape = [length(i) for i in (*batch, *free_left, *free_right)]
    return Term(reshape(product, shape), "".join((*batch, *free_left, *free_right)))
