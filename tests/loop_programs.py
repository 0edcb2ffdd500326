"""Random loop programs for the differential loop fuzzer (`tests/numba_backend/test_loop_fuzz.py`).

A drawn program is a frozen description (`Program`) that renders to a short Python
script (`Program.source()`): a function `program(...)` holding a `pt.scan` (or `pt.map`,
`pt.reduce`, `pt.foldl`, `pt.foldr`) whose step function is drawn from a small
vocabulary, sometimes followed by a second loop reading the first one's results; then
the inputs, their values, and the transform applied to the program (`pt.grad`, a
Hessian-vector product, `pt.jvp` or `pt.vmap`). `build` executes that very script with
`ops` as `pt`, so a failure prints the program that was run, ready to paste into a
regression test.

`model` executes the same `program` function with `pt` bound to `NUMPY_LOOPS`, a NumPy
implementation of PyTensor's loop semantics (taps, `n_steps`, `go_backwards`, `until`):
an oracle independent of fgraph's desugaring, so a wrong reference evaluation (not only a
rewrite or the backend disagreeing with it) is caught too.

The vocabulary covers what the loop rewrites and the backend have to get right: scalar,
vector, matrix and static length-1 row carries (`Kind`); taps of any sign on sequences
and outputs; carries swapped, permuted or passed through views; a carry also returned as
a per-step output; per-step outputs; constant and shared sequences and non-sequences;
closures; static and unknown lengths; 0, 1 and many steps; `n_steps` constant, symbolic
or computed from a shape, shorter or longer than the sequences; while-loops; nested
loops; loops reading other loops' results; `go_backwards`; and the readers that drive
the loop rewrites (`ys[-1]`, `ys[0]`, `ys[:k]`, `ys[-2:]`, sums).

Every feature a known open defect breaks can be switched off: `OPEN_DEFECTS` names the
switches the generator reads and the defect each one hides (its regression test is in
`tests/numba_backend/test_loop_regressions.py`); those in `COMPILED_ONLY` stay on for
programs that are only evaluated. Delete an entry once its defect is fixed.

Input values are multiples of 1/4 and while-loop thresholds sit between them, so stop
conditions are exact in every evaluation order (and under finite differences).
"""

from __future__ import annotations

import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import attrs
import numpy as np
from hypothesis import strategies as st

import ops as pt
from fgraph import Variable

Array = np.ndarray[Any, Any]

OPEN_DEFECTS: Mapping[str, str] = types.MappingProxyType({})
"""Generator switches that are off, each naming the open defect it hides: the fuzzer draws
no program using the feature while its entry is here."""


COMPILED_ONLY: frozenset[str] = frozenset()
"""Switches in `OPEN_DEFECTS` whose defect only compiled code shows: programs only
evaluated still draw them."""


def enabled(feature: str, compiled: bool = True) -> bool:
    """Whether the generator may draw `feature` (see `OPEN_DEFECTS`) in programs that
    are (or are not) compiled."""
    return feature not in OPEN_DEFECTS or (not compiled and feature in COMPILED_ONLY)


# --- kinds of values ------------------------------------------------------------------------
Kind = Literal["s", "v", "r", "m", "i"]
"""A step value's shape for a program of width w: scalar `s` (), vector `v` (w,), row `r`
(1, w) with a static 1, matrix `m` (w, w); `i` is an int64 scalar (a step counter)."""
FLOAT_KINDS: tuple[Kind, ...] = ("s", "v", "r", "m")
_ORDER = {"s": 0, "v": 1, "r": 2, "m": 3}
"""Broadcasting two kinds gives the larger (v with r is r, anything with m is m)."""


def row_shape(kind: Kind, width: int) -> tuple[int, ...]:
    return {"s": (), "i": (), "v": (width,), "r": (1, width), "m": (width, width)}[kind]


# --- sources: the program's inputs and constants ------------------------------------------
@attrs.frozen
class Source:
    """An input of the program (or a constant written into it): its value and type."""

    name: str
    kind: Kind
    """The kind of its rows (of the value itself when it has no leading axis of rows)."""
    dtype: str
    shape: tuple[int, ...]
    static: tuple[bool, ...]
    """Per axis, whether the input's type gives the length (static length-1 axes always do)."""
    data: tuple[float, ...]
    constant: bool = False
    computed: str | None = None
    """For a value an earlier loop of the program computes (no data): its expression."""

    @property
    def type_shape(self) -> tuple[int | None, ...]:
        return tuple(n if known else None for n, known in zip(self.shape, self.static))

    def value(self) -> Array:
        return np.array(self.data, dtype=self.dtype).reshape(self.shape)

    def literal(self) -> str:
        if not self.data:
            return f"np.zeros({self.shape}, dtype={self.dtype!r})"
        return f"np.array({self.value().tolist()!r}, dtype={self.dtype!r})"

    def reference(self) -> str:
        """How the program names it: a parameter, the constant's literal, or the
        expression computing it."""
        if self.computed is not None:
            return self.computed
        return self.literal() if self.constant else self.name

    def declaration(self) -> str:
        return f"{self.name} = pt.tensor({self.name!r}, dtype={self.dtype!r}, shape={self.type_shape})"


# --- step expressions -------------------------------------------------------------------------
@attrs.frozen
class Expr:
    """A step value: `template` formatted with its arguments' renderings (a leaf is a name
    or a literal with no arguments). Written for both `ops` and NumPy (`NUMPY_LOOPS`)."""

    template: str
    args: tuple[Expr, ...]
    kind: Kind

    def render(self) -> str:
        return self.template.format(*(arg.render() for arg in self.args))


def leaf(name: str, kind: Kind) -> Expr:
    return Expr(name.replace("{", "{{").replace("}", "}}"), (), kind)


@attrs.frozen
class Form:
    """One entry of the vocabulary: `template` over arguments of `arg_kinds` giving
    `result`; the kind "K" stands for the result's kind (polymorphic forms)."""

    template: str
    arg_kinds: tuple[str, ...]
    result: str


