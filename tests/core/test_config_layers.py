"""Config layers: the system, user and project files merged, locked keys, ``config show``."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from toolwire import Host
from toolwire.cli import main
from toolwire.config import ConfigError, load_config
from toolwire.config._show import effective_settings


@pytest.fixture
def layers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Paths of the three layers (none written yet); the project file is ./toolwire.toml."""
    system = tmp_path / "etc" / "toolwire.toml"
    system.parent.mkdir()
    monkeypatch.setenv("TOOLWIRE_SYSTEM_CONFIG", str(system))
    xdg = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    user = xdg / "toolwire" / "toolwire.toml"
    user.parent.mkdir(parents=True)
    project_dir = tmp_path / "project"
    project_dir.mkdir()
    monkeypatch.chdir(project_dir)
    system.write_text("", encoding="utf-8")
    return {"system": system, "user": user, "project": project_dir / "toolwire.toml"}


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_layers_merge_table_by_table_in_order(layers: dict[str, Path]) -> None:
    write(
        layers["system"], '[loop]\nmax_rounds = 3\nconcurrency = 2\n[policy]\ndeny = ["network"]\n'
    )
    write(layers["user"], "[loop]\nmax_rounds = 5\n[provider]\nmodel = 'user-model'\n")
    write(layers["project"], '[loop]\nmax_rounds = 7\n[policy]\ndeny = ["destructive"]\n')
    config = load_config()
    assert config.loop.max_rounds == 7  # the project file wins
    assert config.loop.concurrency == 2  # the system file's key is kept: tables merge
    assert config.provider.model == "user-model"
    assert config.policy.deny == ("destructive",)  # a list replaces, never appends
    assert config.layers == tuple(str(layers[k]) for k in ("system", "user", "project"))
    assert config.origin_of("$.loop.max_rounds") == str(layers["project"])
    assert config.origin_of("$.loop.concurrency") == str(layers["system"])
    assert config.origin_of("$.provider.model") == str(layers["user"])
    assert config.source == str(layers["project"])


def test_the_user_file_defaults_to_dot_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    user = tmp_path / ".config" / "toolwire" / "toolwire.toml"
    user.parent.mkdir(parents=True)
    write(user, "[loop]\nmax_rounds = 4\n")
    config = load_config()
    assert config.loop.max_rounds == 4
    assert config.source == str(user)


def test_a_missing_named_system_file_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLWIRE_SYSTEM_CONFIG", "/nonexistent/toolwire.toml")
    with pytest.raises(ConfigError, match=r"TOOLWIRE_SYSTEM_CONFIG\) does not exist"):
        load_config()


def test_explicit_config_is_the_project_layer(layers: dict[str, Path], tmp_path: Path) -> None:
    write(layers["system"], "[loop]\nconcurrency = 3\n")
    explicit = write(tmp_path / "other.toml", "[loop]\nmax_rounds = 9\n")
    config = load_config(explicit)
    assert (config.loop.max_rounds, config.loop.concurrency) == (9, 3)
    assert load_config(None, search=False).loop.concurrency == 1  # no file at all


def test_a_locked_key_set_later_is_refused_naming_both_files(layers: dict[str, Path]) -> None:
    write(
        layers["system"],
        '[locked]\nkeys = ["policy.deny", "provider.trust"]\n[policy]\ndeny = ["network"]\n',
    )
    write(layers["user"], "[loop]\nmax_rounds = 5\n")
    write(layers["project"], "[policy]\ndeny = []\nstrict = true\n")
    with pytest.raises(ConfigError) as caught:
        load_config()
    message = str(caught.value)
    assert "policy.deny" in message
    assert f"locked by {layers['system']}" in message
    assert message.startswith(f"{layers['project']}: $.policy.deny")
    assert caught.value.file == str(layers["project"])


