"""``python -m toolwire``: the same command line as the ``toolwire`` script."""

from .cli import main

raise SystemExit(main())
