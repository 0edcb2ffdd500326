"""Graph pictures: `to_dot(graph)` as Graphviz DOT text, `render_dot` to a file.

Variables are ellipses (inputs green, constants grey, outputs double-bordered), nodes
are boxes labelled with their op, edges run from a value to the node reading it. An op
with an inner graph (a loop, a fused composite, an `OpFromGraph`) gets its inner graph
drawn as a cluster next to it, nested as deep as the ops are, with an edge from the
node to its cluster. Names are positional (`n3`, `v3_0`), so the text depends only on
the graph's structure and the variables' display names: fit for golden tests.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fgraph.graph import Graph
from fgraph.op import inner_graphs_of
from fgraph.traverse import root_variables
from fgraph.variable import Constant, Input, Param, Variable, display_name


def to_dot(graph: Graph | Variable | Sequence[Variable], name: str = "fgraph") -> str:
    """The DOT text of `graph` (and of every inner graph, as nested clusters); a variable
    or a list of them stands for the graph from the inputs they depend on to them."""
    graph = as_graph(graph)
    lines = [f"digraph {_label(name)} {{", "  rankdir=TB;", "  compound=true;",
             "  node [fontname=Helvetica];"]
    counter = [0]
    _emit(graph, "", lines, counter, "  ", outer=True)
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_dot(
    graph: Graph | Variable | Sequence[Variable], path: str | Path, format: str = "svg"
) -> Path:
    """Write a picture of `graph` (`svg`, `png`, `pdf`, ...; or of variables, as
    `to_dot`) with the `graphviz` package (the `graphviz` extra) and Graphviz's `dot`
    program; returns the file written."""
    try:
        import graphviz
    except ImportError as error:
        raise ImportError(
            "render_dot needs the graphviz package: pip install 'fgraph[graphviz]' (and "
            "Graphviz's dot program); to_dot gives the DOT text without it"
        ) from error
    target = Path(path)
    source = graphviz.Source(to_dot(graph))
    written = source.render(outfile=str(target.with_suffix(f".{format}")), format=format,
                            cleanup=True)
    return Path(written)


def as_graph(value: Graph | Variable | Sequence[Variable]) -> Graph:
    """A graph as it is; variables as the graph from the inputs they depend on (in
    first-use order) to them. Anything else is a TypeError saying what is accepted."""
    if isinstance(value, Graph):
        return value
    if isinstance(value, Variable):
        outputs: tuple[object, ...] = (value,)
    elif isinstance(value, (list, tuple)):
        outputs = tuple(value)
    else:
        outputs = (value,)
    strays = [item for item in outputs if not isinstance(item, Variable)]
    if strays or not outputs:
        got = type(strays[0]).__name__ if strays else "an empty list"
        raise TypeError(f"to_dot draws a Graph, a variable or a list of variables, got {got}")
    variables = [item for item in outputs if isinstance(item, Variable)]
    inputs = [root for root in root_variables(variables) if isinstance(root, (Input, Param))]
    return Graph(inputs, variables)


def _emit(
    graph: Graph, prefix: str, lines: list[str], counter: list[int], indent: str, outer: bool
) -> None:
    ids: dict[Variable, str] = {}
    roots: list[Variable] = []

    def variable_id(variable: Variable) -> str:
        found = ids.get(variable)
        if found is None:
            found = ids[variable] = f"{prefix}r{len(roots)}"
            roots.append(variable)
            shape = "ellipse"
            style = ""
            if isinstance(variable, Constant):
                label = _label(_constant_label(variable))
                style = ", style=filled, fillcolor=lightgrey"
            else:
                label = _label(display_name(variable), str(variable.type))
                if outer and variable in graph.inputs:
                    style = ", style=filled, fillcolor=palegreen"
            lines.append(f"{indent}{found} [label={label}, shape={shape}{style}];")
        return found

    for variable in graph.inputs:
        variable_id(variable)
    for number, node in enumerate(graph.nodes):
        node_id = f"{prefix}n{number}"
        lines.append(f"{indent}{node_id} [label={_label(str(node.op))}, shape=box];")
        for position, variable in enumerate(node.inputs):
            source = variable_id(variable) if variable.owner is None else ids[variable]
            label = f" [label={position}]" if len(node.inputs) > 1 else ""
            lines.append(f"{indent}{source} -> {node_id}{label};")
        for output in node.outputs:
            output_id = ids[output] = f"{prefix}v{number}_{output.index}"
            shape = "doublecircle" if output in graph.outputs else "ellipse"
            lines.append(
                f"{indent}{output_id} [label={_label(str(output.type))}, shape={shape}];"
            )
            lines.append(f"{indent}{node_id} -> {output_id};")
        for inner in inner_graphs_of(node.op):
            counter[0] += 1
            cluster = f"cluster_{counter[0]}"
            inner_prefix = f"{prefix}c{counter[0]}_"
            lines.append(f"{indent}subgraph {cluster} {{")
            lines.append(f"{indent}  label={_label(f'{node.op} body')};")
            lines.append(f"{indent}  style=rounded;")
            _emit(inner, inner_prefix, lines, counter, indent + "  ", outer=False)
            lines.append(f"{indent}}}")
            anchor = f"{inner_prefix}n0" if inner.nodes else f"{inner_prefix}r0"
            lines.append(f"{indent}{node_id} -> {anchor} [style=dashed, lhead={cluster}];")
    for variable in graph.outputs:
        if variable.owner is None:
            variable_id(variable)


def _constant_label(constant: Constant) -> str:
    data = constant.data
    text = str(data.item()) if data.size == 1 else f"{data.dtype}{data.shape}"
    return text if len(text) <= 24 else text[:21] + "..."


def _label(*lines: str) -> str:
    """A quoted DOT string of `lines` (backslashes and quotes escaped, lines joined by
    DOT's line break)."""
    escaped = (line.replace("\\", "\\\\").replace('"', '\\"') for line in lines)
    return '"' + "\\n".join(escaped) + '"'
