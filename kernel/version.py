"""desched's own version: the one place it is written (the package metadata reads pyproject.toml's)."""

__version__ = "0.1.0"
