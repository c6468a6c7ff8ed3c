"""The Python table: tools, their strict schemas, the pipeline and replay."""
