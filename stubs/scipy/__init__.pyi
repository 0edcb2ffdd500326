# The parts of SciPy that fgraph uses.
from typing import Any

class LowLevelCallable(tuple[Any, ...]):
    """A C function SciPy calls without Python (`scipy.integrate.quad` and others)."""

    def __new__(
        cls, function: Any, user_data: Any = ..., signature: str | None = ...
    ) -> LowLevelCallable: ...
    @property
    def function(self) -> Any: ...
