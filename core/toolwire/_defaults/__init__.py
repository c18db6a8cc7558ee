"""Built-in hook implementations; every host registers them ``trylast`` so plugins override them."""

DEFAULT_PLUGINS: tuple[str, ...] = (
    "toolwire._defaults.offer",
    "toolwire._defaults.execute",
    "toolwire._defaults.policy",
    "toolwire._defaults.trace",
    "toolwire._defaults.scripted",
    "toolwire._defaults.untrusted",
)