UNARY = tuple(
    Form(t, ("K",), "K")
    for t in ("pt.tanh({0})", "pt.sin({0})", "({0} * 0.5)", "(-{0})", "({0} * {0} * 0.5)")
)
BINARY = tuple(Form(t, ("K", "K"), "K") for t in ("({0} + {1})", "({0} - {1})", "({0} * {1})"))
VIEWS: Mapping[Kind, tuple[str, ...]] = {
    "s": (),
    "v": ("{0}[::-1]", "pt.concatenate([{0}[1:], {0}[:1]])"),
    "r": ("{0}[:, ::-1]",),
    "m": ("{0}.T", "{0}[::-1]", "{0}[:, ::-1]", "{0}[::-1].T"),
}
"""Views (and a rotation) that keep a value's kind: what carries swap and permute through."""
CONVERSIONS = (
    Form("{0}.sum()", ("v",), "s"),
    Form("{0}.sum()", ("m",), "s"),
    Form("{0}.sum()", ("r",), "s"),
    Form("{0}[0]", ("v",), "s"),
    Form("{0}[-1, 0]", ("m",), "s"),
    Form("{0}.sum(axis=0)", ("m",), "v"),
    Form("{0}.sum(axis=1)", ("m",), "v"),
    Form("{0}[0]", ("m",), "v"),
    Form("{0}[0]", ("r",), "v"),
    Form("({0} @ {1})", ("m", "v"), "v"),
    Form("pt.outer({0}, {1})", ("v", "v"), "m"),
    Form("(pt.expand_dims({0}, 1) @ pt.expand_dims({1}, 0))", ("v", "v"), "m"),
    Form("(({0} @ {1}) * 0.5)", ("m", "m"), "m"),
    Form("pt.expand_dims({0}, 0)", ("v",), "r"),
)
NESTED = (
    Form("pt.reduce(lambda r, acc: pt.tanh(acc * 0.5 + r), sequences=[{0}], outputs_info=[{1}])",
         ("v", "s"), "s"),
    Form("pt.foldr(lambda r, acc: acc * 0.5 + r, sequences=[{0}], outputs_info=[{1}])",
         ("v", "s"), "s"),
    Form("pt.scan(lambda r, acc: acc * 0.5 + r, sequences=[{0}], outputs_info=[{1}])",
         ("v", "s"), "v"),
    Form("pt.map(lambda row: pt.tanh(row + {1}), sequences=[{0}])", ("m", "v"), "m"),
)
"""Loops inside a step, their bodies closing over step values (nested loops, nested
closures)."""


ACCUMULATE = "{0} + {1}"
"""A carry's step adding a term to its previous value (what accumulate_outside takes out
of the loop); only ever a whole step value, so it needs no parentheses."""


def _producible(kinds: set[Kind]) -> set[Kind]:
    """The float kinds a leaf can be made of from values of `kinds` (one conversion)."""
    found: set[Kind] = set()
    if kinds & set(FLOAT_KINDS):
        found.add("s")
    if kinds & {"v", "m", "r"}:
        found.add("v")
    if kinds & {"m", "v"}:
        found.add("m")
    if kinds & {"r", "v"}:
        found.add("r")
    return found


# --- the loop and the program ---------------------------------------------------------------
@attrs.frozen
class SequenceSpec:
    source: str
    """The name of the program source iterated over."""
    taps: tuple[int, ...] | None
    """None: passed plainly (tap 0); else `{"input": s, "taps": [...]}`."""


@attrs.frozen
class OutputSpec:
    kind: Kind
    initial: str | None
    """The name of the source holding the initial value; None: a per-step output."""
    taps: tuple[int, ...] | None = None
    """None: a plain initial value (tap -1); else `{"initial": y0, "taps": [...]}`."""

    @property
    def tap_list(self) -> tuple[int, ...]:
        if self.initial is None:
            return ()
        return (-1,) if self.taps is None else self.taps


Api = Literal["scan", "map", "reduce", "foldl", "foldr"]


@attrs.frozen
class Loop:
    results: str
    """The prefix of the names the program gives the loop's results (`ys0`, `ys1`)."""
    step_name: str
    api: Api
    sequences: tuple[SequenceSpec, ...]
    outputs: tuple[OutputSpec, ...]
    non_sequences: tuple[str, ...]
    """Names of the sources passed as non-sequences."""
    n_steps: str | None
    """The `n_steps` argument as written (a literal, a name, an expression)."""
    go_backwards: bool
    steps: tuple[Expr, ...]
    """What the step returns for each output."""
    until: Expr | None
    readers: tuple[tuple[int, str], ...]
    """What the program returns: (output, template over that output of the loop)."""
    truncate_gradient: int = -1
    """`scan`'s: the steps gradients flow back through (-1: all)."""

    def read(self) -> list[str]:
        return [template.format(f"{self.results}{k}") for k, template in self.readers]


def step_parameters(
    sequences: Sequence[SequenceSpec], outputs: Sequence[OutputSpec], n_non_sequences: int
) -> list[str]:
    """The step function's parameter names, in the order `scan` passes them."""
    names = [
        f"{s.source}_t{_tap_name(tap)}" for s in sequences for tap in (s.taps or (0,))
    ]
    for number, output in enumerate(outputs):
        names += [f"y{number}_t{_tap_name(tap)}" for tap in output.tap_list]
    names += [f"ns{j}" for j in range(n_non_sequences)]
    return _unique(names)


def _tap_name(tap: int) -> str:
    return "0" if tap == 0 else f"m{-tap}" if tap < 0 else f"p{tap}"


def _unique(names: list[str]) -> list[str]:
    """`names` with repeats suffixed (a sequence passed twice)."""
    seen: dict[str, int] = {}
    result = []
    for name in names:
        count = seen.get(name, 0)
        seen[name] = count + 1
        result.append(name if count == 0 else f"{name}_{count}")
    return result


TransformKind = Literal["none", "grad", "hessian", "jvp", "vmap"]


@attrs.frozen
class Transform:
    """What is applied to the program's results.

    grad: a cost (sum of `sin` of the float results) and its gradient with respect to
    `wrt`; `directions` are the finite-difference directions the oracle checks it along.
    hessian: the cost and its Hessian times `directions` (inputs), as the gradient of the
    gradient's product with them (second-order pullbacks of loops). jvp: the results
    and their tangents for tangents `directions` (inputs) of `wrt`. vmap: the program
    mapped over `directions[0]`, a batch of values of the input `wrt[0]`. The results
    (or the cost) are among the outputs, so an error computing them is one of the
    transformed program too.
    """

    kind: TransformKind = "none"
    wrt: tuple[str, ...] = ()
    directions: tuple[Source, ...] = ()
    float_results: tuple[int, ...] = ()


