"""``python -m toolwire_sources index``."""

from ._cli import main

main()
