"""Indexing (in progress)."""

from __future__ import annotations

from typing import Any

from fgraph import Variable


def getitem(x: Variable, index: Any) -> Variable:
    raise NotImplementedError("indexing: being implemented")
