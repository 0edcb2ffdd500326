# Type stubs for numba's signature constructor.
from typing import Any

from numba.core import types

def signature(return_type: types.Type, *args: types.Type) -> Any: ...