@attrs.frozen
class Program:
    """One drawn loop program; `str(program)` is its script."""

    sources: tuple[Source, ...]
    loops: tuple[Loop, ...]
    """One loop, or two where the second reads results of the first."""
    transform: Transform = Transform()

    @property
    def parameters(self) -> tuple[Source, ...]:
        return tuple(s for s in self.sources if not s.constant and s.computed is None)

    @property
    def readers(self) -> list[tuple[Loop, int]]:
        """What the program returns: (loop, output) per result, in order."""
        return [(loop, output) for loop in self.loops for output, _ in loop.readers]

    @property
    def exact_derivatives(self) -> bool:
        """Whether its derivatives are those of the function it computes (no
        `truncate_gradient`), so differences of the model check them."""
        return all(loop.truncate_gradient == -1 for loop in self.loops)

    @property
    def float64(self) -> bool:
        """Whether its float values are float64 (where differences are accurate)."""
        return all(s.dtype == "float64" for s in self.sources if s.kind != "i")

    def source_named(self, name: str) -> Source:
        return next(s for s in self.sources if s.name == name)

    def program_source(self) -> str:
        lines = [f"def program({', '.join(s.name for s in self.parameters)}):"]
        for loop in self.loops:
            lines += self._loop_source(loop)
        readers = ", ".join(text for loop in self.loops for text in loop.read())
        lines.append(f"    return [{readers}]")
        return "\n".join(lines) + "\n"

    def _loop_source(self, loop: Loop) -> list[str]:
        names = step_parameters(loop.sequences, loop.outputs, len(loop.non_sequences))
        lines = [f"    def {loop.step_name}({', '.join(names)}):"]
        rendered: list[str] = []
        for number, expr in enumerate(loop.steps):
            text = expr.render()
            same = f"out{rendered.index(text)}" if text in rendered else text
            lines.append(f"        out{number} = {same}")
            rendered.append(text)
        returned = ", ".join(f"out{k}" for k in range(len(loop.steps)))
        if loop.until is not None:
            if len(loop.steps) > 1:
                returned = f"({returned})"
            returned = f"{returned}, pt.until({loop.until.render()})"
        lines.append(f"        return {returned}")
        results = ", ".join(f"{loop.results}{k}" for k in range(len(loop.outputs)))
        lines.append(f"    {results} = {self._call(loop)}")
        return lines

    def _reference(self, name: str) -> str:
        return self.source_named(name).reference()

    def _call(self, loop: Loop) -> str:
        ref = self._reference
        sequences = [
            ref(s.source) if s.taps is None
            else f'{{"input": {ref(s.source)}, "taps": {list(s.taps)}}}'
            for s in loop.sequences
        ]
        outputs = [
            "None" if o.initial is None else ref(o.initial) if o.taps is None
            else f'{{"initial": {ref(o.initial)}, "taps": {list(o.taps)}}}'
            for o in loop.outputs
        ]
        arguments = [loop.step_name]
        if sequences or loop.api != "scan":
            arguments.append(f"sequences=[{', '.join(sequences)}]")
        if loop.api != "map":
            arguments.append(f"outputs_info=[{', '.join(outputs)}]")
        if loop.non_sequences:
            arguments.append(f"non_sequences=[{', '.join(map(ref, loop.non_sequences))}]")
        if loop.n_steps is not None:
            arguments.append(f"n_steps={loop.n_steps}")
        if loop.go_backwards:
            arguments.append("go_backwards=True")
        if loop.truncate_gradient != -1:
            arguments.append(f"truncate_gradient={loop.truncate_gradient}")
        return f"pt.{loop.api}({', '.join(arguments)})"

    def harness_source(self) -> str:
        transform = self.transform
        batched = transform.wrt[0] if transform.kind == "vmap" else None
        declared = [s for s in self.parameters if s.name != batched]
        extra = list(transform.directions) if transform.kind not in ("none", "grad") else []
        inputs = [*declared, *extra]
        lines = [s.declaration() for s in inputs]
        lines.append(f"inputs = [{', '.join(s.name for s in inputs)}]")
        lines.append(f"values = [{', '.join(s.literal() for s in inputs)}]")
        call = f"program({', '.join(s.name for s in self.parameters)})"
        floats = [f"forward[{k}]" for k in transform.float_results]
        wrt = f"[{', '.join(transform.wrt)}]"
        if transform.kind == "none":
            lines.append(f"outputs = {call}")
        elif transform.kind == "vmap":
            lines.append(f"outputs = pt.vmap(lambda {batched}: {call})({extra[0].name})")
        elif transform.kind == "grad":
            lines.append(f"forward = {call}")
            lines.append("cost = " + " + ".join(f"pt.sin({f}).sum()" for f in floats))
            lines.append(f'outputs = [cost, *pt.grad(cost, {wrt}, disconnected_inputs="ignore")]')
        elif transform.kind == "hessian":
            lines.append(f"forward = {call}")
            lines.append("cost = " + " + ".join(f"pt.sin({f}).sum()" for f in floats))
            lines.append(f'gradients = pt.grad(cost, {wrt}, disconnected_inputs="ignore")')
            along = " + ".join(f"(gradients[{k}] * {d.name}).sum()" for k, d in enumerate(extra))
            lines.append(f'outputs = [cost, *pt.grad({along}, {wrt}, disconnected_inputs="ignore")]')
        else:
            lines.append(f"forward = {call}")
            tangents = ", ".join(s.name for s in extra)
            lines.append(f"outputs = [*forward, *pt.jvp([{', '.join(floats)}], {wrt}, [{tangents}])]")
        return "\n".join(lines) + "\n"

    def source(self) -> str:
        return self.program_source() + "\n" + self.harness_source()

    def __str__(self) -> str:
        return self.source()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """How hypothesis shows a falsifying program: its script."""
        printer.text("Program: the script\n" + self.source())


# --- running a program ------------------------------------------------------------------------
@attrs.frozen(eq=False)
class Built:
    """A program built with `ops`: its graph's inputs and outputs and the input values."""

    inputs: tuple[Variable, ...]
    outputs: tuple[Variable, ...]
    values: tuple[Array, ...]


def build(program: Program) -> Built:
    """Execute the program's script with `ops` as `pt`."""
    namespace: dict[str, Any] = {"np": np, "pt": pt}
    exec(compile(program.source(), "<loop program>", "exec"), namespace)
    return Built(
        tuple(namespace["inputs"]), tuple(namespace["outputs"]),
        tuple(np.asarray(v) for v in namespace["values"]),
    )


