"""The version of the toolwire distribution."""

__version__ = "0.1.0"
