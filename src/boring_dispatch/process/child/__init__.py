"""The child side of a launch: the runner, the confined importer, the gateway API."""
