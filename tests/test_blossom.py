"""The `blossom` solver: optimal against an exhaustive search and against pystreed,
anytime behaviour through the Monitor, weights, multi-class data and memory."""

import os

import numpy as np
import pytest
from conftest import SAMPLES
from optimal_trees import (
    cancelled_from_another_thread,
    cp4im,
    dataset_from_arrays,
    enumerated,
    exhaustive,
    random_binary_case,
    shared_dataset,
    stopped_by_time_limit,
    structured_binary_case,
)

from engine.data.csv_reader import read_table
from engine.data.dataset import PrepOptions, merge_duplicates
from engine.featurize import prepare
from engine.solvers import default_solver_name, get_solver
from engine.solvers.protocol import Status
from engine.training import train


@pytest.fixture(scope="module", autouse=True)
def compiled():
    """Compile (or load) both kernel specialisations before any clock starts."""
    X = np.array([[0, 1], [1, 0], [1, 1], [0, 0]])
    for w in ([1, 2, 1, 1], [0.5, 1.5, 1, 1]):
        train(dataset_from_arrays(X, [0, 1, 1, 0], w, 2), "blossom", {"depth": 2})


# ------------------------------------------------------------------ exhaustive search
def test_the_exhaustive_search_is_what_enumerating_every_tree_gives():
    for seed in range(40):
        X, y, w, K = random_binary_case(seed)
        X = X[:, :3]
        for depth in (0, 1, 2):
            assert exhaustive(X, y, w, K, depth) == pytest.approx(
                enumerated(X, y, w, K, depth)), seed


def _offset(X, y, w, n_classes):
    """(K-1) * min_k c_k summed over distinct rows with class weights c_k."""
    total = 0.0
    for row in {tuple(r) for r in X[w > 0]}:
        same = (X == row).all(axis=1) & (w > 0)
        total += (n_classes - 1) * np.bincount(y[same], weights=w[same],
                                               minlength=n_classes).min()
    return total


def test_optimal_error_equals_exhaustive_search():
    cases = 0
    for seed in range(130):
        X, y, w, K = random_binary_case(seed)
        for depth in range(4):
            expected = exhaustive(X, y, w, K, depth)
            data = dataset_from_arrays(X, y, w, K)
            preprocess = seed % 2 == 0
            result = train(data, "blossom", {"depth": depth, "preprocess": preprocess})
            where = (seed, depth)
            assert result.optimal and result.status == Status.OPTIMAL, where
            assert result.train_error == pytest.approx(expected, abs=1e-9), where
            assert result.tree.error(X, y, w) == result.train_error, where
            assert result.stats["kernel_error"] == pytest.approx(expected, abs=1e-9), where
            assert result.lower_bound == result.train_error, where
            assert result.tree.depth <= depth, where
            errors = [e for _, e, _ in result.incumbents]
            assert errors == sorted(errors, reverse=True), where
            if preprocess:
                assert result.stats["inconsistent_offset"] == pytest.approx(
                    _offset(X, y, w, K)), where
            cases += 1
    assert cases >= 500


def test_bound_and_preprocessing_options_keep_the_optimum():
    rng = np.random.default_rng(7)
    for trial in range(25):
        n, F, K = int(rng.integers(30, 90)), int(rng.integers(5, 9)), int(rng.integers(2, 4))
        X = (rng.random((n, F)) < 0.5).astype(np.uint8)
        y = ((X[:, 0] ^ X[:, 1]) | (X[:, 2] & X[:, 3])).astype(np.int64) % K
        noisy = rng.random(n) < 0.2
        y[noisy] = rng.integers(0, K, noisy.sum())
        w = rng.integers(1, 4, n).astype(float)
        expected = exhaustive(X, y, w, K, 4)
        for params in ({}, {"lower_bound": False}, {"preprocess": False}):
            result = train(dataset_from_arrays(X, y, w, K), "blossom", {"depth": 4, **params})
            assert result.optimal and result.train_error == expected, (trial, params)


