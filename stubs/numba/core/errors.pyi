# Type stubs for numba's exception types (numba ships no type information).

class NumbaError(Exception):
    """Base of the errors numba raises for code it cannot type, lower or compile."""
