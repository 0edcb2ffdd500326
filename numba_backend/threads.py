"""`function(..., threads=n)`: at most `n` threads for one compiled function's calls.

By default a function's matrix products and LAPACK calls follow `numba_backend.blas`'s
size rule (one thread below `blas.THREADED_PRODUCT_MIN` multiply-adds, which keeps a
busy machine from stalling them; OpenBLAS's thread count above it) and its parallel
loops run on numba's threads (`NUMBA_NUM_THREADS`, `numba.set_num_threads`). Given
`threads`, each call runs in `limited_call`, which for its duration:

- lowers OpenBLAS's thread count to `threads` if it is above (a lower count, from
  `OPENBLAS_NUM_THREADS`, `OMP_NUM_THREADS` or `threadpoolctl`, is kept), and lifts the
  size rule, so products OpenBLAS would split use up to `threads` threads;
- with `parallel=True`, lowers numba's thread count for the calling thread to
  `threads` (numba keeps that count per thread).

OpenBLAS's count and the size rule are process-wide. Calls with `threads` that overlap
in several Python threads share them under one lock: the smallest count wins while they
overlap, and the count the first one found is restored when the last one ends. A count
`threadpoolctl` sets in another thread while such a call runs is overwritten when it
ends. This costs a call 2-3 us (on a loaded 2-core machine); functions without
`threads` skip it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

import numba

from numba_backend import blas

_Result = TypeVar("_Result")


def checked_threads(threads: object) -> int | None:
    """`function`'s `threads` argument: None or a positive int, else a clear error."""
    if threads is None:
        return None
    if isinstance(threads, bool) or not isinstance(threads, int):
        raise TypeError(f"threads must be a positive int or None, got {threads!r}")
    if threads < 1:
        raise ValueError(f"threads must be at least 1, got {threads}")
    return threads


def blas_threads() -> int | None:
    """OpenBLAS's thread count now, as the products' BLAS calls see it (None without
    OpenBLAS)."""
    return None if blas.openblas_threads is None else blas.openblas_threads[0]()


class _Limits:
    """The `threads` of the calls running now, and the OpenBLAS count the first found:
    the process-wide settings follow from these, under one lock, and are written only
    when they change (a write through ctypes costs 0.3 us)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running: list[int] = []
        self.found = self.applied = 1

    def enter(self, threads: int) -> None:
        with self.lock:
            if not self.running:
                self.found = self.applied = blas_threads() or 1
                blas.threaded_min.value = 0
            self.running.append(threads)
            self._apply(min(self.found, *self.running))

    def leave(self, threads: int) -> None:
        with self.lock:
            self.running.remove(threads)
            if self.running:
                self._apply(min(self.found, *self.running))
            else:
                self._apply(self.found)
                blas.threaded_min.value = blas.THREADED_PRODUCT_MIN

    def _apply(self, count: int) -> None:
        if count != self.applied and blas.openblas_threads is not None:
            blas.openblas_threads[1](count)
            self.applied = count


_limits = _Limits()


def limited_call(
    threads: int, parallel: bool, call: Callable[..., _Result], *arguments: Any,
    **keywords: Any,
) -> _Result:
    """`call(*arguments, **keywords)` with at most `threads` BLAS threads and the size rule lifted,
    and if `parallel`, at most `threads` numba threads in this thread."""
    _limits.enter(threads)
    try:
        if not parallel:
            return call(*arguments, **keywords)
        before = numba.get_num_threads()
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        try:
            return call(*arguments, **keywords)
        finally:
            numba.set_num_threads(before)
    finally:
        _limits.leave(threads)
