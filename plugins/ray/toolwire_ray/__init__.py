"""toolwire-ray: ``toolwire batch --executor ray`` over a Ray cluster, and tools as Ray tasks.

Importing this package imports nothing of Ray; Ray is loaded when a batch starts on the
``ray`` executor or a remote tool is first called.
"""

from ._settings import RaySettings, RemoteResources

__all__ = ["RaySettings", "RemoteResources"]
