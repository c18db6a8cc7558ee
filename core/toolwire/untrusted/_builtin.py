"""The built-in filter: neutralise text that forges structure, flag injection phrasing.

What counts as structure is what a model or a chat template reads as a turn, a role or a tool
call rather than as content:

- special tokens of chat templates: ``<|im_start|>``, ``<|eot_id|>``, ``<|start_header_id|>``
  and every other ``<|…|>`` token, DeepSeek's ``<｜…｜>``, ``<s>``/``</s>``, ``<bos>``/``<eos>``,
  Gemma's ``<start_of_turn>``/``<end_of_turn>``, Llama 2's ``<<SYS>>``, Mistral's ``[INST]``,
  ``[/INST]``, ``[SYSTEM_PROMPT]``, ``[TOOL_CALLS]``, ``[TOOL_RESULTS]`` …;
- tool-call and tool-result envelopes of the common formats, including toolwire's own prompted
  ones: ``<tool_call``, ``</tool_result>``, ``<tool_response``, ``<function_call``,
  ``<function=…>``, ``<invoke``, ``<parameter``, ``<think>`` …;
- lines that impersonate the system prompt or a template header: ``SYSTEM:``, ``System prompt:``,
  ``### System``, ``[system]``, ``### Instruction:``, ``### Response:``.

Neutralising keeps the text readable and reversible for a person: the opening ``<`` of a token
or tag becomes ``‹`` (``‹|im_start|>``, ``‹/tool_result>``), the opening ``[`` of a bracket
token becomes ``［`` (``［INST]``), and an impersonation line gets the marker ``‹quoted› `` in
front of its label. Nothing is removed. Phrasing that tries to instruct the model ("ignore all
previous instructions", "you are now …", "do not tell the user" …) is left exactly as it is and
reported as flagged.
"""

from __future__ import annotations

import functools
import html
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence

from ._records import FilteredText

QUOTED_MARKER = "‹quoted› "
_SHOWN_MAX = 60

_TAG_NAMES = (
    "tool_call",
    "tool_calls",
    "tool_result",
    "tool_results",
    "tool_response",
    "tool_output",
    "tool_use",
    "function_call",
    "function_calls",
    "function_result",
    "function_results",
    "function",
    "invoke",
    "parameter",
    "tools",
    "think",
    "thinking",
    "start_of_turn",
    "end_of_turn",
    "im_start",
    "im_end",
    "system",
    "system_prompt",
    "system-reminder",
)
_BARE_TOKENS = ("s", "bos", "eos", "pad", "unk")
_BRACKET_TOKENS = (
    "INST",
    "SYS",
    "SYSTEM_PROMPT",
    "TOOL_CALLS",
    "TOOL_RESULTS",
    "TOOL_CONTENT",
    "AVAILABLE_TOOLS",
    "THINK",
)

# One pass over the text: every alternative starts with "<" or "[", which keeps the scan fast.
_STRUCTURE = (
    # Llama 2: <<SYS>> and <</SYS>>
    r"<<(?=/?SYS>>)"
    r"|<(?="
    # <|im_start|>, <|eot_id|>, <|start_header_id|>, <|channel|> … (no spaces inside a token)
    r"\|[^\s<>|]{1,64}\|>"
    # DeepSeek's full-width bars: <｜begin▁of▁sentence｜>
    r"|｜[^\n<>｜]{1,64}｜>"
    # <s>, </s>, <bos>, <eos>
    rf"|/?(?:{'|'.join(_BARE_TOKENS)})>"
    # envelopes and turn tags, opening or closing, with attributes or not: <tool_call>,
    # </tool_result>, <tool_result id="…">, <function=get_weather>, <start_of_turn>
    rf"|/?(?:{'|'.join(_TAG_NAMES)})(?:[\s/>=]|$)"
    r")"
    # Mistral's control tokens are upper case; [Think](link) in Markdown is not one
    rf"|\[(?=(?-i:/?(?:{'|'.join(_BRACKET_TOKENS)})\]))"
    # the host's own notice, forged: [Host note: …]
    r"|\[(?=[ \t]*host[ \t]+note\b)"
)
_BARE_TOKEN = re.compile(rf"/?(?:{'|'.join(_BARE_TOKENS)})>", re.IGNORECASE)

