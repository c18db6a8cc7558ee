"""``toolwire._fieldwise`` does what the methods attrs generates do: same text, equality, hash."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolwire._fieldwise import record_eq, record_hash, record_repr
from toolwire.config import Config, LoopConfig, ToolsConfig
from toolwire.host._discovery import PluginInfo
from toolwire.tools import Source, ToolResult


@attrs.frozen(kw_only=True)
class Generated:
    name: str
    size: int = 0
    secret: str = attrs.field(default="", repr=False)
    cached: Any = attrs.field(default=None, eq=False)
    label: str = attrs.field(default="", eq=str.lower, repr=lambda value: f"<{value}>")


@attrs.frozen(kw_only=True)
class Fieldwise:
    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    name: str
    size: int = 0
    secret: str = attrs.field(default="", repr=False)
    cached: Any = attrs.field(default=None, eq=False)
    label: str = attrs.field(default="", eq=str.lower, repr=lambda value: f"<{value}>")


@attrs.define
class MutableFieldwise:
    __repr__ = record_repr
    __eq__ = record_eq

    items: list[Any] = attrs.field(factory=list)


values = st.fixed_dictionaries(
    {
        "name": st.text(max_size=8),
        "size": st.integers(),
        "secret": st.text(max_size=4),
        "cached": st.none() | st.integers(),
        "label": st.sampled_from(["", "a", "A", "b"]),
    }
)


@given(values)
def test_the_text_is_what_attrs_writes(fields: dict[str, Any]) -> None:
    assert repr(Fieldwise(**fields)) == repr(Generated(**fields)).replace("Generated", "Fieldwise")


@given(values, values)
def test_equality_and_hash_are_what_attrs_computes(a: dict[str, Any], b: dict[str, Any]) -> None:
    equal = Generated(**a) == Generated(**b)
    assert (Fieldwise(**a) == Fieldwise(**b)) is equal
    assert (Fieldwise(**a) != Fieldwise(**b)) is not equal
    if equal:
        assert hash(Fieldwise(**a)) == hash(Fieldwise(**b))


def test_another_class_is_never_equal_even_with_the_same_fields() -> None:
    assert Fieldwise(name="x") != Generated(name="x")
    assert Generated(name="x") != Fieldwise(name="x")
    assert Fieldwise(name="x") != ("x",)


def test_a_mutable_record_compares_but_is_not_hashable() -> None:
    assert MutableFieldwise([1]) == MutableFieldwise([1])
    with pytest.raises(TypeError, match="unhashable"):
        hash(MutableFieldwise())


def test_a_record_inside_itself_is_written_as_dots() -> None:
    outer = MutableFieldwise()
    outer.items.append(outer)
    assert repr(outer) == "MutableFieldwise(items=[...])"


def test_a_subclass_compares_and_writes_its_own_fields() -> None:
    @attrs.frozen(kw_only=True)
    class More(Fieldwise):
        extra: int = 0

    assert repr(More(name="n", extra=2)).endswith("label=<>, extra=2)")
    assert More(name="n", extra=1) != More(name="n", extra=2)
    assert More(name="n") != Fieldwise(name="n")


def test_the_records_that_take_them_keep_their_behaviour() -> None:
    config = Config()
    assert config == Config()
    assert attrs.evolve(config, loop=LoopConfig(max_rounds=3)) == Config(
        loop=LoopConfig(max_rounds=3)
    )
    assert attrs.evolve(config, tools=ToolsConfig(deny=("x",))) != config
    assert hash(LoopConfig(max_rounds=3)) == hash(LoopConfig(max_rounds=3))
    with pytest.raises(TypeError, match="unhashable"):
        hash(config)  # it holds tables (dicts), as it did with attrs' own hash
    assert repr(LoopConfig()).startswith("LoopConfig(max_rounds=10, max_tool_calls=50,")
    result = ToolResult.ok("done", sources=[Source(url="https://example.test/")])
    assert result == ToolResult.ok("done", sources=[Source(url="https://example.test/")])
    assert "exception" not in repr(result)
    info = PluginInfo(name="web")
    assert info == PluginInfo(name="web")
    with pytest.raises(TypeError):
        hash(info)


def test_a_config_section_without_slots_still_refuses_new_attributes() -> None:
    section = LoopConfig()
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        section.max_rounds = 3  # type: ignore[misc]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        section.typo = 3  # type: ignore[attr-defined]
