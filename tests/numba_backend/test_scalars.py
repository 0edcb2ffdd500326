"""0-d values computed in the entry function are plain numba scalars where the kernels
computing and reading them take scalars (`numba_backend.registry.scalar_kernel`), 0-d
arrays where a kernel needs an array; the entry's 0-d inputs and outputs are numbers;
elementwise loops check only the lengths that can differ. Values and dtypes against
the reference evaluator, and the generated code's shape."""

from __future__ import annotations

import re

import numpy as np
import pytest

import ops as pt
from fgraph import Variable, evaluate
from fgraph.op import Array
from numba_backend import function
from numba_backend.split import SPLIT_ABOVE


def _entry(source: str) -> str:
    return source.split("def fgraph_")[1]


def _check(inputs: list[Variable], outputs: list[Variable], *values: Array) -> str:
    """Compile, compare every output (dtype and values) with `evaluate`, and return the
    entry function's source."""
    compiled = function(inputs, outputs)
    expected = evaluate(outputs, dict(zip(inputs, values)))
    for number, (got, want) in enumerate(zip(compiled(*values), expected)):
        assert got.dtype == want.dtype, f"output {number}: {got.dtype} != {want.dtype}"
        np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=f"output {number}")
    return _entry(compiled.source)


def test_scalar_intermediates_are_not_arrays() -> None:
    x = pt.vector("x")
    total = pt.exp(x.sum() * 0.5) + pt.cast(x.shape[0] * x.shape[0], "float64") + pt.max(x)
    entry = _check([x], [total], np.linspace(-1.0, 1.0, 7))
    assert "new_array((), " not in entry  # the returned value is a number too


VALUES = {  # x[0] * x[2] wraps to a negative (int8, int16) or small (uint8) number
    "int8": [100, 7, 120, 3], "uint8": [200, 7, 250, 3], "int16": [200, 7, 200, 3],
    "int32": [1000, 7, 2000, 3], "float32": [0.1, 0.7, 0.3, 3.0], "float64": [0.1, 0.7, 0.3, 3.0],
}


@pytest.mark.parametrize("dtype", list(VALUES))
def test_scalar_chains_keep_their_dtypes(dtype: str) -> None:
    """Arithmetic on scalars wraps and rounds in the values' own dtype, as NumPy's (numba
    would widen small integers: `arange(a * b)` would then be long), also where the
    scalar passes from one kernel to another; sums widen as NumPy's."""
    x, i = pt.vector("x", dtype=dtype), pt.scalar("i", dtype="int64")
    a, b = x[i], x[0]
    product = a * b + a
    outputs = [product, pt.maximum(product, b), x.sum() * a, pt.max(x) - b,
               pt.switch(a > b, a, b)]
    values = (np.array(VALUES[dtype], dtype=dtype), np.array(2))
    _check([x, i], outputs, *values)
    zero, one = (pt.constant(np.array(value, dtype=dtype)) for value in (0, 1))
    _check([x, i], [pt.arange(zero, a * b, one)], *values)  # one product, not fused


def test_a_scalar_read_as_an_array_is_made_one_once() -> None:
    x = pt.vector("x")
    total = x.sum()
    outputs = [total * 2.0, x * total, pt.stack([total, total]), total]
    entry = _check([x], outputs, np.arange(4.0))
    assert entry.count("_a = new_array((1, ), ") == 1  # for the stack (the outputs are numbers)
    assert "new_array((), " not in entry


def test_symbolic_indices_and_updates_read_scalars() -> None:
    x, v = pt.vector("x"), pt.scalar("v")
    last = x.shape[0] - 1
    outputs = [
        x[last],
        x[1:last],
        pt.set_subtensor(x[last], v * 2.0),
        pt.inc_subtensor(x[1:], v + 1.0),  # a scalar into every element of the region
        pt.arange(last).astype("float64") * v,
    ]
    entry = _check([x, v], outputs, np.arange(5.0), np.array(0.5))
    assert "new_array((), " not in entry  # the input v and the first output are numbers


