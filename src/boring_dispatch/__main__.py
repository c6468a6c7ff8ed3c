"""``python -m boring_dispatch``: the ``dispatcher`` command."""

from boring_dispatch.surfaces.cli.main import main

raise SystemExit(main())
