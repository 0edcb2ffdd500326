"""Per-call overhead of a compiled graph: called from Python, from the user's own numba
code (`numba_function` in an njit loop) and through the C function (`cfunc`), against a
hand-written numba function (its dispatcher from Python; a plain call inside an njit
loop) and JAX's jit.

    seed      the seed's f, f', f'' at one number (bench_loops' W1: y_t = y_{t-1} ** 2
              for 4 steps): 1 number in, 3 numbers out
    gaussian  a 10-d correlated Gaussian's log-density and gradient (what an HMC step
              calls): 1 vector in, a number and a vector out; mean and precision are
              constants of the graph

Each run makes `--calls` calls (from numba: a loop whose input changes every step, so
nothing is hoisted out of it); the script prints the median time per call over
`--repeats` runs and its ratio to fgraph's in the same setting (above 1: slower than
fgraph), and checks the values against fgraph's Python call.

    python benchmarks/bench_call.py [--repeats 21] [--calls 2000] [--only seed,gaussian]
"""

from __future__ import annotations

import argparse
import ctypes
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from benchmarks.peers import Peer, Result, Run, agree, measure  # noqa: E402

Array = np.ndarray[Any, np.dtype[np.float64]]
DIMENSION = 10


def gaussian_parameters() -> tuple[Array, Array]:
    """The mean and the precision (a correlated, well-conditioned SPD matrix)."""
    rng = np.random.default_rng(0)
    factor = rng.normal(size=(DIMENSION, DIMENSION)) / np.sqrt(DIMENSION)
    return rng.normal(size=DIMENSION), factor @ factor.T + np.eye(DIMENSION)


def fgraph_compiled(workload: str) -> Any:
    import ops as pt
    from numba_backend import function

    if workload == "seed":
        x0 = pt.scalar("x0")
        ys = pt.scan(lambda prev: prev**2, outputs_info=[x0], n_steps=4)
        first = pt.grad(ys[-1], x0)
        return function([x0], [ys[-1], first, pt.grad(first, x0)])
    mean, precision = gaussian_parameters()
    x = pt.vector("x")
    centered = x - pt.constant(mean)
    logp = -0.5 * (centered * pt.matmul(pt.constant(precision), centered)).sum()
    return function([x], [logp, pt.grad(logp, x)])


def hand_numba(workload: str) -> Any:
    import numba

    if workload == "seed":

        @numba.njit
        def seed(x0: float) -> tuple[float, float, float]:
            return x0**16, 16 * x0**15, 240 * x0**14

        return seed
    mean, precision = gaussian_parameters()

    @numba.njit
    def gaussian(x: Array) -> tuple[float, Array]:
        centered = x - mean
        gradient = -(precision @ centered)
        return float(0.5 * (centered @ gradient)), gradient

    return gaussian


def first_argument(workload: str) -> Any:
    return 1.1 if workload == "seed" else np.linspace(-1.0, 1.0, DIMENSION)


# -- the peers' runs: `calls` calls each --------------------------------------------------
def from_python(function: Callable[..., Any], workload: str, calls: int) -> Run:
    argument = first_argument(workload)

    def run() -> Any:
        for _ in range(calls - 1):
            function(argument)
        return function(argument)

    return run


def in_njit_loop(function: Any, workload: str, calls: int) -> Run:
    """An njit loop calling `function` with an input that changes every step, summing
    the first output (so neither the call nor its results can be dropped)."""
    import numba

    if workload == "seed":

        @numba.njit
        def loop(start: float, count: int) -> float:
            total = 0.0
            for step in range(count):
                total += function(start + step * 1e-12)[0]
            return total

        return lambda: loop(1.1, calls)

    @numba.njit
    def vector_loop(start: Array, count: int) -> float:
        x = start.copy()
        total = 0.0
        for step in range(count):
            x[0] = start[0] + step * 1e-12
            total += function(x)[0]
        return total

    argument = first_argument(workload)
    return lambda: vector_loop(argument, calls)


def cfunc_in_njit_loop(compiled: Any, workload: str, calls: int) -> Run:
    """The C function called through its address from an njit loop, as a C or Rust
    sampler calls it: pointers to the input and output buffers, lengths, sizes (the
    tables of pointers typed as uint64 arrays, which numba passes by address)."""
    import numba

    pointers, lengths = ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_int64)
    prototype = ctypes.CFUNCTYPE(ctypes.c_int64, pointers, lengths, pointers, lengths)
    call = prototype(compiled.cfunc.address)
    shapes = np.array([DIMENSION], dtype=np.int64)
    sizes = np.array([1, 1, 1] if workload == "seed" else [1, DIMENSION], dtype=np.int64)
    outputs = [np.zeros(()) for _ in range(3)] if workload == "seed" else [
        np.zeros(()), np.zeros(DIMENSION)
    ]
    output_pointers = np.array([o.ctypes.data for o in outputs], dtype=np.uint64)
    argument = np.atleast_1d(np.asarray(first_argument(workload), dtype=np.float64)).copy()

    @numba.njit
    def loop(x: Array, out: Array, shapes: Array, sizes: Array, first: Array, count: int) -> float:
        inputs = np.empty(1, dtype=np.uint64)
        inputs[0] = x.ctypes.data
        total = 0.0
        start = x[0]
        for step in range(count):
            x[0] = start + (count - 1 - step) * 1e-12  # the last call at the start value
            status = call(inputs.ctypes, shapes.ctypes, out.ctypes, sizes.ctypes)
            total += first[0] + status
        return total

    first_output = outputs[0].reshape(1)

    def run() -> Any:
        loop(argument, output_pointers, shapes, sizes, first_output, calls)
        return [o.copy() for o in outputs]

    return run


