"""`odd`'s tree seed (odd.tree_seed): optimal trees laid into the skeleton.

The seed must be a diagram that fits the skeleton and costs what objective (18) says;
without a node cost, on a tree skeleton, it must be the optimum that the enumeration
of every diagram finds (ConTree's exact trees, converted without loss); the MILP step
must start from it when it beats the heuristic, and it must obey the run's deadline.
"""

import time

import numpy as np
import pytest
from optimal_trees import dataset_from_arrays
from test_odd import brute_force, objective

from engine.solvers.monitor import Monitor
from engine.solvers.odd import adapter
from engine.solvers.odd.common import Skeleton
from engine.solvers.odd.tree_seed import as_diagram, seed_depth, tree_seed
from engine.training import train
from engine.warmup import tiny_dataset


@pytest.fixture(scope="module", autouse=True)
def contree_compiled():
    """Under a time limit the seed waits for ConTree's kernels to be compiled."""
    train(tiny_dataset(), "contree", {"depth": 2})


@pytest.mark.parametrize("text,depth", [("1-2-4-8", 4), ("1-2-4-4-4", 4), ("1-2-3", 3),
                                        ("1-1-1", 3), ("1", 1)])
def test_seed_depth_is_the_skeletons_up_to_four(text, depth):
    assert seed_depth(Skeleton.parse(text, 0, False)) == depth


def seed_of(data, skeleton, alpha, monitor=None):
    penalty = skeleton.penalty(alpha, float(data.w.sum()))

    def cost(diagram):
        return objective(diagram, data.X, data.y, data.w, skeleton, alpha)

    return tree_seed(data, data.X, data.y, data.w, skeleton, penalty, cost,
                     monitor or Monitor(None))


@pytest.mark.parametrize("seed", range(12))
def test_without_node_cost_the_seed_of_a_tree_skeleton_is_the_enumerated_optimum(seed):
    rng = np.random.default_rng(seed)
    n, F, levels, K = 9, 2, int(rng.integers(2, 5)), int(rng.integers(2, 4))
    widths = (1, 2) if seed % 2 else (1, 2, 4)
    X = rng.integers(0, levels, (n, F)) / (levels - 1)
    y = rng.integers(0, K, n)
    y[:K] = np.arange(K)                 # every class present
    data = dataset_from_arrays(X, y, np.ones(n), K, binary=False)
    skeleton = Skeleton(widths, True)
    diagram = seed_of(data, skeleton, 0.0)
    expected = brute_force(X, y, K, widths, 0.0, True)
    if diagram is None:   # only when no tree beats a single leaf
        assert expected >= n - np.bincount(y).max() - 1e-9
        return
    assert all(len(layer) <= width for layer, width in zip(diagram.layers, widths))
    assert diagram.depth <= len(widths)
    assert objective(diagram, X, y, np.ones(n), skeleton, 0.0) == pytest.approx(expected)


@pytest.mark.parametrize("seed", range(8))
def test_pruning_keeps_a_test_only_when_it_saves_more_than_its_cost(seed):
    """The pruned diagram costs no more than the unpruned tree, and no node sends
    both sides to one class terminal."""
    rng = np.random.default_rng(100 + seed)
    n, K = 40, 3
    X = rng.random((n, 3))
    y = rng.integers(0, K, n)
    data = dataset_from_arrays(X, y, np.ones(n), K, binary=False)
    tree = train(data, "contree", {"depth": 3}).tree
    skeleton = Skeleton((1, 2, 4), True)
    for alpha in (0.0, 0.1, 0.5):
        penalty = skeleton.penalty(alpha, float(n))
        diagram = as_diagram(tree, X, y, np.ones(n), penalty, skeleton.widths, data.prep)
        internal = int((tree.feature >= 0).sum())
        unpruned = tree.error(X, y) + penalty * (internal - 1)
        if diagram is None:   # only when a single leaf costs no more than the tree
            assert n - np.bincount(y).max() <= unpruned + 1e-9
            continue
        pruned = diagram.error(X, y) + penalty * (diagram.n_internal - 1)
        assert pruned <= unpruned + 1e-9
        assert diagram.n_internal <= internal
        for k in range(diagram.n_internal):
            left, right = diagram.children(k)
            assert left != right


