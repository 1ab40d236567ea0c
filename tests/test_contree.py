"""The `contree` solver: optimal against an exhaustive search over every threshold, the
same optimum as `blossom` on 0/1 data and as pycontree on numeric data, max_gap, anytime
behaviour through the Monitor, memory, weights and the protocol."""

import numpy as np
import pytest
from conftest import SAMPLES
from optimal_trees import (
    cancelled_from_another_thread,
    dataset_from_arrays,
    enumerated,
    exhaustive,
    random_weights,
    shared_dataset,
    stopped_by_time_limit,
)

from engine.data.csv_reader import read_table
from engine.data.dataset import merge_duplicates
from engine.featurize import prepare
from engine.solvers.contree import adapter as contree_module
from engine.solvers import get_solver
from engine.solvers.protocol import Status
from engine.training import train
from engine.warmup import tiny_dataset


def numeric_dataset(X, y, w, n_classes):
    return dataset_from_arrays(X, y, w, n_classes, binary=False)


@pytest.fixture(scope="module", autouse=True)
def compiled():
    """Compile (or load) the kernel before any clock starts."""
    X = np.array([[0.0, 1.5], [1.0, 0.5], [2.0, 2.5], [3.0, 0.5], [1.0, 1.0]])
    train(numeric_dataset(X, [0, 1, 1, 0, 2], [1, 2, 1, 1, 0.5], 3), "contree", {"depth": 3})


# ------------------------------------------------------------------ exhaustive search
def _random_case(seed, max_rows=16):
    """Tiny numeric data: few distinct values (ties), 2-4 classes, various weights."""
    rng = np.random.default_rng(seed)
    n, F, K = int(rng.integers(1, max_rows + 1)), int(rng.integers(1, 4)), int(rng.integers(2, 5))
    if rng.random() < 0.6:
        X = rng.integers(0, int(rng.integers(2, 7)), (n, F)) * rng.choice([1.0, 0.25, -3.5])
    else:
        X = np.round(rng.normal(size=(n, F)), 2)
    if rng.random() < 0.3:                      # duplicated rows
        X = X[rng.integers(0, n, n)]
    y = rng.integers(0, K, n)
    return X, y, random_weights(rng, n), K


def test_the_exhaustive_search_is_what_enumerating_every_tree_gives():
    for seed in range(40):
        X, y, w, K = _random_case(seed, max_rows=6)
        X = X[:, :2]
        for depth in (0, 1, 2):
            assert exhaustive(X, y, w, K, depth) == pytest.approx(
                enumerated(X, y, w, K, depth)), seed


def _check_thresholds(tree, X):
    """Every test splits the rows reaching it, at the mid-point of the largest value going
    left and the smallest going right (consecutive distinct values at that node)."""
    reach = {0: np.arange(len(X))}
    for node in range(tree.n_nodes):
        rows = reach.get(node, np.arange(0))
        f = tree.feature[node]
        if f < 0:
            continue
        t = tree.threshold[node]
        go = X[rows, f] <= t
        assert go.any() and not go.all()
        a, b = X[rows[go], f].max(), X[rows[~go], f].min()
        assert a <= t < b and t == pytest.approx((a + b) / 2)
        reach[tree.left[node]] = rows[go]
        reach[tree.right[node]] = rows[~go]


def test_optimal_error_equals_exhaustive_search():
    cases = 0
    for seed in range(130):
        X, y, w, K = _random_case(seed)
        for depth in range(4):
            expected = exhaustive(X, y, w, K, depth)
            result = train(numeric_dataset(X, y, w, K), "contree", {"depth": depth})
            where = (seed, depth)
            assert result.optimal and result.status == Status.OPTIMAL, where
            assert result.train_error == pytest.approx(expected, abs=1e-9), where
            assert result.tree.error(X, y, w) == result.train_error, where
            assert result.stats["kernel_error"] == pytest.approx(expected, abs=1e-9), where
            assert result.lower_bound == result.train_error, where
            assert result.tree.depth <= depth, where
            errors = [e for _, e, _ in result.incumbents]
            assert errors == sorted(errors, reverse=True), where
            assert errors[-1] == pytest.approx(result.train_error), where
            _check_thresholds(result.tree, X[w > 0])
            cases += 1
    assert cases >= 500


