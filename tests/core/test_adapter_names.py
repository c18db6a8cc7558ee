"""Tool-name aliases per API: stable, collision-free, always mapped back."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from toolwire.adapters import (
    ModelRequest,
    NamedToolChoice,
    ToolNames,
    canonical_message,
    wire_request,
)
from toolwire.messages import AssistantMessage, ToolCall, UserMessage
from toolwire.tools import FunctionSpec
from toolwire.tools._names import is_tool_name

PARTS = st.text(alphabet="abcAB01_-", min_size=1, max_size=12)
NAMES = st.lists(PARTS, min_size=1, max_size=6).map(".".join).filter(is_tool_name)


@given(names=st.lists(NAMES, min_size=1, max_size=12, unique=True))
def test_aliases_are_accepted_unique_and_map_back(names: list[str]) -> None:
    mapping = ToolNames(names)
    wire = [mapping.wire(name) for name in names]
    assert all(mapping.accepts(w) for w in wire)
    assert len(set(wire)) == len(names)
    assert [mapping.canonical(w) for w in wire] == names
    # The same offer in any order gives the same aliases.
    assert [ToolNames(reversed(names)).wire(name) for name in names] == wire


def test_readable_aliases_and_a_digest_on_collision_or_cut() -> None:
    mapping = ToolNames(["math.factorial", "math_factorial", "fetch_DNA_sequence"])
    assert mapping.wire("fetch_DNA_sequence") == "fetch_DNA_sequence"
    assert mapping.wire("math_factorial") == "math_factorial"
    alias = mapping.wire("math.factorial")
    assert alias.startswith("math_factorial_")
    assert len(alias) == len("math_factorial_") + 8
    assert mapping.aliases == {"math.factorial": alias}
    long = "a" * 30 + "." + "b" * 33
    assert ToolNames([long]).wire(long) == long.replace(".", "_")
    # An API with a shorter limit: a cut name always carries its digest, so cuts never clash.
    short = ToolNames([long, long[:-1]], max_length=32)
    cuts = {short.wire(long), short.wire(long[:-1])}
    assert len(cuts) == 2
    assert all(len(cut) == 32 for cut in cuts)


def test_wire_request_aliases_offer_history_and_choice_and_reads_calls_back() -> None:
    spec = FunctionSpec(name="math.factorial", description="", parameters={"type": "object"})
    plain = FunctionSpec(name="add", description="", parameters={"type": "object"})
    history = AssistantMessage(parts=(ToolCall(id="c1", name="math.factorial", arguments={}),))
    request = ModelRequest(
        run_id="r",
        round=2,
        messages=(UserMessage("go"), history),
        functions=(plain, spec),
        tool_choice=NamedToolChoice("math.factorial"),
    )
    sent = wire_request(request)
    assert [f.name for f in sent.functions] == ["add", "math_factorial"]
    assert sent.functions[0] is plain
    assert sent.functions[1].tool is spec.tool
    assert sent.messages[1].tool_calls[0].name == "math_factorial"
    assert sent.tool_choice == NamedToolChoice("math_factorial")
    answer = AssistantMessage(
        parts=(
            ToolCall(id="c2", name="math_factorial", arguments={}),
            ToolCall(id="c3", name="add"),
        )
    )
    back = canonical_message(answer, sent)
    assert [c.name for c in back.tool_calls] == ["math.factorial", "add"]
    assert wire_request(
        ModelRequest(run_id="r", round=1, messages=(), functions=(plain,))
    ).functions == (plain,)
