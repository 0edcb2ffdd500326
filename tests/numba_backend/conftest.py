"""Shared fixtures for the numba backend tests."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True, scope="session")
def fgraph_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Every compile writes its generated modules and numba's cache into a temporary
    folder, never the user's `~/.cache/fgraph`."""
    previous = os.environ.get("FGRAPH_CACHE_DIR")
    folder = str(tmp_path_factory.mktemp("fgraph_cache"))
    os.environ["FGRAPH_CACHE_DIR"] = folder
    yield folder
    if previous is None:
        del os.environ["FGRAPH_CACHE_DIR"]
    else:
        os.environ["FGRAPH_CACHE_DIR"] = previous
