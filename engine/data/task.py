"""Whether a target column asks for classes or for numbers, and why.

A target of text, or of a few numbers (grades 1-5, a 0/1 flag), is a class column; a
target of numbers with many different values (a price, a wage, a delay) is a
measurement, for which a regression tree (each leaf predicts its rows' mean) is the
answer, where a classification tree would make a class of every value.  The user may
ask for either (`--task`, the window's choice, `task=` in a notebook); `choose_task`
says which one applies and why, in one sentence the window and the CLI show.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from engine.data import blocks
from engine.data.dataset import MANY_NUMBER_CLASSES
from engine.data.preprocessing import class_label
from engine.errors import DataError
from engine.vocabulary import CLASSIFICATION, REGRESSION, TASKS

AUTO = "auto"


def choose_task(target: str, cells, requested: str = AUTO) -> tuple[str, str]:
    """(task, the sentence saying why) for the target column `target` whose raw cells
    are `cells` (text or numbers, missing cells ignored).

    `auto` gives regression to a column of numbers with more than MANY_NUMBER_CLASSES
    different values, classification to anything else.  Regression asked of a column
    holding text is refused (DataError naming a cell that is not a number).
    """
    if requested not in (AUTO, *TASKS):
        raise DataError(f"Unknown task '{requested}': use auto, {', '.join(TASKS)}.")
    _, values = blocks.factorize(cells)
    texts = np.array([str(v) for v in values], dtype=object)
    numbers = pd.to_numeric(pd.Series(texts, dtype=object), errors="coerce").to_numpy(
        dtype=np.float64) if len(texts) else np.zeros(0)
    words = np.flatnonzero(np.isnan(numbers))
    distinct = len({class_label(t) for t in texts}) if not len(words) else len(texts)
    if requested == REGRESSION:
        if len(words):
            raise DataError(f"Column '{target}' holds text such as '{texts[words[0]]}', so "
                            "it cannot be a regression target (numbers only): choose "
                            "another target or classification.")
        return REGRESSION, (f"Regression was asked for: each leaf predicts the mean "
                            f"'{target}' of its rows.")
    if requested == CLASSIFICATION:
        return CLASSIFICATION, (f"Classification was asked for: each of the {distinct:,} "
                                f"values of '{target}' is a class.")
    if len(words):
        return CLASSIFICATION, (f"'{target}' holds text, so each of its {distinct:,} "
                                "values is a class.")
    if distinct > MANY_NUMBER_CLASSES:
        return REGRESSION, (f"'{target}' holds numbers with {distinct:,} different values, "
                            "so each leaf predicts their mean (a regression tree); choose "
                            "classification to make each value a class.")
    return CLASSIFICATION, (f"'{target}' holds {distinct:,} different numbers, so each is "
                            "a class; choose regression to predict a number.")
