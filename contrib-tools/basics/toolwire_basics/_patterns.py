"""The patterns the tools' arguments must match, written into their parameter schemas.

They live apart from the code that reads the arguments, so building the tools (``toolwire tools
list``) loads no implementation: the calculator, the clock and the unit table are imported by
the first call that needs them.
"""

TIME_PATTERN = (
    r"[0-9]\S*\s+(?:[^\s0-9AaPp]|[AaPp][^\s.Mm]|[AaPp][Mm][^\s.])"
    r"|[0-9]\S*\s+[AaPp]\.?[Mm]\.?\s+[^\s0-9]"
    r"|[^\s0-9]\s+[0-9]"
    r"|(?:[Nn]oon|[Mm]id(?:day|night))\s+\S|\S\s+(?:[Nn]oon|[Mm]id(?:day|night))"
)
"""What a time argument must hold: the digits of the time (with am or pm) and a word after or
before them (its place), or a time said in words (noon, midnight) with a word beside it."""

QUANTITY_PATTERN = r"[0-9][.,]?\s*[^\s0-9.,]|\b([Aa]n?|[Oo]ne)\s+[^\s0-9]"
"""What a quantity argument must hold: a number (or a word for one) with something after it."""

NO_NUMBER_PATTERN = r"^[^0-9]*$"
"""An argument that names a unit or a place and carries no number."""

CALCULATION_PATTERN = r"[0-9]|\b(?:pi|tau|e)\b"
"""What a calculation must hold: a number (written in digits) or a named constant."""
