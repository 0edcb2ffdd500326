# Type stubs for numba's conversions between its types and NumPy's.
import numpy as np

from numba.core import types

def as_dtype(nbtype: types.Type) -> np.dtype[np.generic]: ...