# ------------------------------------------------------------------ the cache
def test_cached_branches_give_the_exhaustive_optimum():
    """Branches of depth D-2 reached again in another order come from the cache: the
    optimum (with and without it, with and without preprocessing and the bound)
    stays the exhaustive search's, on integer and fractional weights, depths 3-5."""
    rng = np.random.default_rng(20)
    hits = 0
    for trial in range(36):
        X, y, w, K, depth = structured_binary_case(rng, trial)
        expected = exhaustive(X, y, w, K, depth)
        data = dataset_from_arrays(X, y, w, K)
        for params in ({}, {"cache": False}, {"preprocess": False},
                       {"lower_bound": False}):
            result = train(data, "blossom", {"depth": depth, "threads": 1, **params})
            where = (trial, depth, params)
            assert result.optimal, where
            assert result.train_error == pytest.approx(expected, abs=1e-9), where
            assert result.tree.error(X, y, w) == result.train_error, where
            assert result.tree.depth <= depth, where
            errors = [e for _, e, _ in result.incumbents]
            assert errors == sorted(errors, reverse=True), where
            if params.get("cache", True):
                stats = result.stats
                assert stats["cache_hits"] <= stats["cache_lookups"], where
                assert stats["cache_peak_entries"] <= stats["cache_stores"], where
                hits += stats["cache_hits"]
            else:
                assert result.stats["cache_lookups"] == 0, where
    assert hits > 100


@pytest.mark.parametrize("name,depth", [("tic-tac-toe", 4), ("vote", 4), ("hepatitis", 5)])
def test_cache_hits_keep_dl85s_optimum_on_cp4im(name, depth):
    data = cp4im(name)
    expected = train(data, "dl85", {"depth": depth}, time_limit=60)
    cached = train(data, "blossom", {"depth": depth, "threads": 1}, time_limit=60)
    plain = train(data, "blossom", {"depth": depth, "threads": 1, "cache": False},
                  time_limit=60)
    assert expected.optimal and cached.optimal and plain.optimal
    assert cached.train_error == plain.train_error == expected.train_error
    assert cached.stats["cache_hits"] > 0 and plain.stats["cache_hits"] == 0
    # a hit skips a whole branch: fewer tests assigned than without the cache
    assert cached.stats["expansions"] < plain.stats["expansions"]
    # two runs give the same tree (the cache is deterministic)
    again = train(data, "blossom", {"depth": depth, "threads": 1}, time_limit=60)
    assert np.array_equal(again.tree.feature, cached.tree.feature)


def test_a_full_cache_is_emptied_within_the_memory_budget(monkeypatch):
    """With a budget the slots and records fit in but a growing cache does not, the
    cache is emptied instead of stopping the search: still optimal."""
    from engine.solvers.blossom import adapter
    data = cp4im("tic-tac-toe")
    roomy = train(data, "blossom", {"depth": 4, "threads": 1})
    assert roomy.stats["cache_clears"] == 0
    monkeypatch.setattr(adapter, "MEMORY_BUDGET", 120_000)
    tight = train(data, "blossom", {"depth": 4, "threads": 1})
    assert tight.optimal and tight.status == Status.OPTIMAL
    assert tight.train_error == roomy.train_error
    assert tight.stats["cache_clears"] > 0
    assert tight.stats["cache_peak_entries"] < roomy.stats["cache_peak_entries"]


def test_merging_copies_the_missing_entries_and_stops_at_the_budget():
    """`cache_merge` copies another cache's entries this one lacks (literals, value,
    inline tree), leaves the ones it has, grows within the budget and says where it
    stopped when it may not grow further or the run was stopped."""
    from engine.solvers import kernel_support as ks
    from engine.solvers.blossom.cache import (
        CACHE_INIT,
        M_COUNT,
        cache_bytes,
        cache_find,
        cache_merge,
        cache_new,
        cache_put,
        empty,
        key_of,
    )

    def put(cache, lits, value):
        key = np.array(lits, dtype=np.int32)
        cache_put(*cache, np.uint64(key_of(key, 2)), key, 2, value, lits[0], lits[1], -1)

    def find(cache, lits):
        key = np.array(lits, dtype=np.int32)
        hashes, stored, _, _, table, _ = cache
        return cache_find(hashes, stored, table, np.uint64(key_of(key, 2)), key, 2)

    mine = empty(4)
    theirs = (*cache_new(4 * CACHE_INIT, 2), empty(4)[-1])
    put(mine, [3, 8], 5.0)
    put(theirs, [8, 3], 7.0)          # the same branch: mine keeps its own result
    for i in range(CACHE_INIT + 10):  # more than fit without growing
        put(theirs, [2 * i, 2 * i + 5], float(i))
    count = int(theirs[-1][M_COUNT])
    assert count == CACHE_INIT + 11
    control = np.zeros(ks.CONTROL_SIZE)
    control[ks.C_DEADLINE] = np.inf
    *arrays, stop = cache_merge(*mine, *theirs[:4], 0, count, 10**9, control)
    merged = (*arrays, mine[-1])
    assert stop == count and merged[-1][M_COUNT] == count
    _, _, vals, trees, _, _ = merged
    for i in (0, 500, CACHE_INIT + 9):
        e = find(merged, [2 * i, 2 * i + 5])
        assert e >= 0 and vals[e] == i and list(trees[e]) == [2 * i, 2 * i + 5, -1]
    assert vals[find(merged, [3, 8])] == 5.0
    assert theirs[-1][M_COUNT] == count and theirs[2][find(theirs, [3, 8])] == 7.0  # read only
    # a budget that does not allow doubling: it stops when full
    small = empty(4)
    *_, stop = cache_merge(*small, *theirs[:4], 0, count, cache_bytes(CACHE_INIT, 2),
                           control)
    assert stop == CACHE_INIT and small[-1][M_COUNT] == CACHE_INIT
    # a stopped run copies nothing more
    control[ks.C_STOP] = ks.STOP_CANCEL
    stopped = empty(4)
    *_, stop = cache_merge(*stopped, *theirs[:4], 5, count, 10**9, control)
    assert stop == 5 and stopped[-1][M_COUNT] == 0