def test_deeper_random_cases_and_the_cache():
    """Depth 4 (the recursion below depth-two subproblems, with the cache) on data where
    the exhaustive search is still quick."""
    rng = np.random.default_rng(11)
    hits = 0
    for trial in range(12):
        n, F, K = int(rng.integers(15, 30)), int(rng.integers(2, 4)), int(rng.integers(2, 4))
        X = rng.integers(0, 5, (n, F)).astype(float)
        y = rng.integers(0, K, n)
        w = rng.integers(1, 3, n).astype(float)
        result = train(numeric_dataset(X, y, w, K), "contree", {"depth": 4})
        assert result.optimal and result.train_error == exhaustive(X, y, w, K, 4), trial
        hits += result.stats["cache_hits"] + result.stats["cache_reused"]
    assert hits > 0


# ------------------------------------------------------------------ blossom on 0/1 data
def test_same_optimum_as_blossom_on_random_binary_data():
    rng = np.random.default_rng(5)
    for trial in range(30):
        n, F, K = int(rng.integers(20, 120)), int(rng.integers(2, 9)), int(rng.integers(2, 4))
        X = (rng.random((n, F)) < 0.5).astype(np.uint8)
        y = ((X[:, 0] ^ X[:, 1]) | (X[:, -1] & X[:, 0])).astype(np.int64) % K
        noisy = rng.random(n) < 0.2
        y[noisy] = rng.integers(0, K, noisy.sum())
        w = rng.integers(1, 4, n).astype(float)
        binary = dataset_from_arrays(X, y, w, K)
        for depth in (2, 3):
            expected = train(binary, "blossom", {"depth": depth})
            result = train(binary, "contree", {"depth": depth})
            assert expected.optimal and result.optimal
            assert result.train_error == expected.train_error, (trial, depth)
            assert set(result.tree.threshold[result.tree.feature >= 0]) <= {0.5}


@pytest.mark.parametrize("name", ["zoo-1", "hepatitis", "lymph", "vote", "primary-tumor"])
def test_same_optimum_as_blossom_on_cp4im(name):
    data = shared_dataset(f"cp4im/{name}.txt", target="first")
    for depth in (2, 3):
        expected = train(data, "blossom", {"depth": depth}, time_limit=60)
        result = train(data, "contree", {"depth": depth}, time_limit=60)
        assert expected.optimal and result.optimal, (name, depth)
        assert result.train_error == expected.train_error, (name, depth)


# ------------------------------------------------------------------ pycontree
def _pycontree_error(X, y, depth):
    """pycontree's misclassifications with the same settings: max_depth = depth, max_gap 0,
    no complexity cost (and no minimum leaf size: it has none).  Values are exact in
    float32, which pycontree uses internally."""
    pycontree = pytest.importorskip("pycontree")
    model = pycontree.ConTree(max_depth=depth, max_gap=0, complexity_cost=0.0,
                              time_limit=60).fit(X, y.astype(np.int32))
    return float((model.predict(X) != y).sum())


def test_same_optimum_as_pycontree_on_random_numeric_data():
    rng = np.random.default_rng(2024)
    compared = 0
    for trial in range(40):
        n, F, K = int(rng.integers(20, 250)), int(rng.integers(2, 7)), int(rng.integers(2, 5))
        X = rng.integers(0, int(rng.integers(3, 60)), (n, F)).astype(float) / 4
        signal = (X[:, 0] > X[:, 0].mean()).astype(int) + (X[:, 1] > np.median(X[:, 1]))
        y = (signal + (rng.random(n) < 0.3) * rng.integers(0, K, n)) % K
        if len(np.unique(y)) < 2:
            continue
        data = numeric_dataset(X, y, np.ones(n), K)
        for depth in (1, 2, 3):
            result = train(data, "contree", {"depth": depth})
            assert result.optimal
            assert result.train_error == _pycontree_error(X, y, depth), (trial, depth)
            compared += 1
    assert compared >= 100


