from typing import Any

import numpy as np

_Array = np.ndarray[Any, np.dtype[Any]]

class _FrozenMultivariateNormal:
    def logpdf(self, x: _Array) -> float: ...

def multivariate_normal(mean: _Array, cov: _Array) -> _FrozenMultivariateNormal: ...
