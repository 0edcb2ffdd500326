# Type stubs for the LLVM code-generation helpers of numba that fgraph's intrinsics use.
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from llvmlite import ir

voidptr_t: ir.PointerType
true_bit: ir.Constant
false_bit: ir.Constant

def pack_array(builder: ir.IRBuilder, values: Sequence[ir.Value], ty: ir.Type | None = ...) -> ir.Value: ...
def unpack_tuple(builder: ir.IRBuilder, tup: ir.Value, count: int | None = ...) -> list[ir.Value]: ...
def alloca_once_value(builder: ir.IRBuilder, value: ir.Value, name: str = ...) -> ir.Value: ...
def get_or_insert_function(module: ir.Module, fnty: ir.FunctionType, name: str) -> ir.Function: ...
def alloca_once(builder: ir.IRBuilder, ty: ir.Type, size: ir.Value | None = ..., name: str = ...) -> ir.Value: ...
def get_item_pointer2(
    context: Any,
    builder: ir.IRBuilder,
    data: ir.Value,
    shape: Sequence[ir.Value],
    strides: Sequence[ir.Value],
    layout: str,
    inds: Sequence[ir.Value],
    wraparound: bool = ...,
    boundscheck: bool = ...,
) -> ir.Value: ...

class Loop:
    index: ir.Value

def if_unlikely(builder: ir.IRBuilder, predicate: ir.Value) -> AbstractContextManager[None]: ...
def for_range(builder: ir.IRBuilder, count: ir.Value) -> AbstractContextManager[Loop]: ...
def for_range_slice(
    builder: ir.IRBuilder, start: ir.Value, stop: ir.Value, step: ir.Value, intp: ir.Type | None = ...,
    inc: bool = ...,
) -> AbstractContextManager[tuple[ir.Value, ir.Value]]: ...
def loop_nest(
    builder: ir.IRBuilder, shape: Sequence[ir.Value], intp: ir.Type, order: str = ...
) -> AbstractContextManager[tuple[ir.Value, ...]]: ...