def cfunc_through_ctypes(compiled: Any, workload: str, calls: int) -> Run:
    """The C function called from Python through ctypes (what a ctypes user pays)."""
    argument = np.atleast_1d(np.asarray(first_argument(workload), dtype=np.float64))
    outputs = [np.zeros(()) for _ in range(3)] if workload == "seed" else [
        np.zeros(()), np.zeros(DIMENSION)
    ]
    inputs = (ctypes.c_void_p * 1)(argument.ctypes.data)
    shapes = (ctypes.c_int64 * 1)(DIMENSION)
    pointers = (ctypes.c_void_p * len(outputs))(*(o.ctypes.data for o in outputs))
    sizes = (ctypes.c_int64 * len(outputs))(*(o.size for o in outputs))
    call = compiled.cfunc.ctypes

    def run() -> Any:
        for _ in range(calls):
            call(inputs, shapes, pointers, sizes)
        return [o.copy() for o in outputs]

    return run


def jax_from_python(workload: str, calls: int) -> Run:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    if workload == "seed":

        def f(x0: Any) -> Any:
            return jax.lax.scan(lambda y, _: (y**2, None), x0, None, length=4)[0]

        compiled = jax.jit(lambda x: (f(x), jax.grad(f)(x), jax.grad(jax.grad(f))(x)))
    else:
        mean, precision = gaussian_parameters()

        def logp(x: Any) -> Any:
            centered = x - mean
            return -0.5 * jnp.sum(centered * (precision @ centered))

        compiled = jax.jit(jax.value_and_grad(logp))
    argument = first_argument(workload)

    def call(value: Any) -> Any:
        return [r.block_until_ready() for r in compiled(value)]

    return from_python(call, workload, calls)


SETTINGS = ("from Python", "from numba (njit loop)", "C function")


def peers(workload: str, calls: int) -> list[tuple[str, Peer]]:
    """(setting, peer) pairs; the first of each setting is fgraph's."""
    compiled: dict[str, Any] = {}

    def fgraph() -> Any:
        if "f" not in compiled:
            compiled["f"] = fgraph_compiled(workload)
        return compiled["f"]

    return [
        (SETTINGS[0], Peer("fgraph f(...)", lambda: from_python(fgraph(), workload, calls))),
        (SETTINGS[0], Peer("numba (hand-written)",
                           lambda: from_python(hand_numba(workload), workload, calls))),
        (SETTINGS[0], Peer("jax jit", lambda: jax_from_python(workload, calls))),
        (SETTINGS[1], Peer("fgraph numba_function",
                           lambda: in_njit_loop(fgraph().numba_function, workload, calls))),
        (SETTINGS[1], Peer("numba (hand-written)",
                           lambda: in_njit_loop(hand_numba(workload), workload, calls))),
        (SETTINGS[2], Peer("fgraph cfunc from njit",
                           lambda: cfunc_in_njit_loop(fgraph(), workload, calls))),
        (SETTINGS[2], Peer("fgraph cfunc by ctypes",
                           lambda: cfunc_through_ctypes(fgraph(), workload, calls))),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--only", default="seed,gaussian")
    options = parser.parse_args()
    for workload in options.only.split(","):
        print(f"\n{workload}: us per call, median of {options.repeats} runs of "
              f"{options.calls} calls")
        print(f"{'setting':<24}{'peer':<26}{'median us':>10}{'vs fgraph':>11}  check")
        reference = fgraph_compiled(workload)(first_argument(workload))
        baseline: dict[str, Result] = {}
        for setting, peer in peers(workload, options.calls):
            result = measure(peer, options.repeats)
            if result.failure is not None:
                print(f"{setting:<24}{peer.name:<26}{result.failure}")
                continue
            fgraph = baseline.setdefault(setting, result)
            per_call = result.median / options.calls
            ratio = f"{result.median / fgraph.median:.2f}x"
            checked = result.value if setting != SETTINGS[1] else None
            check = "-" if checked is None else ("ok" if agree(checked, reference, 1e-9) else "MISMATCH")
            print(f"{setting:<24}{peer.name:<26}{per_call * 1e6:>10.3f}{ratio:>11}  {check}")


if __name__ == "__main__":
    main()