def prunings(tree, node, rows, X, y, K, layer):
    """Every pruning of `tree` below `node` as (error, tests per layer, leaf class or
    None), by enumeration; a test may not send both sides to one class terminal."""
    counts = np.bincount(y[rows], minlength=K)
    out = [(len(rows) - counts.max(), {}, int(np.argmax(counts)))] if layer else []
    if tree.feature[node] < 0:
        return out or [(len(rows) - counts.max(), {}, int(np.argmax(counts)))]
    left = X[rows, tree.feature[node]] <= tree.threshold[node]
    for le, ll, lc in prunings(tree, tree.left[node], rows[left], X, y, K, layer + 1):
        for re, rl, rc in prunings(tree, tree.right[node], rows[~left], X, y, K, layer + 1):
            if lc is not None and lc == rc:
                continue
            tests = {l: ll.get(l, 0) + rl.get(l, 0) for l in set(ll) | set(rl)}
            tests[layer] = tests.get(layer, 0) + 1
            out.append((le + re, tests, None))
    return out


@pytest.mark.parametrize("seed", range(10))
def test_the_pruning_is_the_best_one_that_fits_the_skeleton(seed):
    """Against every pruning of ConTree's depth-3 tree, for narrow skeletons."""
    rng = np.random.default_rng(200 + seed)
    n, K = 60, int(rng.integers(2, 4))
    X = rng.integers(0, 4, (n, 3)) / 3
    y = rng.integers(0, K, n)
    data = dataset_from_arrays(X, y, np.ones(n), K, binary=False)
    tree = train(data, "contree", {"depth": 3}).tree
    options = prunings(tree, 0, np.arange(n), X, y, K, 0)
    for widths in ((1, 2, 4), (1, 2, 2), (1, 2, 1), (1, 1, 1)):
        skeleton = Skeleton(widths, False)
        for alpha in (0.0, 0.05, 0.3):
            penalty = skeleton.penalty(alpha, float(n))
            costs = [error + penalty * (sum(tests.values()) - 1)
                     for error, tests, leaf in options
                     if leaf is None and all(tests.get(l, 0) <= widths[l] for l in range(3))]
            diagram = as_diagram(tree, X, y, np.ones(n), penalty, widths, data.prep)
            if not costs:
                assert diagram is None
                continue
            assert diagram is not None
            assert all(len(layer) <= width for layer, width in zip(diagram.layers, widths))
            found = diagram.error(X, y) + penalty * (diagram.n_internal - 1)
            assert found == pytest.approx(min(costs))


def xor_data(seed=0, n=64):
    """y = x0 xor x1, and x2 = y with a quarter flipped: information gain takes x2 at
    the root, after which one more test cannot reach the error 0 of x0 then x1."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (n, 3)).astype(float)
    y = X[:, 0].astype(int) ^ X[:, 1].astype(int)
    X[:, 2] = y ^ (np.arange(n) % 4 == 0)
    return dataset_from_arrays(X, y, np.ones(n), 2, binary=False)


def test_the_milp_step_starts_from_the_seed_when_the_heuristic_misses_it():
    data = xor_data()
    params = {"skeleton": "1-2", "alpha": 0.01, "restarts": 1, "heuristic_time": 0.2}
    seeded = train(data, "odd", params, time_limit=10)
    stats = seeded.stats
    assert stats["tree_seed"] == "used"
    assert stats["tree_seed_objective"] < stats["heuristic_objective"]
    assert seeded.train_error == 0
    assert stats["objective"] <= stats["tree_seed_objective"] + 1e-9
    plain = train(data, "odd", {**params, "tree_seed": False}, time_limit=10)
    assert "tree_seed" not in plain.stats
    assert plain.stats["objective"] >= stats["objective"] - 1e-9


def test_the_seed_keeps_within_its_share_of_the_time():
    """Random labels make ConTree's depth-4 search long; the seed stops at the cap."""
    rng = np.random.default_rng(7)
    n = 600
    data = dataset_from_arrays(rng.random((n, 12)), rng.integers(0, 2, n), np.ones(n), 2,
                               binary=False)
    monitor = Monitor(None)
    started = time.monotonic()
    with monitor.share(1.0, cap=0.3):
        diagram = seed_of(data, Skeleton((1, 2, 4, 8), False), 0.01, monitor)
    assert time.monotonic() - started < 0.3 + 0.3
    assert not monitor.should_stop()      # the run itself goes on after the share
    assert diagram is None or diagram.n_internal <= 15