def test_a_locked_table_covers_every_key_in_it(layers: dict[str, Path]) -> None:
    write(layers["system"], '[locked]\nkeys = ["provider"]\n')
    write(layers["user"], "[provider]\nmodel = 'mine'\n")
    with pytest.raises(ConfigError, match=r"\$\.provider\.model: the key provider is locked by"):
        load_config()


def test_locked_keys_not_set_later_load_and_show(layers: dict[str, Path]) -> None:
    write(layers["system"], '[locked]\nkeys = ["provider.trust"]\n[provider]\ntrust = "low"\n')
    write(layers["project"], "[provider]\nmodel = 'm'\n")
    config = load_config()
    assert config.provider.trust == "low"
    assert config.locked == {"$.provider.trust": str(layers["system"])}


def test_only_the_system_file_may_lock(layers: dict[str, Path]) -> None:
    write(layers["project"], '[locked]\nkeys = ["loop.max_rounds"]\n')
    with pytest.raises(ConfigError, match=r"only the system files .* may lock keys"):
        load_config()


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ('keys = "policy.deny"', r"\$\.locked\.keys = 'policy\.deny': expected a list"),
        ('keys = ["nosuch.key"]', r"\$\.locked\.keys\[0\] = 'nosuch\.key': expected a key path"),
        ("other = 1", r"\$\.locked = .*: expected a table \[locked\] with one key"),
    ],
)
def test_bad_locked_tables_are_explained(
    layers: dict[str, Path], table: str, expected: str
) -> None:
    write(layers["system"], f"[locked]\n{table}\n")
    with pytest.raises(ConfigError, match=expected):
        load_config()


def test_errors_name_the_file_the_bad_value_came_from(layers: dict[str, Path]) -> None:
    write(layers["system"], "[loop]\nmax_rounds = 3\n")
    write(layers["user"], "[loop]\nconcurrency = 0\n")
    write(layers["project"], "[provider]\nmodel = 'm'\n")
    with pytest.raises(ConfigError) as caught:
        load_config()
    assert str(caught.value).startswith(f"{layers['user']}: $.loop.concurrency = 0")
    assert caught.value.file == str(layers["user"])


def test_structuring_errors_of_two_files_name_each_file(layers: dict[str, Path]) -> None:
    write(layers["user"], "[loop]\nmax_rounds = 'many'\n")
    write(layers["project"], "[loop]\nconcurency = 2\n")
    with pytest.raises(ConfigError) as caught:
        load_config()
    lines = str(caught.value).splitlines()
    assert any(line.startswith(f"{layers['user']}: $.loop.max_rounds = 'many'") for line in lines)
    assert any(line.startswith(f"{layers['project']}: $.loop.concurency") for line in lines)


def test_toml_errors_name_their_layer(layers: dict[str, Path]) -> None:
    write(layers["user"], "[loop\n")
    write(layers["project"], "[loop]\nmax_rounds = 2\n")
    with pytest.raises(ConfigError, match=rf"^{layers['user']}"):
        load_config()


def test_plugin_settings_errors_name_their_file(layers: dict[str, Path]) -> None:
    write(layers["user"], '[plugins]\nenable = ["web"]\n[tools.web]\nmax_bytes = "ten"\n')
    write(layers["project"], "[loop]\nmax_rounds = 2\n")
    with pytest.raises(ConfigError) as caught:
        Host.load()
    assert str(caught.value).startswith(f"{layers['user']}: $.tools.web.")


def test_unknown_plugin_error_names_the_file_that_enabled_it(layers: dict[str, Path]) -> None:
    write(layers["system"], '[plugins]\nenable = ["no-such-plugin"]\n')
    write(layers["project"], "[loop]\nmax_rounds = 2\n")
    with pytest.raises(ConfigError) as caught:
        Host.load()
    assert str(caught.value).startswith(f"{layers['system']}: $.plugins.enable[0]")
    assert caught.value.file == str(layers["system"])


