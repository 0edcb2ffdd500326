"""Element nests (`numba_backend.nests`, `numba_backend.nest_lowering`): which loops of
generated code become intrinsic calls, and that a nest lowered straight to LLVM IR
computes what numba computes from the same source (the reference here is that source
compiled by numba as a function), for the constructs element loops generate and the
corner cases their semantics hide: broadcasting reads, negative and guarded indices,
NaNs through `or`, integer division and bit operations in small dtypes, casts on store,
booleans, complex numbers, 0-d arrays, ranges with a start or a negative step. A nest
the lowering cannot type is compiled by numba instead, with the same values."""

from __future__ import annotations

import logging
import math
import textwrap
from collections.abc import Sequence
from typing import Any

import numba
import numpy as np
import pytest
from numba.core import types

from numba_backend import intrinsics, nest_lowering, vecmath
from numba_backend.nest_lowering import Unsupported, _Lowering, element_nest
from numba_backend.nests import outline_nests
from numba_backend.registry import ModuleBuilder

Array = np.ndarray[Any, np.dtype[Any]]
NAMESPACE: dict[str, Any] = {"np": np, "math": math, "exp_f64": vecmath.exp_f64,
                             "log_f64": vecmath.log_f64, "assoc_add": intrinsics.assoc_add,
                             "dimshuffled": intrinsics.dimshuffled,
                             "with_layout_of": intrinsics.with_layout_of}


def _run_both(source: str, parameters: Sequence[str], results: Sequence[str],
              *arguments: Any) -> tuple[Any, Any]:
    """The nest's results and its arrays' contents after it ran, as an intrinsic and as
    numba's own function of the same source (each on its own copies)."""
    source = textwrap.dedent(source)
    nest = element_nest(NAMESPACE, parameters, results, source)
    returned = results[0] if len(results) == 1 else ", ".join(results)
    names = ", ".join(parameters)
    scope = {"nest": nest, **NAMESPACE}
    exec(f"def through_nest({names}):\n    return nest({names})\n", scope)  # noqa: S102
    exec(f"def reference({names}):\n" + textwrap.indent(source, "    ")  # noqa: S102
         + f"\n    return ({returned})\n", scope)
    outcomes = []
    for function in ("through_nest", "reference"):
        copies = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in arguments]
        value = numba.njit(error_model="numpy")(scope[function])(*copies)
        outcomes.append((value, [c for c in copies if isinstance(c, np.ndarray)]))
    return outcomes[0], outcomes[1]


@pytest.fixture(autouse=True)
def _no_fallback_unless_expected(request: pytest.FixtureRequest,
                                 caplog: pytest.LogCaptureFixture) -> Any:
    """Each nest here is lowered straight to IR, but where a test says otherwise."""
    caplog.set_level(logging.DEBUG, logger=nest_lowering.__name__)
    yield
    fell_back = [r for r in caplog.get_records("call") if "numba compiles the nest" in r.getMessage()]
    assert bool(fell_back) == ("falls back" in (request.function.__doc__ or ""))


def _assert_same(source: str, parameters: Sequence[str], results: Sequence[str],
                 *arguments: Any) -> None:
    (got, got_arrays), (want, want_arrays) = _run_both(source, parameters, results, *arguments)
    if results:
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        assert np.asarray(got).dtype == np.asarray(want).dtype
    for g, w in zip(got_arrays, want_arrays):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


RNG = np.random.default_rng(5)


def test_broadcast_reads_and_a_cast_on_store() -> None:
    x, row = RNG.normal(size=(4, 1)), RNG.normal(size=(1, 3))
    _assert_same("""
        for j0 in range(4):
            for j1 in range(3):
                t = exp_f64(x[j0, 0] - row[0, j1])
                out[j0, j1] = np.float64(t) * 2
    """, ("out", "row", "x"), (), np.zeros((4, 3), np.float32), row, x)


def test_views_of_any_layout() -> None:
    base = RNG.normal(size=(6, 8))
    _assert_same("""
        for j0 in range(x.shape[0]):
            for j1 in range(x.shape[1]):
                out[j0, j1] = x[j0, j1] + x.shape[1]
    """, ("out", "x"), (), np.zeros((3, 4)), base[::2, 1::2])
    _assert_same("""
        for j0 in range(x.shape[0]):
            for j1 in range(x.shape[1]):
                out[j0, j1] = x[j0, j1]
    """, ("out", "x"), (), np.zeros((8, 6)), base.T)


