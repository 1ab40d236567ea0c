"""Ordered text columns: levels in a declared order, split as thresholds.

A column of "Low", "Medium", "High" (or education levels, ratings, sizes) is neither
a number nor a set of unrelated values: a split "risk in {High, Low}" fits the
training rows and means nothing.  Declared ordered (`ColumnKind.ORDERED`, with its
levels lowest first in `PrepOptions.orders`), a column offers one 0/1 test per cut
between two neighbouring levels, "risk <= Medium": an `IN` group of the levels up to
that one, marked `Feature.ordered`, so predicting, every export and a model saved
before all read it as the group it is.  A value not among the levels is in no group:
it counts as above the highest level, and preparation says so.

`guess_order` proposes the levels' order for the window's dialog: the common scales
by their words (low < medium < high, never < rarely < sometimes < often < always,
...), else numbers inside the texts ("1-2 years" < "3-5 years"), else alphabetical.
"""

from __future__ import annotations

import re

from engine.data.features import IN, Feature

# Words of common scales, lowest first; a level's rank is the first word it holds.
SCALES = (
    ("none", "very low", "low", "lower", "below", "medium", "mid", "middle", "moderate",
     "average", "normal", "above", "upper", "high", "higher", "very high", "extreme"),
    ("never", "rarely", "seldom", "sometimes", "occasionally", "often", "usually",
     "always"),
    ("very poor", "poor", "bad", "fair", "ok", "okay", "good", "very good", "excellent"),
    ("strongly disagree", "disagree", "neutral", "agree", "strongly agree"),
    ("xxs", "xs", "extra small", "small", "s", "m", "medium", "l", "large", "xl",
     "extra large", "xxl"),
    ("first", "second", "third", "fourth", "fifth"),
)


def _scale_rank(value: str) -> tuple[int, int] | None:
    """(scale, position) of the scale word `value` is (None if none fits it whole)."""
    text = " ".join(value.lower().replace("_", " ").replace("-", " ").split())
    for s, scale in enumerate(SCALES):
        if text in scale:
            return s, scale.index(text)
    return None


def _number_key(value: str):
    numbers = re.findall(r"-?\d+(?:\.\d+)?", value)
    return (float(numbers[0]), value) if numbers else None


def guess_order(values: list[str]) -> list[str]:
    """The levels of `values` in their likely order, lowest first."""
    ranks = [_scale_rank(v) for v in values]
    if values and all(r is not None for r in ranks) and len({r[0] for r in ranks}) == 1:
        return [v for _, v in sorted(zip(ranks, values))]
    keys = [_number_key(v) for v in values]
    if values and all(k is not None for k in keys):
        return [v for _, v in sorted(zip(keys, values))]
    return sorted(values, key=str.lower)


def ordered_features(name: str, levels: tuple[str, ...], routed: bool) -> list[Feature]:
    """One test per cut between neighbouring levels, "name <= level" (with both
    routes of a missing cell when missing cells are routed)."""
    flags = (False, True) if routed else (None,)
    return [Feature(name, IN, tuple(levels[:k]), flag, ordered=True)
            for k in range(1, len(levels)) for flag in flags]


def unordered_values(name: str, levels: tuple[str, ...], values: list[str]) -> str:
    """One sentence when the column holds values that are not among its levels
    ('' otherwise): they count as above the highest level."""
    others = [v for v in values if v not in set(levels)]
    if not others:
        return ""
    shown = ", ".join(f"'{v}'" for v in others[:5]) + (
        f" and {len(others) - 5} more" if len(others) > 5 else "")
    return (f"Column '{name}' holds {shown}, not among its ordered levels: "
            f"{'it counts' if len(others) == 1 else 'they count'} as above "
            f"'{levels[-1]}'; add {'it' if len(others) == 1 else 'them'} to the order "
            f"to place {'it' if len(others) == 1 else 'them'}.")
