"""The on-disk cache of generated modules, and loading them.

Each graph's module lives in `<cache dir>/<digest[:2]>/<digest>/` (the cache dir is
`$FGRAPH_CACHE_DIR`, else `$XDG_CACHE_HOME/fgraph`, else `~/.cache/fgraph`), next to the
`__pycache__` where numba keeps its own compiled cache (`cache=True`); so does each
outlined kernel's module, under the digest of its text (`numba_backend.kernels`). The module text
is fully determined by the graph, so loading verifies the file byte for byte against
the expected source: a corrupt or half-written file is rewritten, never imported.
Files are written to a temporary name and renamed, so concurrent processes writing the
same entry never see a partial file; the one that renames last wins, with equal text.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path
from types import ModuleType


def cache_root() -> Path:
    configured = os.environ.get("FGRAPH_CACHE_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "fgraph"


def module_path(digest: str, module_name: str) -> Path:
    return cache_root() / digest[:2] / digest / f"{module_name}.py"


def load_module(digest: str, module_name: str, source: str) -> ModuleType:
    """Import the generated module for `digest`, (re)writing its file when it is missing
    or differs from `source`; drops numba's cache for it whenever the file is rewritten
    (a cache under `NUMBA_CACHE_DIR` is dropped by numba itself: its index records the
    module file's time stamp and size)."""
    loaded = sys.modules.get(module_name)
    if loaded is not None:
        return loaded
    path = module_path(digest, module_name)
    if _read(path) != source:
        shutil.rmtree(path.parent / "__pycache__", ignore_errors=True)
        _write_atomically(path, source)
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load generated module {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # a kernel's module compiles it as it runs: numba
    try:  # names its environment after the module, which must then be importable
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".py")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