VIEW_SOURCE = """
row = x[i]
tail = x[1:, ::-1]
clipped = x[lo:hi:2]
backwards = x[hi:lo:-1]
around = x[-20:20, 2]
column = with_layout_of(x[::, None], x)
turned = dimshuffled(x, '1,x,0')
inner = row[None, -3:]
for j0 in range(tail.shape[0]):
    for j1 in range(tail.shape[1]):
        out[0] = out[0] + tail[j0, j1] * (j0 + 1)
for j0 in range(clipped.shape[0]):
    for j1 in range(clipped.shape[1]):
        out[1] = out[1] + clipped[j0, j1] * (j1 + 2)
for j0 in range(backwards.shape[0]):
    out[2] = out[2] + backwards[j0, 0] * (j0 + 3)
for j0 in range(around.shape[0]):
    out[3] = out[3] + around[j0] * (j0 + 1)
for j0 in range(column.shape[0]):
    out[4] = out[4] + column[j0, 0, 1] * (j0 + 1) + row[j0 % row.shape[0]]
for j0 in range(turned.shape[0]):
    for j2 in range(turned.shape[2]):
        out[5] = out[5] + turned[j0, 0, j2] * (j0 + 2 * j2)
for j1 in range(inner.shape[1]):
    inner[0, j1] = inner[0, j1] * 10.0
out[6] = tail.shape[0] * 100 + clipped.shape[0] * 10 + backwards.shape[0] + around.shape[0] * 1000
"""


@pytest.mark.parametrize("layout", ["C", "F", "strided"])
@pytest.mark.parametrize(("i", "lo", "hi"), [(0, 0, 5), (-1, -4, -1), (2, 3, 3), (4, 7, 1),
                                             (-5, -30, 30)])
def test_views_made_in_the_nest(layout: str, i: int, lo: int, hi: int) -> None:
    """Slices (constant, symbolic, clipped, empty, reversed), integer and negative indices,
    new axes, `dimshuffled` and `with_layout_of`, views of views, and writes through a
    view: the same elements and lengths as numba's basic indexing."""
    base = RNG.normal(size=(10, 12))
    x = {"C": base[:5, :6].copy(), "F": np.asfortranarray(base[:5, :6]),
         "strided": base[::2, ::2]}[layout]
    _assert_same(VIEW_SOURCE, ("hi", "i", "lo", "out", "x"), (), hi, i, lo, np.zeros(7), x)


def test_a_view_read_as_a_value_falls_back() -> None:
    """A view passed on (here to `len`) needs an array structure: numba compiles that
    nest; it falls back."""
    _assert_same("""
        v = x[1:]
        for j in range(3):
            out[j] = len(v) + j
    """, ("out", "x"), (), np.zeros(3), RNG.normal(size=5))


def test_carried_max_with_nans_through_or() -> None:
    values = RNG.normal(size=9)
    for data in (values, np.where(np.arange(9) == 4, np.nan, values)):
        _assert_same("""
            for j in range(x.shape[0]):
                v = x[j]
                acc = (v if v > acc or v != v else acc)
        """, ("acc", "x"), ("acc",), data[0], data)


def test_several_carried_values_and_a_reassociable_sum() -> None:
    _assert_same("""
        for j in range(x.shape[0]):
            total = assoc_add(total, x[j])
            count = count + 1
    """, ("count", "total", "x"), ("count", "total"), 0, 0.0, RNG.normal(size=100))


def test_values_computed_before_the_loops_are_results() -> None:
    _assert_same("""
        scale = c[0]
        for j in range(x.shape[0]):
            out[j] = x[j] * scale
        shift = c[1] + scale
        for j in range(x.shape[0]):
            out[j] = out[j] - shift
    """, ("c", "out", "x"), ("scale", "shift"), np.array([2.0, 0.5]), np.zeros(4),
        RNG.normal(size=4))


def test_negative_and_guarded_indices() -> None:
    x = np.arange(5.0)
    _assert_same("""
        for j in range(5):
            out[j] = x[j - 1] + (x[j + 1] if j + 1 < n else -1.0)
    """, ("n", "out", "x"), (), 5, np.zeros(5), x)