def model(program: Program, values: Mapping[str, Array] | None = None) -> list[Array]:
    """The program's results (before its transform) computed by NumPy with PyTensor's
    loop semantics; `values` overrides inputs by name. Raises what a NumPy user would
    see for bad step counts (ValueError) and reads past an end (IndexError)."""
    namespace: dict[str, Any] = {"np": np, "pt": NUMPY_LOOPS}
    exec(compile(program.program_source(), "<loop program>", "exec"), namespace)
    given = {s.name: s.value() for s in program.parameters}
    given.update(values or {})
    function: Callable[..., list[Any]] = namespace["program"]
    with np.errstate(all="ignore"):
        return [np.asarray(r) for r in function(*(given[s.name] for s in program.parameters))]


# --- the NumPy model of PyTensor's loops --------------------------------------------------------
@attrs.frozen
class _NumpyUntil:
    condition: Any


@attrs.frozen
class _Fed:
    """An output fed back to the step: its taps, and its values so far (the initial rows
    first), which the loop appends to."""

    taps: tuple[int, ...]
    history: list[Array]


def _fed(spec: Any) -> _Fed | None:
    if spec is None:
        return None
    if isinstance(spec, dict):
        taps = tuple(spec.get("taps", [-1]))
        initial = np.asarray(spec["initial"])
        if taps == (-1,):  # the value itself, as for a plain initial value
            return _Fed(taps, [initial])
        return _Fed(taps, list(initial[len(initial) + min(taps) :]))
    return _Fed((-1,), [np.asarray(spec)])


def _numpy_scan(
    fn: Callable[..., Any],
    sequences: Any = None,
    outputs_info: Any = None,
    non_sequences: Any = None,
    n_steps: Any = None,
    go_backwards: bool = False,
    final_only: bool = False,
    truncate_gradient: int = -1,
) -> Any:
    """PyTensor's `scan` over NumPy values. Tap k of a sequence with taps lo..hi reads
    row t + k - min(lo, 0) at step t (with go_backwards, t counts the positions from the
    last: each tap's slice is reversed, so tap -1 stays the row before tap 0's); the step count is `n_steps`, else the shortest
    sequence's len - (max(hi, 0) - min(lo, 0)); a negative count, or a sequence too
    short for it, raises ValueError. `final_only`: the last values (`reduce`), the
    initial values of fed-back outputs after zero steps. `truncate_gradient` changes
    derivatives only, which the model does not compute."""
    rows: list[tuple[Array, tuple[int, ...]]] = []
    for spec in _listed(sequences):
        data, taps = (spec["input"], spec.get("taps", [0])) if isinstance(spec, dict) else (spec, [0])
        data = np.asarray(data)
        rows.append((data, tuple(taps)))
    fed = [_fed(spec) for spec in _listed(outputs_info)]
    usable = [len(d) - (max(max(taps), 0) - min(min(taps), 0)) for d, taps in rows]
    if n_steps is None and not rows:
        raise ValueError("scan: give n_steps or at least one sequence")
    steps = min(usable) if n_steps is None else int(n_steps)
    if steps < 0 or any(u < steps for u in usable):
        raise ValueError(f"scan: {steps} steps over sequences of usable lengths {usable}")
    shared = _listed(non_sequences)

    def arguments(t: int) -> list[Any]:
        found = [d[_position(t, len(d), taps, go_backwards) + k - min(min(taps), 0)]
                 for d, taps in rows for k in taps]
        for out in fed:
            if out is not None:
                found += [out.history[len(out.history) + k] for k in out.taps]
        return [*found, *shared]

    traces: list[list[Array]] = []
    for t in range(steps):
        results, stop = _split(fn(*arguments(t)))
        traces = traces or [[] for _ in results]
        for trace, value, out in zip(traces, results, fed or [None] * len(results)):
            trace.append(np.asarray(value))
            if out is not None:
                out.history.append(np.asarray(value))
        if stop is not None and bool(stop):
            break
    if not traces:  # no step ran: the step's types from one call on stand-in rows
        stand_ins = [np.zeros(d.shape[1:], d.dtype) for d, taps in rows for _ in taps]
        for out in fed:
            stand_ins += [] if out is None else [out.history[-1]] * len(out.taps)
        results, _ = _split(fn(*stand_ins, *shared))
        if final_only:
            return _single([
                _NoLastRow() if out is None else out.history[-1]
                for out in fed or [None] * len(results)
            ])
        return _single([np.zeros((0, *np.shape(r)), np.asarray(r).dtype) for r in results])
    if final_only:
        return _single([
            trace[-1] if out is None else out.history[-1]
            for trace, out in zip(traces, fed or [None] * len(traces))
        ])
    return _single([np.stack(trace) for trace in traces])


class _NoLastRow:
    """The last value of a per-step output that no step computed: reading it raises
    IndexError, as reading `ys[-1]` of an empty trace does (and, as in a graph, only a
    read raises)."""

    def _raise(self, *args: object) -> Any:
        raise IndexError("the last row of an empty trace")

    __array__ = __getitem__ = __add__ = __radd__ = __mul__ = __rmul__ = _raise

    def __getattr__(self, name: str) -> Any:
        self._raise()


def _position(t: int, length: int, taps: tuple[int, ...], go_backwards: bool) -> int:
    """The position step t reads a tapped sequence of `length` rows at."""
    if not go_backwards:
        return t
    return length - (max(max(taps), 0) - min(min(taps), 0)) - 1 - t


