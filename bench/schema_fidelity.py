"""How soundly real function definitions render for each adapter: BFCL v4's, every one.

The Berkeley Function Calling Leaderboard ships its function definitions in the ``bfcl-eval``
wheel (``pip install --no-deps bfcl-eval`` into the environment that runs this; nothing of it is
kept in the project). Every distinct definition of its single-turn categories (written in BFCL's
own dialect: ``dict``, ``float``, ``tuple``, ``any``) becomes a tool through
``Tool.from_schema(..., normalize=True)``, as a definition from the wild does, and is rendered
by each adapter's ``render_tools`` alone. Each rendering is one of:

- ``exact``: the API receives every constraint in its own schema form (strict form on a host
  that binds output to schemas, Gemini's ``parameters`` subset, or the schema as written where
  the API takes JSON Schema as it is);
- ``fallback``: the API's preferred form could not hold the schema, so it went another way that
  keeps every constraint (non-strict on a strict host; ``parametersJsonSchema`` on Gemini);
- ``degraded``: sent, with some constraints only in the description text (Gemini's
  ``schemas = "openapi"``);
- ``refused``: not sent; a request offering the tool is refused, naming it.

``exact`` and ``fallback`` together are the lossless renderings. The time to render every tool
once (each alone, a new offer) is reported as a ratio against the Anthropic adapter, which sends
schemas as written: the floor. A running adapter renders an offer once and keeps it while the
loop offers the same tools.

    python bench/schema_fidelity.py [--reasons N] [--json]
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import importlib.resources
import json
import re
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from toolwire import FunctionSpec, Tool
from toolwire.adapters import ProviderAdapter, ProviderError
from toolwire.config import ProviderConfig
from toolwire.tools import ToolDefinitionError

VERDICTS = ("exact", "fallback", "degraded", "refused")


def definitions() -> Iterator[dict[str, Any]]:
    """Every distinct function definition of BFCL v4's single-turn categories."""
    try:
        data = importlib.resources.files("bfcl_eval") / "data"
    except ModuleNotFoundError:
        sys.exit(
            "bench/schema_fidelity.py needs the bfcl-eval wheel: pip install --no-deps bfcl-eval"
        )
    seen: set[str] = set()
    for path in sorted(data.iterdir(), key=lambda p: p.name):
        if not path.name.endswith(".json"):
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue  # the format-sensitivity set is not one JSON object a line
            for function in row.get("function") or ():
                key = json.dumps(function, sort_keys=True)
                if key not in seen:
                    seen.add(key)
                    yield function


def tools() -> tuple[list[FunctionSpec], collections.Counter[str], int]:
    """The definitions as toolwire tools, the reasons some are no tool, and how many there are."""
    specs: list[FunctionSpec] = []
    invalid: collections.Counter[str] = collections.Counter()
    count = 0
    for function in definitions():
        count += 1
        try:
            made = Tool.from_schema(
                function["name"],
                function.get("description") or "",
                function.get("parameters") or {"type": "object", "properties": {}},
                lambda arguments: None,
                normalize=True,
            )
        except ToolDefinitionError as exc:
            invalid[str(exc).splitlines()[0][:100]] += 1
            continue
        specs.append(made.function_spec())
    return specs, invalid, count


Classify = Callable[[ProviderAdapter, FunctionSpec], tuple[str, str]]


def _strict(adapter: ProviderAdapter, spec: FunctionSpec) -> tuple[str, str]:
    [tool] = adapter.render_tools((spec,))
    body = tool.get("function", tool)
    if body.get("strict") is False:
        return "fallback", "sent non-strict, as written"
    return "exact", ""


def _as_written(adapter: ProviderAdapter, spec: FunctionSpec) -> tuple[str, str]:
    adapter.render_tools((spec,))
    return "exact", ""


def _gemini(adapter: ProviderAdapter, spec: FunctionSpec) -> tuple[str, str]:
    try:
        [tool] = adapter.render_tools((spec,))
    except ProviderError as exc:
        return "refused", _reason(str(exc).split("subset: ", 1)[-1])
    [declaration] = tool["functionDeclarations"]
    notes = [
        note
        for note in adapter.render_notes((spec,))
        if not note.startswith("the API refuses the name")
    ]
    if "parametersJsonSchema" in declaration:
        return "fallback", _reason(notes[0].split("would change it: ", 1)[-1] if notes else "")
    if notes:
        return "degraded", _reason(notes[0])
    return "exact", ""


