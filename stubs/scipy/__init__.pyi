# The parts of SciPy that fgraph uses.
