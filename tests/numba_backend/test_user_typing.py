"""A user's script type-checks against the installed packages with `mypy --strict`, as
a user would run it: results of compiled calls are typed, and passing a string where a
tensor goes is a type error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

USER_SCRIPT = """
import numpy as np
import ops as pt
from fgraph import Graph, evaluate
from numba_backend import function

x = pt.vector("x")
y = pt.exp(x) * 2
single = function([x], y)(np.ones(3))
several = function([x], [y, x.sum()])(np.ones(3))
reveal_type(single)
reveal_type(several)
values: list[np.ndarray] = evaluate(Graph([x], [y]), {x: np.ones(3)})
"""

MISTAKES = """
import numpy as np
import ops as pt
from numba_backend import function

x = pt.vector("x")
pt.exp("not a tensor")
count: int = function([x], x * 2)(np.ones(3))
"""


def _mypy(folder: Path, source: str) -> subprocess.CompletedProcess[str]:
    script = folder / "script.py"
    script.write_text(source)
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(folder / "cache"),
         str(script)],
        cwd=folder, capture_output=True, text=True, check=False,
    )


@pytest.mark.slow
def test_a_typed_user_script_checks_and_its_mistakes_are_caught(tmp_path: Path) -> None:
    good = _mypy(tmp_path, USER_SCRIPT)
    assert good.returncode == 0, good.stdout + good.stderr
    assert 'Revealed type is "numpy.ndarray' in good.stdout
    assert 'Revealed type is "list[numpy.ndarray' in good.stdout
    bad = _mypy(tmp_path, MISTAKES)
    assert bad.returncode == 1
    assert 'Argument 1 to "exp" has incompatible type "str"' in bad.stdout
    assert 'Incompatible types in assignment (expression has type "ndarray' in bad.stdout