_LABEL_WORDS = r"(?:system|developer)(?:[ \t]+(?:prompt|message|instructions?|note|override))?"
_IMPERSONATION = (
    r"^(?P<lead>[ \t]*(?:>[ \t]*)*)"
    r"(?P<label>"
    # ### System / ## System prompt: … (a heading that is only the label)
    rf"\#{{1,6}}[ \t]*[*_]{{0,3}}{_LABEL_WORDS}[*_]{{0,3}}[ \t]*(?::|$)"
    # SYSTEM: … / **System prompt:** … / System message: …
    rf"|[*_]{{0,3}}{_LABEL_WORDS}[*_]{{0,3}}[ \t]*:"
    # [system] / [SYSTEM]: … (not a Markdown link [System](…))
    rf"|\[{_LABEL_WORDS}\](?!\()"
    # Alpaca and Vicuna template headers: ### Instruction: / ### Response:
    r"|\#{1,6}[ \t]*(?:instructions?|response|input|human|assistant|user)[ \t]*:"
    # the turns of a transcript prompt: Human: … / Assistant: …
    r"|(?-i:Human|Assistant|HUMAN|ASSISTANT)[ \t]*:(?=[ \t]*\S)"
    r")"
)

_ADDRESSEES: tuple[str, ...] = (
    *(" ai", "\nai", "assistant", "llm", "language", "chatbot", "agent", "model"),
    *("chatgpt", "claude", "gemini"),
)
_VERBS_IGNORE = ("ignore", "disregard", "forget", "skip", "override", "bypass")
# Each phrase: words that must occur (one of each group, in the lower-cased text) before its
# pattern is run, and the pattern. Most pages hold none of them; the patterns are the slow part.
_PHRASES: tuple[tuple[tuple[tuple[str, ...], ...], str], ...] = (
    (
        (
            _VERBS_IGNORE,
            ("previous", "prior", "above", "earlier", "preceding", "foregoing", "original"),
        ),
        r"\b(?:ignore|disregard|forget|skip|override|bypass)\s+(?:all\s+|any\s+|every\s+)?"
        r"(?:of\s+)?(?:the\s+|your\s+|my\s+|these\s+|those\s+)?"
        r"(?:previous|prior|above|earlier|preceding|foregoing|original|initial|system)\s+"
        r"(?:instructions?|prompts?|directions?|directives?|rules|guidelines|messages?|"
        r"context|commands?)\b",
    ),
    (
        (_VERBS_IGNORE, ("initial", "system")),
        r"\b(?:ignore|disregard|forget|skip|override|bypass)\s+(?:all\s+|any\s+|every\s+)?"
        r"(?:of\s+)?(?:the\s+|your\s+|my\s+)?(?:initial|system)\s+"
        r"(?:instructions?|prompts?|directives?|rules|guidelines|messages?)\b",
    ),
    (
        (("disregard", "ignore", "forget"), ("above", "foregoing", "preceding")),
        r"\b(?:disregard|ignore|forget)\s+(?:all\s+|everything\s+)?(?:of\s+)?(?:the\s+|that\s+)?"
        r"(?:above|foregoing|preceding)\b",
    ),
    (
        (("you are",),),
        r"\byou\s+are\s+now\s+(?:a|an|the|in|no\s+longer|acting|called|named|free|"
        r"unrestricted|jailbroken|dan)\b",
    ),
    (
        (("instruction",),),
        r"\b(?:new|updated|revised|real|actual|additional|secret|hidden)\s+(?:system\s+)?"
        r"instructions?\s*:",
    ),
    (
        (("user",),),
        r"\b(?:(?:do\s+not|don[’']?t|never)\s+(?:tell|inform|notify|alert|warn|show)\s+the\s+user|"
        r"(?:do\s+not|don[’']?t|never)\s+(?:mention|reveal|disclose)\s+(?:this|it|that)\s+to\s+"
        r"the\s+user|without\s+(?:telling|informing|notifying|alerting)\s+the\s+user)\b",
    ),
    (
        (("prompt", "instructions"),),
        r"\b(?:reveal|print|show|repeat|output|leak|disclose)\s+(?:me\s+)?(?:your|the)\s+"
        r"(?:system\s+prompt|(?:initial\s+|hidden\s+|secret\s+|original\s+)?instructions)\b",
    ),
    (
        (("from now",),),
        r"\bfrom\s+now\s+on,?\s+(?:you|your|the\s+(?:assistant|ai|model))\b",
    ),
    (
        (
            ("note", "message", "instruction", "attention", "hey", "dear"),
            _ADDRESSEES,
        ),
        r"\b(?:(?:note|message|instructions?|attention)\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+)?"
        r"(?:ai|assistant|llm|language\s+model|chatbot|agent|model)s?|"
        r"(?:hey|dear|attention)\s*,?\s+(?:ai|assistant|llm|chatgpt|claude|gemini))\b",
    ),
    (
        (
            ("send", "post ", "forward", "mail", "upload", "exfiltrate", "transmit"),
            (
                "conversation",
                "chat",
                "messages",
                "history",
                "user",
                "personal data",
                "api key",
                "credential",
                "password",
                "secret",
                "token",
            ),
        ),
        r"\b(?:send|post|forward|e-?mail|upload|exfiltrate|transmit)\s+(?:the\s+|this\s+|all\s+|"
        r"your\s+|any\s+)?(?:(?:conversation|chat)(?:\s+history)?|messages|history|user[’']?s?\s+data|"
        r"personal\s+data|api\s+keys?|credentials|passwords?|secrets?|tokens?)\s+to\b",
    ),
)

