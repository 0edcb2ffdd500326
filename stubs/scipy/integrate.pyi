# The parts of scipy.integrate that fgraph's tests and examples use.
from collections.abc import Callable, Sequence
from typing import Any

def quad(
    func: Callable[..., float] | Any, a: float, b: float, args: Sequence[float] = ...
) -> tuple[float, float]: ...
