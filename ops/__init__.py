"""ops package (being built)."""
