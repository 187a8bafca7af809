"""Tests of linter.validation: upstream tables as data, label parsing, version gating, robustness."""
