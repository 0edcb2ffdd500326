"""rewrite package (being built)."""