def _reason(text: str) -> str:
    """A reason without the tool and the place it was found, so equal reasons count together."""
    for _ in range(2):
        text = re.sub(r"^(?:[^\s:]+|the root schema): ", "", text)
    text = re.sub(r"'[^']*'", "'…'", text.split("; ")[0])
    return text[:110]


def adapters() -> list[tuple[str, ProviderAdapter, Classify]]:
    """The adapters measured, each under the settings it is used with."""
    import toolwire_anthropic._messages as anthropic
    import toolwire_openai._chat as chat
    import toolwire_openai._responses as responses
    from toolwire_gemini import GeminiAdapter, GeminiSettings

    openai = ProviderConfig(model="m", base_url="https://api.openai.com/v1")
    local = ProviderConfig(model="m", base_url="http://127.0.0.1:8080/v1")
    google = ProviderConfig(model="gemini-2.5-flash")
    return [
        (
            "anthropic-messages",
            anthropic.AnthropicMessagesAdapter(ProviderConfig(model="m")),
            _as_written,
        ),
        ("openai-chat (api.openai.com, strict)", chat.OpenAIChatAdapter(openai), _strict),
        ("openai-chat (local host)", chat.OpenAIChatAdapter(local), _as_written),
        ("openai-responses (strict)", responses.OpenAIResponsesAdapter(openai), _strict),
        (
            'gemini (schemas = "auto", the default)',
            GeminiAdapter.configured(GeminiSettings(schemas="auto"))(google),
            _gemini,
        ),
        (
            'gemini (schemas = "openapi", models before 2.5)',
            GeminiAdapter.configured(GeminiSettings(schemas="openapi"))(google),
            _gemini,
        ),
        (
            'gemini (schemas = "openapi", additional_properties = true)',
            GeminiAdapter.configured(GeminiSettings(schemas="openapi", additional_properties=True))(
                google
            ),
            _gemini,
        ),
    ]


def _render_time(adapter: ProviderAdapter, specs: list[FunctionSpec]) -> float:
    """Seconds to render every tool once, alone (each a new offer, so nothing is reused);
    the best of three."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        for spec in specs:
            with contextlib.suppress(ProviderError):
                adapter.render_tools((spec,))
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reasons", type=int, default=5, help="top reasons shown per verdict")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    specs, invalid, count = tools()
    rows: list[dict[str, Any]] = []
    floor: float | None = None
    for label, adapter, classify in adapters():
        counts: collections.Counter[str] = collections.Counter()
        reasons: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
        for spec in specs:
            verdict, why = classify(adapter, spec)
            counts[verdict] += 1
            if why:
                reasons[verdict][why] += 1
        seconds = _render_time(adapter, specs)
        floor = floor or seconds
        rows.append(
            {
                "adapter": label,
                **{verdict: counts[verdict] for verdict in VERDICTS},
                "lossless": counts["exact"] + counts["fallback"],
                "time_ratio": round(seconds / floor, 2),
                "reasons": {
                    verdict: reasons[verdict].most_common(args.reasons) for verdict in reasons
                },
            }
        )
    if args.json:
        print(json.dumps({"definitions": count, "not_tools": invalid, "rows": rows}, indent=2))
        return
    print(f"BFCL v4: {count} distinct function definitions; {len(specs)} are toolwire tools")
    for reason, number in invalid.most_common(args.reasons):
        print(f"  not a tool ({number}): {reason}")
    print()
    columns = ("lossless", "exact", "fallbk", "degr.", "refused", "time")
    print(f"{'adapter':<58} " + " ".join(f"{c:>8}" for c in columns))
    for row in rows:
        cells = [row[k] for k in ("lossless", "exact", "fallback", "degraded", "refused")]
        print(
            f"{row['adapter']:<58} "
            + " ".join(f"{c:>8}" for c in cells)
            + f" {row['time_ratio']:>7}x"
        )
    for row in rows:
        for verdict, common in row["reasons"].items():
            print(f"\n{row['adapter']}: {verdict}")
            for reason, number in common:
                print(f"  {number:>5}  {reason}")


if __name__ == "__main__":
    main()
