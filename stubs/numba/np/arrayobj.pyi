# Type stubs for numba's array-construction lowering helpers, used by fgraph's `new_array`.
from typing import Any

from llvmlite import ir
from numba.core import types

def _parse_shape(context: Any, builder: ir.IRBuilder, ty: types.Type, val: ir.Value) -> list[ir.Value]: ...
def _empty_nd_impl(context: Any, builder: ir.IRBuilder, arrtype: types.Array, shapes: list[ir.Value]) -> Any: ...
