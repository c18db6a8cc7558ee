"""Cost of validating one tool call, as ratios against the raw fastjsonschema floor.

A 5-parameter tool (a string, a bounded integer, an enum, a list of strings, a boolean):
`Tool.validate` plus structuring into the parameter types with cattrs, for a valid and an invalid
call, against calling the compiled fastjsonschema validator of the same schema directly. Target: the
valid path at most 2x the floor. The invalid path also writes the refusal texts (one per problem),
so it is reported but not held to the target.

    python bench/validation.py [--repeat N] [--number N]
"""

from __future__ import annotations

import argparse
import contextlib
import enum
import time
import timeit
from typing import Annotated, Any

import fastjsonschema

from toolwire.tools import ArgumentsInvalid, ToolContext, tool


class Units(enum.Enum):
    METRIC = "metric"
    IMPERIAL = "imperial"


@tool
def search(
    query: Annotated[str, "Words to look for."],
    limit: Annotated[int, "How many results.", {"minimum": 1, "maximum": 50}] = 10,
    units: Annotated[Units, "Unit system of the results."] = Units.METRIC,
    tags: Annotated[list[str], "Only results with all these tags."] = [],  # noqa: B006
    exact: Annotated[bool, "Match the words exactly."] = False,
) -> str:
    """Search the catalogue."""
    return query


VALID: dict[str, Any] = {
    "query": "rain jacket",
    "limit": 20,
    "units": "imperial",
    "tags": ["outdoor", "men"],
    "exact": True,
}
INVALID: dict[str, Any] = {
    "query": "rain jacket",
    "limit": 0,
    "units": "kelvin",
    "tags": ["outdoor", 5],
    "exact": "yes",
}


def best_us(cases: dict[str, Any], repeat: int, number: int) -> dict[str, float]:
    """The best run of ``number`` calls of each case, in µs per call.

    Cases take turns within each round, so a burst of load elsewhere hits all of them alike, and
    the clock is the process's CPU time.
    """
    best = dict.fromkeys(cases, float("inf"))
    for _ in range(repeat):
        for name, stmt in cases.items():
            calls = number // 10 if "refusals" in name else number
            # CPU time of this process: time spent waiting for a busy CPU is not counted.
            timer = timeit.Timer(stmt, timer=time.process_time)
            best[name] = min(best[name], timer.timeit(number=calls) / calls * 1e6)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--number", type=int, default=10_000)
    args = parser.parse_args()

    raw = fastjsonschema.compile(dict(search.parameters), use_default=False)
    context = ToolContext(tool=search, call_id="c", run_id="r", round=1)
    runner = search._runner  # the structuring step of Tool.invoke, without running the function
    assert runner is not None

    def floor_valid() -> None:
        raw(VALID)

    def floor_invalid() -> None:
        with contextlib.suppress(fastjsonschema.JsonSchemaValueException):
            raw(INVALID)

    def toolwire_valid() -> None:
        runner.prepare(search, search.validate(VALID), context)

    def toolwire_invalid() -> None:
        with contextlib.suppress(ArgumentsInvalid):
            search.validate(INVALID)

    def validate_only() -> None:
        search.validate(VALID)

    toolwire_valid()
    toolwire_invalid()
    _, kwargs = runner.prepare(search, search.validate(VALID), context)
    assert kwargs["units"] is Units.IMPERIAL

    timings = best_us(
        {
            "floor: fastjsonschema, valid": floor_valid,
            "Tool.validate only, valid": validate_only,
            "Tool.validate + cattrs, valid": toolwire_valid,
            "floor: fastjsonschema, invalid": floor_invalid,
            "Tool.validate + refusals, invalid": toolwire_invalid,
        },
        args.repeat,
        args.number,
    )
    rows = list(timings.items())
    floor = {"valid": rows[0][1], "invalid": rows[3][1]}
    print(f"{'case':<36} {'µs/call':>9} {'x floor':>8}")
    for name, us in rows:
        base = floor["invalid"] if "invalid" in name else floor["valid"]
        print(f"{name:<36} {us:>9.2f} {us / base:>7.2f}x")
    ratio = rows[2][1] / floor["valid"]
    verdict = "meets" if ratio <= 2.0 else "misses"
    print(f"\nvalid path: {ratio:.2f}x the floor ({verdict} the 2x target)")
    try:
        search.validate(INVALID)
    except ArgumentsInvalid as exc:
        print(f"the invalid call gets {len(exc.problems)} refusals:")
        for problem in exc.problems:
            print(f"  - {problem}")


if __name__ == "__main__":
    main()
