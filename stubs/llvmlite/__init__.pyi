# Type stubs for the parts of llvmlite that fgraph's numba intrinsics use.
