"""A tool that raises SystemExit, KeyboardInterrupt, GeneratorExit or a bare BaseException costs
only its call: the run goes on, and every call of the turn is answered."""

from __future__ import annotations

from pathlib import Path

import pytest
from loop_support import assert_no_orphans, make_host, result_texts, run_script

import toolwire
from toolwire.testing import tool_call


class Odd(BaseException):
    """Neither an Exception nor a signal: what a hostile plugin can still raise."""


@pytest.mark.parametrize(
    "raised",
    [SystemExit(3), KeyboardInterrupt(), GeneratorExit(), Odd("odd")],
    ids=lambda exc: type(exc).__name__,
)
@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
async def test_a_tool_raising_a_base_exception_costs_only_its_call(
    tmp_path: Path, raised: BaseException, sync: bool
) -> None:
    if sync and isinstance(raised, GeneratorExit):
        pytest.xfail("GeneratorExit from a worker thread still escapes the run (known gap)")
    if sync:

        @toolwire.tool
        def explode() -> str:
            """Raise."""
            raise raised

    else:

        @toolwire.tool(name="explode")
        async def explode_async() -> str:
            """Raise."""
            raise raised

        explode = explode_async

    @toolwire.tool
    def fine() -> str:
        """Answer."""
        return "fine"

    run = await run_script(
        make_host(tmp_path, [explode, fine]),
        [[tool_call("explode", id="a"), tool_call("fine", id="b")], "done"],
    )
    assert run.stop_reason == "answered"
    assert run.text == "done"
    texts = result_texts(run)
    assert texts[0].startswith(f"Tool execution failed: {type(raised).__name__}")
    assert texts[1] == "fine"
    assert_no_orphans(run)
