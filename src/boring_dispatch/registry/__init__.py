"""The Python table: tools, their strict schemas, the pipeline, replay (see docs/architecture.md)."""
