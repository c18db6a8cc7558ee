"""RetrievalPolicy: validation of its settings and matching of private hosts."""

from __future__ import annotations

import pytest

from toolwire.net import DEFAULT_PORTS, RetrievalPolicy


def test_defaults() -> None:
    policy = RetrievalPolicy()
    assert policy.private_hosts == ()
    assert policy.allowed_ports == DEFAULT_PORTS == frozenset({80, 443, 8080, 8443})
    assert (policy.max_redirects, policy.max_bytes) == (5, 2 * 1024 * 1024)
    assert policy.user_agent.startswith("toolwire/")


@pytest.mark.parametrize(
    ("entry", "normalized"),
    [
        ("intranet.local", "intranet.local"),
        ("Intranet.Local.", "intranet.local"),
        ("127.0.0.1:8081", "127.0.0.1:8081"),
        ("[::1]:8080", "[::1]:8080"),
        ("::1", "[::1]"),
        ("0:0:0:0:0:0:0:1", "[::1]"),
        ("例え.jp", "xn--r8jz45g.jp"),
        (" localhost:3000 ", "localhost:3000"),
    ],
)
def test_private_host_entries_are_normalized(entry: str, normalized: str) -> None:
    assert RetrievalPolicy(private_hosts=[entry]).private_hosts == (normalized,)


def test_duplicate_entries_collapse() -> None:
    policy = RetrievalPolicy(private_hosts=["a.local", "A.LOCAL", "a.local."])
    assert policy.private_hosts == ("a.local",)


@pytest.mark.parametrize(
    "entry",
    [
        "",
        "http://intranet.local",
        "intranet.local/path",
        "user@intranet.local",
        "intranet.local:0",
        "intranet.local:",
        "intranet.local:99999",
        "intra net",
        "[fe80::1%25eth0]",
        "exam<ple",
        "a..b",
    ],
)
def test_bad_private_host_entries_are_refused_by_name(entry: str) -> None:
    with pytest.raises(ValueError, match="private_hosts entry") as caught:
        RetrievalPolicy(private_hosts=[entry])
    assert repr(entry) in str(caught.value)
    assert "host:port" in str(caught.value)


def test_private_hosts_must_be_a_list() -> None:
    with pytest.raises(TypeError, match="private_hosts must be a list"):
        RetrievalPolicy(private_hosts="intranet.local")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="is not a string"):
        RetrievalPolicy(private_hosts=[8080])  # type: ignore[list-item]


@pytest.mark.parametrize("ports", [[0], [65536], [-1], ["80"], [True]])
def test_bad_ports_are_refused(ports: list[object]) -> None:
    with pytest.raises(ValueError, match="allowed_ports entry"):
        RetrievalPolicy(allowed_ports=ports)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("max_redirects", -1),
        ("max_bytes", 0),
        ("timeout", 0),
        ("connect_timeout", -1.0),
        ("user_agent", "bad\r\nheader"),
    ],
)
def test_bad_limits_are_refused(field: str, value: object) -> None:
    with pytest.raises((ValueError, TypeError), match=field):
        RetrievalPolicy(**{field: value})  # type: ignore[arg-type]


def test_private_host_matching() -> None:
    policy = RetrievalPolicy(private_hosts=["intranet.local", "127.0.0.1:8081", "[::1]:9000"])
    assert policy.is_private_host("intranet.local", 80)
    assert policy.is_private_host("intranet.local.", 443)
    assert policy.is_private_host("127.0.0.1", 8081)
    assert not policy.is_private_host("127.0.0.1", 8082)
    assert not policy.is_private_host("localhost", 8081)
    assert policy.is_private_host("::1", 9000)
    assert policy.port_allowed("127.0.0.1", 8081)
    assert not policy.port_allowed("127.0.0.1", 8082)
    assert not policy.port_allowed("intranet.local", 22)


def test_policies_compare_by_value() -> None:
    assert RetrievalPolicy(private_hosts=["a.local"]) == RetrievalPolicy(private_hosts=["A.local"])
    assert RetrievalPolicy(max_bytes=10) != RetrievalPolicy()