def test_same_optimum_as_pycontree_at_depth_four():
    """Depth four goes through subproblems of depth three and the cache: bounds cached by a
    search cut short by its upper bound must not be taken for optima later."""
    rng = np.random.default_rng(3)
    reused = 0
    for trial in range(60):
        n, F, K = int(rng.integers(30, 200)), int(rng.integers(2, 6)), int(rng.integers(2, 4))
        X = rng.integers(0, int(rng.integers(3, 30)), (n, F)).astype(float) / 2
        y = ((X[:, 0] > X[:, 0].mean()).astype(int)
             + (rng.random(n) < 0.35) * rng.integers(0, K, n)) % K
        if len(np.unique(y)) < 2:
            continue
        result = train(numeric_dataset(X, y, np.ones(n), K), "contree", {"depth": 4})
        assert result.optimal
        assert result.train_error == _pycontree_error(X, y, 4), trial
        reused += result.stats["cache_hits"] + result.stats["cache_reused"]
    assert reused > 0


# ------------------------------------------------------------------ max_gap
def test_max_gap_keeps_the_result_within_the_gap_of_the_optimum():
    for seed in range(40):
        X, y, w, K = _random_case(1000 + seed)
        for depth, gap in ((2, 1.0), (3, 2.0), (3, 0.25)):
            optimum = exhaustive(X, y, w, K, depth)
            result = train(numeric_dataset(X, y, w, K), "contree",
                           {"depth": depth, "max_gap": gap})
            allowed = gap if gap >= 1 else gap * w.sum()
            assert result.stats["gap"] == pytest.approx(allowed)
            assert optimum - 1e-9 <= result.train_error <= optimum + allowed + 1e-9
            assert result.lower_bound <= optimum + 1e-9
            # a gap gives up the proof (unless there is nothing to search: one row)
            if result.optimal:
                assert result.train_error == optimum and len(y[w > 0]) <= 1
            else:
                assert result.status == Status.FINISHED


def test_max_gap_on_a_real_set_is_faster_and_honest():
    data = shared_dataset("contree/bank.txt", target="first")
    exact = train(data, "contree", {"depth": 3})
    gapped = train(data, "contree", {"depth": 3, "max_gap": 0.01})
    G = 0.01 * data.n_rows
    assert exact.optimal and exact.status == Status.OPTIMAL
    assert gapped.status == Status.FINISHED and not gapped.optimal
    assert exact.train_error <= gapped.train_error <= exact.train_error + G
    assert gapped.train_error - G - 1e-9 <= gapped.lower_bound <= exact.train_error
    assert gapped.stats["d2_calls"] < exact.stats["d2_calls"] / 2


# ------------------------------------------------------------------ anytime, monitor
@pytest.fixture(scope="module")
def magic():
    return shared_dataset("contree/magic.txt", target="first")


def test_time_limit_returns_promptly_with_a_valid_incumbent(magic):
    result = stopped_by_time_limit(magic, "contree", {"depth": 4}, 0.5)
    # the greedy tree first (the warm start), well before the limit
    assert result.incumbents[0][1] < magic.n_rows - np.bincount(magic.y).max()
    assert result.incumbents[0][0] < 0.25


def test_cancel_from_another_thread_is_prompt(magic):
    cancelled_from_another_thread(magic, "contree", {"depth": 4}, 0.4)


# ------------------------------------------------------------------ memory
def test_working_memory_over_the_cap_stops_with_memory_limit(magic):
    result = train(magic, "contree", {"depth": 4, "memory_mb": 1})
    assert result.status == Status.MEMORY_LIMIT and not result.optimal
    # the search could not start: at least the greedy warm start is what it keeps
    assert result.train_error <= result.stats["warm_start_error"]
    assert result.train_error == result.tree.error(magic.X, magic.y, magic.w)
    assert result.stats["memory_needed_mb"] > 1