def test_an_assigned_counter_indexes_from_the_end() -> None:
    """A loop counter is read as never negative (no wraparound) only until the nest
    assigns it."""
    _assert_same("""
        for j in range(3):
            j = j - 3
            out[j] = x[j]
    """, ("out", "x"), (), np.zeros(3), np.arange(3.0))


def test_ranges_with_a_start_and_a_negative_step() -> None:
    _assert_same("""
        for j in range(n - 1, -1, -1):
            acc = acc * 2 + x[j]
        for k in range(2, n):
            out[k] = x[k] - x[k - 2]
    """, ("acc", "n", "out", "x"), ("acc",), 0.5, 6, np.zeros(6), RNG.normal(size=6))
    _assert_same("""
        for j in range(7, n):
            acc = acc + x[j]
    """, ("acc", "n", "x"), ("acc",), 0.0, 3, RNG.normal(size=3))  # no step at all


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int64"])
def test_integer_division_modulo_and_bits(dtype: str) -> None:
    a = RNG.integers(-100 if dtype != "uint16" else 0, 100, size=12).astype(dtype)
    b = np.where(np.arange(12) % 4 == 0, 0, RNG.integers(1, 9, size=12)).astype(dtype)
    _assert_same("""
        for j in range(a.shape[0]):
            out[j] = (a[j] // b[j]) + (a[j] % 3) + (a[j] & 7) - (a[j] >> 1)
            quotient[j] = a[j] / b[j]
    """, ("a", "b", "out", "quotient"), (), a, b, np.zeros(12, dtype), np.zeros(12))


def test_booleans_and_a_three_way_and() -> None:
    x = np.array([0.5, np.nan, -1.0, np.inf, 2.0])
    _assert_same("""
        for j in range(x.shape[0]):
            finite = np.bool_(np.isfinite(x[j]))
            out[j] = finite and x[j] > 0 and not flags[j]
            flags[j] = out[j] or x[j] != x[j]
    """, ("flags", "out", "x"), (), np.array([False, True, False, False, True]),
        np.zeros(5, bool), x)


def test_complex_elements_and_constants_of_modules() -> None:
    z = RNG.normal(size=4) + 1j * RNG.normal(size=4)
    _assert_same("""
        for j in range(4):
            out[j] = z[j] * z[j] + math.pi
            real[j] = np.abs(z[j]) + math.e
    """, ("out", "real", "z"), (), np.zeros(4, complex), np.zeros(4), z)


def test_zero_dimensional_arrays() -> None:
    _assert_same("""
        for j in range(x.shape[0]):
            total[()] = total[()] + x[j]
    """, ("total", "x"), (), np.zeros(()), RNG.normal(size=5))


def test_what_the_lowering_lacks_is_compiled_by_numba() -> None:
    """An attribute other than a shape falls back to numba, with numba's values; so
    does a carried value changing type (numba unifies int and float)."""
    x = RNG.normal(size=5)
    _assert_same("""
        for j in range(x.size):
            acc = acc + x[j]
    """, ("acc", "x"), ("acc",), 0, x)
    _assert_same("""
        for j in range(x.shape[0]):
            acc = acc + x[j]
    """, ("acc", "x"), ("acc",), 0, x)
    with pytest.raises(Unsupported, match="changes type"):
        lowering = _Lowering(None, NAMESPACE)  # binding names needs no typing context
        lowering.bind("acc", (types.intp, None))
        lowering.bind("acc", (types.float64, None))


def _outlined(body: str, parameters: Sequence[str] = ("x", "out")) -> tuple[str, ModuleBuilder]:
    module = ModuleBuilder()
    lines = textwrap.indent(textwrap.dedent(body), "    ").strip("\n").splitlines()
    return "\n".join(outline_nests(lines, parameters, module)), module


def test_which_loops_become_nests() -> None:
    text, module = _outlined("""
        for s in range(x.shape[0]):
            row = x[s]
            if row.shape[0] < 2:
                raise ValueError('row s is too short: acc')
            acc = 0.0
            for j in range(row.shape[0]):
                acc = acc + row[j] * s
            out[s] = acc
            for j in range(2):
                out[s] = out[s] + j
    """)
    # The outer loop raises: numba's. Its inner loops are nests, the first carrying acc
    # (read after it), both reading the outer counter s as a parameter, and a name in a
    # message counts for nothing. The check reads the row's length from x, so the row
    # is made in the first nest, next to its loop.
    assert text.count("for s in range") == 1 and text.count("for j in") == 0
    assert "if x.shape[1] < 2:" in text and "row =" not in text
    assert "acc = nest_" in text and text.count("nest_") == 2
    definitions = "".join(module.helpers.values())
    assert "('acc', 's', 'x'), ('acc',)" in definitions and "row = x[s]" in definitions
    assert "('out', 's'), ()" in definitions


