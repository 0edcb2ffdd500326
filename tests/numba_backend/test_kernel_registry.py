"""Every op the `ops` package defines has a numba kernel: there is no object-mode
fallback, so a missing registration would only show when a user compiles that op."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import attrs

import ops
from fgraph import Op
from numba_backend import numba_kernel  # importing the package registers every kernel


def concrete_op_classes() -> dict[str, type[Op]]:
    """The concrete (non-abstract, attrs) `Op` subclasses defined in `ops`'s modules."""
    found: dict[str, type[Op]] = {}
    for module_info in pkgutil.walk_packages(ops.__path__, "ops."):
        module = importlib.import_module(module_info.name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and attrs.has(value)
                and issubclass(value, Op)
                and value.__module__ == module.__name__
                and not inspect.isabstract(value)
            ):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return found


def test_op_classes_are_found() -> None:
    found = concrete_op_classes()
    for name in ("ops.elemwise.Elemwise", "ops.reduction.Sum", "ops.fused.Fused"):
        assert name in found


def test_every_op_has_a_numba_kernel() -> None:
    fallback = numba_kernel.registry[object]
    classes = concrete_op_classes().items()
    missing = sorted(name for name, cls in classes if numba_kernel.dispatch(cls) is fallback)
    assert not missing, f"ops without a numba kernel: {missing}"
