"""The API reference: every public function and class has a docstring, and
docs/api.md is what `python docs/make_api.py` generates from them."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

GENERATOR = Path(__file__).resolve().parents[1] / "docs" / "make_api.py"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_api", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_public_function_and_class_has_a_docstring() -> None:
    assert _generator().undocumented() == []


def test_the_reference_is_up_to_date() -> None:
    generator = _generator()
    assert generator.TARGET.read_text() == generator.render(), (
        "docs/api.md is out of date: run python docs/make_api.py"
    )