def test_toolwire_plugins_is_the_last_word_unless_locked(
    layers: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    write(layers["project"], '[plugins]\nenable = ["web"]\n')
    monkeypatch.setenv("TOOLWIRE_PLUGINS", "")
    assert load_config().plugins.enable == ()
    write(layers["system"], '[locked]\nkeys = ["plugins.enable"]\n[plugins]\nenable = []\n')
    layers["project"].unlink()
    with pytest.raises(ConfigError) as caught:
        load_config()
    assert "$TOOLWIRE_PLUGINS" in str(caught.value)
    assert f"locked by {layers['system']}" in str(caught.value)
    monkeypatch.delenv("TOOLWIRE_PLUGINS")
    assert load_config().plugins.enable == ()


def test_effective_settings_say_where_each_value_came_from(
    layers: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    write(layers["system"], "[loop]\nmax_rounds = 3\n[tools.web]\nmax_bytes = 4096\n")
    write(layers["project"], "[provider]\nmodel = 'm'\n[provider.options]\nseed = 1\n")
    monkeypatch.setenv("TOOLWIRE_PLUGINS", "web")
    found = {key: (value, where) for key, value, where in effective_settings(load_config())}
    assert found["loop.max_rounds"] == (3, str(layers["system"]))
    assert found["loop.concurrency"] == (1, "default")
    assert found["provider.model"] == ("m", str(layers["project"]))
    assert found["provider.options.seed"] == (1, str(layers["project"]))
    assert found["tools.web.max_bytes"] == (4096, str(layers["system"]))
    assert found["plugins.enable"] == (["web"], "$TOOLWIRE_PLUGINS")


def test_config_show_prints_values_and_origins(layers: dict[str, Path]) -> None:
    write(layers["system"], '[locked]\nkeys = ["policy.deny"]\n[policy]\ndeny = ["network"]\n')
    write(layers["user"], "[loop]\nmax_rounds = 6\n")
    out = io.StringIO()
    import contextlib

    with contextlib.redirect_stdout(out):
        assert main(["config", "show"]) == 0
    text = out.getvalue()
    assert f'policy.deny = ["network"]  # {layers["system"]}' in text
    assert f"loop.max_rounds = 6  # {layers['user']}" in text
    assert "loop.concurrency = 1  # default" in text
    assert f"# locked: policy.deny (by {layers['system']})" in text
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["config", "show", "--json"]) == 0
    data = json.loads(out.getvalue())
    assert data["layers"] == [str(layers["system"]), str(layers["user"])]
    assert data["locked"] == {"policy.deny": str(layers["system"])}
    entry = next(s for s in data["settings"] if s["key"] == "loop.max_rounds")
    assert entry == {"key": "loop.max_rounds", "value": 6, "source": str(layers["user"])}


def test_config_show_reports_a_locked_override(
    layers: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    write(layers["system"], '[locked]\nkeys = ["loop.max_rounds"]\n')
    write(layers["project"], "[loop]\nmax_rounds = 6\n")
    assert main(["config", "show"]) == 2
    assert "locked by" in capsys.readouterr().err


def test_config_show_redacts_export_headers_and_credentials_in_urls(
    layers: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        layers["project"],
        "[provider]\n"
        'base_url = "https://alice:hunter2-pw@llm.example/v1"\n'
        'api_key_env = "OPENAI_API_KEY"\n'
        "[tools.otel]\n"
        'endpoint = "https://ghp_tokenvalue@collector.example:4318/?api_key=k3y-value&region=eu"\n'
        'headers = { Authorization = "Bearer sk-secret-value", x-honeycomb-team = "hc-value" }\n'
        "[tools.mcp.servers.gh]\n"
        'command = "gh-mcp"\n'
        'env = { GITHUB_TOKEN = "ghp_envvalue", LOG_LEVEL = "debug" }\n',
    )
    assert main(["config", "show"]) == 0
    text = capsys.readouterr().out
    assert main(["config", "show", "--json"]) == 0
    shown = capsys.readouterr().out
    for secret in (
        "hunter2-pw",
        "ghp_tokenvalue",
        "k3y-value",
        "sk-secret-value",
        "hc-value",
        "ghp_envvalue",
    ):
        assert secret not in text
        assert secret not in shown
    assert 'provider.base_url = "https://alice:***@llm.example/v1"' in text
    assert 'tools.otel.headers.Authorization = "[redacted]"' in text
    assert "https://***@collector.example:4318/?api_key=***&region=eu" in text
    assert 'provider.api_key_env = "OPENAI_API_KEY"' in text  # a variable's name, not its value
    assert 'tools.mcp.servers.gh.env.LOG_LEVEL = "debug"' in text
    values = {s["key"]: s["value"] for s in json.loads(shown)["settings"]}
    assert values["tools.otel.headers.x-honeycomb-team"] == "[redacted]"
    assert values["tools.mcp.servers.gh.env.GITHUB_TOKEN"] == "[redacted]"


@pytest.fixture
def machine_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The machine's own system file (``/etc/toolwire/toolwire.toml``), here in a temp dir."""
    path = tmp_path / "machine-etc" / "toolwire.toml"
    path.parent.mkdir()
    monkeypatch.setattr("toolwire.config._layers.SYSTEM_CONFIG_FILE", path)
    return path


MACHINE_LOCKS = '[locked]\nkeys = ["policy.deny"]\n[policy]\ndeny = ["network"]\n'


@pytest.mark.parametrize("variable", ["", "empty file"])
def test_the_variable_cannot_take_the_machines_locks_away(
    layers: dict[str, Path], machine_file: Path, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    write(machine_file, MACHINE_LOCKS)
    if not variable:
        monkeypatch.setenv("TOOLWIRE_SYSTEM_CONFIG", "")  # no other system file
    # else: the variable names the fixture's empty system file
    write(layers["project"], "[policy]\ndeny = []\n")
    with pytest.raises(ConfigError) as caught:
        load_config()
    assert f"the key policy.deny is locked by {machine_file}" in str(caught.value)
    layers["project"].unlink()
    config = load_config()
    assert config.policy.deny == ("network",)
    assert config.locked == {"$.policy.deny": str(machine_file)}


def test_the_named_file_may_not_set_a_key_the_machine_locks(
    layers: dict[str, Path], machine_file: Path
) -> None:
    write(machine_file, MACHINE_LOCKS)
    write(layers["system"], '[policy]\ndeny = []\n[locked]\nkeys = ["policy"]\n')
    with pytest.raises(ConfigError) as caught:
        load_config()
    message = str(caught.value)
    assert message.startswith(f"{layers['system']}: $.policy.deny")
    assert f"locked by {machine_file}" in message


def test_the_named_file_adds_its_settings_and_locks_after_the_machines(
    layers: dict[str, Path], machine_file: Path
) -> None:
    write(machine_file, MACHINE_LOCKS + "[loop]\nmax_rounds = 3\nconcurrency = 2\n")
    write(layers["system"], '[locked]\nkeys = ["provider.trust"]\n[loop]\nmax_rounds = 4\n')
    write(layers["user"], "[loop]\nmax_rounds = 5\n")
    config = load_config()
    assert config.layers == (str(machine_file), str(layers["system"]), str(layers["user"]))
    assert (config.loop.max_rounds, config.loop.concurrency) == (5, 2)
    assert config.locked == {
        "$.policy.deny": str(machine_file),
        "$.provider.trust": str(layers["system"]),
    }
    write(layers["project"], "[provider]\ntrust = 'high'\n")
    with pytest.raises(ConfigError, match=r"provider\.trust is locked by .*etc/toolwire\.toml"):
        load_config()


def test_the_variable_naming_the_machines_file_reads_it_once(
    layers: dict[str, Path], machine_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(machine_file, MACHINE_LOCKS)
    monkeypatch.setenv("TOOLWIRE_SYSTEM_CONFIG", str(machine_file))
    config = load_config()
    assert config.layers == (str(machine_file),)
    assert config.policy.deny == ("network",)
