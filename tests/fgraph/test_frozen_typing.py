"""Immutability at check time: mypy --strict rejects assignment to any graph field, and
accepts ordinary typed user code (interning does not erase the constructors' types)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]

PRELUDE = """\
from typing import Any, assert_type

import numpy as np

from fgraph import Apply, Constant, Graph, Input, Op, Output, Param, TensorType, Variable
from fgraph import check_graph, dprint, evaluate
from tests.fgraph.toy_ops import Add, Composite, Exp, Scale, SplitSign, add, exp

vector = TensorType("float64", (None,))
x = Input(vector, "x")
y = exp(add(x, Constant(1.0)))
node = y.owner
assert node is not None
output = SplitSign().apply(x)[0]
assert isinstance(output, Output)
graph = Graph([x], [y])
param = Param(0, vector)
scale = Scale(2.0)
"""

# Each line assigns to a field; every one must be reported as read-only.
ASSIGNMENTS = [
    "node.op = Exp()",
    "node.inputs = (x,)",
    "node.position = 3",
    "node.output_types = ()",
    "output.index = 1",
    "output.owner = node",
    "graph.outputs = (x,)",
    "graph.inputs = ()",
    "graph.nodes = ()",
    "x.name = 'z'",
    "x.type = vector",
    "param.index = 1",
    "vector.shape = (3,)",
    "vector.dtype = 'float32'",
    "scale.factor = 3.0",
    "Constant(1.0).data = np.zeros(1)",
]

USER_CODE = """\
assert_type(Apply(Exp(), (x,)), Apply)
assert_type(Apply(op=Add(), inputs=(x, x), position=1), Apply)
assert_type(Constant(np.arange(3)), Constant)
assert_type(param, Param)
assert_type(node.op, Op)
assert_type(graph.outputs, tuple[Variable, ...])
z = Input(vector, "z")
inner = Graph([param], [scale(exp(param))])
out: Variable = add(Composite(inner)(z), x)
user_graph = Graph([x, z], [out], dedup_nodes=True)
check_graph(user_graph)
values: list[np.ndarray[Any, np.dtype[Any]]] = evaluate(
    user_graph.outputs, {x: np.ones(3), z: np.zeros(3)}
)
total: float = float(values[0].sum())
text: str = dprint(user_graph, file=None)
digest: str = user_graph.digest
nodes: tuple[Apply, ...] = user_graph.nodes
positions: list[int] = [n.position for n in nodes]
clients = user_graph.clients[x]
first_reader: Apply = clients[0][0]
"""


def run_mypy(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    snippet = tmp_path / "snippet.py"
    snippet.write_text(source)
    return subprocess.run(
        [
            sys.executable, "-m", "mypy", "--strict",
            "--config-file", "pyproject.toml",
            "--cache-dir", str(tmp_path / "mypy_cache"),
            "--no-error-summary",
            str(snippet),
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )


def test_mypy_rejects_assignment_to_every_field(tmp_path: Path) -> None:
    result = run_mypy(tmp_path, PRELUDE + "\n".join(ASSIGNMENTS) + "\n")
    assert result.returncode == 1, result.stdout + result.stderr
    first_line = PRELUDE.count("\n") + 1
    reported = {
        int(line.split(":")[1])
        for line in result.stdout.splitlines()
        if "is read-only" in line and "snippet.py:" in line
    }
    expected = set(range(first_line, first_line + len(ASSIGNMENTS)))
    missing = [ASSIGNMENTS[number - first_line] for number in sorted(expected - reported)]
    assert not missing, f"mypy accepted {missing}:\n{result.stdout}"
    assert 'Property "op" defined in "Apply" is read-only' in result.stdout


def test_mypy_accepts_ordinary_typed_user_code(tmp_path: Path) -> None:
    result = run_mypy(tmp_path, PRELUDE + textwrap.dedent(USER_CODE))
    assert result.returncode == 0, result.stdout + result.stderr
