"""Tests of desched.migrate: upstream conversion tables, documented differences, and property tests."""
