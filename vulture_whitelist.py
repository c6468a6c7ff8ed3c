# Names vulture reports that are used by a protocol, not by our code (read by `make lint` only).
exc_type  # the context-manager protocol's __exit__ signature (observe/audit.py)
exc_val  # the async context-manager protocol's __aexit__ (surfaces/mcp/_transport.py)
exc_tb  # same
allow_partial  # pydantic_ai's SchemaValidatorProt (integrations/pydantic_ai.py)
