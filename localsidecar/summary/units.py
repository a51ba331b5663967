"""The unit a number is said in, for the support check (support.py): its scale, its
currency, any other measure. "$2.4m" and "2.4 million dollars" are said in one unit,
"2.4 million pounds" in another; "15%" and "15 per cent" alike."""

from __future__ import annotations

import re
from dataclasses import dataclass

# units a number carries: a scale ("bn", "million"), then a currency or measure word after
# it, or a currency sign before it
_SCALE_AFTER = re.compile(r"\s?(bn|billion|m|million|k|thousand|trillion|tn)(?!\w)", re.IGNORECASE)
_MEASURE_AFTER = re.compile(
    r"\s?(%|per ?cent|percent|euros?|pounds?|dollars?|pence|cents?|yen|yuan|rupees?|"
    r"km|kilomet(?:re|er)s?|miles?|metres?|meters?|kg|kilograms?|tonnes?|tons?|"
    r"minutes?|hours?|days?|weeks?|months?|years?|seconds?)(?!\w)",
    re.IGNORECASE,
)
_CURRENCY_BEFORE = re.compile(r"([$£€¥])\s?$")
_UNIT_NAMES = {
    "%": "percent",
    "per cent": "percent",
    "percent": "percent",
    "percent ": "percent",
    "bn": "billion",
    "m": "million",
    "k": "thousand",
    "tn": "trillion",
    "$": "dollar",
    "£": "pound",
    "€": "euro",
    "¥": "yen",
    "km": "kilometre",
    "kilometer": "kilometre",
    "meter": "metre",
    "kg": "kilogram",
    "ton": "tonne",
}
_CURRENCIES = frozenset({"dollar", "pound", "euro", "yen", "yuan", "rupee", "pence", "cent"})


@dataclass(frozen=True)
class Unit:
    """What a number is said in: its scale, its currency, any other measure (each may be None)."""

    scale: str | None = None
    currency: str | None = None
    measure: str | None = None

    def __str__(self) -> str:
        return " ".join(u for u in (self.currency, self.scale, self.measure) if u) or "no unit"


# sentence-initial words that start no name ("The UK Secret Service": "UK" starts it)
def unit_of(text: str, start: int, end: int) -> Unit:
    """The unit of the number at text[start:end], normalized ("$2.4m" and "2.4 million
    dollars" alike)."""
    return unit_and_end(text, start, end)[0]


def unit_and_end(text: str, start: int, end: int) -> tuple[Unit, int]:
    """The unit of the number at text[start:end] and where the words of it end."""
    scale = currency = measure = None
    m = _SCALE_AFTER.match(text, end)
    if m:
        scale = _UNIT_NAMES.get(m.group(1).lower(), m.group(1).lower())
        end = m.end()
    m = _MEASURE_AFTER.match(text, end)
    if m:
        word = m.group(1).lower()
        word = _UNIT_NAMES.get(word, word if word in ("pence", "yen") else word.rstrip("s"))
        word = _UNIT_NAMES.get(word, word)
        if word in _CURRENCIES:
            currency = word
        else:
            measure = word
        end = m.end()
    m = _CURRENCY_BEFORE.search(text, 0, start)
    if m and currency is None:
        currency = _UNIT_NAMES[m.group(1)]
    return Unit(scale, currency, measure), end


def units_agree(said: Unit, known: set[Unit]) -> bool:
    """Each part of the unit said (scale, currency, measure) is the one of some place the
    document gives the number: "£14bn" for "14bn pounds", not "$14bn"; "19 billion" for
    "19bn euros" (a part left unsaid is no claim)."""
    return any(
        all(
            said_part is None or said_part == known_part
            for said_part, known_part in zip(_parts(said), _parts(k))
        )
        for k in known
    )


def _parts(unit: Unit) -> tuple[str | None, str | None, str | None]:
    return unit.scale, unit.currency, unit.measure