def test_loops_a_call_cannot_carry_stay() -> None:
    text, module = _outlined("""
        for j in range(3):
            first = x[j]
        out[0] = first
        total = np.empty(3)
    """)
    # `first` is only assigned inside the loop but read after it: a call could not
    # pass it in.
    assert "nest_" not in text and not module.helpers


def test_views_join_a_run_unless_used_outside_it() -> None:
    """A view made among the loops (basic indexing, `dimshuffled`, `with_layout_of`)
    joins their nest, which makes it without a reference count; one the function also
    uses after the run stays numba's and splits it."""
    text, module = _outlined("""
        row = x[1]
        turned = dimshuffled(x, '1,0')
        for j in range(3):
            out[j] = row[j] + turned[j, 0]
        kept = x[2:]
        for j in range(3):
            out[j] = out[j] + kept[j, 0]
        total = kept.shape[0]
    """)
    lines = text.splitlines()
    assert lines[0].strip().startswith("nest_") and lines[1].strip() == "kept = x[2:]"
    assert lines[2].strip().startswith("nest_") and lines[3].strip() == "total = kept.shape[0]"
    second, first = module.helpers.values()  # defined from the last run up
    assert "row = x[1]" in first and "turned = dimshuffled(x, '1,0')" in first
    assert "kept" in second and "kept = x" not in second


def test_view_lengths_are_read_from_the_source_and_views_move_to_their_loops() -> None:
    """Reads of a view's lengths after it are written as its source's (a new axis as 1,
    a length a slice clips left as it is), until either name is assigned again; a view
    nothing reads any more is gone; a view moves down to the loops using it, past
    statements that assign none of the names it reads, and joins their nest."""
    text, module = _outlined("""
        row = x[1]
        turned = dimshuffled(x, '1,x,0')
        clipped = x[1:]
        n = row.shape[0] + turned.shape[1] + turned.shape[2] + clipped.shape[0]
        both = row.shape
        if n < 0:
            raise ValueError('negative')
        scratch = np.empty(n)
        for j in range(3):
            out[j] = row[j] + turned[j, 0, 0] + n + both[0]
        unused = dimshuffled(x, '1,0')
        kept = x[0]
        x = scratch
        for j in range(3):
            out[j] = kept[j]
    """)
    assert "n = x.shape[1] + 1 + x.shape[0] + clipped.shape[0]" in text
    assert "both = (x.shape[1:])" in text and "unused" not in text
    lines = [line.strip() for line in text.splitlines()]
    # row and turned moved past the check and the allocation into the first nest; kept
    # cannot move past `x = scratch`, so its loop is a nest without it.
    assert lines.index("scratch = np.empty(n)") < min(
        k for k, line in enumerate(lines) if line.startswith("nest_"))
    assert "kept = x[0]" in lines and lines.index("kept = x[0]") < lines.index("x = scratch")
    assert text.count("nest_") == 2
    definitions = list(module.helpers.values())
    assert any("row = x[1]" in d and "turned = dimshuffled(x, '1,x,0')" in d
               for d in definitions)
    assert not any("kept = " in d for d in definitions)


def test_equal_nests_are_defined_once() -> None:
    text, module = _outlined("""
        for j in range(x.shape[0]):
            out[j] = x[j] + 1.0
        scratch = np.empty(3)
        for j in range(x.shape[0]):
            out[j] = x[j] + 1.0
    """)
    assert text.count("nest_") == 2 and len(module.helpers) == 1


