"""The special-function scalar ops as calls of `numba_backend.special_functions`, in
float64 (stored in the output dtype, as SciPy's float32 loops round their results):
what the `Elemwise` kernel inlines for the scalar ops of `ops.special`."""

from __future__ import annotations

from numba_backend.scalar_ops import Operand, scalar_expression
from ops.scalar_ops import ScalarOp
from ops.special import (
    BetaInc,
    BetaIncDer,
    BetaLn,
    Gamma,
    GammaIncInv,
    HurwitzZeta,
    OwensT,
    Zeta,
    Digamma,
    ErfcInv,
    Erfcx,
    ErfInv,
    GammaInc,
    GammaIncC,
    GammaIncDerA,
    GammaLn,
    I0,
    I1,
    Ive,
    PolyGamma,
)
from ops.special_bessel import Jv, Kv, Kve

CALLS: dict[type[ScalarOp], str] = {
    GammaLn: "gammaln",
    Digamma: "digamma",
    PolyGamma: "polygamma",
    GammaInc: "gammainc",
    GammaIncC: "gammaincc",
    GammaIncDerA: "gammainc_der_a",
    BetaLn: "betaln",
    ErfInv: "erfinv",
    ErfcInv: "erfcinv",
    Erfcx: "erfcx",
    I0: "i0",
    I1: "i1",
    Ive: "ive",
    Gamma: "gamma",
    BetaInc: "betainc",
    GammaIncInv: "gammaincinv",
    Zeta: "zeta",
    HurwitzZeta: "hurwitz_zeta_scipy",
    OwensT: "owens_t",
    Jv: "jv",
    Kv: "kv",
    Kve: "kve",
}
"""Each op's function in `special_functions` (imported as `special` by generated code)."""


def _operands(args: tuple[str, ...]) -> str:
    return ", ".join(
        arg if getattr(arg, "dtype", None) == "float64" else f"np.float64({arg})" for arg in args
    )


def _call(op: ScalarOp, args: tuple[str, ...], out_dtype: str) -> str:
    return Operand(f"special.{CALLS[type(op)]}({_operands(args)})", "float64")


@scalar_expression.register(BetaIncDer)
def _betainc_der(op: BetaIncDer, args: tuple[str, ...], out_dtype: str) -> str:
    function = "betainc_der_a" if op.wrt_a else "betainc_der_b"
    return Operand(f"special.{function}({_operands(args)})", "float64")


for _op_class in CALLS:
    scalar_expression.register(_op_class)(_call)
