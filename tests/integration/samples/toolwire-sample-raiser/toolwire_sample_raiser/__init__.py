"""A sample plugin whose toolwire_tools hook raises."""

import toolwire


@toolwire.hookimpl
def toolwire_tools(settings):
    raise RuntimeError("sample plugin cannot build its tools")
