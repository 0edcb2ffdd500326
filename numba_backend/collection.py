"""Fewer runs of Python's cyclic garbage collector while a graph compiles.

numba's compiler allocates millions of short-lived objects (IR nodes, types, llvmlite
values), so with Python's default thresholds (700, 10, 10) a compile triggers dozens of
collections of the oldest generation, each walking every object of the process
(numba's registries, the user's data): 1.0 s of the 2-d Kalman filter's 6.1 s cold
compile, 0.8 s of the 5 004-op graph's 5.1 s, 0.2 s of the HMM's 2.0 s. With the
youngest generation's threshold at `YOUNG_THRESHOLD` during a compile they are 0.1-0.3 s
and the compile's peak memory grows by 5-20 MB (measured with collection disabled
altogether: a second more saved on none of them, 40 MB more memory).

Thresholds are process-wide: the first compile to start raises the youngest one (unless
collection is off, threshold 0), the last to end restores what it found, unless the
program changed them meanwhile."""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

YOUNG_THRESHOLD = 20_000
"""Allocations (minus deallocations) between collections of the youngest generation
during a compile; the older generations keep their own thresholds (10 each: an oldest
collection after 2 million allocations instead of 70 000)."""

_lock = threading.Lock()
_compiling = 0  # compiles under way, in any thread
_restore: tuple[tuple[int, ...], tuple[int, ...]] | None = None  # (found, raised)


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """The youngest generation's threshold at least `YOUNG_THRESHOLD` inside (nested
    uses and other threads' share one raise)."""
    global _compiling, _restore
    with _lock:
        if _compiling == 0:
            found: tuple[int, ...] = gc.get_threshold()
            young, *older = found
            gc.set_threshold(*((max(young, YOUNG_THRESHOLD), *older) if young else found))
            _restore = (found, gc.get_threshold())
        _compiling += 1
    try:
        yield
    finally:
        with _lock:
            _compiling -= 1
            if _compiling == 0 and _restore is not None:
                found, raised = _restore
                if gc.get_threshold() == raised:
                    gc.set_threshold(*found)
                _restore = None
