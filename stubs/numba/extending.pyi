from collections.abc import Callable
from typing import Any, TypeVar

_F = TypeVar("_F", bound=Callable[..., Any])

def overload(function: Callable[..., Any]) -> Callable[[_F], _F]: ...

# An intrinsic's typing function receives numba's typing context and the argument types,
# and returns (signature, codegen) or None; calling the result inside jitted code lowers
# through codegen. Outside jitted code it cannot run, so it is typed loosely.
from typing import overload as _overload

@_overload
def intrinsic(function: Callable[..., Any]) -> Callable[..., Any]: ...
@_overload
def intrinsic(*, prefer_literal: bool) -> Callable[[Callable[..., Any]], Callable[..., Any]]: ...
