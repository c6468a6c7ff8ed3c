"""The built-in setup manager, module ``setup-interface-manager._rtx``.

:mod:`.options` checks each route's options, :mod:`.routes` is the one table
of routes (:class:`~.routes.SetupManager`), :mod:`.steps` runs a Python step
under its lease, :mod:`.lifecycle` holds the repository-wide routes
(teardown, teardown-all, invalidate). MCP (``invoke_security_2``), the
``dispatcher setup`` command and the Python API all call
:meth:`~.routes.SetupManager.call`.
"""
