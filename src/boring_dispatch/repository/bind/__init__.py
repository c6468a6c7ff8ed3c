"""The bind stage: a request's argv and stdin checked against the declared process binding."""
