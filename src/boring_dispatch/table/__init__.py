"""table subpackage."""
