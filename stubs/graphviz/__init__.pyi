# The part of the graphviz package fgraph.dot uses.

class Source:
    def __init__(self, source: str) -> None: ...
    def render(
        self,
        filename: str | None = ...,
        directory: str | None = ...,
        view: bool = ...,
        cleanup: bool = ...,
        format: str | None = ...,
        outfile: str | None = ...,
    ) -> str: ...

__version__: str
