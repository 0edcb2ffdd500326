"""Every op the `ops` package defines has a numba kernel: there is no object-mode
fallback, so a missing registration would only show when a user compiles that op. And
each kernel is where a newcomer looks for it: in the module of `numba_backend` named as
its op's module (`ops/sort_ops.py` -> `numba_backend/sort_ops.py`), as `KERNEL_MODULES` lists."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import attrs

import ops
from fgraph import Op
from numba_backend import KERNEL_MODULES, numba_kernel  # the package registers every kernel
from numba_backend.scalar_ops import scalar_expression
from ops.scalar_ops import ScalarOp


def concrete_op_classes(base: type = Op) -> dict[str, type]:
    """The concrete (non-abstract, attrs) subclasses of `base` (`Op`, or `ScalarOp`)
    defined in `ops`'s modules."""
    found: dict[str, type] = {}
    for module_info in pkgutil.walk_packages(ops.__path__, "ops."):
        module = importlib.import_module(module_info.name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and attrs.has(value)
                and issubclass(value, base)
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


def _module_name(module: str) -> str:
    return module.rsplit(".", 1)[1]


def test_each_kernel_is_in_the_module_its_table_entry_names() -> None:
    """The kernel (or, for a scalar op, the expression the `Elemwise` kernel inlines) of
    every op is defined in `KERNEL_MODULES[<its op's module>]`."""
    misplaced = []
    for base, registry in ((Op, numba_kernel), (ScalarOp, scalar_expression)):
        for name, cls in concrete_op_classes(base).items():
            listed = KERNEL_MODULES.get(cls.__module__)
            defined = registry.dispatch(cls).__module__
            if listed is None or listed.__name__ != defined:
                misplaced.append(f"{name}: kernel in {defined}, listed {listed}")
    assert not misplaced, misplaced


SHARED = {"numba_backend.linalg", "numba_backend.special"}
"""Kernel modules that several op modules share: the linear algebra families', and the
special functions' (`ops.special`, `ops.special_bessel`)."""


def test_kernel_modules_are_named_as_their_op_modules() -> None:
    """`ops/X.py`'s kernels are in `numba_backend/X.py`: one search for X finds the op, its
    kernel (and its rules in `rewrite/X.py` where it has its own)."""
    differ = [
        f"{op_module} -> {kernel_module.__name__}"
        for op_module, kernel_module in KERNEL_MODULES.items()
        if _module_name(op_module) != _module_name(kernel_module.__name__)
        and kernel_module.__name__ not in SHARED
    ]
    assert not differ, differ
    assert all(m.startswith("ops.") for m in KERNEL_MODULES)


def test_each_op_names_its_kernel() -> None:
    """The line above each op class (`# Kernel: numba_backend.sort_ops._sort`) names the
    function that compiles it, so a reader of the op goes to its kernel in one step."""
    wrong = []
    for name, cls in concrete_op_classes().items():
        kernel = numba_kernel.dispatch(cls)
        lines, start = inspect.getsourcelines(cls)
        source = inspect.getsourcefile(cls)
        assert source is not None
        with open(source) as file:
            above = file.read().splitlines()[start - 2]
        if above != f"# Kernel: {kernel.__module__}.{kernel.__name__}":
            wrong.append(f"{name}: {above!r}")
    assert not wrong, wrong
