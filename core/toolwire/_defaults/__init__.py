"""Built-in hook implementations, registered by every host with ``trylast`` so plugins can override them."""

DEFAULT_PLUGINS: tuple[str, ...] = (
    "toolwire._defaults.offer",
    "toolwire._defaults.execute",
    "toolwire._defaults.policy",
    "toolwire._defaults.trace",
    "toolwire._defaults.scripted",
    "toolwire._defaults.untrusted",
)