def test_a_huge_scalar_body_runs_through_helpers() -> None:
    """A fused 0-d body of more statements than `SPLIT_ABOVE` is split into helpers,
    which take 0-d arrays made of the scalars."""
    x = pt.vector("x")
    total = x[0]
    for k in range(SPLIT_ABOVE // 2):  # nested, so not a sum of terms of one template
        total = pt.sin(total) * x[k % 5] + (k + 1) / 1000.0
    compiled = function([x], [total, total * 2.0])
    values = np.linspace(0.1, 0.5, 5)
    want = evaluate([total, total * 2.0], {x: values})
    for got, expected in zip(compiled(values), want):
        np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert "def k_" in compiled.source


def test_a_loop_of_scalars_reads_scalar_initial_values_and_step_counts() -> None:
    x = pt.vector("x")
    ys = pt.scan(lambda previous, rate: previous * rate + 1.0, outputs_info=[x.sum()],
                 non_sequences=[pt.max(x)], n_steps=x.shape[0])
    entry = _check([x], [ys[-1], ys], np.array([0.5, 0.25, 0.125]))
    # The loop is an outlined kernel: the entry passes it the scalars as they are.
    assert re.search(r"= k_\w+\(v0_0, v1_0, v2_0, ", entry)
    assert "new_array((), " not in entry  # no 0-d array, the first output a number too


def test_lengths_read_off_one_input_are_not_checked() -> None:
    x, y = pt.vector("x"), pt.vector("y")
    same = pt.exp(x) * (x + 1.0) - pt.sort(x)  # every length is x's
    entry = _check([x, y], [same, same * y], np.arange(3.0), np.ones(3))
    assert entry.count("differ in length") == 1  # only y against x
    with pytest.raises(ValueError, match="differ in length along axis 0: 3 and 2"):
        function([x, y], same * y)(np.arange(3.0), np.ones(2))


def test_static_lengths_are_not_checked_and_bound_the_loops() -> None:
    x, y = pt.tensor("x", shape=(3, None)), pt.tensor("y", shape=(3, 2))
    entry = _check([x, y], [pt.exp(x) + y], np.ones((3, 2)), np.ones((3, 2)))
    assert entry.count("differ in length") == 1  # axis 1 of x, against 2
    assert "range(3)" in entry and "range(2)" in entry


def test_fills_and_updates_broadcast_by_indexing() -> None:
    """A scalar fill, and an update's value, are read as they broadcast (no numba
    broadcasting overload, which costs about 0.2 s of compile in every process)."""
    m, row, column = pt.matrix("m"), pt.vector("row"), pt.tensor("column", shape=(None, 1))
    v = pt.scalar("v")
    outputs = [
        pt.alloc(v * 2.0, m.shape[0], 3),
        pt.set_subtensor(m[1:], row),
        pt.inc_subtensor(m[:, 1:], column),
        pt.inc_subtensor(m[0], v),
    ]
    values = (np.arange(12.0).reshape(4, 3), np.array([1.0, 2.0, 3.0]),
              np.arange(4.0).reshape(4, 1), np.array(0.5))
    entry = _check([m, row, column, v], outputs, *values)
    assert "broadcast_to" not in entry
    with pytest.raises(ValueError, match="differs in length from the indexed region"):
        function([m, row], pt.set_subtensor(m[1:], row))(values[0], np.ones(2))


def test_shape_vectors_are_tuples_where_only_subscripted() -> None:
    """`x.shape` and vectors of lengths are tuples of integers for the kernels that take
    shapes (reshape, alloc, broadcast_to, specify_shape, eye), arrays for the others."""
    x, y = pt.matrix("x"), pt.vector("y")
    n = x.shape[0] * x.shape[1]
    outputs = [
        pt.reshape(y, x.shape) * 2.0,
        pt.zeros_like(x) + pt.alloc(y[0], x.shape[1], x.shape[0]).T,
        pt.broadcast_to(y[:1], (x.shape[0], 1)) + 1.0,
        pt.specify_shape(y, (n,)) + 1.0,
        pt.eye(x.shape[0], n),
        pt.shape(x) * 2,  # an elementwise kernel takes an array of the shape
    ]
    values = (np.ones((2, 3)), np.arange(6.0))
    entry = _check([x, y], outputs, *values)
    assert " = i0.shape\n" in entry  # a tuple, no array
    assert entry.count("new_array(2, np.int64)") == 1  # the shape the elementwise kernel reads


@pytest.mark.parametrize(
    "dtype", ["int8", "uint8", "int32", "int64", "uint64", "float32", "float64", "bool", "complex128"]
)
def test_zero_d_inputs_and_outputs_are_numbers_of_their_dtype(dtype: str) -> None:
    """The entry takes and returns numbers for 0-d values; the caller still gets 0-d
    arrays of the output's dtype, from a Python number, a NumPy scalar or a 0-d array."""
    s, x = pt.scalar("s", dtype=dtype), pt.vector("x", dtype=dtype)
    outputs = [s, pt.maximum(s, x[0]), x, pt.eq(s, x[1])]
    values = (np.array(1, dtype=dtype), np.array([0, 1, 1], dtype=dtype))
    entry = _check([s, x], outputs, *values)
    assert "i0[()]" not in entry and "new_array((), " not in entry
    assert re.search(r"return \(i0, \w+, \w+, \w+, \)", entry)
    compiled = function([s, x], outputs)
    for given in (values[0][()], values[0], True if dtype == "bool" else 1):
        result = compiled(given, values[1])
        assert all(type(r) is np.ndarray for r in result)
        assert result[0].shape == () and result[0].dtype == dtype and result[0] == values[0]


def test_zero_d_outputs_listed_twice_are_returned_twice() -> None:
    """Each output is named once, however often it is listed (a 0-d array output read
    once, not `v[()][()]`)."""
    s, x = pt.scalar("s"), pt.matrix("x")
    total, position = x.sum(axis=(0, 1)), pt.argmax(x)  # argmax gives a 0-d array
    outputs = [total, total, s, s, position, position]
    entry = _check([s, x], outputs, np.array(2.5), np.array([[0.0, 3.0, 1.0], [2.0, 0.5, 1.5]]))
    assert "[()][()]" not in entry
