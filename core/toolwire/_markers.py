"""The pluggy markers of toolwire: ``hookspec`` for the core, ``hookimpl`` for plugins."""

import pluggy

PROJECT_NAME = "toolwire"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
"""Marks a plugin's function as the implementation of the toolwire hook of the same name."""
