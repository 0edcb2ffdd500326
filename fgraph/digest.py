"""Stable digests: sha256 over a canonical serialization of a graph.

The digest names a graph across processes and hash seeds (it keys the compile cache),
so it never uses `hash()`, `id()` or set order: ops are encoded from their class's
qualified name and their fields, variables by their position in the toposort,
inputs by their index (so the digest, like graph equality, ignores input names).
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Hashable

import attrs
import numpy as np

from fgraph.graph import Graph
from fgraph.intern import exact_key
from fgraph.types import TensorType
from fgraph.variable import Constant, Variable

FORMAT_VERSION = b"fgraph-digest-1"


def encode_value(value: object, *, constant_values: bool = True) -> bytes:
    """A canonical byte encoding of an op parameter (raises TypeError for unknown kinds).

    With `constant_values=False`, inner graphs are encoded by their structure digest (see
    `graph_digest`).
    """

    def encode(item: object) -> bytes:
        return encode_value(item, constant_values=constant_values)

    match value:
        case None:
            return b"N"
        case bool():
            return b"T" if value else b"F"
        case int():
            return b"i%d;" % value
        case float():
            return b"f" + value.hex().encode() + b";"
        case complex():
            return b"z" + value.real.hex().encode() + b"," + value.imag.hex().encode() + b";"
        case str():
            data = value.encode()
            return b"s%d:" % len(data) + data
        case bytes():
            return b"b%d:" % len(value) + value
        case tuple() | list():
            return b"(" + b"".join(encode(item) for item in value) + b")"
        case frozenset():
            return b"{" + b"".join(sorted(encode(item) for item in value)) + b"}"
        case enum.Enum():
            return b"e" + _class_name(value) + b"." + value.name.encode() + b";"
        case np.ndarray() | np.generic():
            # Not `np.ascontiguousarray`: it turns a 0-d array into shape (1,), which made a
            # scalar constant digest like a length-1 vector. `tobytes` is C-ordered anyway.
            array = np.asarray(value)
            header = b"a" + encode((array.dtype.name, tuple(array.shape)))
            return header + encode(array.tobytes())
        case TensorType():
            return b"t" + encode((value.dtype, value.shape))
        case Graph():
            digest = value.digest if constant_values else value.structure_digest
            return b"G" + digest.encode() + b";"
        case _ if attrs.has(type(value)):
            fields: tuple[attrs.Attribute[object], ...] = getattr(type(value), "__attrs_attrs__")
            body = b"".join(
                encode(field.name) + encode(getattr(value, field.name)) for field in fields
            )
            return b"A" + _class_name(value) + b"[" + body + b"]"
        case _ if callable(value) and hasattr(value, "__qualname__"):
            # A function parameter (op_from_graph's pullback override) is named by where it
            # is defined. Two lambdas of one scope share a name; that is harmless because
            # such functions only build derivative graphs, never what the op computes.
            name = f"{getattr(value, '__module__', None)}.{getattr(value, '__qualname__')}"
            return b"c" + encode(name)
    raise TypeError(
        f"cannot digest a parameter of type {type(value).__qualname__} ({value!r}); "
        "op fields must be plain values, tuples, enums, arrays, types, graphs or attrs classes"
    )


def _class_name(value: object) -> bytes:
    cls = type(value)
    return f"{cls.__module__}.{cls.__qualname__}".encode()


def graph_digest(graph: Graph, *, constant_values: bool = True) -> str:
    """The sha256 hex digest of `graph`'s canonical serialization.

    With `constant_values=False` constants count by dtype and shape only: the *structure*
    digest, which names compiled code (constants are passed to it as arguments).
    """
    hasher = hashlib.sha256(FORMAT_VERSION + (b"" if constant_values else b"-structure"))
    hasher.update(encode_value((graph.dedup_nodes, tuple(v.type for v in graph.inputs))))
    references: dict[Variable, bytes] = {variable: b"i%d;" % i for i, variable in enumerate(graph.inputs)}
    op_encodings: dict[Hashable, bytes] = {}  # keyed exactly: Scale(-0.0) is not Scale(0.0)
    constants = 0

    def reference(variable: Variable) -> bytes:
        nonlocal constants
        found = references.get(variable)
        if found is None:
            if not isinstance(variable, Constant):
                raise ValueError(f"{variable!r} is not computed by the graph being digested")
            data = variable.data
            hasher.update(
                b"C"
                + (
                    encode_value(data)
                    if constant_values
                    else encode_value((data.dtype.name, tuple(data.shape)))
                )
            )
            found = references[variable] = b"c%d;" % constants
            constants += 1
        return found

    for number, node in enumerate(graph.nodes):
        op_key = exact_key(node.op)
        encoded_op = op_encodings.get(op_key)
        if encoded_op is None:
            encoded_op = encode_value(node.op, constant_values=constant_values)
            op_encodings[op_key] = encoded_op
        input_references = b"".join(reference(input_) for input_ in node.inputs)
        hasher.update(b"n%d;" % node.position + encoded_op + b"(" + input_references + b")")
        for output in node.outputs:
            references[output] = b"o%d,%d;" % (number, output.index)
    hasher.update(b"->" + b"".join(reference(output) for output in graph.outputs))
    return hasher.hexdigest()