# ------------------------------------------------------------------ pystreed
STREED_CASES = [("zoo-1", (2, 3, 4)), ("hepatitis", (2, 3, 4)), ("lymph", (2, 3, 4)),
                ("vote", (2, 3, 4)), ("tic-tac-toe", (2, 3, 4)), ("primary-tumor", (2, 3, 4)),
                ("soybean", (2, 3)), ("heart-cleveland", (2, 3))]


def _streed_error(data, depth):
    """pystreed's optimal misclassification count (None unless proven optimal).

    Accuracy objective, max_depth = depth, every tree of that depth allowed
    (max_num_nodes = 2^depth - 1 by default) and no minimum leaf size (1 row).
    """
    streed = pytest.importorskip("pystreed")
    X = data.X.astype(np.int64)
    clf = streed.STreeDClassifier(max_depth=depth, min_leaf_node_size=1, time_limit=60)
    clf.fit(X, data.y)
    if not clf.fit_result.is_optimal():
        return None
    return float((clf.predict(X) != data.y).sum())


@pytest.mark.parametrize("name,depths", STREED_CASES, ids=[c[0] for c in STREED_CASES])
def test_same_optimum_as_pystreed_oncp4im(name, depths):
    data = cp4im(name)
    for depth in depths:
        expected = _streed_error(data, depth)
        result = train(data, "blossom", {"depth": depth}, time_limit=60)
        assert result.optimal, (name, depth)
        assert expected is not None and result.train_error == expected, (name, depth)


@pytest.mark.parametrize("relative", ["inferdt/iris.csv", "inferdt/wine.csv",
                                      "inferdt/balance-scale.csv", "odd/car-evaluation.csv",
                                      "odd/dermatology.csv"])
def test_same_optimum_as_pystreed_on_multiclass_data(relative):
    data = shared_dataset(relative, binarize="quantile:4")
    assert data.n_classes >= 3
    for depth in (2, 3):
        expected = _streed_error(data, depth)
        result = train(data, "blossom", {"depth": depth}, time_limit=60)
        assert result.optimal and result.train_error == expected, (relative, depth)


def test_lower_bound_prunes_and_agrees():
    data = cp4im("lymph")
    with_bound = train(data, "blossom", {"depth": 4})
    without = train(data, "blossom", {"depth": 4, "lower_bound": False})
    assert with_bound.stats["pruned_by_bound"] > 0 and without.stats["pruned_by_bound"] == 0
    assert with_bound.optimal and without.optimal
    assert with_bound.train_error == without.train_error == _streed_error(data, 4)


# ------------------------------------------------------------------ anytime, monitor
@pytest.fixture(scope="module")
def splice():
    return cp4im("splice-1")


def test_time_limit_returns_promptly_with_a_valid_incumbent(splice):
    result = stopped_by_time_limit(splice, "blossom", {"depth": 8}, 0.3)
    # the first incumbent is the first complete dive (greedy quality, found at once)
    assert result.incumbents[0][0] < 0.3
    assert result.incumbents[0][1] == result.stats["first_tree_error"]


def test_cancel_from_another_thread_is_prompt(splice):
    cancelled_from_another_thread(splice, "blossom", {"depth": 8}, 0.3)


def test_stops_with_a_proof_when_only_contradicting_rows_are_misclassified():
    """hypothyroid has 17 rows that contradict identical rows of the other class; at depth
    10 a tree erring only on them exists, which ends the search (no exhaustion needed)."""
    data = cp4im("hypothyroid")
    result = train(data, "blossom", {"depth": 10}, time_limit=20)
    assert result.optimal and result.status == Status.OPTIMAL
    assert result.train_error == result.stats["unavoidable_error"] == 17
    assert result.stats["inconsistent_offset"] == 17
    assert result.time_s < 5


