"""Outlined kernels (`numba_backend.kernels`) and the module text around them: a kernel
is defined once however often a graph uses it and named by what it computes, another
process loads it from the disk cache instead of compiling it, its module and the
graph's import exactly the runtime names their code mentions, and a loop body's
allocations are found by their type.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import Graph, Variable, evaluate
from numba_backend import function
from numba_backend.codegen import generate
from numba_backend.kernels import LARGE_GRAPH
from numba_backend.registry import Allocation
from numba_backend.scan_op import lowered_body
from numba_backend.source import RUNTIME_NAMES, imports
from ops.scan_op import Scan
from rewrite import optimize
from tests.numba_backend.kernel_worker import shared_loop_graph
from tests.numba_backend.test_cache import REPO_ROOT, worker_environment

KERNEL_WORKER = [sys.executable, "-m", "tests.numba_backend.kernel_worker"]


def _running_sum(xs: Any) -> Any:
    return pt.scan(lambda x, h: h * 0.5 + pt.sin(x), sequences=[xs],
                   outputs_info=[pt.zeros(3)])


def test_a_loop_used_twice_is_one_kernel_called_twice() -> None:
    xs, ys = pt.matrix("xs", shape=(None, 3)), pt.matrix("ys", shape=(None, 3))
    graph = Graph([xs, ys], [_running_sum(xs), _running_sum(ys)])
    optimized = optimize(graph, "none")
    assert sum(isinstance(node.op, Scan) for node in optimized.nodes) == 2
    generated = generate(optimized)
    (kernel,) = generated.kernels
    assert generated.text.count(f"def {kernel.name}_code(") == 1
    assert len(re.findall(rf"= {kernel.name}\(", generated.source)) == 2
    values = [np.arange(12.0).reshape(4, 3), np.ones((5, 3))]
    got = function([xs, ys], graph.outputs, mode="none")(*values)
    for result, expected in zip(got, evaluate(graph.outputs, dict(zip([xs, ys], values)))):
        np.testing.assert_allclose(result, expected, rtol=1e-12)


def test_a_kernel_is_named_by_what_it_computes() -> None:
    """The same loop in another graph, with other inputs around it, is the same kernel,
    and so is one whose constants differ (they are arguments); a loop computing
    something else is another."""
    xs, zs = pt.matrix("xs", shape=(None, 3)), pt.matrix("zs", shape=(None, 3))

    def loop(step: Any) -> Any:
        return pt.scan(step, sequences=[xs], outputs_info=[pt.zeros(3)])

    def kernels(inputs: list[Any], outputs: list[Any]) -> list[str]:
        generated = generate(optimize(Graph(inputs, outputs), "none"))
        return [kernel.name for kernel in generated.kernels]

    alone = kernels([xs], [_running_sum(xs)])
    assert len(alone) == 1
    assert kernels([zs, xs], [pt.exp(zs), _running_sum(xs) * 2]) == alone
    assert kernels([xs], [loop(lambda x, h: h * 0.25 + pt.sin(x))]) == alone
    assert kernels([xs], [loop(lambda x, h: h * 0.5 + pt.cos(x))]) != alone


def test_a_loop_inside_a_loop_is_a_kernel_its_kernel_imports() -> None:
    xs = pt.tensor("xs", shape=(None, None, 2))

    def outer(x: Any) -> Any:
        return pt.scan(lambda row, h: h + pt.tanh(row), sequences=[x],
                       outputs_info=[pt.zeros(2)])[-1]

    graph = Graph([xs], [pt.scan(outer, sequences=[xs])])
    generated = generate(optimize(graph, "none"))
    inner, outer_kernel = generated.kernels  # loaded in this order: the inner one first
    assert f"from {inner.module_name} import {inner.name}\n" in outer_kernel.source
    assert inner.name not in generated.source
    values = np.linspace(-1.0, 1.0, 24).reshape(3, 4, 2)
    got = function([xs], graph.outputs, mode="none")(values)
    np.testing.assert_allclose(got[0], evaluate(graph.outputs, {xs: values})[0], rtol=1e-12)


def test_a_large_graph_outlines_its_repeated_kernels_and_calls_each_once_per_use() -> None:
    """A graph of 40 nodes or more outlines the kernels it computes more than once from
    12 statements (here the cumulative sums, one kernel for all twenty); a smaller
    graph keeps them inline."""
    x, y = pt.matrix("x"), pt.matrix("y")

    def sums(count: int) -> list[Any]:
        return [pt.cumsum(x * (k + 2) + y, axis=1) for k in range(count)]

    small = generate(optimize(Graph([x, y], sums(5)), "fast_run"))
    assert not small.kernels
    graph = optimize(Graph([x, y], sums(20)), "fast_run")
    assert len(graph.nodes) >= LARGE_GRAPH
    generated = generate(graph)
    calls = [len(re.findall(rf"= {k.name}\(", generated.source)) for k in generated.kernels]
    assert generated.kernels and max(calls) == 20
    values = [np.arange(6.0).reshape(2, 3), np.ones((2, 3))]
    got = function([x, y], sums(20))(*values)
    for result, expected in zip(got, evaluate(sums(20), dict(zip([x, y], values)))):
        np.testing.assert_allclose(result, expected, rtol=1e-12)



def test_a_large_graph_outlines_a_kernel_used_once_only_when_it_is_large() -> None:
    """A kernel computed once is outlined from 40 statements: a smaller one compiles
    inline in less than a function's fixed cost, and the entry calling it compiles again
    after any edit anyway."""
    x, y = pt.matrix("x"), pt.matrix("y")
    sums = [pt.cumsum(x * (k + 2) + y, axis=1) for k in range(20)]
    small = pt.exp(x) * 3.0 + pt.sin(y)
    chain: Variable = x
    for k in range(30):
        chain = pt.sin(chain) * (k + 1.5) + y
    outputs = [*sums, small, chain]
    graph = optimize(Graph([x, y], outputs), "fast_run")
    assert len(graph.nodes) >= LARGE_GRAPH
    generated = generate(graph)
    outlined = {kernel.name: len(re.findall(rf"= {kernel.name}\(", generated.source))
                for kernel in generated.kernels}
    assert sorted(outlined.values()) == [1, 20]  # the chain alone, and the cumulative sums
    assert "exp_f64(" in generated.source  # the small fused kernel stays inline
    values = [np.arange(6.0).reshape(2, 3) / 7, np.ones((2, 3))]
    got = function([x, y], outputs)(*values)
    for result, expected in zip(got, evaluate(outputs, dict(zip([x, y], values)))):
        np.testing.assert_allclose(result, expected, rtol=1e-12)

def test_a_module_imports_the_runtime_names_its_code_uses() -> None:
    a = pt.matrix("a", shape=(2, 2))
    plain = generate(optimize(Graph([a], [pt.exp(a) + 1]), "fast_run")).source
    solved = generate(optimize(Graph([a], [pt.linalg.inv(a), a @ a]), "fast_run")).source
    assert "matmul_into" not in plain and "inv_into" not in plain
    assert "from numba_backend.lapack import inv_into\n" in solved
    assert re.search(r"from numba_backend.blas import [^\n]*\bsmall_matmul_into\b", solved)
    assert "slogdet" not in solved and "random_streams" not in solved


def test_imports_come_from_the_modules_that_define_the_names() -> None:
    assert RUNTIME_NAMES["matmul_into"] == "numba_backend.blas"
    assert RUNTIME_NAMES["new_array"] == "numba_backend.intrinsics"
    assert "capsule_address" in RUNTIME_NAMES and "Any" not in RUNTIME_NAMES
    header = imports("x = new_array((2,), np.float64)\ny = exp_f64(x[0])\n")
    assert header == (
        "import numpy as np\n"
        "from numba_backend.intrinsics import new_array\n"
        "from numba_backend.vecmath import exp_f64\n"
    )


@pytest.mark.parametrize(
    "step",
    [
        lambda x, h: pt.tanh(h + x),  # elementwise
        lambda x, h: h + pt.sort(x),
        lambda x, h: h + pt.linalg.inv(x.reshape((2, 2))).reshape((4,)),
        lambda x, h: h + pt.cumsum(x, axis=0),
        lambda x, h: h + pt.tile(x.reshape((2, 2)).sum(axis=0), 2),
    ],
    ids=["elementwise", "sort", "inv", "cumsum", "sum"],
)
def test_a_loop_body_allocates_its_static_buffers_before_the_loop(step: Any) -> None:
    """The kernels' output allocations are typed statements the loop lowering moves out
    of the loop: the step allocates nothing."""
    xs, h0 = pt.matrix("xs", shape=(None, 4)), pt.vector("h0", shape=(4,))
    graph = optimize(Graph([xs, h0], [pt.scan(step, sequences=[xs], outputs_info=[h0])]),
                     "fast_run")
    (loop,) = [node.op for node in graph.nodes if isinstance(node.op, Scan)]
    assert all(v.type.is_fully_static for n in lowered_body(loop.inner_graph).nodes
               for v in n.outputs)
    (kernel,) = generate(graph).kernels
    lines = kernel.source.splitlines()
    (header,) = [k for k, line in enumerate(lines) if line.startswith("    for l_s in range(")]
    step_lines = [line for line in lines[header + 1:] if line.startswith("        ")]
    assert step_lines and not any("new_array" in line for line in step_lines)


def test_an_allocation_is_a_statement_that_knows_its_target() -> None:
    statement = Allocation("v3_0", "(n, 2, )", "float32")
    assert statement == "v3_0 = new_array((n, 2, ), np.float32)"
    assert statement.target == "v3_0"
    assert not isinstance(f"    {statement}", Allocation)  # nested code is not rearranged


def _run_kernel_worker(cache: Path, which: str) -> dict[str, Any]:
    completed = subprocess.run(
        [*KERNEL_WORKER, which], cwd=REPO_ROOT, env=worker_environment(cache),
        capture_output=True, text=True, timeout=600,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    report: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    assert report["ok"]
    return report


@pytest.mark.slow
def test_another_process_loads_a_shared_kernel_instead_of_compiling_it(tmp_path: Path) -> None:
    first, second = (generate(optimize(Graph(*shared_loop_graph(which)), "fast_run"))
                     for which in ("first", "second"))
    shared = {k.name for k in first.kernels} & {k.name for k in second.kernels}
    assert shared and first.source != second.source
    cache = tmp_path / "cache"
    compiled = _run_kernel_worker(cache, "first")["kernels"]
    assert all(compiled[name] == {"hits": 0, "misses": 1} for name in shared)
    loaded = _run_kernel_worker(cache, "second")["kernels"]
    assert all(loaded[name] == {"hits": 1, "misses": 0} for name in shared)


@pytest.mark.slow
def test_a_damaged_kernel_cache_entry_is_compiled_again(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _run_kernel_worker(cache, "first")
    indexes = [path for path in cache.rglob("*.nbi") if "fgraph_kernel_" in path.name]
    assert indexes
    for index in indexes:
        index.write_bytes(b"not a pickle\n")
    report = _run_kernel_worker(cache, "first")["kernels"]
    assert all(counts["misses"] == 1 for counts in report.values())
    assert all(index.read_bytes() != b"not a pickle\n" for index in indexes)


@pytest.mark.slow
def test_another_process_loads_code_calling_library_kernels_by_symbol(tmp_path: Path) -> None:
    """Products and LAPACK helpers are called by symbol (`calls.KernelCall`): a second
    process loads the cached entry and loop kernels, their symbols registered first by
    `reload_init`, and computes the same values."""
    cache = tmp_path / "cache"
    cold = _run_kernel_worker(cache, "library")
    assert cold["entry"] == {"hits": 0, "misses": 1}
    warm = _run_kernel_worker(cache, "library")
    assert warm["entry"] == {"hits": 1, "misses": 0}
    assert all(counts == {"hits": 1, "misses": 0} for counts in warm["kernels"].values())


@pytest.mark.parametrize("counted", [False, True])
def test_a_loop_body_of_static_shapes_checks_nothing_its_types_prove(counted: bool) -> None:
    """Products of 2 x 2 matrices, a reduction over a static axis and an index update of
    static lengths in a loop body: their length checks cannot fail, so none is generated
    (each raise in a loop body cost numba ~0.1 s to compile). A step count given apart
    (`counted`) is still checked, and the sequence's rows against it; one read off the
    sequence's length needs neither check."""
    ys = pt.matrix("ys", shape=(None, 2))
    a, p0 = pt.matrix("a", shape=(2, 2)), pt.matrix("p0", shape=(2, 2))
    n = pt.scalar("n", dtype="int64")

    def step(y: Any, p: Any, a: Any) -> Any:
        q = a @ p @ a.T + pt.outer(y, y)
        return pt.set_subtensor(q[0], q.max(axis=0))

    ps = pt.scan(step, sequences=[ys], outputs_info=[p0], non_sequences=[a],
                 n_steps=n if counted else None)
    total = ps.sum()
    inputs_of = [ys, a, p0, *([n] if counted else [])]
    generated = generate(optimize(Graph(inputs_of, [total, *pt.grad(total, [a])]), "fast_run"))
    loops = [kernel.source for kernel in generated.kernels if "for l_s in range" in kernel.source]
    assert len(loops) == 2  # the loop and its gradient's
    for source in loops:
        messages = re.findall(r"raise \w+\('([^']*)'", source)
        if counted:
            assert messages and all(message.startswith("Scan:") for message in messages), messages
        else:
            assert "raise" not in source
    inputs = [np.random.default_rng(0).normal(size=shape) for shape in ((5, 2), (2, 2), (2, 2))]
    given = [*inputs, *([np.int64(4)] if counted else [])]
    compiled = function(inputs_of, [total, *pt.grad(total, [a])])
    expected = evaluate([total, *pt.grad(total, [a])], dict(zip(inputs_of, given)))
    for got, wanted in zip(compiled(*given), expected):
        np.testing.assert_allclose(got, wanted, rtol=1e-10)
