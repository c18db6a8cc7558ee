"""``python -m toolwire``: the same command line as the ``toolwire`` script."""

from ._cli import main

raise SystemExit(main())