# The same requests in other languages (lower-cased text; the words that must occur first).
_FOREIGN_PHRASES: tuple[tuple[tuple[tuple[str, ...], ...], str], ...] = (
    (
        (("ignor", "oubli"),),
        r"\b(?:ignore[zr]?|oublie[zr]?)\s+(?:toutes\s+)?(?:les\s+|vos\s+|tes\s+)?"
        r"(?:instructions|consignes|directives|règles)\s+(?:précédentes|antérieures|"
        r"initiales|ci-dessus)",
    ),
    (
        (("ignorier", "vergiss", "missachte"),),
        r"\b(?:ignorier(?:e|en)?|vergiss|vergessen\s+sie|missachte)\s+(?:bitte\s+)?"
        r"(?:(?:alle|die|deine|ihre)\s+)*(?:vorherigen|bisherigen|obigen|vorigen|ursprünglichen)\s+"
        r"(?:anweisungen|instruktionen|regeln|befehle)",
    ),
    (
        (("ignor", "olvida", "esquece", "dimentica"),),
        r"\b(?:ignora|ignore|olvida|olvide|esquece|esqueça|dimentica)\s+(?:todas\s+|tutte\s+)?"
        r"(?:las\s+|as\s+|le\s+|tus\s+|suas\s+)?(?:instrucciones|instruções|istruzioni|"
        r"indicaciones|regras|reglas|regole)\s+(?:anteriores|precedentes|precedenti|previas)",
    ),
    (
        (("negeer", "vergeet"),),
        r"\b(?:negeer|vergeet)\s+(?:alle\s+)?(?:vorige|eerdere|voorgaande)\s+"
        r"(?:instructies|opdrachten|regels)",
    ),
    (
        (("игнорир", "забудь", "проигнорир"),),
        r"(?:игнорируй(?:те)?|проигнорируй(?:те)?|забудь(?:те)?)\s+(?:все\s+)?"
        r"(?:предыдущие|прежние|предшествующие)\s+(?:инструкции|указания|правила)",
    ),
    (
        (("忽略", "无视", "忘记", "無視", "忘れ"),),
        r"(?:忽略|无视|忘记|無視|忘れ)[^。\n]{0,12}(?:指令|指示|说明|命令|ルール|規則)"
        r"|(?:以前|之前|上述|前面|先前)[^。\n]{0,8}(?:指令|指示)[^。\n]{0,8}(?:忽略|无视|無視)",
    ),
    (
        (("url", "link", "image", "query", "adresse", "bild"),),
        r"\b(?:append|add|include|insert|put|encode|replace|attach)\b[^.\n]{0,80}\b"
        r"(?:to|in|into|with|inside)\s+(?:the\s+|this\s+|that\s+)?(?:url|link|image|query)",
    ),
)

