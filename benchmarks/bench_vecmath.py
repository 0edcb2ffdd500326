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
two alternatives; last, the first-call compile time of a loop over exp_f64 / sin_f64 in
a fresh process with numba's cache of vecmath cold and warm, against math.exp.

    python benchmarks/bench_vecmath.py [--size 10000000] [--repeats 7] [--only exp,sin]
"""

from __future__ import annotations

import argparse
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


@numba.njit(error_model="numpy", forceinline=True)
def _sin_cody_waite(x: float) -> float:
    """sin_f64 without the Payne-Hanek path: wrong for |x| >= TRIG_LIMIT."""
    rh, rl, q = vecmath._reduce_pio2(x)
    s = vecmath._kernel_sin(rh, rl)
    c = vecmath._kernel_cos(rh, rl)
    y = s if (q & 1) == 0 else c
    return y if (q & 2) == 0 else -y


@numba.njit(error_model="numpy", forceinline=True)
def _sin_libm_beyond(x: float) -> float:
    """sin_f64 with libm's sin, in a branch, instead of the Payne-Hanek path."""
    if not abs(x) < vecmath.TRIG_LIMIT:
        return math.sin(x)
    return _sin_cody_waite(x)


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
import math, sys, time
t0 = time.perf_counter()
import numba, numpy as np
sys.path.insert(0, {root!r})
from numba_backend import vecmath
t1 = time.perf_counter()
f = {func}
@numba.njit(error_model="numpy")
def loop(a, out):
    for i in range(a.size):
        out[i] = f(a[i])
a = np.ones(8)
loop(a, np.empty_like(a))
print(f"{{t1 - t0:.3f}} {{time.perf_counter() - t1:.3f}}")
"""


def compile_seconds(func: str, cache_dir: str) -> tuple[float, float]:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    code = COMPILE_SCRIPT.format(root=str(REPO_ROOT), func=func)
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    imports, first_call = result.stdout.split()
    return float(imports), float(first_call)


def bench_compile() -> None:
    print("\nfresh process: import seconds, first call of a map loop seconds")
    with tempfile.TemporaryDirectory() as cache_dir:
        for label, func in (
            ("math.exp", "math.exp"),
            ("exp_f64, cold cache", "vecmath.exp_f64"),
            ("exp_f64, warm cache", "vecmath.exp_f64"),
            ("sin_f64, cold cache", "vecmath.sin_f64"),
            ("sin_f64, warm cache", "vecmath.sin_f64"),
        ):
            imports, first_call = compile_seconds(func, cache_dir)
            print(f"{label:<22} import {imports:6.3f}  first call {first_call:6.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=10_000_000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--only", default=",".join(LIBM), help="comma-separated function names")
    args = parser.parse_args()
    names = args.only.split(",")
    bench_maps(names, args.size, args.repeats)
    bench_sums(names, args.size, args.repeats)
    bench_trig_reduction(args.size, args.repeats)
    bench_compile()


if __name__ == "__main__":
    main()
