"""blueprints subpackage."""
