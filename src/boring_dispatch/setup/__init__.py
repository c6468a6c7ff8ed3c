"""Managed setup preflight: classification, the sparse closure, the ledger and the gate.

A layer of its own, directly above the tables (it reads blueprints through
``repository.load`` and runs setup steps through ``Repository``). The
repository pipeline never imports it at module level: it calls the gate
through the :class:`~boring_dispatch.repository.gate.SetupGate` protocol, and
``Repository`` builds the default gate lazily, on a live call only
(``docs/setup.md``). Nothing here is imported by a dry run or ``describe``.
"""
