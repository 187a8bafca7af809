"""Tests of linter.migrate: upstream conversion tables, documented differences, and property tests."""
