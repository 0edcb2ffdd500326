"""The logistic-regression loss gradient over 4·10^6 x 100 rows: fgraph's `dask_function`
on a 2-worker `LocalCluster`, the same compiled function in one process, and the same
gradient written by hand with `dask.array` and NumPy on the same cluster. Prints
throughput (rows/s) and ratios; the data is generated on the workers and persisted
before timing, so the times are of the computation.

    python benchmarks/bench_dask.py [--rows 4000000] [--chunks 16] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

FEATURES = 100


def timed(run: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    value = run()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        value = run()
        times.append(time.perf_counter() - start)
    return statistics.median(times), value


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--chunks", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=5)
    options = parser.parse_args()

    import dask
    import dask.array as da
    import distributed

    import ops as pt
    from numba_backend import function
    from numba_backend.dask import dask_function

    X, y, w = pt.matrix("X"), pt.vector("y"), pt.vector("w")
    logits = X @ w
    gradient = pt.grad(pt.sum(pt.softplus(logits) - y * logits), w)
    weights = np.random.default_rng(1).normal(size=FEATURES) * 0.1
    rows_per_chunk = options.rows // options.chunks

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
        rng = da.random.default_rng(0)
        X_chunks = client.persist(rng.normal(size=(options.rows, FEATURES), chunks=(rows_per_chunk, FEATURES)))
        y_chunks = client.persist((rng.random(size=options.rows, chunks=rows_per_chunk) < 0.5).astype(np.float64))
        distributed.wait([X_chunks, y_chunks])

        compiled = dask_function([X, y, w], [gradient], chunked={X: 0, y: 0})
        cluster_time, cluster_value = timed(lambda: dask.compute(*compiled(X_chunks, y_chunks, weights))[0],
                                            options.repeats)

        def by_hand() -> Any:
            p = 1 / (1 + da.exp(-(X_chunks @ weights)))
            return (X_chunks.T @ (p - y_chunks)).compute()

        hand_time, hand_value = timed(by_hand, options.repeats)
        X_value, y_value = dask.compute(X_chunks, y_chunks)

    single = function([X, y, w], gradient)
    single_time, single_value = timed(lambda: single(X_value, y_value, weights), options.repeats)
    assert np.allclose(cluster_value, single_value, rtol=1e-10)
    assert np.allclose(hand_value, single_value, rtol=1e-8)

    print(f"logistic gradient, {options.rows:,} x {FEATURES} rows in {options.chunks} chunks; "
          f"median of {options.repeats}")
    print(f"{'implementation':<40}{'median':>10}{'rows/s':>14}{'vs fgraph on dask':>20}")
    for name, seconds in [("fgraph dask_function, 2 workers", cluster_time),
                          ("fgraph compiled, one process", single_time),
                          ("dask.array + NumPy by hand, 2 workers", hand_time)]:
        print(f"{name:<40}{seconds:>8.3f} s{options.rows / seconds:>14,.0f}{seconds / cluster_time:>19.2f}x")


if __name__ == "__main__":
    main()
