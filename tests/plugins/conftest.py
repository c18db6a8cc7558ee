"""Fixtures every plugin's tests share."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from canned_provider import CannedProvider


@pytest.fixture
async def canned_provider() -> AsyncIterator[CannedProvider]:
    """A loopback provider host answering with the bodies a test sets (``CannedProvider``)."""
    async with CannedProvider() as provider:
        yield provider
