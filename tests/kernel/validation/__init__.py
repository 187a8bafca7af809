"""Tests of desched.validation: upstream tables as data, label parsing, version gating, robustness."""
