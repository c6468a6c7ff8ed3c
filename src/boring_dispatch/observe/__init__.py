"""observe subpackage."""
