"""Every Python block in README.md and docs/*.md runs, and the figures its comments show
are the ones it computes, so a document can never use an undefined name or quote a
stale number.

A file's blocks run in order in one namespace (a reader goes top to bottom), with
`__name__ == "__main__"` so that a block guarded as a script must be runs too. A
top-level expression statement whose trailing comment starts with a figure (`# [2, 3]`,
`# 0.25`, `# t = 1, 2: [20, 31]`: the figure after the last colon) has its value checked
against it, to the last digit written (`911.3996...` is 911.3996 within 0.0001, `[2, 0]` exact); a
`print(...)` so commented must print text matching it, whitespace aside (`...` stands
for any text). Other
comments are prose. docs/api.md is generated from docstrings and its blocks are
signatures, not programs, so it is not run.
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NOT_PROGRAMS = {ROOT / "docs" / "api.md"}
BLOCK = re.compile(r"^(?P<indent> *)```python\n(?P<code>.*?)^(?P=indent)```", re.S | re.M)
SLOW = {"batching.md", "README.md"}
"""Documents whose blocks start a Dask cluster."""


@attrs.frozen
class Block:
    document: Path
    line: int
    code: str


def blocks(document: Path) -> list[Block]:
    text = document.read_text()
    found = []
    for match in BLOCK.finditer(text):
        indent = len(match["indent"])
        lines = [line[indent:] for line in match["code"].splitlines()]
        found.append(Block(document, text[: match.start()].count("\n") + 2, "\n".join(lines)))
    return found


@attrs.frozen
class Figure:
    """A figure quoted in a comment: numbers to a precision, or text with `...` gaps."""

    text: str

    def numbers(self) -> tuple[Any, float] | None:
        """The quoted value with the absolute tolerance its digits allow (a unit in the
        last place written of its finest number; integers exactly), or None when the
        comment is not a literal."""
        truncated = re.sub(r"(\d)\.\.\.", r"\1", self.text)
        try:
            value = ast.literal_eval(truncated)
        except (ValueError, SyntaxError):
            return None
        places = [len(fraction) for fraction in re.findall(r"\d\.(\d+)", truncated)]
        return value, 10.0 ** -max(places) if places else 1e-9

    def matches_text(self, printed: str) -> bool:
        """Whether `printed` reads as the figure, whitespace aside (NumPy pads arrays)."""
        pattern = ".*".join(re.escape(re.sub(r"\s", "", part)) for part in self.text.split("..."))
        return re.search(pattern, re.sub(r"\s", "", printed), re.S) is not None


def figure_of(line: str) -> Figure | None:
    """The figure a trailing comment quotes, if it starts with one."""
    if "#" not in line:
        return None
    comment = line.split("#", 1)[1].strip()
    quoted = comment.rsplit(": ", 1)[-1] if re.search(r": [\[\d(-]", comment) else comment
    if re.match(r"[\[\d(-]|True|False|array", quoted) or quoted.startswith(("'", '"')):
        return Figure(quoted)
    return None


def check_value(block: Block, number: int, value: Any, figure: Figure) -> None:
    where = f"{block.document.name} line {block.line + number - 1}"
    quoted = figure.numbers()
    assert quoted is not None, f"{where}: the comment {figure.text!r} is not a value"
    want, atol = quoted
    got = value[0] if isinstance(value, list) and len(value) == 1 else value
    try:
        numbers = np.asarray(want, dtype=float)
    except ValueError:  # a structure, not an array of numbers
        assert got == want, f"{where}: computes {got!r}, the comment says {figure.text}"
        return
    got = np.asarray(got if not isinstance(got, tuple) else [np.asarray(g) for g in got])
    assert np.allclose(got, numbers, rtol=0.0, atol=atol), (
        f"{where}: computes {got!r}, the comment says {figure.text}"
    )


def run(block: Block, namespace: dict[str, Any]) -> None:
    """Run a block statement by statement, checking each commented figure."""
    tree = ast.parse(block.code, filename=str(block.document))
    source_lines = block.code.splitlines()
    for statement in tree.body:
        last = source_lines[(statement.end_lineno or statement.lineno) - 1]
        figure = figure_of(last)
        location = f"<{block.document.name}:{block.line + statement.lineno - 1}>"
        if isinstance(statement, ast.Expr) and figure is not None:
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                value = eval(compile(ast.Expression(statement.value), location, "eval"), namespace)
            if _is_print(statement.value):
                assert figure.matches_text(printed.getvalue()), (
                    f"{location}: printed {printed.getvalue()!r}, the comment says {figure.text}"
                )
            else:
                check_value(block, statement.lineno, value, figure)
        else:
            module = ast.Module(body=[statement], type_ignores=[])
            exec(compile(module, location, "exec"), namespace)


def _is_print(expression: ast.expr) -> bool:
    return (
        isinstance(expression, ast.Call)
        and isinstance(expression.func, ast.Name)
        and expression.func.id == "print"
    )


def documents() -> Iterator[Any]:
    for document in DOCUMENTS:
        if document in NOT_PROGRAMS or not blocks(document):
            continue
        marks = [pytest.mark.slow] if document.name in SLOW else []
        yield pytest.param(document, id=document.name, marks=marks)


@pytest.mark.parametrize("document", documents())
def test_every_block_runs_and_shows_its_figures(document: Path) -> None:
    namespace: dict[str, Any] = {"__name__": "__main__"}
    for block in blocks(document):
        try:
            run(block, namespace)
        except Exception as error:
            raise AssertionError(
                f"{document.name}, block at line {block.line}: {type(error).__name__}: {error}"
            ) from error


def test_figures_are_read_and_checked() -> None:
    """The checker itself: a wrong figure fails, a right one to its digits passes."""
    block = Block(Path("doc.md"), 1, "1.5 * 2  # 3.0\n")
    run(block, {})
    with pytest.raises(AssertionError, match="the comment says 3.1"):
        run(Block(Path("doc.md"), 1, "1.5 * 2  # 3.1\n"), {})
    run(Block(Path("doc.md"), 1, "[911.39961]  # [911.3996...]\n"), {})
    with pytest.raises(AssertionError):
        run(Block(Path("doc.md"), 1, "[911.5]  # [911.3996...]\n"), {})
    run(Block(Path("doc.md"), 1, "print('n is negative: -1')  # n is negative...\n"), {})
    assert figure_of("f.graph, f.source  # the optimized graph") is None
    assert figure_of("x  # t = 1, 2: [20, 31]") == Figure("[20, 31]")
