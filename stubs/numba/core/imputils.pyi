# Type stubs for numba's lowering helpers that fgraph's intrinsics use.
from typing import Any

from llvmlite import ir
from numba.core import types

def impl_ret_borrowed(
    context: Any, builder: ir.IRBuilder, ty: types.Type, val: ir.Value
) -> ir.Value: ...
