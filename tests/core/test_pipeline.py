"""The fast paths a host chooses once: the [policy] answers, remembered per tool."""

from __future__ import annotations

import itertools

import toolwire
from toolwire import Config, Host
from toolwire._defaults import policy as default_policy
from toolwire.config import PolicyConfig

EFFECTS = [None, ["read_only"], ["network"], ["destructive"], ["network", "writes_files"]]


def _tools(count: int) -> list[toolwire.Tool]:
    made = []
    for index, effects in zip(range(count), itertools.cycle(EFFECTS), strict=False):

        def probe() -> str:
            """Answer."""
            return "ok"

        made.append(
            toolwire.tool(
                name=f"probe_{index}",
                side_effects=effects,
                requires_approval=index % 7 == 0,
            )(probe)
        )
    return made


def _host(policy: PolicyConfig) -> Host:
    return Host.load(config=Config(policy=policy))


def test_the_policy_answers_are_the_policy_s_own_for_every_tool() -> None:
    policy = PolicyConfig(require_approval=("network",), deny=("destructive",), strict=True)
    pipeline = _host(policy).pipeline
    for tool in _tools(20) * 2:  # asked twice: the remembered answer is the same
        assert pipeline.refusal_reason(tool) == default_policy.refusal_reason(tool, policy)
        assert pipeline.approval_reason(tool) == default_policy.approval_reason(tool, policy)


def test_many_tools_made_on_the_fly_still_get_their_own_answers() -> None:
    policy = PolicyConfig(deny=("network",))
    pipeline = _host(policy).pipeline
    tools = _tools(1300)
    answers = [pipeline.refusal_reason(tool) for tool in tools]
    assert answers == [default_policy.refusal_reason(tool, policy) for tool in tools]
    assert sum(answer is not None for answer in answers) == 520
