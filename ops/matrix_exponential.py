"""`Expm`: the matrix exponential, as `scipy.linalg.expm` (scaling and squaring with a
Padé approximant).

Its derivative is the Fréchet derivative L(a, e), which for any matrices is the upper
right block of the exponential of the block matrix [[a, e], [0, a]] (Higham, "Functions
of Matrices", 2008, eq. 3.16 / Mathias 1996). The pushforward is L(a, da), the pullback
L(a^T, g): both are `Expm` of a matrix twice as large, so derivatives of any order work.
"""

from __future__ import annotations

import attrs
import numpy as np

from fgraph import Variable
from fgraph.op import Array
from ops.elemwise import fit_to
from ops.elementwise_functions import zeros_like
from ops.join import concatenate
from ops.matrix_op import MatrixOp, Shape, pad_batch, square_length
from ops.matrix_parts import mT

Derivatives = tuple[Variable | None, ...]


# Kernel: numba_backend.linalg._expm
@attrs.frozen(cache_hash=True)
class Expm(MatrixOp):
    """exp(a) = sum a^k / k! of a square matrix, as `scipy.linalg.expm`."""

    core_ranks = (2,)

    def core_shapes(self, *input_cores: Shape) -> tuple[Shape, ...]:
        n = square_length(self, input_cores[0], "matrix")
        return ((n, n),)

    def core_perform(self, *cores: Array) -> tuple[Array, ...]:
        import scipy.linalg  # here, not at import: it costs every `import ops` 0.12 s

        a = cores[0]
        if a.shape[0] == 0:
            return (a.copy(),)
        return (np.asarray(scipy.linalg.expm(a), dtype=a.dtype),)

    def frechet(self, a: Variable, direction: Variable) -> Variable:
        """L(a, direction): the upper right block of exp([[a, direction], [0, a]])."""
        a, direction = pad_batch([a, direction], (2, 2))
        static = a.type.shape[-1]
        n = a.shape[-1] if static is None else static
        top = concatenate([a, direction], axis=-1)
        bottom = concatenate([zeros_like(direction), a], axis=-1)
        return self(concatenate([top, bottom], axis=-2))[..., :n, n:]

    def pullback(
        self, inputs: tuple[Variable, ...], outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> Derivatives:
        (a,), (cotangent,) = inputs, cotangents
        if cotangent is None:
            return (None,)
        return (fit_to(a, self.frechet(mT(a), cotangent)),)

    def pushforward(
        self, inputs: tuple[Variable, ...], outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> Derivatives:
        (a,), (tangent,) = inputs, tangents
        if tangent is None:
            return (None,)
        return (self.frechet(a, tangent),)
