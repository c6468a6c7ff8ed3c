"""The setup ledger: durable setups, flows and an append-only event log.

:mod:`.store` is the one interface (a :class:`~.store.Ledger` with one
transaction per operation); :mod:`.sqlite` and :mod:`.postgres` are its two
backends, :mod:`._schema` their one versioned schema, :mod:`.paths` where
the embedded file lives. Only the setup manager and the gate use it.
"""
