"""``python -m toolwire_webui``: the same as ``toolwire serve``."""

import sys

from ._server import serve_command

sys.exit(serve_command())
