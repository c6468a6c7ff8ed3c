"""The MCP server: the three tier tools over a repository, or a Python table's own tools."""
