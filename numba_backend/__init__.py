"""numba_backend package (being built)."""