def test_a_run_of_loops_takes_the_scalar_reads_among_them() -> None:
    """Consecutive loops are one nest, with the reads of scalars the module knows of
    (a fused body's constants) before and between them; a read after the last loop, and
    other assignments, stay numba's. A value the run assigns outside its loops and the
    function reads after it is a result."""
    module = ModuleBuilder()
    module.scalars.update({"s0", "s1", "s2"})
    lines = textwrap.indent(textwrap.dedent("""
        s0 = c0[0]
        for j in range(x.shape[0]):
            out[j] = x[j] * s0
        s1 = c0[1]
        for j in range(x.shape[0]):
            out[j] = out[j] + s1
        s2 = c0[2]
        other = c0[3]
        total = s1 + s2 + other
    """), "    ").strip("\n").splitlines()
    text = "\n".join(outline_nests(lines, ("x", "out", "c0"), module))
    assert text.splitlines()[0].strip() == "s1 = nest_" + text.split("nest_")[1].split("(")[0] \
        + "(c0, out, x)"
    assert "s2 = c0[2]" in text and "other = c0[3]" in text and text.count("nest_") == 1
    (definition,) = module.helpers.values()
    assert "('c0', 'out', 'x'), ('s1',)" in definition


@pytest.mark.parametrize("nested", [True, False])
@pytest.mark.parametrize("length", [0, 1, 3, vecmath.VECTORIZED_MIN_LENGTH - 1,
                                    vecmath.VECTORIZED_MIN_LENGTH, 40])
def test_short_inner_loops_run_with_libm(length: int, nested: bool) -> None:
    """An innermost loop of unknown length calling vecmath's functions, inside another
    loop or in a nest run once per step of a loop, chooses at run time: below
    VECTORIZED_MIN_LENGTH steps it computes libm's values (bit for bit numba's `np.exp`,
    `np.log`), from there vecmath's (bit for bit the nest without the choice). A loop
    alone in a nest that is not per step keeps vecmath's."""
    if nested:
        source = textwrap.dedent("""
            for i in range(x.shape[0]):
                scale = x[i, 0]
                for j in range(x.shape[1]):
                    out[i, j] = exp_f64(x[i, j]) * scale + log_f64(np.abs(x[i, j]) + 1.0)
        """)
        x = RNG.normal(size=(2, length + 1))[:, 1:] * 3.0
    else:
        source = textwrap.dedent("""
            for j in range(x.shape[0]):
                out[j] = exp_f64(x[j]) + log_f64(np.abs(x[j]) + 1.0)
        """)
        x = RNG.normal(size=length) * 3.0
    libm = source.replace("exp_f64", "np.exp").replace("log_f64", "np.log")
    for per_step in (True, False):
        chooses = nested or per_step
        scope: dict[str, Any] = {**NAMESPACE}
        expected_source = libm if chooses and length < vecmath.VECTORIZED_MIN_LENGTH else source
        exec("def reference(x, out):\n" + textwrap.indent(expected_source, "    "),  # noqa: S102
             scope)
        expected = np.zeros_like(x)
        numba.njit(error_model="numpy")(scope["reference"])(x, expected)
        nest = element_nest(NAMESPACE, ("out", "x"), (), source, per_step=per_step)
        scope = {"nest": nest}
        exec("def through_nest(x, out):\n    nest(out, x)\n", scope)  # noqa: S102
        compiled = numba.njit(error_model="numpy")(scope["through_nest"])
        out = np.zeros_like(x)
        compiled(x, out)
        np.testing.assert_array_equal(out, expected)
        ir = "".join(compiled.inspect_llvm().values())
        assert ("llvm.exp.f64" in ir) == chooses and ("llvm.log.f64" in ir) == chooses


def test_nests_of_a_loop_body_run_per_step() -> None:
    """Nests inside a loop that stays numba's (a loop kernel's steps) are `per_step`;
    nests at the function's level are not."""
    text, module = _outlined("""
        for j in range(x.shape[1]):
            out[0, j] = exp_f64(x[0, j])
        for s in range(x.shape[0]):
            if x.shape[1] < 2:
                raise ValueError('too short')
            for j in range(x.shape[1]):
                out[s, j] = exp_f64(x[s, j])
    """)
    definitions = sorted(module.helpers.values(), key=lambda text: "per_step" in text)
    assert text.count("nest_") == 2 and len(definitions) == 2
    assert "per_step" not in definitions[0] and "out[0, j]" in definitions[0]
    assert definitions[1].rstrip().endswith("per_step=True)")


def test_runtime_names() -> None:
    """Generated modules import `element_nest` like the other runtime functions."""
    from numba_backend.source import RUNTIME_NAMES

    assert RUNTIME_NAMES["element_nest"] == nest_lowering.__name__