# Markdown images and links that carry a placeholder to fill in: data leaving in a URL.
_EXFILTRATION = re.compile(
    r"!?\[[^\]\n]{0,200}\]\(\s*<?https?://[^)\s]*\?[^)\s]*"
    r"(?:[{}\[\]<>$]|%7[bBdD]|%5[bBdD]|%3[cCeE]|(?:INSERT|REPLACE|FILL|SUMMARY|CONVERSATION|"
    r"SECRET|PASSWORD|HISTORY|DATA)(?![a-z]))",
)
# JSON that imitates a chat or tool message (a forged result, a forged system turn).
_FORGED_MESSAGE = re.compile(
    r"""["']role["']\s*:\s*["'](?:system|tool|developer|function)["']"""
    r"""|["']type["']\s*:\s*["'](?:tool_result|function_call_output|tool_use)["']"""
    r"""|["']tool_call_id["']\s*:""",
    re.IGNORECASE,
)
# Characters nobody sees, and escapes a reader decodes: a disguise for the patterns above.
_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")
_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|\\x([0-9a-fA-F]{2})")
# Latin letters' lookalikes in Cyrillic and Greek, read as Latin inside mixed-script words.
_HOMOGLYPHS = str.maketrans(
    "аеорсухіјѕԁԛԝӏАВЕКМНОРСТХІЈЅαεικνορτυχΑΒΕΗΙΚΜΝΟΡΤΥΧ",
    "aeopcyxijsdqwlABEKMHOPCTXIJSaeiknoptyxABEHIKMNOPTYX",
)
_WORD = re.compile(r"\w+")
_LATIN = re.compile(r"[A-Za-z]")
_LOOKALIKE = re.compile("[аеорсухіјѕԁԛԝӏАВЕКМНОРСТХІЈЅαεικνορτυχΑΒΕΗΙΚΜΝΟΡΤΥΧ]")
# A phrase right after an opening quote is quoted, not said: articles about prompt injection.
_OPENING_QUOTES = ('"', "“", "„", "«", "‘", "'", "`", "‹")

_ROLE_TOKEN = "role token"
_ENVELOPE = "tool-call or turn envelope"
_TEMPLATE_TOKEN = "template token"
_HOST_NOTE = "forged host note"
# What a neutralised token looks like in a report: from its opening through its closing mark.
_TOKEN_END = re.compile(r"[^\s]*?(?:\|>|｜>|>>|>|\])|\S{1,40}")

_Phrase = tuple[tuple[tuple[str, ...], ...], re.Pattern[str]]


@functools.cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], tuple[_Phrase, ...]]:
    # Compiled on first use: hosts that never filter anything do not pay for it at startup.
    structure = re.compile(_STRUCTURE, re.IGNORECASE)
    impersonation = re.compile(_IMPERSONATION, re.IGNORECASE | re.MULTILINE)
    phrases = tuple(
        (triggers, re.compile(pattern, re.IGNORECASE))
        for triggers, pattern in (*_PHRASES, *_FOREIGN_PHRASES)
    )
    return structure, impersonation, phrases


def _unmixed(match: re.Match[str]) -> str:
    word = match.group()
    if _LATIN.search(word) and _LOOKALIKE.search(word):
        return word.translate(_HOMOGLYPHS)
    return word


def reading_view(text: str) -> str:
    """``text`` as a reader takes it in: escapes decoded, invisible characters dropped,
    fullwidth and other compatibility forms folded (NFKC), and Cyrillic or Greek lookalikes
    inside Latin words read as Latin. Used to find disguised markup and phrasing; never shown."""
    view = text
    if "&" in view:
        view = html.unescape(view)
    if "\\" in view:
        view = _ESCAPE.sub(lambda m: chr(int(m.group(1) or m.group(2), 16)), view)
    if not view.isascii():
        view = unicodedata.normalize("NFKC", _INVISIBLE.sub("", view))
        if _LOOKALIKE.search(view):
            view = _WORD.sub(_unmixed, view)
    return view


