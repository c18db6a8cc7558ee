"""The ``ray`` plugin without a cluster: settings, registration, and no Ray import until used."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from toolwire import Host
from toolwire.batch._executor import executor_classes
from toolwire.config import ConfigError, config_from_dict


def _host(tmp_path: Path, ray: dict[str, object]) -> Host:
    return Host.load(
        config_from_dict(
            {
                "plugins": {"enable": ["ray"]},
                "tools": {"ray": ray},
                "ledger": {"path": str(tmp_path / "ledger.sqlite3")},
            }
        )
    )


def test_the_ray_executor_is_registered(tmp_path: Path) -> None:
    host = _host(tmp_path, {})
    assert sorted(executor_classes(host)) == ["local", "ray"]
    settings = host.plugin_settings("ray")
    assert (settings.address, settings.workers, settings.max_attempts) == (None, None, 3)


@pytest.mark.parametrize(
    ("ray", "message"),
    [
        ({"workers": 0}, "workers = 0: expected a number of at least 1"),
        ({"remote": {"calc": {"num_cpus": -1}}}, "num_cpus = -1"),
        ({"remote": {"calc": {"cpus": 2}}}, "cpus"),
        ({"adress": "auto"}, "adress"),
    ],
)
def test_bad_settings_are_refused_when_the_host_loads_naming_the_key(
    tmp_path: Path, ray: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        _host(tmp_path, ray)
    assert message in str(refused.value)
    assert "$.tools.ray" in str(refused.value)


def test_a_remote_tool_that_does_not_exist_is_named(tmp_path: Path) -> None:
    host = _host(tmp_path, {"remote": {"nope": {"num_cpus": 1}}})
    info = host.plugin_info("ray")
    assert info is not None
    assert info.error is not None
    assert "[tools.ray] remote names unknown tool(s) 'nope'" in info.error


def test_enabling_the_plugin_does_not_import_ray(tmp_path: Path) -> None:
    code = (
        "import sys; from toolwire import Host; from toolwire.config import config_from_dict; "
        "h = Host.load(config_from_dict({'plugins': {'enable': ['ray']}})); h.tools; "
        "from toolwire.batch._executor import executor_classes; executor_classes(h); "
        "print('ray' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_an_address_where_nothing_answers_stops_the_batch_at_once(tmp_path: Path) -> None:
    config = tmp_path / "toolwire.toml"
    config.write_text(
        '[plugins]\nenable = ["ray"]\n[provider]\nadapter = "scripted"\n'
        f'[ledger]\npath = "{tmp_path / "ledger.sqlite3"}"\n',
        encoding="utf-8",
    )
    (tmp_path / "in.jsonl").write_text('{"id": "a", "prompt": "p"}\n', encoding="utf-8")
    jobs, out = str(tmp_path / "in.jsonl"), str(tmp_path / "out.jsonl")
    command = [sys.executable, "-m", "toolwire", "--config", str(config), "batch", jobs]
    for address, message in [
        ("127.0.0.1:1", "cannot join the Ray cluster at '127.0.0.1:1'"),
        ("somewhere", "expected 'auto', 'host:port' or 'ray://host:port'"),
    ]:
        done = subprocess.run(
            [*command, "--out", out, "--executor", "ray", "--address", address],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2
        assert message in done.stderr
    assert (tmp_path / "out.jsonl").read_text() == ""
