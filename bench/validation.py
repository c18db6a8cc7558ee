"""Cost of creating, rendering and validating tools, as ratios against floors.

Creation: `Tool.from_function` and `Tool.from_schema` (the schema checked whole at creation,
and with `normalize=True`), against copying the schema through JSON, which `from_schema` does
anyway. Rendering: the strict projection and the OpenAI Chat wire tool, with and without a
name that needs an alias.

Validation:

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
import json
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


WILD: dict[str, Any] = {
    "properties": {
        "query": {"type": "String", "description": "Words to look for."},
        "limit": {"type": "int", "minimum": 1, "maximum": 50, "optional": True},
        "units": {"type": "str", "enum": ["metric", "imperial"]},
        "tags": {"type": "List[str]", "items": {"type": "str"}},
        "exact": {"type": "bool"},
    },
    "required": ["query", "units"],
}


def creation_and_rendering(repeat: int, number: int) -> dict[str, float]:
    """µs per tool to create it (each way) and to render it, best of ``repeat`` runs."""
    import attrs

    from toolwire import Tool
    from toolwire.adapters import wire_functions
    from toolwire.tools import strict_projection
    from toolwire.tools._schemacheck import schema_problems
    from toolwire_openai import render_chat_tools

    function = search.__wrapped__
    assert function is not None
    schema = json.loads(json.dumps(dict(search.parameters)))
    made = Tool.from_schema("search", "Search.", schema, dict)
    spec = made.function_spec()
    dotted = attrs.evolve(spec, name="shop.search")

    def copy_schema() -> None:
        json.loads(json.dumps(schema, ensure_ascii=False))

    return best_us(
        {
            "floor: copy the schema through JSON": copy_schema,
            "definition check alone": lambda: schema_problems(schema),
            "Tool.from_function": lambda: Tool.from_function(function),
            "Tool.from_schema": lambda: Tool.from_schema("search", "Search.", schema, dict),
            "Tool.from_schema, normalize=True": lambda: Tool.from_schema(
                "search", "Search.", WILD, dict, normalize=True
            ),
            "strict projection": lambda: strict_projection(schema),
            "chat wire tool, strict": lambda: render_chat_tools([spec], binds_strict=True),
            "chat wire tool, aliased name": lambda: render_chat_tools(
                wire_functions([dotted]), binds_strict=True
            ),
        },
        repeat,
        number,
    )


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

    creation_rows = creation_and_rendering(args.repeat, max(1, args.number // 10))
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
    print(f"\n{'creation and rendering, per tool':<36} {'µs':>9} {'x floor':>8}")
    floor_copy = creation_rows["floor: copy the schema through JSON"]
    for name, us in creation_rows.items():
        print(f"{name:<36} {us:>9.2f} {us / floor_copy:>7.2f}x")
    check = creation_rows["definition check alone"]
    made = creation_rows["Tool.from_schema"]
    print(f"the definition check is {check / made:.0%} of Tool.from_schema")
    try:
        search.validate(INVALID)
    except ArgumentsInvalid as exc:
        print(f"the invalid call gets {len(exc.problems)} refusals:")
        for problem in exc.problems:
            print(f"  - {problem}")


if __name__ == "__main__":
    main()
