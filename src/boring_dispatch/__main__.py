"""``python -m boring_dispatch``: the ``dispatcher`` command (isolated: see ``_entry``)."""

from boring_dispatch._entry import main

raise SystemExit(main())
