"""The CA-DL8.5 rules (Table 1 of Kiossou, Nijssen & Schaus) and their relaxations.

A rule decides, when the search is about to enter a child branch, whether the child
is *pruned*: returned as a leaf without being expanded.  Its threshold `thr` is
relaxed between restarts until the rule prunes nothing; a branch whose search
pruned nothing below it is *terminal* (complete) and is reused from the cache by
every later restart.

Each rule, with the state a branch carries (`st`) and its context (the child's
position `i` in its parent's ordered candidate list, its leaf error `e` and its
weight `s`):

| rule | state of a child | pruned when | relaxation of thr |
|---|---|---|---|
| purity | 1 - e / s | state >= thr (pure enough: stop) | thr + delta, up to 1 |
| gain | parent's cum_gap + (best gain - gain of f) | state > thr | thr + delta |
| discrepancy | parent's tot_discr + i | state > thr | thr + delta |
| top-k | i | i >= thr | thr + delta |
| top-k* | i | i >= max(1, thr >> depth of the parent) | thr + delta |

Table 1 writes the discrepancy test as `tot_discr >= max_discr`; the text (max_discr = 0
gives the greedy tree, which takes the first feature, i = 0, everywhere) and the
authors' code need `>`, which is used here.  Gains are information gains in bits.

Regression (the kernel's `reg`): the rules run unchanged on what the kernel gives
them.  A purity is 1 - (the branch's variance / the root's) (the error passed in is
scaled by the root's weight over its squared error), a gain the share of the
branch's squared error the split removes, in [0, 1] as a two-class information gain
is, so the gain rule is vacuous from D (`vacuous` with two classes).  Discrepancy and
top-k read positions only.

Relaxation schedules (`relax`): monotonic adds delta; exponential multiplies the
threshold by `factor` (at least adding delta, so a zero threshold moves); Luby adds
delta times the Luby sequence 1, 1, 2, 1, 1, 2, 4, 1, ...

A rule is *vacuous* once its threshold lets everything through (discrepancy: D (F - 1);
top-k: F, or F << (D - 1) for top-k*; gain: D log2 K, the largest total gap; purity:
1).  The restart with a vacuous rule is plain DL8.5 and completes the search.
"""

import math

from numba import njit

RULE_NONE, RULE_PURITY, RULE_GAIN, RULE_DISCREPANCY, RULE_TOPK, RULE_TOPK_STAR = range(6)
RELAX_MONOTONIC, RELAX_EXPONENTIAL, RELAX_LUBY = range(3)

RULES = {"purity": RULE_PURITY, "gain": RULE_GAIN, "discrepancy": RULE_DISCREPANCY,
         "topk": RULE_TOPK, "topk_star": RULE_TOPK_STAR}
RELAXATIONS = {"monotonic": RELAX_MONOTONIC, "exponential": RELAX_EXPONENTIAL,
               "luby": RELAX_LUBY}

GAIN_TOLERANCE = 1e-9


@njit(cache=True, nogil=True)
def child_state(rule, st, idx, err, weight, best_gain, gain):
    """State of a child entered through the feature at position idx of its parent."""
    if rule == RULE_PURITY:
        return 1.0 - err / weight if weight > 0.0 else 1.0
    if rule == RULE_GAIN:
        return st + (best_gain - gain)
    if rule == RULE_DISCREPANCY:
        return st + idx
    return 1.0 * idx


@njit(cache=True, nogil=True)
def pruned(rule, active, thr, cst, idx, parent_level):
    """Whether a child of state cst (position idx, parent at depth parent_level) is
    pruned under threshold thr (never when the rule is inactive)."""
    if not active:
        return False
    if rule == RULE_PURITY:
        return cst >= thr
    if rule == RULE_GAIN:
        return cst > thr + GAIN_TOLERANCE
    if rule == RULE_DISCREPANCY:
        return cst > thr + 1e-9
    if rule == RULE_TOPK:
        return idx >= math.floor(thr + 1e-9)
    if rule == RULE_TOPK_STAR:
        k = math.floor(thr + 1e-9)
        return idx >= max(1, k >> min(parent_level, 62))
    return False


@njit(cache=True, nogil=True)
def budget(rule, thr, st):
    """How much exploration a branch of state st gets under thr (larger: more).
    Inexact cache entries are reused within a restart only by branches with no more."""
    if rule == RULE_GAIN or rule == RULE_DISCREPANCY:
        return thr - st
    return 0.0


@njit(cache=True, nogil=True)
def luby(i):
    """The i-th term (i >= 1) of the Luby sequence 1, 1, 2, 1, 1, 2, 4, ..."""
    k = 1
    while (1 << k) - 1 < i:
        k += 1
    while (1 << k) - 1 != i:
        i -= (1 << (k - 1)) - 1
        k = 1
        while (1 << k) - 1 < i:
            k += 1
    return 1 << (k - 1)


@njit(cache=True, nogil=True)
def relax(relaxation, thr, step, factor, count):
    """The threshold after the count-th relaxation (count >= 1)."""
    if relaxation == RELAX_EXPONENTIAL:
        return max(thr * factor, thr + step)
    if relaxation == RELAX_LUBY:
        return thr + step * luby(count)
    return thr + step


@njit(cache=True, nogil=True)
def vacuous(rule, thr, depth, n_features, n_classes):
    """Whether thr lets every branch through (the rule can be switched off)."""
    if rule == RULE_NONE:
        return True
    if rule == RULE_PURITY:
        return thr >= 1.0
    if rule == RULE_GAIN:
        return thr >= depth * math.log2(max(n_classes, 2)) + 1e-6
    if rule == RULE_DISCREPANCY:
        return thr >= depth * max(n_features - 1, 0)
    if rule == RULE_TOPK:
        return thr >= n_features
    if rule == RULE_TOPK_STAR:
        if thr >= 2.0 ** 62:
            return True
        k = math.floor(thr + 1e-9)
        return (k >> min(max(depth - 1, 0), 62)) >= n_features
    return True
