"""The ziggurat tables numba's generators share with NumPy's (`random_streams` reads them)."""

import numpy as np
import numpy.typing as npt

fe_double: npt.NDArray[np.float64]
fi_double: npt.NDArray[np.float64]
ke_double: npt.NDArray[np.uint64]
ki_double: npt.NDArray[np.uint64]
we_double: npt.NDArray[np.float64]
wi_double: npt.NDArray[np.float64]
ziggurat_exp_r: float
ziggurat_nor_inv_r: float
ziggurat_nor_r: float
