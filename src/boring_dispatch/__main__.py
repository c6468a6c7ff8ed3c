"""``python -m boring_dispatch``: the ``dispatcher`` command.

``python -m`` puts the working directory first on ``sys.path``; it is taken
off again before anything else is imported, so that a checkout's
``pydantic/``, ``yaml/`` or ``json.py`` cannot shadow a dependency (a
``--registry`` module there is still found: see :mod:`boring_dispatch._spec`).
What Python itself imported before this line cannot be helped: prefer the
installed ``dispatcher`` script, or ``python -P -m boring_dispatch``.
"""

import os
import sys

# os.getcwd(), not pathlib: nothing may be imported while the working directory is first.
if not sys.flags.safe_path and sys.path and sys.path[0] in ("", os.getcwd()):  # noqa: PTH109
    del sys.path[0]

from boring_dispatch.surfaces.cli import main

raise SystemExit(main())