def test_a_full_cache_is_emptied_and_the_search_goes_on(monkeypatch):
    data = shared_dataset("contree/bank.txt", target="first")
    roomy = train(data, "contree", {"depth": 4})
    monkeypatch.setattr(contree_module, "MAX_CACHE_ENTRIES", 8)
    tight = train(data, "contree", {"depth": 4})
    assert roomy.optimal and tight.optimal
    assert tight.train_error == roomy.train_error
    assert roomy.stats["cache_evictions"] == 0 and roomy.stats["cache_peak_entries"] > 8
    assert tight.stats["cache_evictions"] > 0 and tight.stats["cache_peak_entries"] <= 8


# ------------------------------------------------------------------ weights and classes
def test_merged_duplicates_give_the_same_optimum():
    rng = np.random.default_rng(8)
    X = rng.integers(0, 4, (400, 3)).astype(float)
    y = (X[:, 0] + rng.integers(0, 2, 400)) % 3
    data = numeric_dataset(X, y, np.ones(400), 3)
    merged = merge_duplicates(data)
    assert merged.n_rows < data.n_rows and merged.w.max() > 1
    for depth in (1, 2, 3):
        a = train(data, "contree", {"depth": depth})
        b = train(merged, "contree", {"depth": depth})
        assert a.optimal and b.optimal
        assert a.train_error == b.train_error, depth
        assert b.tree.error(data.X, data.y, data.w) == a.train_error


def test_scaled_and_zero_weights():
    data = shared_dataset("contree/raisin.txt", target="first")
    base = train(data, "contree", {"depth": 2})
    scaled = numeric_dataset(data.X, data.y, data.w * 2.5, data.n_classes)
    result = train(scaled, "contree", {"depth": 2})
    assert result.optimal and result.train_error == pytest.approx(2.5 * base.train_error)
    # rows of weight 0 change nothing
    X = np.vstack([data.X, data.X[:50] + 0.001])
    y = np.concatenate([data.y, 1 - data.y[:50]])
    w = np.concatenate([data.w, np.zeros(50)])
    padded = train(numeric_dataset(X, y, w, 2), "contree", {"depth": 2})
    assert padded.optimal and padded.train_error == base.train_error


# ------------------------------------------------------------------ protocol
def test_registered_with_its_parameters():
    solver = get_solver("contree")
    assert solver.needs == "any" and solver.proves_optimality and solver.title == "ConTree"
    assert "\n" not in solver.summary
    assert solver.resolve({"depth": "4", "max_gap": "0.01"}) == {
        "depth": 4, "max_gap": 0.01, "memory_mb": 2048, "min_leaf": 1, "leaf_cost": 0.0,
        "threads": 0}


@pytest.mark.parametrize("binarize", ["none", "quantile:4"])
def test_tiny_warm_up_data_and_raw_predictions(binarize):
    data = tiny_dataset(binarize)
    X = data.X.astype(float)
    for depth in (0, 1, 2, 3, 5):
        result = train(data, "contree", {"depth": depth})
        assert result.optimal and result.tree.depth <= depth
        if depth <= 3:
            assert result.train_error == exhaustive(X, data.y, data.w, data.n_classes, depth)
        assert result.train_error == result.tree.error(data.X, data.y, data.w)
        _check_thresholds(result.tree, X)


def test_tree_reads_the_raw_columns_of_the_bundled_sample():
    data = prepare(read_table(SAMPLES / "loans.csv"))
    assert not data.is_binary
    result = train(data, "contree", {"depth": 3})
    assert result.optimal
    tree = result.tree
    assert tree.features is data.features
    frame = read_table(SAMPLES / "loans.csv").frame
    assert np.array_equal(tree.predict_frame(frame), tree.predict(data.X))
    _check_thresholds(tree, data.X)
    assert tree.value[0].sum() == data.n_rows
    assert tree.value[tree.feature < 0].sum() == data.n_rows
