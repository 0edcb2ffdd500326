"""The C heap's policy for the arrays compiled code allocates and frees on every call.

glibc's malloc serves a block above its mmap threshold (128 KiB at start) with a fresh
mapping and, once such a block is freed, raises the threshold to its size and the trim
threshold to twice that. A compiled function that allocates a few MiB of traces and
temporaries per call then often ends each call with more than the trim threshold free
at the top of the heap: glibc gives it back to the system, and the next call takes it
again, page-faulting on every page (the RNN benchmark W4: 5 `brk` calls per call and a
quarter of its run time in the kernel, depending only on the order of its frees).
Fixed thresholds (32 MiB for mappings, glibc's own cap; 128 MiB of free heap kept)
keep a function's working memory mapped from call to call, as NumPy-heavy code and
JAX's own allocator do. They are set once, when the backend is imported, for the whole
process, and only on glibc and where the user has not chosen them
(`MALLOC_MMAP_THRESHOLD_`, `MALLOC_TRIM_THRESHOLD_`, or glibc's tunables).
"""

from __future__ import annotations

import ctypes
import os
import platform

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
"""glibc's `mallopt` parameters (malloc.h)."""

MMAP_THRESHOLD = 32 * 2**20
TRIM_THRESHOLD = 128 * 2**20

_USER_SETTINGS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES")


def keep_working_memory() -> bool:
    """Fix glibc's thresholds (see the module docstring); whether they were set."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    if any(name in os.environ for name in _USER_SETTINGS):
        return False
    mallopt = ctypes.CDLL(None).mallopt
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    )