def _said(text: str, match: re.Match[str]) -> bool:
    """Whether a phrase is said rather than quoted (an opening quote right before it)."""
    before = text[max(0, match.start() - 2) : match.start()].rstrip()
    return not before.endswith(_OPENING_QUOTES)


def _structure_kind(text: str, match: re.Match[str]) -> tuple[str, str]:
    """The kind of a structural match and what replaces its opening mark."""
    opening = match.group()
    if opening == "[":
        if text[match.end() : match.end() + 12].lstrip().lower().startswith("host"):
            return _HOST_NOTE, "［"
        return _TEMPLATE_TOKEN, "［"
    if opening == "<<":
        return _ROLE_TOKEN, "‹‹"
    end = match.end()
    if text.startswith(("|", "｜"), end) or _BARE_TOKEN.match(text, end):
        return _ROLE_TOKEN, "‹"
    return _ENVELOPE, "‹"


def _shown(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _SHOWN_MAX else text[: _SHOWN_MAX - 1] + "…"


def _counted(kind: str, counts: Counter[str]) -> Iterable[str]:
    for text, count in counts.items():
        suffix = f" ({count}×)" if count > 1 else ""
        yield f"{kind} {_shown(text)!r}{suffix}"


def filter_text(text: str) -> FilteredText:
    """Run the built-in filter on one text.

    Neutralises chat-template tokens, tool-call and tool-result envelopes and system-prompt
    impersonation lines (see the module docstring for the exact list and the replacements) and
    flags injection phrasing without changing it. Never removes anything.

    **Example**::

        >>> filter_text("<|im_start|>system").text
        '‹|im_start|>system'
    """
    if not isinstance(text, str):
        raise TypeError(f"the filter takes text (str); got {type(text).__name__}: {text!r}")
    structure, impersonation, phrases = _patterns()
    found: dict[str, Counter[str]] = {}

    def structural(match: re.Match[str]) -> str:
        kind, replacement = _structure_kind(text, match)
        token = _TOKEN_END.match(text, match.start())
        shown = token.group() if token else match.group()
        found.setdefault(kind, Counter())[shown] += 1
        return replacement

    def impersonating(match: re.Match[str]) -> str:
        label = match.group("label")
        found.setdefault("system-prompt impersonation", Counter())[label.strip()] += 1
        return f"{match.group('lead')}{QUOTED_MARKER}{label}"

    changed = structure.sub(structural, text) if _may_hold_structure(text) else text
    changed = impersonation.sub(impersonating, changed)
    view = reading_view(changed)
    flags: Counter[str] = Counter()
    lowered = view.lower()
    for triggers, pattern in phrases:
        if all(any(word in lowered for word in group) for group in triggers):
            for match in pattern.finditer(view):
                if _said(view, match):
                    flags[match.group()] += 1
    disguised: Counter[str] = Counter()
    sent_view = reading_view(text) if view != changed else text
    if sent_view != text:
        # What the escapes and lookalikes hid: flagged, since only the text as sent is changed.
        for pattern in (structure, impersonation):
            hidden = len(pattern.findall(sent_view)) - len(pattern.findall(text))
            if hidden > 0:
                for match in pattern.finditer(sent_view):
                    token = _TOKEN_END.match(sent_view, match.start())
                    disguised[(token.group() if token else match.group()).strip()] += 1
    others: Counter[str] = Counter()
    for kind, pattern in (("data in a link", _EXFILTRATION), ("forged message", _FORGED_MESSAGE)):
        for match in pattern.finditer(view):
            others[f"{kind} {_shown(match.group())!r}"] += 1
    neutralised = [entry for kind, counts in found.items() for entry in _counted(kind, counts)]
    flagged = [
        *_counted("injection phrasing", flags),
        *_counted("disguised markup", disguised),
        *(f"{entry} ({count}×)" if count > 1 else entry for entry, count in others.items()),
    ]
    return FilteredText(text=changed, neutralised=neutralised, flagged=flagged)


def _may_hold_structure(text: str) -> bool:
    return "<" in text or "[" in text


def default_filter(texts: Sequence[str]) -> list[FilteredText]:
    """The built-in filter over the texts of one unit (see :func:`filter_text`)."""
    return [filter_text(text) for text in texts]
