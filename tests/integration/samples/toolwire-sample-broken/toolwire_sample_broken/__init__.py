"""A sample plugin that fails to import."""

import os

_log = os.environ.get("TOOLWIRE_SAMPLE_IMPORT_LOG")
if _log:
    with open(_log, "a", encoding="utf-8") as fh:
        fh.write(__name__ + "\n")

raise ImportError("sample plugin cannot find its native library")