def _rss():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")
def test_depth_10_on_the_largest_set_in_bounded_memory(splice):
    pendigits = cp4im("pendigits")
    runs = []
    for _ in range(3):
        for data, limit in ((pendigits, 1.0), (splice, 0.4)):
            result = train(data, "blossom", {"depth": 10}, time_limit=limit)
            assert result.tree.error(data.X, data.y, data.w) == result.train_error
            assert result.stats["peak_branches"] <= 2 ** 9
            assert result.stats["peak_records"] <= 10 * 2 ** 10
            runs.append(_rss())
    assert runs[-1] - runs[1] < 40 * 2 ** 20


# ------------------------------------------------------------------ weights and classes
@pytest.mark.parametrize("relative,binarize", [("cp4im/primary-tumor.txt", None),
                                               ("odd/contraceptive-method-choice.csv",
                                                "quantile:4")])
def test_merged_duplicates_give_the_same_optimum(relative, binarize):
    if binarize is None:
        data = cp4im("primary-tumor")
    else:
        data = shared_dataset(relative, binarize=binarize)
    merged = merge_duplicates(data)
    assert merged.n_rows < data.n_rows and merged.w.max() > 1
    for preprocess in (True, False):
        a = train(data, "blossom", {"depth": 3, "preprocess": preprocess})
        b = train(merged, "blossom", {"depth": 3, "preprocess": preprocess})
        assert a.optimal and b.optimal
        assert a.train_error == b.train_error, preprocess
        assert b.tree.error(data.X, data.y, data.w) == a.train_error
    assert a.train_error >= a.stats["unavoidable_error"] > 0


def test_scaled_weights_scale_the_error():
    data = cp4im("primary-tumor")
    base = train(data, "blossom", {"depth": 3})
    scaled = dataset_from_arrays(data.X, data.y, data.w * 2.5, data.n_classes)
    result = train(scaled, "blossom", {"depth": 3})
    assert result.optimal and result.train_error == pytest.approx(2.5 * base.train_error)


# ------------------------------------------------------------------ protocol
def test_registered_as_the_default_with_its_parameters():
    solver = get_solver("blossom")
    assert default_solver_name() == "blossom"
    assert solver.needs == "binary" and solver.proves_optimality and solver.title == "Blossom"
    assert "\n" not in solver.summary
    assert solver.resolve({"depth": "5", "preprocess": "off"}) == {
        "depth": 5, "preprocess": False, "lower_bound": True, "cache": True, "min_leaf": 1,
        "leaf_cost": 0.0, "threads": 0}


def test_tree_uses_the_original_columns_on_the_bundled_sample():
    data = prepare(read_table(SAMPLES / "loans.csv"), PrepOptions(binarize="quantile:10"))
    result = train(data, "blossom", {"depth": 3})
    raw = train(data, "blossom", {"depth": 3, "preprocess": False})
    assert result.optimal and raw.optimal and result.train_error == raw.train_error
    tree = result.tree
    assert tree.features is data.features
    internal = tree.feature >= 0
    assert (tree.threshold[internal] == 0.5).all()
    frame = read_table(SAMPLES / "loans.csv").frame
    predicted = tree.predict_frame(frame)
    assert np.array_equal(predicted, tree.predict(data.X))
    # class weights at each node are the training rows reaching it
    assert tree.value[0].sum() == data.n_rows
    leaves = tree.value[tree.feature < 0]
    assert leaves.sum() == data.n_rows


def test_redundant_features_are_dropped_and_mapped_back():
    rng = np.random.default_rng(3)
    base = (rng.random((80, 4)) < 0.5).astype(np.uint8)
    y = (base[:, 1] & base[:, 2]) | (base[:, 3] & ~base[:, 1] & 1)
    # columns: constant, base0, not base1, base1, base2, base2 again, base3
    X = np.column_stack([np.ones(80, np.uint8), base[:, 0], 1 - base[:, 1], base[:, 1],
                         base[:, 2], base[:, 2], base[:, 3]])
    data = dataset_from_arrays(X, y, np.ones(80), 2)
    result = train(data, "blossom", {"depth": 2})
    assert result.stats["features_used"] == 4
    assert result.optimal and result.train_error == 0
    used = set(result.tree.feature[result.tree.feature >= 0].tolist())
    assert used <= {1, 2, 4, 6} and 2 in used  # original indices of the kept columns
    assert np.array_equal(result.tree.predict(X), y)
