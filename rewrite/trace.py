"""`Trace`: an opt-in recorder of what a rewrite did, for debugging and tests.

Pass one to `rewrite_graph(..., trace=trace)`; each rule application appends a
`RuleFired`, and in non-strict mode each failing rule appends a `RuleFailed` (so a skipped
rule is never silent). The entries themselves are frozen values.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from fgraph import Apply, Op, Variable


@attrs.frozen
class RuleFired:
    """`rule` rewrote a node of `op`: its outputs `replaced` now stand as `replacement`."""

    rule: str
    op: Op
    replaced: tuple[Variable, ...]
    replacement: tuple[Variable, ...]


@attrs.frozen(eq=False)
class RuleFailed:
    """`rule` raised (or returned an invalid replacement) on `node`; it was skipped."""

    rule: str
    op: Op
    node: Apply
    error: Exception


TraceEntry = RuleFired | RuleFailed


class Trace:
    """An append-only list of `RuleFired` / `RuleFailed` entries, in the order they happened."""

    __slots__ = ("entries",)

    def __init__(self) -> None:
        self.entries: list[TraceEntry] = []

    def record(self, entry: TraceEntry) -> None:
        self.entries.append(entry)

    @property
    def fired(self) -> tuple[RuleFired, ...]:
        return tuple(entry for entry in self.entries if isinstance(entry, RuleFired))

    @property
    def failed(self) -> tuple[RuleFailed, ...]:
        return tuple(entry for entry in self.entries if isinstance(entry, RuleFailed))

    @property
    def rule_names(self) -> tuple[str, ...]:
        """Names of the rules that fired, in order (with repeats)."""
        return tuple(entry.rule for entry in self.fired)

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[TraceEntry]:
        return iter(self.entries)

    def __repr__(self) -> str:
        return f"Trace(fired={len(self.fired)}, failed={len(self.failed)})"
