"""The examples the README points to run and check their own numbers."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize(
    "name, check",
    [
        ("rnn.py", "matches evaluate"),
        ("gaussian_model.py", "match scipy.stats and finite differences"),
        ("metropolis.py", "compiled chain matches evaluate"),
        ("hmc_sampler.py", "sample mean matches the target's mean"),
    ],
)
def test_example_runs(name: str, check: str, capsys: pytest.CaptureFixture[str]) -> None:
    runpy.run_path(str(EXAMPLES / name), run_name="__main__")
    assert check in capsys.readouterr().out
