"""process subpackage."""
