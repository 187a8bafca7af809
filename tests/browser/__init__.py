"""Debian's Chromium and its WebDriver, installed by ``scripts/browser``, for the tests that load desched's pages."""
