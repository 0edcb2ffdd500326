"""Creating graph inputs: `scalar`, `vector`, `matrix`, `tensor` (float64 by default)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy.typing as npt

from fgraph import Input, ShapeError, TensorType


def tensor(
    name: str | None = None, *, dtype: npt.DTypeLike = "float64", shape: Sequence[int | None]
) -> Input:
    """An input of any rank; `shape` entries are lengths or None (unknown)."""
    return Input(TensorType(dtype, tuple(shape)), name)


def scalar(name: str | None = None, dtype: npt.DTypeLike = "float64") -> Input:
    """A 0-d input (float64 unless `dtype` is given)."""
    return tensor(name, dtype=dtype, shape=())


def vector(
    name: str | None = None, dtype: npt.DTypeLike = "float64", shape: Sequence[int | None] = (None,)
) -> Input:
    """A 1-d input; its length is unknown unless `shape` gives it."""
    return tensor(name, dtype=dtype, shape=_of_rank(name, shape, 1))


def matrix(
    name: str | None = None,
    dtype: npt.DTypeLike = "float64",
    shape: Sequence[int | None] = (None, None),
) -> Input:
    """A 2-d input; its lengths are unknown unless `shape` gives them."""
    return tensor(name, dtype=dtype, shape=_of_rank(name, shape, 2))


def _of_rank(name: str | None, shape: Sequence[int | None], rank: int) -> tuple[int | None, ...]:
    if len(shape) != rank:
        raise ShapeError(
            f"{name}: a rank-{rank} input needs a shape of length {rank}, got {tuple(shape)}"
        )
    return tuple(shape)


def tensor3(name: str | None = None, dtype: npt.DTypeLike = "float64") -> Input:
    """A 3-d input of unknown lengths."""
    return tensor(name, dtype=dtype, shape=(None, None, None))


def tensor4(name: str | None = None, dtype: npt.DTypeLike = "float64") -> Input:
    """A 4-d input of unknown lengths."""
    return tensor(name, dtype=dtype, shape=(None, None, None, None))


def iscalar(name: str | None = None) -> Input:
    """An int32 scalar input (PyTensor's name)."""
    return scalar(name, dtype="int32")


def ivector(name: str | None = None) -> Input:
    """An int32 vector input (PyTensor's name)."""
    return vector(name, dtype="int32")


def imatrix(name: str | None = None) -> Input:
    """An int32 matrix input (PyTensor's name)."""
    return matrix(name, dtype="int32")


def dvector(name: str | None = None) -> Input:
    """A float64 vector input (PyTensor's name)."""
    return vector(name, dtype="float64")


def dmatrix(name: str | None = None) -> Input:
    """A float64 matrix input (PyTensor's name)."""
    return matrix(name, dtype="float64")


def fvector(name: str | None = None) -> Input:
    """A float32 vector input (PyTensor's name)."""
    return vector(name, dtype="float32")


def fmatrix(name: str | None = None) -> Input:
    """A float32 matrix input (PyTensor's name)."""
    return matrix(name, dtype="float32")
