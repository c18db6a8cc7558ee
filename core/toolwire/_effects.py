"""The side-effect classes a tool declares (shared by the tool model and the config checks)."""

from __future__ import annotations

import enum


class SideEffect(enum.StrEnum):
    """What running a tool may change or reach in the world (a tool declares all that apply).

    ``read_only`` changes nothing; ``reads_files`` reads the local file system (alone with
    ``read_only`` the tool still counts as read-only). The others change something or reach
    something outside: files written, the network, destruction, money spent, a third-party
    service acting on the user's behalf, a payment, a process started (``shell``), packages
    installed.
    """

    READ_ONLY = "read_only"
    WRITES_FILES = "writes_files"
    NETWORK = "network"
    DESTRUCTIVE = "destructive"
    EXTERNAL_SPEND = "external_spend"
    READS_FILES = "reads_files"
    SHELL = "shell"
    INSTALLS_DEPENDENCIES = "installs_dependencies"
    EXTERNAL_SERVICE = "external_service"
    PAYMENT = "payment"


READ_ONLY_EFFECTS = frozenset({SideEffect.READ_ONLY, SideEffect.READS_FILES})
"""Effects that change nothing: a tool declaring only these (read_only among them) is read-only."""

RISK_ORDER = (
    SideEffect.PAYMENT,
    SideEffect.DESTRUCTIVE,
    SideEffect.SHELL,
    SideEffect.INSTALLS_DEPENDENCIES,
    SideEffect.EXTERNAL_SPEND,
    SideEffect.WRITES_FILES,
    SideEffect.EXTERNAL_SERVICE,
    SideEffect.NETWORK,
    SideEffect.READS_FILES,
    SideEffect.READ_ONLY,
)
"""Every side effect, gravest first: the order people see them in on a tool's card."""
