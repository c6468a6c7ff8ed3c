"""``python -m boring_dispatch``: the ``dispatcher`` command."""

from boring_dispatch.surfaces.cli import main

raise SystemExit(main())
