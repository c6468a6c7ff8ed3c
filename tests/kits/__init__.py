"""Builders and strategies shared by the test suites (not tests themselves)."""
