"""``[tools.basics]``: the settings of the plugin, apart from the tools so that enabling the
plugin does not build them."""

from __future__ import annotations

from typing import Literal

import attrs


@attrs.frozen(kw_only=True)
class BasicsSettings:
    """``[tools.basics]``.

    ``offer``: ``relevant`` offers each tool only when the user's words call for it (numbers for
    the calculator, times and dates for the clock tools, a quantity with a unit for
    ``convert_units``), which keeps prompts short for small local models; ``always`` offers
    every tool in every round.
    """

    offer: Literal["relevant", "always"] = "relevant"
