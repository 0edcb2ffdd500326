"""Small helpers the algebraic rule sets share: reading constants through the shuffles
that broadcasting puts around them, and making a replacement fit the exact type of the
variable it stands for (the engine rejects one that changes the dtype or forgets a
static length). The reading and fitting live in `ops.matching`, shared with `grad`.
"""

from __future__ import annotations

from fgraph import Variable
from ops.matching import constant_data, fit_to_type, is_constant_value

__all__ = ["constant_data", "fit_to_type", "is_constant_value", "replacement"]


def replacement(candidate: Variable, target: Variable) -> tuple[Variable] | None:
    """`(candidate,)` fitted to the type of `target` (the single output being
    replaced), or None when it cannot stand for it: what a one-output rule returns."""
    fitted = fit_to_type(candidate, target.type)
    return None if fitted is None else (fitted,)
