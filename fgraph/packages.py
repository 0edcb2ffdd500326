"""A clear error when a user's module shadows one of fgraph's packages.

The four packages are top-level (`import ops as pt`), so a file named `ops.py` in the
user's working directory is found first; `import rewrite` then fails deep inside with
"'ops' is not a package". The packages that import others check first and say what
shadows what.
"""

from __future__ import annotations

import importlib


def require_package(name: str) -> None:
    """Raise ImportError naming the file when `name` resolves to a module that is not
    fgraph's package of that name."""
    module = importlib.import_module(name)
    if not hasattr(module, "__path__"):
        location = getattr(module, "__file__", None) or repr(module)
        raise ImportError(
            f"'{name}' resolves to {location}, a module that shadows fgraph's '{name}' "
            f"package (a local {name}.py?); rename that file or run from another directory"
        )
