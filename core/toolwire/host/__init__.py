"""The host: plugin discovery and loading, the registry of tools and adapters, running the loop."""
