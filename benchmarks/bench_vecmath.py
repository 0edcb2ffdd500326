"""Run time of element loops over `numba_backend.vecmath` against libm and NumPy.

For each function and dtype, over 10^7 elements, the script prints the median time of

* vecmath: a numba loop `out[i] = exp_f64(a[i])`,
* libm:    the same loop with `math.exp(a[i])` (what numba emits today),
* numpy:   the ufunc `np.exp(a, out=out)`,

the ratios, and whether LLVM's loop vectorizer transformed the loop (a `vector.body`
block in its LLVM IR; for libm loops that only means the calls were replicated per
lane, still one scalar call per element). Then sum reductions `total += f(a[i])`, which
LLVM keeps in order (no vectorization), and the same with the addition marked
reassociable (`intrinsics.assoc_add`); then sin_f64's large-argument handling against
two alternatives; last, compile time: per function, the first call of a map loop in a
fresh process on a new, empty NUMBA_CACHE_DIR (cold) and in a second process on the
same folder (warm), above numba's start-up (the compile of `x + 1`, reported apart),
against the same loop over math.exp. `--compile` runs only that part.

    python benchmarks/bench_vecmath.py [--size 10000000] [--repeats 7] [--only exp,sin]
        [--compile] [--compile-repeats 3]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba
import numpy as np
from numba.core import types

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from numba_backend import vecmath  # noqa: E402
from numba_backend.intrinsics import assoc_add  # noqa: E402

LIBM: dict[str, Callable[[float], float]] = {
    "exp": math.exp,
    "expm1": math.expm1,
    "log": math.log,
    "log1p": math.log1p,
    "sin": math.sin,
    "cos": math.cos,
}
# Inputs: the range where each function is typically used, inside the fast path.
DOMAIN: dict[str, tuple[float, float, bool]] = {  # low, high, log-uniform
    "exp": (-50.0, 50.0, False),
    "expm1": (-5.0, 5.0, False),
    "log": (1e-10, 1e10, True),
    "log1p": (-0.99, 100.0, False),
    "sin": (-100.0, 100.0, False),
    "cos": (-100.0, 100.0, False),
}


def map_loop(f: Callable[..., Any]) -> Any:
    def loop(a: Any, out: Any) -> None:
        for i in range(a.size):
            out[i] = f(a[i])

    return numba.njit(error_model="numpy")(loop)


def sum_loop(f: Callable[..., Any], reassociate: bool = False) -> Any:
    if reassociate:

        def loop(a: Any) -> Any:
            total = a.dtype.type(0)
            for i in range(a.size):
                total = assoc_add(total, f(a[i]))
            return total

    else:

        def loop(a: Any) -> Any:
            total = a.dtype.type(0)
            for i in range(a.size):
                total += f(a[i])
            return total

    return numba.njit(error_model="numpy")(loop)


def vectorized(dispatcher: Any) -> bool:
    """Whether LLVM's loop vectorizer transformed the loop (it names the block)."""
    return any("vector.body" in ir for ir in dispatcher.inspect_llvm().values())


