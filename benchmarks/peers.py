"""Shared by the runtime benchmarks: time each implementation of one computation the same
way, keep going when one cannot be built, and print medians with ratios against fgraph.

A peer is a name and a `build` function returning the zero-argument callable to time
(building is where compiling happens, and is timed separately). A peer whose library is
missing or whose build fails is reported with the reason and skipped; the others still
run.

`--busy` in the scripts times each peer quiet and then with another process spinning on
one core (`busy_core`), as on a laptop, a CI runner or a machine with two Dask workers:
`measure_quiet_and_busy`, `report_quiet_and_busy`.
"""

from __future__ import annotations

import contextlib
import gc
import os
import statistics
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import attrs
import numpy as np

Run = Callable[[], Any]


@attrs.frozen
class Peer:
    name: str
    build: Callable[[], Run]


@attrs.frozen
class Result:
    name: str
    build_seconds: float
    run_seconds: tuple[float, ...] = ()
    value: Any = None
    failure: str | None = None

    @property
    def median(self) -> float:
        return statistics.median(self.run_seconds)


def measure(peer: Peer, repeats: int, warmups: int = 1) -> Result:
    """Build once, run `warmups` times untimed, then `repeats` timed runs (gc off)."""
    start = time.perf_counter()
    try:
        run = peer.build()
        value = run()
        for _ in range(warmups - 1):
            run()
    except ImportError as error:
        return Result(peer.name, 0.0, failure=f"not installed ({error.name or error})")
    except Exception as error:
        detail = traceback.format_exception_only(error)[-1].strip()
        return Result(peer.name, 0.0, failure=f"failed: {detail[:300]}")
    build_seconds = time.perf_counter() - start
    times = []
    gc.disable()
    try:
        for _ in range(repeats):
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
    finally:
        gc.enable()
    return Result(peer.name, build_seconds, tuple(times), value)


def agree(result: Any, reference: Any, rtol: float) -> bool:
    """Whether two outputs (arrays, scalars, or tuples/lists of them) agree."""
    if isinstance(reference, (tuple, list)):
        return isinstance(result, (tuple, list)) and len(result) == len(reference) and all(
            agree(r, e, rtol) for r, e in zip(result, reference)
        )
    return bool(np.allclose(np.asarray(result), np.asarray(reference), rtol=rtol, atol=0.0))


def report(results: Sequence[Result], reference: Any, rtol: float = 1e-9) -> None:
    """One line per peer: median run time, its ratio to fgraph's (above 1: the peer is
    slower than fgraph), first-call time (compile + one run), and a value check."""
    baseline = next((r for r in results if r.name == "fgraph" and r.failure is None), None)
    print(f"{'peer':<22}{'median ms':>12}{'vs fgraph':>11}{'first call s':>14}  check")
    for result in results:
        if result.failure is not None:
            print(f"{result.name:<22}{result.failure}")
            continue
        ratio = f"{result.median / baseline.median:.2f}x" if baseline is not None else "-"
        check = "ok" if agree(result.value, reference, rtol) else "MISMATCH"
        print(
            f"{result.name:<22}{result.median * 1e3:>12.2f}{ratio:>11}"
            f"{result.build_seconds:>14.2f}  {check}"
        )
    if baseline is None:
        print("fgraph did not run: no ratios (see its failure above)")


BUSY_PEERS = ("fgraph", "numba (hand-written)", "jax jit")
"""The peers `--busy` times: fgraph, the same computation in hand-written numba, JAX."""


@contextlib.contextmanager
def busy_core() -> Iterator[None]:
    """A CPU-bound process on the last core this process may use (pinned where the OS
    allows it) for the duration of the block."""
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        if hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(spinner.pid, {max(os.sched_getaffinity(0))})
        time.sleep(0.5)  # started and spinning
        yield
    finally:
        spinner.kill()
        spinner.wait()


def measure_quiet_and_busy(peer: Peer, repeats: int) -> tuple[Result, Result]:
    """Build `peer` once, time it quiet, then time it again while `busy_core` runs (one
    after the other, so background load changes little between the two)."""
    built: list[Run] = []

    def build() -> Run:
        built.append(peer.build())
        return built[-1]

    quiet = measure(Peer(peer.name, build), repeats)
    if quiet.failure is not None:
        return quiet, quiet
    with busy_core():
        busy = measure(Peer(peer.name, lambda: built[-1]), repeats)
    return quiet, busy


def report_quiet_and_busy(pairs: Sequence[tuple[Result, Result]], agrees: Callable[[Any], bool]) -> None:
    """One line per peer: quiet and busy medians, busy over quiet, the busy median over
    fgraph's busy median (above 1: slower than fgraph under load), and whether its value
    `agrees` with the reference."""
    baseline = next((busy for quiet, busy in pairs if busy.name == "fgraph" and busy.failure is None), None)
    unit, scale = ("us", 1e6) if all(q.failure or q.median < 1e-3 for q, _ in pairs) else ("ms", 1e3)
    print(f"{'peer':<22}{'quiet ' + unit:>10}{'busy ' + unit:>10}{'busy/quiet':>12}"
          f"{'busy vs fgraph':>16}  check")
    for quiet, busy in pairs:
        if quiet.failure is not None:
            print(f"{quiet.name:<22}{quiet.failure}")
            continue
        versus = f"{busy.median / baseline.median:.2f}x" if baseline is not None else "-"
        check = "ok" if agrees(quiet.value) else "MISMATCH"
        print(f"{quiet.name:<22}{quiet.median * scale:>10.2f}{busy.median * scale:>10.2f}"
              f"{busy.median / quiet.median:>11.2f}x{versus:>16}  {check}")
