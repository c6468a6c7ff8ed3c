"""The ``dispatcher`` command line."""
