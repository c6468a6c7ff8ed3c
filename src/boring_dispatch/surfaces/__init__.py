"""surfaces subpackage."""
