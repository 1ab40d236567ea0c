"""The tree as text a person reads: nested if/else, or a flat list of IF ... THEN rules.

Analysts copy rules into reports and check them against their domain knowledge, so
every condition names the raw column and value (`age <= 37.5`, `colour = red`) and
every rule says how much of the training data it covers and how often it is right.
Flat rules drop conditions made redundant by a tighter one on the same path
(`age > 30` then `age > 40` reads `age > 40`), which a tree path often contains.
Conditions describe the raw values; a missing cell is tested as the column's fill
value (see `Preprocessing`), except by the `is missing` / `is present` tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING


from engine.data.features import EQ, LE, format_number
from engine.export.walk import Split, Test, count_text, fold, leaf_summary

if TYPE_CHECKING:
    from engine.model.tree import Tree

INDENT = "    "


def _leaf_text(tree: Tree, node: int) -> str:
    leaf = leaf_summary(tree, node)
    counts = count_text(tree, leaf.weight)
    if leaf.mean is not None:   # a regression's leaf: its mean, and its rows' spread
        return f"-> {leaf.class_name}  ({counts}, rmse {format_number(leaf.spread)})"
    if leaf.weight > 0:
        counts += f", {100 * leaf.confidence:.0f}% of node"
    return f"-> {leaf.class_name}  ({counts})"


def nested_rules(tree: Tree) -> str:
    """Indented if/else text of the whole tree, ending with a newline."""
    def branch(s: Split, if_true: list[str], if_false: list[str]) -> list[str]:
        return ([f"if {s.test.text(True, full=True)}:"]
                + [INDENT + line for line in if_true]
                + [f"else:  # {s.test.text(False, full=True)}"]
                + [INDENT + line for line in if_false])

    return "\n".join(fold(tree, lambda node: [_leaf_text(tree, node)], branch)) + "\n"


@dataclass
class Rule:
    """One root-to-leaf path: IF all `conditions` THEN `class_name` (a regression's:
    the leaf's mean, its rows' root mean squared error around it in `spread`)."""

    conditions: list[str]
    class_name: str
    support: float     # share of the total training weight reaching the leaf
    confidence: float  # weight of the predicted class / weight at the leaf
    weight: float      # training weight reaching the leaf
    spread: float | None = None

    def text(self) -> str:
        body = " AND ".join(self.conditions) if self.conditions else "TRUE"
        quality = (f"confidence {100 * self.confidence:.1f}%" if self.spread is None
                   else f"rmse {format_number(self.spread)}")
        return (f"IF {body} THEN {self.class_name}  [support "
                f"{100 * self.support:.1f}%, {quality}]")


Condition = tuple[Test, bool]  # a test and whether it holds on the path


def simplify(conditions: list[Condition]) -> list[Condition]:
    """Drop the conditions of a path that others on the same path imply.

    Per column, only the tightest `<=` and the tightest `>` are kept (ties keep the
    first), `!= v` is dropped when the column must equal another value, and repeats
    go; the survivors keep their order along the path.  A test with a missing-value
    route is kept as it is (a bound that routes missing cells the other way does not
    imply it).
    """
    upper: dict[str, int] = {}  # column -> index of the smallest `<=` bound
    lower: dict[str, int] = {}  # column -> index of the largest `>` bound
    equal: dict[str, set] = {}  # column -> values it must equal
    for i, (test, holds) in enumerate(conditions):
        name = test.column.name
        if test.op == LE and test.routed is None:
            best = upper if holds else lower
            j = best.get(name)
            if j is None or (test.value < conditions[j][0].value if holds
                             else test.value > conditions[j][0].value):
                best[name] = i
        elif test.op == EQ and holds and test.routed is None:
            equal.setdefault(name, set()).add(test.value)
    kept, seen = [], set()
    for i, (test, holds) in enumerate(conditions):
        name = test.column.name
        if test.op == LE and test.routed is None and \
                i not in (upper.get(name), lower.get(name)):
            continue
        if (test.op == EQ and not holds and test.routed is None and name in equal
                and test.value not in equal[name]):
            continue
        key = (test.feature, holds)
        if key not in seen:
            seen.add(key)
            kept.append((test, holds))
    return kept


def flat_rules(tree: Tree) -> list[Rule]:
    """One rule per leaf, in tree order, with simplified conditions."""
    total = float(tree.node_weights[0])

    def leaf(node: int) -> list[tuple[list[Condition], int]]:
        return [([], node)]

    def branch(s: Split, if_true, if_false):
        return ([([(s.test, True)] + path, node) for path, node in if_true]
                + [([(s.test, False)] + path, node) for path, node in if_false])

    rules = []
    for path, node in fold(tree, leaf, branch):
        summary = leaf_summary(tree, node)
        rules.append(Rule([test.text(holds, full=True) for test, holds in simplify(path)],
                          summary.class_name,
                          summary.weight / total if total > 0 else 0.0,
                          summary.confidence, summary.weight,
                          None if summary.mean is None else summary.spread))
    return rules


def rule_list_text(tree: Tree) -> str:
    """One `IF ... THEN ...` line per leaf, the rules covering most data first."""
    rules = sorted(flat_rules(tree), key=lambda rule: -rule.support)
    return "".join(rule.text() + "\n" for rule in rules)
