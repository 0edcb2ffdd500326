"""`collection.fewer_collections`: Python's collector thresholds raised while a graph
compiles and given back after, however the compile ends, without overriding what the
program set meanwhile or turning collection back on."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import ops as pt
from numba_backend import collection, function
from numba_backend import compile as compile_module
from numba_backend import compiled_function


@pytest.fixture(autouse=True)
def default_thresholds() -> Iterator[None]:
    found = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*found)


def test_raised_inside_and_restored_after() -> None:
    with collection.fewer_collections():
        assert gc.get_threshold() == (collection.YOUNG_THRESHOLD, 10, 10)
        with collection.fewer_collections():  # nested: one raise, restored by the outer
            assert gc.get_threshold() == (collection.YOUNG_THRESHOLD, 10, 10)
        assert gc.get_threshold() == (collection.YOUNG_THRESHOLD, 10, 10)
    assert gc.get_threshold() == (700, 10, 10)


def test_restored_when_the_compile_fails() -> None:
    with pytest.raises(RuntimeError), collection.fewer_collections():
        raise RuntimeError("compile failed")
    assert gc.get_threshold() == (700, 10, 10)


def test_a_higher_threshold_and_collection_off_are_kept() -> None:
    gc.set_threshold(50_000, 5, 5)
    with collection.fewer_collections():
        assert gc.get_threshold() == (50_000, 5, 5)
    gc.set_threshold(0, 10, 10)  # automatic collection off: not turned on
    with collection.fewer_collections():
        assert gc.get_threshold() == (0, 10, 10)
    assert gc.get_threshold() == (0, 10, 10)


def test_a_change_the_program_makes_meanwhile_is_not_undone() -> None:
    with collection.fewer_collections():
        gc.set_threshold(1_000, 20, 20)
    assert gc.get_threshold() == (1_000, 20, 20)


def test_threads_share_one_raise() -> None:
    inside, release = threading.Event(), threading.Event()

    def compile_in_thread() -> None:
        with collection.fewer_collections():
            inside.set()
            release.wait(10)

    worker = threading.Thread(target=compile_in_thread)
    worker.start()
    assert inside.wait(10)
    with collection.fewer_collections():
        pass
    assert gc.get_threshold() == (collection.YOUNG_THRESHOLD, 10, 10)  # the thread's compile
    release.set()
    worker.join(10)
    assert gc.get_threshold() == (700, 10, 10)


def test_function_compiles_with_fewer_collections_and_restores_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[int, ...]] = []
    original = compiled_function.from_optimized

    def recording(*arguments: Any, **keywords: Any) -> Any:
        seen.append(gc.get_threshold())
        return original(*arguments, **keywords)

    monkeypatch.setattr(compile_module, "from_optimized", recording)
    x = pt.vector("x", dtype="float64")
    compiled = function([x], pt.exp(x) * 2.0)
    np.testing.assert_allclose(compiled(np.arange(3.0)), np.exp(np.arange(3.0)) * 2.0)
    assert seen == [(collection.YOUNG_THRESHOLD, 10, 10)]
    assert gc.get_threshold() == (700, 10, 10)