def median_ms(run: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1e3


def inputs(name: str, dtype: type[np.floating[Any]], size: int) -> Any:
    low, high, log_uniform = DOMAIN[name]
    rng = np.random.default_rng(0)
    if log_uniform:
        return np.exp(rng.uniform(np.log(low), np.log(high), size)).astype(dtype)
    return rng.uniform(low, high, size).astype(dtype)


def bench_maps(names: list[str], size: int, repeats: int) -> None:
    print(f"map loops out[i] = f(a[i]), {size} elements, median ms")
    print(f"{'function':<12}{'vecmath':>9}{'libm':>9}{'numpy':>9}{'libm/vec':>10}{'np/vec':>8}  vectorized")
    for name in names:
        for dtype, suffix in ((np.float64, "f64"), (np.float32, "f32")):
            a = inputs(name, dtype, size)
            out = np.empty_like(a)
            fast, slow = map_loop(getattr(vecmath, f"{name}_{suffix}")), map_loop(LIBM[name])
            ufunc = getattr(np, name)
            fast(a, out), slow(a, out)
            t_fast = median_ms(lambda: fast(a, out), repeats)
            t_slow = median_ms(lambda: slow(a, out), repeats)
            t_np = median_ms(lambda: ufunc(a, out=out), repeats)
            print(
                f"{name + '_' + suffix:<12}{t_fast:9.1f}{t_slow:9.1f}{t_np:9.1f}"
                f"{t_slow / t_fast:10.2f}{t_np / t_fast:8.2f}  {vectorized(fast)} (libm: {vectorized(slow)})"
            )


def bench_sums(names: list[str], size: int, repeats: int) -> None:
    print(f"\nsum loops total += f(a[i]), float64, {size} elements, median ms;")
    print("reassoc: total = assoc_add(total, f(a[i])), the addition marked reassociable")
    print(f"{'function':<12}{'vecmath':>9}{'libm':>9}{'libm/vec':>10}  vectorized  {'reassoc':>9}  vectorized")
    for name in names:
        a = inputs(name, np.float64, size)
        f = getattr(vecmath, f"{name}_f64")
        fast, slow, assoc = sum_loop(f), sum_loop(LIBM[name]), sum_loop(f, reassociate=True)
        fast(a), slow(a), assoc(a)
        t_fast = median_ms(lambda: fast(a), repeats)
        t_slow = median_ms(lambda: slow(a), repeats)
        t_assoc = median_ms(lambda: assoc(a), repeats)
        print(
            f"{name:<12}{t_fast:9.1f}{t_slow:9.1f}{t_slow / t_fast:10.2f}  {str(vectorized(fast)):<10}"
            f"  {t_assoc:9.1f}  {vectorized(assoc)}"
        )


def _sin_cody_waite_body(x: vecmath._V) -> vecmath._V:
    """sin_f64 without the Payne-Hanek path: wrong for |x| >= TRIG_LIMIT."""
    rh, rl, q = vecmath._cody_waite(x)
    s, c = vecmath._kernels(rh, rl)
    return vecmath._quadrant(s, c, q)


_sin_cody_waite = vecmath._elementwise(_sin_cody_waite_body, types.float64, "sin_cody_waite")


@numba.njit(error_model="numpy")
def _sin_libm_beyond(x: float) -> float:
    """sin_f64 with libm's sin, in a branch, instead of the Payne-Hanek path."""
    if not abs(x) < vecmath.TRIG_LIMIT:
        return math.sin(x)
    y: float = _sin_cody_waite(x)
    return y


def bench_trig_reduction(size: int, repeats: int) -> None:
    print("\nsin_f64 large-argument handling, float64 map loop, median ms")
    a = inputs("sin", np.float64, size)
    big = a * 1e13  # about 96% of the elements beyond TRIG_LIMIT
    out = np.empty_like(a)
    for label, f in (
        ("sin_f64 (Payne-Hanek if-converted)", vecmath.sin_f64),
        ("Cody-Waite only (wrong beyond 2^45)", _sin_cody_waite),
        ("Cody-Waite + libm sin in a branch", _sin_libm_beyond),
    ):
        loop = map_loop(f)
        loop(a, out)
        t_small = median_ms(lambda: loop(a, out), repeats)
        t_big = median_ms(lambda: loop(big, out), repeats)
        print(f"{label:<37} |x| < 100: {t_small:7.1f}   96% huge: {t_big:7.1f}   vectorized: {vectorized(loop)}")


COMPILE_SCRIPT = """
import json, math, sys, time
t0 = time.perf_counter()
import numba, numpy as np
sys.path.insert(0, {root!r})
from numba_backend import vecmath
t1 = time.perf_counter()
numba.njit(lambda x: x + 1)(1.0)
t2 = time.perf_counter()
f = {func}
@numba.njit(error_model="numpy")
def loop(a, out):
    for i in range(a.size):
        out[i] = f(a[i])
a = np.ones(8, dtype=np.{dtype})
loop(a, np.empty_like(a))
t3 = time.perf_counter()
print(json.dumps([t1 - t0, t2 - t1, t3 - t2]))
"""


def compile_seconds(func: str, dtype: str, cache_dir: str) -> tuple[float, float, float]:
    """(import, numba start-up, first call of the map loop) seconds in a new process
    whose numba cache is `cache_dir`; the start-up is the compile of `x + 1`."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    code = COMPILE_SCRIPT.format(root=str(REPO_ROOT), func=func, dtype=dtype)
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    imports, startup, first_call = json.loads(result.stdout)
    return float(imports), float(startup), float(first_call)


def bench_compile(names: list[str], repeats: int) -> None:
    """Per function: a new process on a new, empty NUMBA_CACHE_DIR (cold: anything the
    loop calls with numba's `cache=True` is compiled and written there), then a second
    process on the same folder (warm: loaded from it). vecmath's functions are
    intrinsics, with nothing cached of their own, so both should be alike. Each process
    first compiles `x + 1` (numba's start-up, reported apart), then times the first
    call of `out[i] = f(a[i])` on 8 elements. Medians over `repeats` cache folders; the
    map loop's own compile is in both columns (the math.exp row shows it alone)."""
    print(f"\ncompile seconds above numba start-up, fresh processes, median of {repeats}")
    print(f"{'function':<12}{'cold':>8}{'warm':>8}{'start-up':>10}{'import':>8}")
    rows = [("math.exp", "math.exp", "float64")] + [
        (f"{name}_{suffix}", f"vecmath.{name}_{suffix}", dtype)
        for name in names
        for suffix, dtype in (("f64", "float64"), ("f32", "float32"))
    ]
    for label, func, dtype in rows:
        cold, warm, startup, imports = [], [], [], []
        for _ in range(repeats):
            with tempfile.TemporaryDirectory() as cache_dir:
                i, s, c = compile_seconds(func, dtype, cache_dir)
                _, s2, w = compile_seconds(func, dtype, cache_dir)
            cold.append(c)
            warm.append(w)
            imports.append(i)
            startup += [s, s2]
        print(
            f"{label:<12}{np.median(cold):8.3f}{np.median(warm):8.3f}"
            f"{np.median(startup):10.3f}{np.median(imports):8.3f}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=10_000_000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--only", default=",".join(LIBM), help="comma-separated function names")
    parser.add_argument("--compile", action="store_true", help="only the compile-time measurement")
    parser.add_argument("--compile-repeats", type=int, default=3)
    args = parser.parse_args()
    names = args.only.split(",")
    if not args.compile:
        bench_maps(names, args.size, args.repeats)
        bench_sums(names, args.size, args.repeats)
        bench_trig_reduction(args.size, args.repeats)
    bench_compile(names, args.compile_repeats)


if __name__ == "__main__":
    main()
