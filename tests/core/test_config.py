"""Config: finding the file, structuring sections, and the message of each kind of bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolwire import Config, ConfigError, load_config
from toolwire.config import config_from_dict


def _load(tmp_path: Path, text: str) -> Config:
    path = tmp_path / "toolwire.toml"
    path.write_text(text, encoding="utf-8")
    return load_config(path)


def test_defaults_without_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TOOLWIRE_CONFIG", raising=False)
    monkeypatch.delenv("TOOLWIRE_PLUGINS", raising=False)
    config = load_config()
    assert config == Config()
    assert config.source is None


def test_full_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("TOOLWIRE_PLUGINS", raising=False)
    config = _load(
        tmp_path,
        """
[plugins]
enable = ["openai", "web"]

[provider]
adapter = "openai-chat"
base_url = "http://localhost:11434/v1"
model = "qwen3:4b"
api_key_env = "OPENAI_API_KEY"
trust = "self_hosted"

[loop]
max_rounds = 4
concurrency = 2
unknown_tool = "rewrite:read_web_page"

[tools]
enable = ["read_web_page", "web_search"]
profile = "safe"

[tools.web]
private_hosts = ["intranet.local"]

[profiles.safe]
deny = ["web_search"]

[policy]
require_approval = ["destructive"]
""",
    )
    assert config.plugins.enable == ("openai", "web")
    assert config.provider.model == "qwen3:4b"
    # "self_hosted" as a provider's trust: trusted with everything, on both axes
    assert config.provider.trust_level.label == "high+self_hosted"
    assert config.loop.max_rounds == 4
    assert config.loop.unknown_tool == "rewrite:read_web_page"
    assert config.tools.enable == ("read_web_page", "web_search")
    assert config.tools.plugin_settings == {"web": {"private_hosts": ["intranet.local"]}}
    assert config.profiles["safe"].deny == ("web_search",)
    assert config.policy.require_approval == ("destructive",)
    assert config.source == str(tmp_path / "toolwire.toml")


def test_environment_overrides_enabled_plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TOOLWIRE_PLUGINS", "web, basics ,")
    config = _load(tmp_path, '[plugins]\nenable = ["openai"]\n')
    assert config.plugins.enable == ("web", "basics")


def test_config_file_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "elsewhere.toml"
    path.write_text("[loop]\nmax_rounds = 3\n", encoding="utf-8")
    monkeypatch.setenv("TOOLWIRE_CONFIG", str(path))
    monkeypatch.chdir(tmp_path)
    assert load_config().loop.max_rounds == 3


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[loop]\nmax_rounds = 'ten'\n",
            "$.loop.max_rounds = 'ten': wrong type (str); expected an integer",
        ),
        (
            "[loop]\nmax_round = 3\n",
            "$.loop.max_round: unknown key 'max_round'; valid keys here: compact_at, "
            "compact_to, concurrency, ",
        ),
        ("[loop]\nmax_rounds = 0\n", "$.loop.max_rounds = 0: expected an integer of at least 1"),
        (
            "[plugins]\nenable = 'web'\n",
            "$.plugins.enable = 'web': wrong type (str); expected a list of strings",
        ),
        (
            "[provider]\ntool_dialect = 'yaml'\n",
            "$.provider.tool_dialect = 'yaml': not a valid choice; expected one of 'json', 'xml', "
            "'ptype'",
        ),
        (
            "[provider]\ntrust = 'total'\n",
            "$.provider.trust = 'total': expected one of low, medium, high, self_hosted",
        ),
        (
            "[loop]\nconcurrency = true\n",
            "$.loop.concurrency = True: wrong type (bool); expected an integer",
        ),
        (
            "[loop]\nunknown_tool = 'ignore'\n",
            "$.loop.unknown_tool = 'ignore': expected 'return_error', 'fail' or "
            "'rewrite:<tool name>'",
        ),
        (
            "[policy]\ndeny = ['explosive']\n",
            "$.policy.deny[0] = 'explosive': expected one of read_only, writes_files, network, ",
        ),
        ("[tools]\nprofile = 'x'\n", "$.tools.profile = 'x': expected the name of a [profiles."),
        ("[tools]\nlimit = 3\n", "$.tools.limit = 3: unknown key 'limit'"),
        (
            "[bogus]\nx = 1\n",
            "$.bogus: unknown key 'bogus'; valid keys here: artifacts, batch, i18n, ",
        ),
        ("[profiles.p]\nallow = ['a']\ndeni = []\n", "$.profiles.p.deni: unknown key 'deni'"),
        ("[loop\n", "not valid TOML"),
        ("loop = 3\n", "$.loop = 3: expected a table [loop]"),
        # Values that parse but cannot be meant.
        ("[provider]\nread_timeout = nan\n", "$.provider.read_timeout = nan: expected a finite"),
        ("[provider]\ntotal_timeout = inf\n", "$.provider.total_timeout = inf: expected a finite"),
        ("[tools.web]\ntimeout = -inf\n", "$.tools.web.timeout = -inf: expected a finite"),
        ("[providers.x]\nweights = [1.0, nan]\n", "$.providers.x.weights[1] = nan: expected"),
        (
            "[provider]\nconnect_timeout = 0\n",
            "$.provider.connect_timeout = 0.0: expected seconds from 0.001 to 604800",
        ),
        (
            "[provider]\nread_timeout = -5\n",
            "$.provider.read_timeout = -5.0: expected seconds from 0.001 to 604800",
        ),
        (
            "[provider]\nmax_retries = -1\n",
            "$.provider.max_retries = -1: expected an integer from 0 to 100",
        ),
        (
            "[provider]\nmax_retries = 1000000\n",
            "$.provider.max_retries = 1000000: expected an integer from 0 to 100",
        ),
        (
            "[provider]\nmax_response_bytes = 10\n",
            "$.provider.max_response_bytes = 10: expected bytes from 1024 to",
        ),
        (
            "[loop]\nmax_rounds = 100000000\n",
            "$.loop.max_rounds = 100000000: expected an integer from 1 to 10000",
        ),
        (
            "[loop]\nconcurrency = 100000\n",
            "$.loop.concurrency = 100000: expected an integer from 1 to 256",
        ),
        (
            "[loop]\ndeadline_seconds = 1e300\n",
            "$.loop.deadline_seconds = 1e+300: expected seconds from 0.001 to 604800",
        ),
        (
            "[loop]\ntool_timeout = 0\n",
            "$.loop.tool_timeout = 0.0: expected a positive number of seconds",
        ),
        (
            "[loop]\nhook_timeout = -1\n",
            "$.loop.hook_timeout = -1.0: expected a positive number of seconds",
        ),
        ("[loop]\nobserver_timeout = inf\n", "$.loop.observer_timeout = inf: expected a finite"),
        (
            "[loop]\ntool_timeout = 1e9\n",
            "$.loop.tool_timeout = 1000000000.0: expected seconds from 0.001 to 604800",
        ),
        (
            "[policy]\nmax_untrusted_result_bytes = 10\n",
            "$.policy.max_untrusted_result_bytes = 10: expected bytes from 1024 to",
        ),
        (
            "[policy]\nmax_result_bytes = 0\n",
            "$.policy.max_result_bytes = 0: expected bytes from 1 to",
        ),
        ("a = " + "[" * 5000 + "]" * 5000 + "\n", "nested too deep to read"),
        ("a = " + "[" * 40 + "]" * 40 + "\n", "nested more than 32 levels deep"),
    ],
)
def test_bad_input_is_refused_with_file_path_value_and_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, message: str
):
    monkeypatch.delenv("TOOLWIRE_PLUGINS", raising=False)
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, text)
    text_of_error = str(info.value)
    assert str(tmp_path / "toolwire.toml") in text_of_error
    assert message in text_of_error


def test_missing_explicit_file(tmp_path: Path):
    with pytest.raises(ConfigError, match=r"config file '.*nowhere.toml' \(given with --config\)"):
        load_config(tmp_path / "nowhere.toml")


def test_missing_file_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TOOLWIRE_CONFIG", str(tmp_path / "gone.toml"))
    with pytest.raises(ConfigError, match=r"from \$TOOLWIRE_CONFIG\) does not exist"):
        load_config()


def test_several_problems_are_all_reported():
    with pytest.raises(ConfigError) as info:
        config_from_dict({"loop": {"max_rounds": "x", "concurrency": "y"}}, file="t.toml")
    assert "$.loop.max_rounds" in str(info.value)
    assert "$.loop.concurrency" in str(info.value)


# An empty table is structured without cattrs (the class's defaults); the answers and the
# errors must be the ones cattrs gives.
def test_empty_tables_are_the_defaults_cattrs_would_give() -> None:
    import attrs

    import toolwire.config as config_module
    from toolwire.config import structure_section

    classes = [
        value
        for value in vars(config_module).values()
        if isinstance(value, type) and attrs.has(value) and value.__module__ == "toolwire.config"
    ]
    assert len(classes) > 10
    for cls in classes:
        if not config_module._all_defaults(cls):
            continue
        fast = structure_section({}, cls, file="t.toml", path="$.x")
        slow = config_module._converter.structure({}, cls)
        assert fast == slow, cls


def test_empty_table_of_a_class_with_a_required_field_is_refused_as_before() -> None:
    import attrs

    from toolwire.config import structure_section

    @attrs.frozen
    class Needs:
        name: str

    @attrs.frozen
    class BadDefault:
        level: int = attrs.field(default=0, validator=attrs.validators.ge(1))

    with pytest.raises(ConfigError, match=r"t\.toml: \$\.x\.name: required key is missing"):
        structure_section({}, Needs, file="t.toml", path="$.x")
    import toolwire.config as config_module

    errors = []
    for converter in (None, config_module._converter):  # the fast path, and cattrs alone
        with pytest.raises(ConfigError) as caught:
            structure_section({}, BadDefault, file="t.toml", path="$.x", converter=converter)
        errors.append(str(caught.value))
    assert errors[0] == errors[1]
    assert "'level' must be >= 1: 0" in errors[0]
