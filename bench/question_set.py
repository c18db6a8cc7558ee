"""A question set that generalises: everyday questions generated from templates, split once.

``bench/local_model.py --questions dev`` asks the development half, ``--questions test`` the
test half (measured once, at the end of a round of work; the figures the README gives are the
test half's). ``python bench/question_set.py --fresh SEED`` draws a held-out set anew from the
same templates with another seed (``bench/questions/fresh.json``, without the halves' questions;
``--questions fresh`` asks it): the test half, once looked at, measures less each round. The
halves are files, ``bench/questions/dev.json`` and ``bench/questions/test.json``, written once
by ``python bench/question_set.py --write`` from the templates below with a fixed seed, and
committed: work on the development half never changes what the test half holds.

Each template is a shape of question (a tip on a bill, a count of things at a price, a time in
one place asked for in another with the place first or last, a unit written as a symbol or a
word, a question of plain knowledge …). Numbers, places and units are drawn at random, and each
question is written in one of several writers' styles: plain, terse, chatty, lower-case texting,
and misspelled. Expected values are computed here (for clock questions, at check time: the
answer's check names the zones and the wall time, never a typed-in answer).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

SEED = 30_2026
"""The seed of the generation and of the split; changing it makes a new set."""

FOLDER = Path(__file__).with_name("questions")
HALVES = ("dev", "test")

Spec = dict[str, Any]
Draft = tuple[str, str | None, Spec]  # text, tool, check spec


# -- writers' styles -----------------------------------------------------------------------------

_MISSPELLINGS = {
    "what": ["wat", "whta"],
    "what's": ["whats", "wats"],
    "what is": ["whats", "wat is"],
    "percent": ["precent", "percnt", "per cent"],
    "the": ["teh"],
    "time": ["tiem", "tme"],
    "convert": ["conver", "covert", "convrt"],
    "please": ["pls", "plz"],
    "you": ["u"],
    "are": ["r"],
    "kilometers": ["kilometres", "kilomters", "kilometrs"],
    "kilometres": ["kilometers", "kilometers"],
    "temperature": ["temprature", "temperture"],
    "minutes": ["minuts", "mins"],
    "seconds": ["secs", "seconds"],
    "pounds": ["pounds", "punds"],
    "ounces": ["ounzes", "ounces"],
    "multiply": ["multipy", "mulitply"],
    "divided": ["devided", "divded"],
    "average": ["avarage", "averge"],
    "square": ["sqaure", "squre"],
    "tomorrow": ["tommorow"],
    "today": ["tody", "2day"],
    "calculate": ["calcuate", "calulate"],
    "because": ["bc"],
    "much": ["mutch"],
    "many": ["meny"],
    "degrees": ["degres", "degress"],
    "celsius": ["celcius", "celsuis"],
    "fahrenheit": ["farenheit", "fahrenhiet"],
    "capital": ["captial", "capitol"],
    "weather": ["wether"],
    "there": ["their"],
    "which": ["wich"],
    "language": ["langauge"],
    "tip": ["tip"],
    "bill": ["bil"],
    "discount": ["discout"],
    "each": ["eech", "ea"],
}


def _typo(word: str, rng: random.Random) -> str:
    letters = [i for i, ch in enumerate(word) if ch.isalpha()]
    if len(letters) < 4:
        return word
    i = rng.choice(letters[1:-1])
    kind = rng.randrange(3)
    if kind == 0:
        return word[:i] + word[i + 1 :]
    if kind == 1 and i + 1 < len(word) and word[i + 1].isalpha():
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    return word[:i] + word[i] + word[i:]


def misspell(text: str, rng: random.Random) -> str:
    """``text`` with one or two words misspelled as people do (never a number or a name)."""
    out = text
    known = [w for w in _MISSPELLINGS if re.search(rf"\b{re.escape(w)}\b", out, re.I)]
    rng.shuffle(known)
    changed = 0
    for word in known[:2]:
        replacement = rng.choice(_MISSPELLINGS[word])
        out = re.sub(rf"\b{re.escape(word)}\b", replacement, out, count=1, flags=re.I)
        changed += 1
    if changed < 2:
        words = out.split(" ")
        plain = [
            i
            for i, w in enumerate(words)
            if w.isalpha() and w.islower() and len(w) >= 5 and w not in _UNIT_WORDS
        ]
        if plain:
            i = rng.choice(plain)
            words[i] = _typo(words[i], rng)
            out = " ".join(words)
    return out


def texting(text: str) -> str:
    """``text`` as typed on a phone: lower case, no final punctuation."""
    return text.lower().rstrip("?.!")


_UNIT_WORDS: set[str] = set()


def styled(phrasings: dict[str, list[str]], rng: random.Random) -> tuple[str, str]:
    """One phrasing in a writer's style, and the style's name.

    ``phrasings`` has ``plain``, ``terse`` and ``chatty`` lists of templates already filled in;
    ``texting`` and ``misspelled`` are drawn from them.
    """
    style = rng.choice(["plain", "plain", "terse", "chatty", "texting", "misspelled"])
    if style in ("plain", "terse", "chatty"):
        return rng.choice(phrasings[style]), style
    base = rng.choice(phrasings["plain"] + phrasings["chatty"] + phrasings["terse"])
    if style == "texting":
        return texting(base), style
    return misspell(base, rng), style


# -- amounts ---------------------------------------------------------------------------------------


def _num(value: float) -> str:
    """A number as people write it: no trailing zeros, thousands as written digits."""
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _money(value: float, rng: random.Random) -> str:
    text = f"{value:.2f}" if not float(value).is_integer() else str(int(value))
    return rng.choice([f"${text}", f"${text}", f"{text} dollars", f"€{text}", f"£{text}", text])


def _price(rng: random.Random, low: int, high: int) -> float:
    whole = rng.randint(low, high)
    return whole + rng.choice([0, 0, 0.5, 0.25, 0.99, 0.75, 0.49])


PERCENTS = [5, 8, 10, 12, 12.5, 15, 17.5, 18, 20, 22, 25, 30, 33, 35, 40, 45, 60, 65, 75, 80]


def _calc(text: str, value: float) -> Draft:
    return text, "calculator", {"number": value}


# -- arithmetic ------------------------------------------------------------------------------------


def percent_of(rng: random.Random) -> Draft:
    p = rng.choice(PERCENTS)
    n = rng.choice([rng.randint(20, 999), rng.randint(1000, 9999), rng.randint(2, 40) * 25])
    ps, ns = _num(p), _num(n)
    pw = rng.choice([f"{ps}%", f"{ps} percent", f"{ps}%"])
    text, _ = styled(
        {
            "plain": [
                f"What is {pw} of {ns}?",
                f"How much is {pw} of {ns}?",
                f"Find {pw} of {ns}.",
            ],
            "terse": [f"{pw} of {ns}?", f"{pw} of {ns}"],
            "chatty": [
                f"Quick question: what's {pw} of {ns}?",
                f"Can you work out {pw} of {ns} for me?",
            ],
        },
        rng,
    )
    return _calc(text, p * n / 100)


def tip(rng: random.Random) -> Draft:
    p = rng.choice([10, 12, 15, 18, 20, 22, 25])
    bill = _price(rng, 12, 240)
    b = _money(bill, rng)
    total = rng.random() < 0.4
    if total:
        text, _ = styled(
            {
                "plain": [
                    f"What is the total of a {b} bill with a {p}% tip?",
                    f"The bill is {b}. What do I pay in all with a {p}% tip?",
                ],
                "terse": [f"{b} bill + {p}% tip total?"],
                "chatty": [
                    f"We had dinner and the bill came to {b}. If we add a {p}% tip, how much "
                    "do we pay altogether?",
                ],
            },
            rng,
        )
        return _calc(text, bill * (1 + p / 100))
    text, _ = styled(
        {
            "plain": [
                f"How much is a {p}% tip on a {b} bill?",
                f"What is a {p} percent tip on {b}?",
                f"Calculate a {p}% tip for a bill of {b}.",
            ],
            "terse": [f"{p}% tip on {b}?", f"tip {p}% of {b}"],
            "chatty": [
                f"Our lunch bill is {b} and I want to leave {p}%. How much tip is that?",
                f"Hey, what should I tip on {b} if I go with {p} percent?",
            ],
        },
        rng,
    )
    return _calc(text, bill * p / 100)


_THINGS = [
    ("coffees", "coffee"),
    ("tickets", "ticket"),
    ("books", "book"),
    ("notebooks", "notebook"),
    ("pizzas", "pizza"),
    ("shirts", "shirt"),
    ("apples", "apple"),
    ("bus passes", "bus pass"),
    ("boxes of pens", "box of pens"),
    ("sandwiches", "sandwich"),
    ("chairs", "chair"),
    ("movie tickets", "movie ticket"),
]


def count_at_price(rng: random.Random) -> Draft:
    k = rng.randint(2, 12)
    price = _price(rng, 1, 60)
    things, _ = rng.choice(_THINGS)
    pr = _money(price, rng)
    text, _ = styled(
        {
            "plain": [
                f"If I buy {k} {things} at {pr} each, what is the total?",
                f"How much do {k} {things} cost at {pr} each?",
                f"What do {k} {things} at {pr} apiece come to?",
            ],
            "terse": [f"{k} {things} at {pr} each total?", f"{k} x {pr}?"],
            "chatty": [
                f"I'm getting {k} {things} for the team and they're {pr} each. What will I spend?",
                f"So {things} are {pr} a piece, and I need {k} of them. How much is that?",
            ],
        },
        rng,
    )
    return _calc(text, k * price)


def discount(rng: random.Random) -> Draft:
    p = rng.choice([10, 15, 20, 25, 30, 40, 50, 60, 70])
    price = _price(rng, 15, 400)
    pr = _money(price, rng)
    item = rng.choice(["jacket", "pair of shoes", "lamp", "bike", "phone case", "backpack", "TV"])
    saving = rng.random() < 0.35
    if saving:
        text, _ = styled(
            {
                "plain": [
                    f"How much do I save with {p}% off a {pr} {item}?",
                    f"What is {p}% off {pr} in money saved?",
                ],
                "terse": [f"savings: {p}% off {pr}?"],
                "chatty": [
                    f"The {item} I want is {pr} and there's a {p}% discount. How much money "
                    "does that knock off?",
                ],
            },
            rng,
        )
        return _calc(text, price * p / 100)
    text, _ = styled(
        {
            "plain": [
                f"A {item} costs {pr} and is {p}% off. What is the sale price?",
                f"What is {pr} after a {p}% discount?",
                f"What does a {pr} {item} cost with {p}% off?",
            ],
            "terse": [f"{pr} minus {p}%?", f"{pr} less {p}% off?"],
            "chatty": [
                f"There's a sale: {p}% off everything. How much would a {pr} {item} be?",
            ],
        },
        rng,
    )
    return _calc(text, price * (1 - p / 100))


def subtract(rng: random.Random) -> Draft:
    a = rng.randint(3, 900)
    b = a + rng.randint(5, 5000)
    year = rng.random() < 0.25
    if year:
        a, b = rng.randint(1900, 2015), rng.randint(2016, 2030)
        text, _ = styled(
            {
                "plain": [f"Subtract {a} from {b}.", f"How many years are between {a} and {b}?"],
                "terse": [f"{b} - {a}?", f"{b} minus {a}"],
                "chatty": [f"I was born in {a}. How old will I turn in {b}?"],
            },
            rng,
        )
        return _calc(text, b - a)
    text, _ = styled(
        {
            "plain": [
                f"Subtract {a} from {b}.",
                f"What is {b} minus {a}?",
                f"What is the difference between {b} and {a}?",
                f"Take {a} away from {b}.",
            ],
            "terse": [f"{b}-{a}", f"{b} minus {a}?", f"{b} - {a} ="],
            "chatty": [
                f"I had {b} points and lost {a}. How many do I have left?",
                f"If I start with {b} and spend {a}, what's left?",
            ],
        },
        rng,
    )
    return _calc(text, b - a)


def add(rng: random.Random) -> Draft:
    values = [rng.randint(2, 2000) for _ in range(rng.choice([2, 2, 3, 4]))]
    listed = ", ".join(str(v) for v in values[:-1]) + f" and {values[-1]}"
    plus = " + ".join(str(v) for v in values)
    text, _ = styled(
        {
            "plain": [f"What is {plus}?", f"Add {listed}.", f"What is the sum of {listed}?"],
            "terse": [f"{plus}", f"{plus} ="],
            "chatty": [
                f"I spent {listed} on three trips. What did I spend in total?"
                if len(values) == 3
                else f"Can you add up {listed} for me?",
            ],
        },
        rng,
    )
    return _calc(text, sum(values))


def multiply(rng: random.Random) -> Draft:
    a, b = rng.randint(3, 99), rng.randint(11, 999)
    text, _ = styled(
        {
            "plain": [f"What is {a} times {b}?", f"Multiply {b} by {a}.", f"What is {a} * {b}?"],
            "terse": [f"{a}x{b}", f"{a} * {b}", f"{a} times {b}?"],
            "chatty": [f"Help me out, what's {a} multiplied by {b}?"],
        },
        rng,
    )
    return _calc(text, a * b)


def divide(rng: random.Random) -> Draft:
    b = rng.randint(2, 16)
    a = b * rng.randint(3, 400) + rng.choice([0, 0, 0, rng.randint(1, b - 1)])
    split = rng.random() < 0.35
    if split:
        total = _money(a, rng)
        text, _ = styled(
            {
                "plain": [
                    f"How much does each person pay if {b} people split {total}?",
                    f"Split {total} between {b} people.",
                ],
                "terse": [f"{total} / {b} people?"],
                "chatty": [f"The rent is {total} and there are {b} of us. What's each share?"],
            },
            rng,
        )
        return _calc(text, a / b)
    text, _ = styled(
        {
            "plain": [f"What is {a} divided by {b}?", f"Divide {a} by {b}.", f"What is {a} / {b}?"],
            "terse": [f"{a}/{b}", f"{a} / {b}?"],
            "chatty": [f"Could you tell me what {a} divided by {b} comes to?"],
        },
        rng,
    )
    return _calc(text, a / b)


def power(rng: random.Random) -> Draft:
    shape = rng.randrange(3)
    if shape == 0:
        a, b = rng.randint(2, 9), rng.randint(3, 12)
        ordinal = {3: "3rd"}.get(b, f"{b}th")
        text, _ = styled(
            {
                "plain": [
                    f"What is {a} to the power of {b}?",
                    f"What is {a} to the {ordinal} power?",
                ],
                "terse": [f"{a}^{b}", f"{a}**{b}"],
                "chatty": [f"What do I get if I raise {a} to the power {b}?"],
            },
            rng,
        )
        return _calc(text, a**b)
    a = rng.randint(4, 60)
    word, exponent = rng.choice([("squared", 2), ("cubed", 3)])
    text, _ = styled(
        {
            "plain": [f"What is {a} {word}?", f"Calculate {a} {word}."],
            "terse": [f"{a} {word}?"],
            "chatty": [f"Just checking, what's {a} {word}?"],
        },
        rng,
    )
    return _calc(text, a**exponent)


def root(rng: random.Random) -> Draft:
    if rng.random() < 0.7:
        r = rng.randint(4, 90)
        n = r * r if rng.random() < 0.7 else rng.randint(2, 500)
        text, _ = styled(
            {
                "plain": [f"What is the square root of {n}?", f"Find the square root of {n}."],
                "terse": [f"sqrt {n}", f"square root of {n}?", f"sqrt({n})"],
                "chatty": [f"Do you know the square root of {n}?"],
            },
            rng,
        )
        return _calc(text, math.sqrt(n))
    r = rng.randint(2, 20)
    n = r**3
    text, _ = styled(
        {
            "plain": [f"What is the cube root of {n}?"],
            "terse": [f"cube root of {n}?"],
            "chatty": [f"What's the cube root of {n}, please?"],
        },
        rng,
    )
    return _calc(text, r)


def average(rng: random.Random) -> Draft:
    values = [rng.randint(1, 100) for _ in range(rng.randint(3, 6))]
    listed = ", ".join(str(v) for v in values[:-1]) + f" and {values[-1]}"
    text, _ = styled(
        {
            "plain": [f"What is the average of {listed}?", f"What is the mean of {listed}?"],
            "terse": [f"avg of {', '.join(str(v) for v in values)}", f"mean {listed}?"],
            "chatty": [f"My test scores were {listed}. What's my average?"],
        },
        rng,
    )
    return _calc(text, sum(values) / len(values))


def rate(rng: random.Random) -> Draft:
    hours = rng.choice([4, 5, 6, 7.5, 8, 9])
    days = rng.randint(3, 6)
    pay = _price(rng, 11, 45)
    shape = rng.randrange(2)
    if shape == 0:
        text, _ = styled(
            {
                "plain": [
                    f"If I work {_num(hours)} hours a day for {days} days, how many hours is that?"
                ],
                "terse": [f"{_num(hours)} h/day for {days} days = ? hours"],
                "chatty": [
                    f"This week I'm doing {_num(hours)} hours a day, {days} days in a row. Total "
                    "hours?"
                ],
            },
            rng,
        )
        return _calc(text, hours * days)
    text, _ = styled(
        {
            "plain": [f"What do I earn for {_num(hours)} hours at {_money(pay, rng)} an hour?"],
            "terse": [f"{_num(hours)} hours at {_money(pay, rng)}/hour?"],
            "chatty": [
                f"I got paid {_money(pay, rng)} per hour and worked {_num(hours)} hours. What did "
                "I make?"
            ],
        },
        rng,
    )
    return _calc(text, hours * pay)


def percent_ratio(rng: random.Random) -> Draft:
    whole = rng.choice([20, 25, 40, 50, 80, 120, 200, 250, 400, 500])
    part = whole * rng.choice([1, 2, 3, 4, 6, 7, 9]) // 10
    text, _ = styled(
        {
            "plain": [
                f"What percent of {whole} is {part}?",
                f"{part} is what percentage of {whole}?",
            ],
            "terse": [f"{part}/{whole} as a percent?"],
            "chatty": [f"I got {part} out of {whole} on the exam. What percentage is that?"],
        },
        rng,
    )
    return _calc(text, part / whole * 100)


# -- units -----------------------------------------------------------------------------------------

# Each kind: (factor to a base unit, or a conversion for temperatures), and spellings.
_LENGTH = {
    "km": (1000.0, ["km", "kilometers", "kilometres", "kms"]),
    "mi": (1609.344, ["miles", "mi", "miles"]),
    "m": (1.0, ["meters", "metres", "m"]),
    "ft": (0.3048, ["feet", "ft", "foot"]),
    "in": (0.0254, ["inches", "in", "inch"]),
    "cm": (0.01, ["cm", "centimeters", "centimetres"]),
    "yd": (0.9144, ["yards", "yd"]),
}
_MASS = {
    "kg": (1.0, ["kg", "kilograms", "kilos", "kgs"]),
    "lb": (0.45359237, ["pounds", "lb", "lbs"]),
    "g": (0.001, ["grams", "g"]),
    "oz": (0.028349523125, ["ounces", "oz"]),
    "st": (6.35029318, ["stone"]),
}
_VOLUME = {
    "l": (1.0, ["liters", "litres", "l", "L"]),
    "gal": (3.785411784, ["gallons", "gal"]),
    "ml": (0.001, ["ml", "milliliters", "millilitres", "mL"]),
    "cup": (0.2365882365, ["cups"]),
    "floz": (0.0295735295625, ["fl oz", "fluid ounces"]),
    "pt": (0.473176473, ["pints"]),
}
_SPEED = {
    "kmh": (1 / 3.6, ["km/h", "kph", "kilometers per hour", "kmh"]),
    "mph": (0.44704, ["mph", "miles per hour", "miles an hour"]),
    "ms": (1.0, ["m/s", "meters per second"]),
    "kn": (0.514444, ["knots"]),
}
_TIME = {
    "s": (1.0, ["seconds", "secs", "s"]),
    "min": (60.0, ["minutes", "mins", "min"]),
    "h": (3600.0, ["hours", "hrs", "h"]),
    "d": (86400.0, ["days"]),
    "wk": (604800.0, ["weeks"]),
}
_DATA = {
    "MB": (1e6, ["MB", "megabytes"]),
    "GB": (1e9, ["GB", "gigabytes"]),
    "KB": (1e3, ["KB", "kilobytes"]),
    "TB": (1e12, ["TB", "terabytes"]),
}
_AREA = {
    "m2": (1.0, ["square meters", "m²", "sq m", "square metres"]),
    "ft2": (0.09290304, ["square feet", "sq ft", "ft²"]),
    "acre": (4046.8564224, ["acres"]),
    "ha": (10000.0, ["hectares", "ha"]),
}
_KINDS: list[tuple[str, dict[str, tuple[float, list[str]]], tuple[float, float]]] = [
    ("length", _LENGTH, (1, 500)),
    ("mass", _MASS, (1, 300)),
    ("volume", _VOLUME, (1, 40)),
    ("speed", _SPEED, (5, 150)),
    ("time", _TIME, (1, 90)),
    ("data", _DATA, (1, 900)),
    ("area", _AREA, (1, 800)),
]
for _, _table, _ in _KINDS:
    for _factor, _names in _table.values():
        _UNIT_WORDS.update(n for n in _names if n.isalpha())

_TEMPERATURES = {
    "C": ["°C", "degrees Celsius", "celsius", "C", "degrees C", "centigrade"],
    "F": ["°F", "degrees Fahrenheit", "fahrenheit", "F", "degrees F"],
    "K": ["kelvin", "K"],
}


def _kelvin(value: float, scale: str) -> float:
    if scale == "C":
        return value + 273.15
    if scale == "F":
        return (value - 32) * 5 / 9 + 273.15
    return value


def _from_kelvin(value: float, scale: str) -> float:
    if scale == "C":
        return value - 273.15
    if scale == "F":
        return (value - 273.15) * 9 / 5 + 32
    return value


def _quantity(value: str, unit: str) -> str:
    return f"{value}{unit}" if unit in ("°C", "°F", "m²", "ft²") else f"{value} {unit}"


def _unit_phrasings(q: str, into: str) -> dict[str, list[str]]:
    return {
        "plain": [
            f"Convert {q} to {into}.",
            f"How many {into} is {q}?",
            f"What is {q} in {into}?",
            f"How many {into} are in {q}?",
        ],
        "terse": [f"{q} to {into}", f"{q} in {into}?", f"{q} -> {into}"],
        "chatty": [
            f"I need to know what {q} is in {into}, can you help?",
            f"My friend said {q}. What's that in {into}?",
            f"Could you convert {q} into {into} for me please?",
        ],
    }


def units(rng: random.Random) -> Draft:
    if rng.random() < 0.22:
        source, target = rng.sample(["C", "F", "K"] if rng.random() < 0.2 else ["C", "F"], 2)
        value = rng.choice([rng.randint(-20, 45), rng.randint(30, 110), 0, 100, 37, 350])
        if source == "K":
            value = rng.randint(200, 400)
        q = _quantity(str(value), rng.choice(_TEMPERATURES[source]))
        into = rng.choice(_TEMPERATURES[target][1:4] if target != "K" else ["kelvin"])
        text, _ = styled(_unit_phrasings(q, into), rng)
        expected = _from_kelvin(_kelvin(value, source), target)
        return text, "convert_units", {"number": expected, "tolerance": 5e-3}
    _, table, (low, high) = rng.choice(_KINDS)
    source, target = rng.sample(sorted(table), 2)
    value = rng.choice([float(rng.randint(int(low), int(high))), round(rng.uniform(low, high), 1)])
    source_name = rng.choice(table[source][1])
    target_name = rng.choice(table[target][1])
    q = _quantity(_num(value), source_name)
    text, _ = styled(_unit_phrasings(q, target_name), rng)
    expected = value * table[source][0] / table[target][0]
    return text, "convert_units", {"number": expected, "tolerance": 5e-3}


def unit_of_one(rng: random.Random) -> Draft:
    _, table, _ = rng.choice([k for k in _KINDS if k[0] in ("time", "length", "mass", "volume")])
    big, small = sorted(rng.sample(sorted(table), 2), key=lambda u: -table[u][0])
    big_name = {"wk": "week", "d": "day", "h": "hour", "min": "minute", "s": "second"}.get(big)
    if big_name is None:
        big_name = {
            "km": "kilometer",
            "mi": "mile",
            "m": "meter",
            "ft": "foot",
            "yd": "yard",
            "in": "inch",
            "cm": "centimeter",
            "kg": "kilogram",
            "lb": "pound",
            "g": "gram",
            "oz": "ounce",
            "st": "stone",
            "l": "liter",
            "gal": "gallon",
            "ml": "milliliter",
            "cup": "cup",
            "floz": "fluid ounce",
            "pt": "pint",
        }[big]
    article = "an" if big_name[0] in "aeiou" else "a"
    small_name = rng.choice([n for n in table[small][1] if len(n) > 2] or table[small][1])
    text, _ = styled(
        {
            "plain": [
                f"How many {small_name} are there in {article} {big_name}?",
                f"How many {small_name} are in one {big_name}?",
            ],
            "terse": [f"{small_name} in {article} {big_name}?", f"1 {big_name} in {small_name}"],
            "chatty": [f"Random thought: how many {small_name} are in {article} {big_name}?"],
        },
        rng,
    )
    return text, "convert_units", {"number": table[big][0] / table[small][0], "tolerance": 5e-3}


# -- clocks ----------------------------------------------------------------------------------------

PLACES = [
    ("Tokyo", "Asia/Tokyo"),
    ("London", "Europe/London"),
    ("Paris", "Europe/Paris"),
    ("Berlin", "Europe/Berlin"),
    ("New York", "America/New_York"),
    ("Los Angeles", "America/Los_Angeles"),
    ("Chicago", "America/Chicago"),
    ("Sydney", "Australia/Sydney"),
    ("Dubai", "Asia/Dubai"),
    ("Singapore", "Asia/Singapore"),
    ("Mumbai", "Asia/Kolkata"),
    ("Toronto", "America/Toronto"),
    ("Madrid", "Europe/Madrid"),
    ("Rome", "Europe/Rome"),
    ("Moscow", "Europe/Moscow"),
    ("Hong Kong", "Asia/Hong_Kong"),
    ("Seoul", "Asia/Seoul"),
    ("Beijing", "Asia/Shanghai"),
    ("Mexico City", "America/Mexico_City"),
    ("Cairo", "Africa/Cairo"),
    ("Johannesburg", "Africa/Johannesburg"),
    ("Istanbul", "Europe/Istanbul"),
    ("Bangkok", "Asia/Bangkok"),
    ("Amsterdam", "Europe/Amsterdam"),
    ("Stockholm", "Europe/Stockholm"),
    ("Denver", "America/Denver"),
    ("Honolulu", "Pacific/Honolulu"),
    ("Auckland", "Pacific/Auckland"),
    ("Vancouver", "America/Vancouver"),
    ("Lisbon", "Europe/Lisbon"),
    ("Dublin", "Europe/Dublin"),
    ("Athens", "Europe/Athens"),
    ("Nairobi", "Africa/Nairobi"),
    ("Buenos Aires", "America/Argentina/Buenos_Aires"),
    ("Manila", "Asia/Manila"),
    ("Japan", "Asia/Tokyo"),
    ("India", "Asia/Kolkata"),
    ("Germany", "Europe/Berlin"),
    ("San Francisco", "America/Los_Angeles"),
    ("Boston", "America/New_York"),
    ("UTC", "UTC"),
]


def current(rng: random.Random) -> Draft:
    place, zone = rng.choice(PLACES)
    shape = rng.random()
    if shape < 0.12:
        text, _ = styled(
            {
                "plain": [
                    f"What day of the week is it in {place}?",
                    f"What weekday is it now in {place}?",
                ],
                "terse": [f"day of week in {place}?"],
                "chatty": [f"I lose track of days. What day is it over in {place} right now?"],
            },
            rng,
        )
        return text, "current_time", {"weekday": zone}
    if shape < 0.26:
        with_place = rng.random() < 0.5
        where = f" in {place}" if with_place else ""
        text, _ = styled(
            {
                "plain": [f"What is today's date{where}?", f"What's the date today{where}?"],
                "terse": [f"date today{where}?", f"today's date{where}"],
                "chatty": [f"Sorry, what's the date today{where}? I've lost track."],
            },
            rng,
        )
        return text, "current_time", {"today": zone if with_place else "UTC"}
    text, _ = styled(
        {
            "plain": [
                f"What time is it in {place}?",
                f"What is the current time in {place}?",
                f"What's the time in {place} right now?",
                f"Tell me the time in {place}.",
            ],
            "terse": [f"time in {place}?", f"{place} time now?", f"current time {place}"],
            "chatty": [
                f"I have a friend in {place}. What time is it there right now?",
                f"Hey, is it late in {place}? What time is it there?",
            ],
        },
        rng,
    )
    return text, "current_time", {"clock_now": zone}


def _wall(hour: int, minute: int, rng: random.Random) -> str:
    if hour == 12 and minute == 0 and rng.random() < 0.5:
        return "noon"
    if hour == 0 and minute == 0 and rng.random() < 0.6:
        return "midnight"
    style = rng.randrange(4)
    if style == 0:
        return f"{hour:02d}:{minute:02d}"
    if style == 1:
        return f"{hour}:{minute:02d}"
    twelve = hour % 12 or 12
    suffix = rng.choice(["am", "a.m.", "AM"] if hour < 12 else ["pm", "p.m.", "PM"])
    space = rng.choice(["", " "])
    if minute == 0:
        return f"{twelve}{space}{suffix}"
    return f"{twelve}:{minute:02d}{space}{suffix}"


def converted_time(rng: random.Random) -> Draft:
    (place, zone), (other, target) = rng.sample([p for p in PLACES if p[0] != "UTC"], 2)
    if zone == target:
        return converted_time(rng)
    hour = rng.choice([0, 12, *list(range(6, 23))])
    minute = rng.choice([0, 0, 0, 15, 30, 45])
    when = _wall(hour, minute, rng)
    text, _ = styled(
        {
            "plain": [
                f"When it is {when} in {place}, what time is it in {other}?",
                f"What time is it in {other} when it's {when} in {place}?",
                f"If it's {when} in {place}, what time is it in {other}?",
                f"Convert {when} {place} time to {other} time.",
                f"What is {when} in {place} in {other} time?",
                f"In {place} it is {when}. What time is it in {other}?",
            ],
            "terse": [
                f"{when} {place} in {other}?",
                f"{when} in {place} = ? in {other}",
                f"{place} {when} -> {other}",
            ],
            "chatty": [
                f"I have a call at {when} {place} time. What time will that be for me in {other}?",
                f"My meeting is at {when} in {place}, and I'm in {other}. When do I join?",
            ],
        },
        rng,
    )
    return text, "convert_time", {"clock_at": [hour, minute, zone, target]}


# -- no tool ---------------------------------------------------------------------------------------

_CAPITALS = [
    ("France", "Paris"),
    ("Japan", "Tokyo"),
    ("Italy", "Rome"),
    ("Spain", "Madrid"),
    ("Germany", "Berlin"),
    ("England", "London"),
    ("Russia", "Moscow"),
    ("Egypt", "Cairo"),
    ("China", "Beijing"),
    ("Greece", "Athens"),
    ("Portugal", "Lisbon"),
    ("Canada", "Ottawa"),
    ("Australia", "Canberra"),
    ("Ireland", "Dublin"),
    ("Mexico", "Mexico City"),
]
_LANGUAGES = [
    ("Spain", "Spanish"),
    ("France", "French"),
    ("Germany", "German"),
    ("Italy", "Italian"),
    ("Japan", "Japanese"),
    ("Brazil", "Portuguese"),
    ("China", "Chinese|Mandarin"),
    ("Russia", "Russian"),
    ("Greece", "Greek"),
]
_FACTS: list[tuple[list[str], str]] = [
    (["What color is the sky on a clear day?", "what colour is a clear sky"], "blue"),
    (["What color is grass?", "What colour is grass usually?"], "green"),
    (["What color are bananas when they are ripe?", "colour of a ripe banana?"], "yellow"),
    (["What color is snow?"], "white"),
    (["What is the opposite of hot?", "opposite of hot?"], "cold"),
    (["What is the opposite of big?", "opposite of big"], "small|little"),
    (["What is the opposite of up?"], "down"),
    (["What is the opposite of fast?"], "slow"),
    (["What is the opposite of happy?"], "sad|unhappy"),
    (["How many legs does a dog have?", "how many legs has a dog"], "4|four"),
    (["How many legs does a spider have?"], "8|eight"),
    (["How many legs does a bird have?"], "2|two"),
    (["How many legs does an insect have?"], "6|six"),
    (["What do bees make?", "what do bees produce"], "honey"),
    (["Which animal says moo?", "what animal goes moo"], "cow|cows"),
    (["Which animal says woof?", "What animal barks?"], "dog|dogs"),
    (["Which animal says meow?"], "cat|cats|kitten"),
    (["What is the largest ocean on Earth?", "biggest ocean?"], "Pacific"),
    (["What is the largest planet in the solar system?", "biggest planet?"], "Jupiter"),
    (["Which planet is known as the red planet?"], "Mars"),
    (["What star is at the center of our solar system?"], "Sun"),
    (["What is the chemical formula of water?", "formula for water?"], "H2O|H₂O"),
    (["What gas do humans breathe in to live?"], "oxygen"),
    (["What gas do plants take in from the air?"], "carbon dioxide|CO2"),
    (["Who wrote Romeo and Juliet?"], "Shakespeare"),
    (["Who painted the Mona Lisa?"], "Leonardo|da Vinci|Vinci"),
    (["What is frozen water called?"], "ice"),
    (["What do you call a baby cat?"], "kitten"),
    (["What do you call a baby dog?"], "puppy|pup"),
    (["What is the plural of mouse?"], "mice"),
    (["What is the plural of child?"], "children"),
    (["Say hello.", "say hi!", "Hello there!"], "hello|hi|hey"),
    (["What do cows drink?"], "water"),
    (["What fruit keeps the doctor away, according to the saying?"], "apple|apples"),
    (["What is the main language spoken in the United States?"], "English"),
    (["What continent is Egypt in?"], "Africa"),
    (["What continent is France in?"], "Europe"),
    (["What is the tallest animal in the world?"], "giraffe|giraffes"),
    (["What is the largest mammal on Earth?"], "whale|whales"),
]


def no_tool(rng: random.Random) -> Draft:
    shape = rng.random()
    if shape < 0.25:
        country, capital = rng.choice(_CAPITALS)
        text, _ = styled(
            {
                "plain": [
                    f"What is the capital of {country}?",
                    f"What's the capital city of {country}?",
                ],
                "terse": [f"capital of {country}?"],
                "chatty": [f"I always forget: what's the capital of {country}?"],
            },
            rng,
        )
        return text, None, {"words": capital.split("|")}
    if shape < 0.4:
        country, language = rng.choice(_LANGUAGES)
        text, _ = styled(
            {
                "plain": [
                    f"What language is spoken in {country}?",
                    f"What language do people speak in {country}?",
                ],
                "terse": [f"language of {country}?"],
                "chatty": [f"Going to {country} soon! What language do they speak there?"],
            },
            rng,
        )
        return text, None, {"words": language.split("|")}
    phrasings, answer = rng.choice(_FACTS)
    base = rng.choice(phrasings)
    text, _ = styled(
        {
            "plain": [base],
            "terse": [texting(base)],
            "chatty": [f"Hi! Quick one: {base[0].lower()}{base[1:]}"],
        },
        rng,
    )
    return text, None, {"words": answer.split("|")}


# -- the set ---------------------------------------------------------------------------------------

TEMPLATES: tuple[tuple[Callable[[random.Random], Draft], int], ...] = (
    (percent_of, 14),
    (tip, 14),
    (count_at_price, 14),
    (discount, 14),
    (subtract, 12),
    (add, 10),
    (multiply, 10),
    (divide, 12),
    (power, 8),
    (root, 8),
    (average, 8),
    (rate, 8),
    (percent_ratio, 8),
    (units, 70),
    (unit_of_one, 14),
    (current, 44),
    (converted_time, 56),
    (no_tool, 52),
)
"""Each template and how many questions it writes (376 in all)."""


def generate(seed: int = SEED) -> list[dict[str, Any]]:
    """Every question of the set, in template order, without repeats."""
    rng = random.Random(seed)
    seen: set[str] = set()
    out: list[dict[str, Any]] = []
    for template, count in TEMPLATES:
        made = 0
        tries = 0
        while made < count:
            tries += 1
            if tries > count * 50:
                raise RuntimeError(f"{template.__name__} keeps writing the same questions")
            text, tool, check = template(rng)
            key = text.lower()
            if key in seen:
                continue
            seen.add(key)
            out.append({"text": text, "tool": tool, "shape": template.__name__, "check": check})
            made += 1
    return out


def split(questions: Sequence[dict[str, Any]], seed: int = SEED) -> dict[str, list[dict[str, Any]]]:
    """The two halves: within each shape, a seeded shuffle, alternately dealt."""
    rng = random.Random(seed + 1)
    halves: dict[str, list[dict[str, Any]]] = {half: [] for half in HALVES}
    shapes: dict[str, list[dict[str, Any]]] = {}
    for question in questions:
        shapes.setdefault(question["shape"], []).append(question)
    turn = 0
    for shape in shapes.values():
        dealt = list(shape)
        rng.shuffle(dealt)
        for question in dealt:
            halves[HALVES[turn % 2]].append(question)
            turn += 1
    return halves


def fresh(seed: int) -> list[dict[str, Any]]:
    """A held-out set drawn anew: the test half of the set ``seed`` generates, without any
    question the committed halves hold (the same templates, other numbers, places and words)."""
    known = {q["text"].lower() for half in HALVES for q in load(half)}
    drawn = split(generate(seed), seed)["test"]
    return [q for q in drawn if q["text"].lower() not in known]


def load(half: str) -> list[dict[str, Any]]:
    """The questions of one half (``dev`` or ``test``, or the ``fresh`` set) as written."""
    if half not in (*HALVES, "fresh"):
        raise ValueError(f"no half {half!r}; the halves are {', '.join(HALVES)}, and fresh")
    data: list[dict[str, Any]] = json.loads((FOLDER / f"{half}.json").read_text("utf-8"))
    return data


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write the two halves' files")
    parser.add_argument("--count", action="store_true", help="print the questions per shape")
    parser.add_argument(
        "--fresh",
        type=int,
        metavar="SEED",
        help="write questions/fresh.json: a held-out set drawn with another seed",
    )
    args = parser.parse_args()
    if args.fresh is not None:
        if args.fresh == SEED:
            parser.error(f"--fresh needs a seed other than the set's own ({SEED})")
        items = fresh(args.fresh)
        path = FOLDER / "fresh.json"
        path.write_text(json.dumps(items, indent=1, ensure_ascii=False) + "\n", "utf-8")
        print(f"wrote {len(items)} questions drawn with seed {args.fresh} to {path}")
        return 0
    questions = generate()
    halves = split(questions)
    if args.write:
        FOLDER.mkdir(exist_ok=True)
        for half, items in halves.items():
            path = FOLDER / f"{half}.json"
            path.write_text(json.dumps(items, indent=1, ensure_ascii=False) + "\n", "utf-8")
            print(f"wrote {len(items)} questions to {path}")
    if args.count:
        for half, items in halves.items():
            shapes: dict[str, int] = {}
            for item in items:
                shapes[item["tool"] or "none"] = shapes.get(item["tool"] or "none", 0) + 1
            print(half, len(items), shapes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
