"""fgraph core: frozen, interned tensor graphs and the tools to inspect and run them."""

from fgraph.dot import render_dot, to_dot
from fgraph.dtypes import ALL_DTYPES, as_dtype, promote
from fgraph.errors import DTypeError, MissingInputError, ShapeError
from fgraph.evaluation import OpContractError, evaluate
from fgraph.graph import Graph
from fgraph.intern import intern_table_sizes
from fgraph.node import Apply, Output
from fgraph.op import HasInnerGraph, Op, inner_graphs_of
from fgraph.printing import dprint
from fgraph.traverse import rebuild, root_variables, toposort
from fgraph.types import TensorType, broadcast_shapes, format_shape, type_of_value
from fgraph.validate import InvalidGraphError, check_graph
from fgraph.variable import Constant, Input, Param, Variable, display_name

__all__ = [
    "ALL_DTYPES",
    "Apply",
    "Constant",
    "DTypeError",
    "Graph",
    "HasInnerGraph",
    "Input",
    "InvalidGraphError",
    "MissingInputError",
    "Op",
    "OpContractError",
    "Output",
    "Param",
    "ShapeError",
    "TensorType",
    "Variable",
    "as_dtype",
    "broadcast_shapes",
    "check_graph",
    "display_name",
    "dprint",
    "evaluate",
    "format_shape",
    "inner_graphs_of",
    "intern_table_sizes",
    "promote",
    "rebuild",
    "render_dot",
    "root_variables",
    "to_dot",
    "toposort",
    "type_of_value",
]