def test_a_seed_that_breaks_the_side_constraints_is_not_used():
    """XOR needs three tests; with at most two the seed is refused, and the answer
    keeps the budget."""
    data = xor_data()
    params = {"skeleton": "1-2", "alpha": 0.01, "restarts": 1, "heuristic_time": 0.2,
              "max_active_nodes": 2}
    result = train(data, "odd", params, time_limit=10)
    assert result.stats["tree_seed"] == "breaks the side constraints"
    assert result.tree.n_internal <= 2


def test_under_a_time_limit_the_seed_waits_for_compiled_kernels(monkeypatch):
    """A cold compile (about 30 s, not interruptible) would overrun the limit; a run
    without a limit compiles and seeds."""
    monkeypatch.setattr(adapter, "compile_needed", lambda: True)
    params = {"skeleton": "1-2", "alpha": 0.01, "restarts": 1, "heuristic_time": 0.2}
    limited = train(xor_data(), "odd", params, time_limit=10)
    assert limited.stats["tree_seed"].startswith("skipped: ConTree's kernels")
    unlimited = train(xor_data(), "odd", params)
    assert unlimited.stats["tree_seed"] == "used"


def test_the_smallest_perfect_tree_keeps_its_tests_on_the_data_columns():
    """sat-size runs on midpoint tests of the continuous columns; put back on the
    columns (a test `x <= t` swaps its sides), its tree still classifies every row,
    with as few tests: y = (x0 > 0.5) xor c, three tests, on a continuous x0, a 0/1
    column c and a continuous decoy x1."""
    from engine.data.dataset import Dataset, PrepReport
    from engine.data.features import EQ, NUM, Feature
    from engine.data.preprocessing import Preprocessing
    from engine.solvers.odd.tree_seed import smallest_perfect_tree

    rng = np.random.default_rng(5)
    n = 48
    x0, x1, c = rng.random(n), rng.random(n), rng.integers(0, 2, n).astype(float)
    y = ((x0 > 0.5).astype(int) ^ c.astype(int))
    X = np.column_stack([x0, x1, c])
    features = [Feature("x0", NUM), Feature("x1", NUM), Feature("c", EQ, "1")]
    prep = Preprocessing("class", ["a", "b"], [], features)
    data = Dataset(X, y, np.ones(n), prep, PrepReport())
    tree = smallest_perfect_tree(data, 3, Monitor(None))
    assert tree is not None
    tests = tree.feature[tree.feature >= 0]
    assert len(tests) == 3 and set(tests) == {0, 2}
    diagram = as_diagram(tree, X, y, np.ones(n), 0.0, (1, 2, 4), prep)
    assert diagram.error(X, y) == 0
    assert diagram.n_internal == 3


def test_the_smallest_perfect_tree_on_already_binarised_columns():
    """With guided (or any) binarisation the data's own features are 0/1 tests
    `a <= t`, which sat-size sees unchanged: they stay those features (a journey's
    `odd --binarize guided` once raised KeyError here)."""
    from engine.data.csv_reader import parse_text
    from engine.data.dataset import PrepOptions
    from engine.featurize import prepare
    from engine.solvers.odd.tree_seed import smallest_perfect_tree

    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 5, 30), rng.integers(0, 4, 30)
    y = ((a > 2) ^ (b > 1)).astype(int)
    text = "a,b,class\n" + "\n".join(f"{p},{q},{c}" for p, q, c in zip(a, b, y))
    data = prepare(parse_text(text), PrepOptions(binarize="guided", depth=4))
    assert data.is_binary
    tree = smallest_perfect_tree(data, 4, Monitor(None))
    assert tree is not None
    diagram = as_diagram(tree, data.X, data.y, data.w, 0.0, (1, 2, 4, 8), data.prep)
    assert diagram.error(data.X, data.y) == 0
