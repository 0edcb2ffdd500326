"""A user's module named like one of fgraph's packages gets a clear error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]


def test_a_local_ops_module_is_named_as_the_shadow(tmp_path: Path) -> None:
    (tmp_path / "ops.py").write_text("value = 1\n")
    result = subprocess.run(
        [sys.executable, "-c", "import rewrite"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": f"{tmp_path}:{REPOSITORY}", "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert result.returncode != 0
    assert f"'ops' resolves to {tmp_path / 'ops.py'}" in result.stderr
    assert "shadows fgraph's 'ops' package" in result.stderr