def _listed(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _split(returned: Any) -> tuple[list[Any], Any]:
    if isinstance(returned, tuple) and len(returned) == 2 and isinstance(returned[1], _NumpyUntil):
        values, stop = returned[0], returned[1].condition
    else:
        values, stop = returned, None
    return (list(values) if isinstance(values, (list, tuple)) else [values]), stop


def _single(values: list[Any]) -> Any:
    return values[0] if len(values) == 1 else tuple(values)


def _map(fn: Callable[..., Any], sequences: Any, non_sequences: Any = None,
         go_backwards: bool = False) -> Any:
    return _numpy_scan(fn, sequences, None, non_sequences, go_backwards=go_backwards)


def _reduce(fn: Callable[..., Any], sequences: Any, outputs_info: Any, non_sequences: Any = None,
            go_backwards: bool = False, n_steps: Any = None) -> Any:
    return _numpy_scan(fn, sequences, outputs_info, non_sequences, n_steps, go_backwards, True)


def _foldl(fn: Callable[..., Any], sequences: Any, outputs_info: Any, non_sequences: Any = None) -> Any:
    return _reduce(fn, sequences, outputs_info, non_sequences)


def _foldr(fn: Callable[..., Any], sequences: Any, outputs_info: Any, non_sequences: Any = None) -> Any:
    return _reduce(fn, sequences, outputs_info, non_sequences, go_backwards=True)


NUMPY_LOOPS = types.SimpleNamespace(
    tanh=np.tanh,
    sin=np.sin,
    outer=np.outer,
    concatenate=np.concatenate,
    expand_dims=np.expand_dims,
    constant=np.asarray,
    until=_NumpyUntil,
    scan=_numpy_scan,
    map=_map,
    reduce=_reduce,
    foldl=_foldl,
    foldr=_foldr,
)
"""What `pt` is when `model` runs a program's script: NumPy, and PyTensor's loops."""


# --- the generator --------------------------------------------------------------------------
QUARTERS = st.integers(-8, 8).map(lambda k: k / 4)
"""Input values: exact in float32 and float64, so sums of them are too."""
SEQUENCE_TAPS = st.lists(st.integers(-3, 3), min_size=1, max_size=3, unique=True).map(
    lambda taps: tuple(sorted(taps))
)
OUTPUT_TAPS = st.lists(st.integers(-3, -1), min_size=1, max_size=3, unique=True).map(
    lambda taps: tuple(sorted(taps))
)
TRACE_READERS = (
    "{}[-1]", "{}", "{}[0]", "{}[:2]", "{}[-2:]", "{}.sum()", "{}[-2]", "{}[:1]", "{}[3]",
    "{}[2]", "{}[-3]", "{}[::-1]", "{}[1:]", "{}[-3:]", "{}[1:-1].sum()",
)
"""How a program reads a loop's stacked results (the reads the loop rewrites key on)."""
FINAL_READERS = ("{}", "{}.sum()")
"""How a program reads the final values `reduce`, `foldl` and `foldr` return."""


class _Drawing:
    """Mutable state while drawing one program: its sources so far."""

    def __init__(self, draw: st.DrawFn, dtype: str, width: int, compiled: bool) -> None:
        self.draw = draw
        self.dtype = dtype
        self.width = width
        self.compiled = compiled
        self.sources: list[Source] = []

    def enabled(self, feature: str) -> bool:
        return enabled(feature, self.compiled)

    def source(
        self, prefix: str, kind: Kind, lead: int | None = None, *, constant: bool = False,
        uniform_rows: bool = False, may_be_static: bool = True,
    ) -> Source:
        """A new source of `kind` rows (`lead` of them; none: one value)."""
        row = row_shape(kind, self.width)
        shape = row if lead is None else (lead, *row)
        static = may_be_static and self.draw(st.booleans())
        flags = tuple(
            static or (kind == "r" and axis == len(shape) - 2) for axis in range(len(shape))
        )
        if uniform_rows and lead:
            first = self.draw(st.lists(QUARTERS, min_size=_size(row), max_size=_size(row)))
            data = tuple(first) * lead
        else:
            data = tuple(self.draw(st.lists(QUARTERS, min_size=_size(shape), max_size=_size(shape))))
        made = Source(self.fresh_name(prefix), kind, self.dtype, shape, flags, data, constant)
        self.sources.append(made)
        return made

    def fresh_name(self, prefix: str) -> str:
        """`prefix` numbered past the sources named so already."""
        return f"{prefix}{sum(s.name.startswith(prefix) for s in self.sources)}"

    def named(self, name: str) -> Source:
        return next(s for s in self.sources if s.name == name)

    def use(self, source: Source) -> str:
        """The name of `source` (a result of an earlier loop), now one of the sources."""
        if source not in self.sources:
            self.sources.append(source)
        return source.name


def _size(shape: tuple[int, ...]) -> int:
    return int(np.prod(shape, dtype=np.int64))


def _expr(draw: st.DrawFn, kind: Kind, reads: Sequence[Expr], depth: int) -> Expr:
    """A float value of `kind` computed from `reads` (which must be able to produce it)."""
    producible = _producible({r.kind for r in reads})
    if depth <= 0 or draw(st.integers(0, 2)) == 0:
        return _leaf(draw, kind, reads)
    fitting = [
        form for form in (*CONVERSIONS, *NESTED)
        if form.result == kind and all(k in producible for k in form.arg_kinds)
    ]
    families: dict[str, list[tuple[str, Form]]] = {
        "unary": [("same", form) for form in UNARY],
        "binary": [("binary", form) for form in BINARY],
        "view": [("same", Form(t, ("K",), "K")) for t in VIEWS[kind]],
        "conversion": [("fixed", form) for form in fitting if form in CONVERSIONS],
        "loop": [("fixed", form) for form in fitting if form in NESTED],
    }
    family = draw(st.sampled_from([name for name, found in families.items() if found]))
    what, form = draw(st.sampled_from(families[family]))
    arg_kinds: tuple[Kind, ...]
    if what == "binary":
        smaller = [k for k in FLOAT_KINDS if k in producible and _ORDER[k] <= _ORDER[kind]]
        other = draw(st.sampled_from(smaller[::-1]))
        arg_kinds = (kind, other) if draw(st.booleans()) else (other, kind)
    elif what == "fixed":
        arg_kinds = tuple(_as_kind(k) for k in form.arg_kinds)
    else:
        arg_kinds = (kind,)
    args = tuple(_expr(draw, k, reads, depth - 1) for k in arg_kinds)
    return Expr(form.template, args, kind)


def _as_kind(name: str) -> Kind:
    for kind in FLOAT_KINDS:
        if name == kind:
            return kind
    raise ValueError(f"not a float kind: {name}")


def _leaf(draw: st.DrawFn, kind: Kind, reads: Sequence[Expr]) -> Expr:
    """A value the step reads of `kind`, or one conversion of values of other kinds."""
    kinds = {r.kind for r in reads}
    conversions = [
        form for form in CONVERSIONS
        if form.result == kind and all(k in kinds for k in form.arg_kinds)
    ]
    choices: list[Expr | Form] = [*(r for r in reads if r.kind == kind), *conversions]
    picked = draw(st.sampled_from(choices))
    if isinstance(picked, Expr):
        return picked
    args = tuple(
        draw(st.sampled_from([r for r in reads if r.kind == k])) for k in picked.arg_kinds
    )
    return Expr(picked.template, args, kind)


@st.composite
def programs(draw: st.DrawFn, transforms: bool = True, compiled: bool = True) -> Program:
    """A random loop program (see the module docstring): one loop, or two where the
    second reads results of the first (a trace as a sequence, a final value as an
    initial value or non-sequence). `compiled`: one the fuzzer compiles (switches of
    defects that only compiled code shows are off)."""
    dtype = draw(st.sampled_from(["float64", "float64", "float64", "float32"]))
    drawing = _Drawing(draw, dtype, draw(st.integers(1, 3)), compiled)
    drawn = [_draw_loop(drawing, "ys", "step", ())]
    offered = _results_offered(drawing, drawn[0])
    if offered and draw(st.integers(0, 3)) == 0:
        drawn.append(_draw_loop(drawing, "us", "step_2", offered))
    program = Program(tuple(drawing.sources), tuple(d.loop for d in drawn))
    if transforms:
        vmappable = all(
            _vmap_reads_finals(d.loop, read_by_another=k == 0 and len(drawn) > 1)
            for k, d in enumerate(drawn)
        )
        program = attrs.evolve(program, transform=_draw_transform(drawing, program, vmappable))
    return program


def _vmap_reads_finals(loop: Loop, read_by_another: bool) -> bool:
    """Whether `pt.vmap` of the program keeps `loop`: a while-loop may stop after
    different steps per example, and the vectorizer then refuses (a clear ValueError)
    every read of its traces except their last row in a forward loop, which the model
    here does not follow; so a while-loop is vmapped only when so read, and only where
    what is read is a carry's trace: a per-step output's rows (also those of an output
    with taps other than [-1], whose window of carries holds the taps, and the last row
    `pt.reduce` takes of a per-step output) are refused at any position."""
    if loop.until is None:
        return True
    carries = all(len(loop.outputs[k].tap_list) == 1 for k, _ in loop.readers)
    if loop.api not in ("scan", "map"):
        return carries
    only_last = carries and all(template == "{}[-1]" for _, template in loop.readers)
    return only_last and not loop.go_backwards and not read_by_another


@attrs.frozen
class _Drawn:
    """A drawn loop and the steps it runs (for a while-loop: at most)."""

    loop: Loop
    runs: int


def _results_offered(drawing: _Drawing, first: _Drawn) -> list[Source]:
    """Results of the first loop a second may read: the stacked float outputs of a
    for-loop `scan` or `map` (as sequences), and the last rows of those of a loop that
    runs steps (as initial values and non-sequences)."""
    loop = first.loop
    offered = []
    if loop.api not in ("scan", "map") or loop.until is not None:
        return []
    for number, output in enumerate(loop.outputs):
        if output.kind == "i":
            continue
        name = f"{loop.results}{number}"
        row = row_shape(output.kind, drawing.width)
        flags = tuple(output.kind == "r" and axis == 0 for axis in range(len(row)))
        offered.append(Source(name, output.kind, drawing.dtype, (first.runs, *row),
                              (False, *flags), (), computed=name))
        if first.runs > 0:
            offered.append(Source(f"{name}_last", output.kind, drawing.dtype, row, flags, (),
                                  computed=f"{name}[-1]"))
    return offered


def _draw_loop(
    drawing: _Drawing, results: str, step_name: str, offered: Sequence[Source]
) -> _Drawn:
    """One loop, reading sources of its own and `offered` results of an earlier one."""
    draw = drawing.draw
    api: Api = draw(st.sampled_from(["scan", "scan", "scan", "reduce", "map", "foldl", "foldr"]))
    traces = [s for s in offered if s.computed == s.name]
    finals = [s for s in offered if s.computed != s.name]
    base = draw(st.one_of(st.integers(0, 3), st.integers(4, 12)))
    sequences = []
    if len(traces) > 0 and draw(st.booleans()):
        trace = draw(st.sampled_from(traces))
        sequences.append(SequenceSpec(drawing.use(trace), None))
        base = trace.shape[0]
    sequences += _draw_sequences(drawing, api, base, bool(sequences))
    n_steps, runs = _draw_n_steps(drawing, api, sequences, base)
    until_kind = None
    if api in ("scan", "reduce") and draw(st.integers(0, 4)) == 0:
        until_kind = draw(st.sampled_from(["sequence", "counter"] if sequences else ["counter"]))
    per_step = api in ("scan", "map") or runs > 0 or drawing.enabled("reduce_of_static_empty_loop")
    outputs = _draw_outputs(drawing, api, until_kind == "counter", per_step, finals)
    non_sequences = _draw_non_sequences(drawing, finals)
    names = step_parameters(sequences, outputs, len(non_sequences))
    kinds = [drawing.named(s.source).kind for s in sequences for _ in (s.taps or (0,))]
    n_rows = len(kinds)
    kinds += [o.kind for o in outputs for _ in o.tap_list]
    kinds += [drawing.named(name).kind for name in non_sequences]
    parameters = [leaf(name, kind) for name, kind in zip(names, kinds)]
    n_taps = sum(len(o.tap_list) for o in outputs)
    rows, taps = parameters[:n_rows], parameters[n_rows : n_rows + n_taps]
    reads = [p for p in (*parameters, *_draw_closures(drawing)) if p.kind != "i"]
    if not reads:  # a step reading nothing still needs a value to compute from
        reads = [leaf(f"pt.constant(np.array(0.5, dtype={drawing.dtype!r}))", "s")]
    producible = _producible({r.kind for r in reads})
    outputs = [
        o if o.initial is not None or o.kind in producible else attrs.evolve(o, kind="s")
        for o in outputs
    ]
    steps = _draw_steps(drawing, outputs, taps, reads)
    until = None
    if until_kind == "sequence":
        row = draw(st.sampled_from(rows))
        threshold = draw(st.integers(-4, 4)) / 4 + 0.125
        until = Expr(f"({{0}}.sum() > {threshold})", (row,), "s")
    elif until_kind == "counter":
        until = Expr(f"({{0}} >= {draw(st.integers(1, 4))})", (taps[-1],), "s")
    readers = _draw_readers(drawing, api, outputs, None if until is not None else runs)
    go_backwards = api in ("scan", "reduce", "map") and draw(st.integers(0, 3)) == 0
    truncate = draw(st.integers(1, 3)) if api == "scan" and draw(st.integers(0, 5)) == 0 else -1
    loop = Loop(results, step_name, api, tuple(sequences), tuple(outputs), tuple(non_sequences),
                n_steps, go_backwards, tuple(steps), until, tuple(readers), truncate)
    return _Drawn(loop, runs)


def _draw_sequences(
    drawing: _Drawing, api: Api, base: int, have_one: bool
) -> list[SequenceSpec]:
    """Sequences of `base` usable rows (some longer), with taps of any sign, constant
    ones, and the same sequence passed twice (`have_one`: the loop has one already)."""
    draw = drawing.draw
    sequences: list[SequenceSpec] = []
    needed = 0 if have_one or api not in ("map", "foldl", "foldr") else 1
    for _ in range(draw(st.integers(needed, 2 - have_one))):
        if sequences and draw(st.integers(0, 3)) == 0:
            sequences.append(draw(st.sampled_from(sequences)))
            continue
        taps: tuple[int, ...] | None = None
        if draw(st.integers(0, 2)) == 0:
            taps = draw(SEQUENCE_TAPS.filter(
                lambda t: drawing.enabled("sequence_taps_not_spanning_zero") or t[0] <= 0 <= t[-1]
            ))
        span = 0 if taps is None else max(taps[-1], 0) - min(taps[0], 0)
        extra = draw(st.sampled_from([0, 0, 0, 1, 2]))
        constant = draw(st.integers(0, 5)) == 0
        kind = draw(st.sampled_from(FLOAT_KINDS))
        source = drawing.source("s", kind, base + span + extra, constant=constant,
                                uniform_rows=constant and draw(st.booleans()))
        sequences.append(SequenceSpec(source.name, taps))
    return sequences


def _draw_n_steps(
    drawing: _Drawing, api: Api, sequences: Sequence[SequenceSpec], base: int
) -> tuple[str | None, int]:
    """No `n_steps` (the sequences decide), a constant, a constant only rewriting finds
    (what static_length turns into the loop's static length), an int64 input, or a
    shape expression; with sequences, it may be shorter or longer than they are. Also
    the steps the loop runs (when it runs; a while-loop may stop earlier)."""
    draw = drawing.draw
    if api in ("map", "foldl", "foldr"):
        return None, base
    how = draw(st.sampled_from(
        ["none", "none", "none", "shape", "constant", "folded", "input"] if sequences
        else ["constant", "folded", "input"]
    ))
    if how == "none":
        return None, base
    longer = [1] if drawing.enabled("n_steps_longer_than_sequences") else []
    if how == "shape":
        source = drawing.named(draw(st.sampled_from([s.source for s in sequences])))
        taps = [s.taps or (0,) for s in sequences if s.source == source.name][0]
        span = max(taps[-1], 0) - min(taps[0], 0)
        cut = draw(st.sampled_from([span, span, span + 1, *(span - k for k in longer)]))
        steps = source.shape[0] - cut
        if source.constant or cut < 0 or steps > base and not longer or (
            steps < 0 and not drawing.enabled("negative_n_steps")
        ):
            return None, base
        return f"{source.name}.shape[0] - {cut}", max(source.shape[0] - cut, 0)
    value = max(0, base + draw(st.sampled_from([0, 0, -1, -2, *longer]))) if sequences else base
    if how in ("constant", "folded") and sequences and not drawing.enabled(
        "constant_n_steps_over_sequences"
    ):
        how = "input"
    if how == "constant":
        return str(value), value
    if how == "folded":
        return f"pt.constant({value}) * 1", value
    if draw(st.integers(0, 9)) == 0 and drawing.enabled("negative_n_steps"):
        value = -1
    name = drawing.fresh_name("n")
    drawing.sources.append(Source(name, "i", "int64", (), (), (float(value),)))
    return name, max(value, 0)


def _draw_outputs(
    drawing: _Drawing, api: Api, counter: bool, per_step: bool, finals: Sequence[Source]
) -> list[OutputSpec]:
    """Carries (plain or with taps), per-step outputs (if `per_step`), and a step
    counter for a while-loop that stops on it; carries may start from `finals`, results
    of an earlier loop."""
    draw = drawing.draw
    outputs: list[OutputSpec] = []
    roles = ["none"] if api == "map" else ["carry", "carry", "taps", *(["none"] if per_step else [])]
    for _ in range(draw(st.integers(1, 3))):
        role = draw(st.sampled_from(roles))
        kind = draw(st.sampled_from(FLOAT_KINDS))
        constant = draw(st.integers(0, 7)) == 0 and drawing.enabled("static_carry_of_unknown_step")
        static = drawing.enabled("static_carry_of_unknown_step")
        if role == "none":
            outputs.append(OutputSpec(kind, None))
        elif role == "carry":
            reusable = [f for f in finals if f.kind == kind]
            source = (
                draw(st.sampled_from(reusable)) if len(reusable) > 0 and draw(st.booleans())
                else drawing.source("c", kind, constant=constant, may_be_static=static)
            )
            drawing.use(source)
            dict_form = draw(st.integers(0, 4)) == 0
            outputs.append(OutputSpec(kind, source.name, (-1,) if dict_form else None))
        else:
            passing = kind == "s" or drawing.enabled("carries_passing_array_values")
            taps = draw(OUTPUT_TAPS) if passing else (-1,)  # deeper taps shift carries
            depth = None if taps == (-1,) else -taps[0]  # taps [-1] take the value itself
            source = drawing.source("h", kind, depth, constant=constant, may_be_static=static)
            outputs.append(OutputSpec(kind, source.name, taps))
    if counter:
        zero = Source(drawing.fresh_name("k"), "i", "int64", (), (), (0.0,), constant=True)
        drawing.sources.append(zero)
        outputs.append(OutputSpec("i", zero.name))
    return outputs


def _draw_non_sequences(drawing: _Drawing, finals: Sequence[Source]) -> list[str]:
    """New values, the same value twice, and `finals`, results of an earlier loop."""
    draw = drawing.draw
    names: list[str] = []
    for _ in range(draw(st.integers(0, 2))):
        if names and draw(st.integers(0, 3)) == 0:  # the same value twice
            names.append(draw(st.sampled_from(names)))
            continue
        if finals and draw(st.integers(0, 2)) == 0:
            names.append(drawing.use(draw(st.sampled_from(finals))))
            continue
        kind = draw(st.sampled_from(FLOAT_KINDS))
        names.append(drawing.source("w", kind, constant=draw(st.integers(0, 3)) == 0).name)
    return names


def _draw_closures(drawing: _Drawing) -> list[Expr]:
    """Values the step reads without receiving them."""
    draw = drawing.draw
    found = []
    for _ in range(draw(st.integers(0, 1))):
        kind = draw(st.sampled_from(FLOAT_KINDS))
        source = drawing.source("z", kind, constant=draw(st.integers(0, 3)) == 0)
        found.append(leaf(f"pt.constant({source.literal()})" if source.constant else source.name, kind))
    return found


def _draw_steps(
    drawing: _Drawing, outputs: Sequence[OutputSpec], taps: Sequence[Expr], reads: Sequence[Expr]
) -> list[Expr]:
    """What the step returns for each output: a squashed mix of what it reads, an
    accumulation, a view of a carry (swaps and permutations), the same value as an
    earlier output (a carry also returned per step), or any value (per-step outputs)."""
    draw = drawing.draw
    taps_of: list[list[Expr]] = []
    remaining = iter(taps)
    for output in outputs:
        taps_of.append([next(remaining) for _ in output.tap_list])
    steps: list[Expr] = []
    for output, own in zip(outputs, taps_of):
        kind = output.kind
        if kind == "i":
            steps.append(Expr("({0} + 1)", (own[0],), "i"))
            continue
        passing = kind == "s" or drawing.enabled("carries_passing_array_values")
        same_kind_taps = [t for t in (taps if passing else own) if t.kind == kind]
        earlier = [
            e for e, o in zip(steps, outputs) if e.kind == kind
            and (drawing.enabled("carry_also_returned_per_step") or o.initial is None)
        ]
        templates = ["mix"]
        templates += ["raw"] if output.initial is None else []
        multi_tap = output.tap_list != (-1,)  # a carry and a per-step output of one value
        if -1 in output.tap_list and (drawing.enabled("carry_also_returned_per_step") or not multi_tap):
            templates.append("accumulate")
        templates += ["view"] if same_kind_taps else []
        templates += ["alias"] if earlier else []
        template = draw(st.sampled_from(templates))
        if template == "mix":
            steps.append(Expr("pt.tanh({0})", (_expr(draw, kind, reads, 2),), kind))
        elif template == "raw":
            steps.append(_expr(draw, kind, reads, 2))
        elif template == "accumulate":
            previous = own[output.tap_list.index(-1)]
            others = [r for r in reads if r != previous]
            term = _expr(draw, kind, others if kind in _producible({r.kind for r in others}) else reads, 1)
            if draw(st.booleans()):
                term = Expr("pt.tanh({0})", (term,), kind)
            steps.append(Expr(ACCUMULATE, (previous, term), kind))
        elif template == "view":
            viewed = draw(st.sampled_from(same_kind_taps))
            steps.append(Expr(draw(st.sampled_from(["{0}", *VIEWS[kind]])), (viewed,), kind))
        else:
            steps.append(draw(st.sampled_from(earlier)))
    if not drawing.enabled("accumulation_read_elsewhere"):
        steps = [_squashed_if_shared(step, steps) for step in steps]
    return steps


def _squashed_if_shared(step: Expr, steps: Sequence[Expr]) -> Expr:
    """An accumulation another step value also reads (the same sum, so the same graph
    node) squashed into an ordinary value."""
    if step.template != ACCUMULATE:
        return step
    sums = {ACCUMULATE, "({0} + {1})"}
    for other in steps:
        if other is step:
            continue
        pending = [other]
        while pending:
            expr = pending.pop()
            if expr.template in sums and expr.args == step.args:
                return Expr("pt.tanh({0})", (step,), step.kind)
            pending.extend(expr.args)
    return step


ROWS_READ: Mapping[str, int] = {
    "{}[-1]": 1, "{}[0]": 1, "{}[-2]": 2, "{}[3]": 4, "{}[2]": 3, "{}[-3]": 3,
}
"""The rows a stacked result needs for a reader of one row not to raise."""


def _draw_readers(
    drawing: _Drawing, api: Api, outputs: Sequence[OutputSpec], runs: int | None
) -> list[tuple[int, str]]:
    """Zero to two reads of each output (unread ones are what remove_unused drops);
    `runs`: the steps a for-loop runs (None: a while-loop)."""
    draw = drawing.draw
    templates: tuple[str, ...] = TRACE_READERS if api in ("scan", "map") else FINAL_READERS
    if runs is not None and not drawing.enabled("rows_past_the_first_step"):
        templates = tuple(t for t in templates if ROWS_READ.get(t, 0) <= runs)
    readers: list[tuple[int, str]] = []
    for number in range(len(outputs)):
        count = draw(st.integers(0 if len(outputs) > 1 else 1, 2))
        readers += [(number, draw(st.sampled_from(templates))) for _ in range(count)]
    if not readers:
        readers.append((0, draw(st.sampled_from(templates))))
    return readers


def _draw_transform(
    drawing: _Drawing, program: Program, vmappable: bool
) -> Transform:
    """None, grad, Hessian, jvp or vmap, where allowed.
    Derivatives only of programs whose results are all floats (the oracle checks the
    whole program, so every result must be in them)."""
    draw = drawing.draw
    readers = program.readers
    floats = tuple(k for k, (loop, output) in enumerate(readers) if loop.outputs[output].kind != "i")
    kinds: list[TransformKind] = ["none"]
    if len(floats) == len(readers):
        kinds += ["jvp", "grad", "hessian"]
    if vmappable:
        kinds.append("vmap")
    kind = draw(st.sampled_from(kinds))
    candidates = [s for s in program.parameters if s.dtype != "int64"]
    if kind == "none" or not candidates:
        return Transform()
    if kind == "vmap":
        batched = draw(st.sampled_from(candidates))
        shape = (draw(st.integers(1, 3)), *batched.shape)
        data = tuple(draw(st.lists(QUARTERS, min_size=_size(shape), max_size=_size(shape))))
        batch = Source(f"{batched.name}_batch", batched.kind, batched.dtype, shape,
                       (draw(st.booleans()), *batched.static), data)
        return Transform("vmap", (batched.name,), (batch,))
    wrt = draw(st.lists(st.sampled_from(candidates), min_size=1, unique=True))
    prefix = "t_" if kind == "jvp" else "d_"
    directions = tuple(
        attrs.evolve(s, name=prefix + s.name, data=tuple(
            draw(st.lists(QUARTERS, min_size=_size(s.shape), max_size=_size(s.shape)))
        ))
        for s in wrt
    )
    return Transform(kind, tuple(s.name for s in wrt), directions, floats)
