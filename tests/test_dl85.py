"""The `dl85` and `cadl85` solvers: optimal against brute force and pystreed for every
rule and relaxation, weights, classes, minimum support, the anytime protocol
(incumbents, time limit, cancel, GIL), the memory cap, and tiny data."""

import functools
import itertools
import threading
import time

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
    without_warm_start,
)

from engine.data.csv_reader import read_table
from engine.data.dataset import PrepOptions, merge_duplicates
from engine.featurize import prepare
from engine.solvers import get_solver
from engine.solvers import kernel_support as ks
from engine.solvers.dl85 import adapter as dl85_module
from engine.solvers.dl85.cache import (
    ENTRY_BYTES,
    FLAG_EXACT,
    FLAG_FOUND,
    I_FLAGS,
    LEAF,
    M_CLOCK,
    M_COUNT,
    V_ERR,
    V_LB,
    cache_absorb,
    cache_evict,
    cache_export,
    cache_find,
    cache_new,
    cache_store,
    records_new,
    zobrist_table,
)
from engine.solvers.dl85.rules import RELAXATIONS, RULES, luby, relax
from engine.solvers.protocol import Status
from engine.training import train
from engine.warmup import warm_up

CONFIGS = [("dl85", {})] + [("cadl85", {"rule": rule, "relax": relaxation})
                            for rule in RULES for relaxation in RELAXATIONS]
IDS = ["dl85"] + [f"{p['rule']}-{p['relax']}" for _, p in CONFIGS[1:]]
ORDERINGS = ("gain", "gini", "error", "none")


@pytest.fixture(scope="module", autouse=True)
def compiled():
    """Load (or compile) the kernel before any clock starts."""
    X = np.array([[0, 1], [1, 0], [1, 1], [0, 0]])
    for algorithm in ("dl85", "cadl85"):
        train(dataset_from_arrays(X, [0, 1, 1, 0], [0.5, 1.5, 1, 1], 2), algorithm, {"depth": 3})


# ------------------------------------------------------------------ brute force
N_CASES = 40


@functools.cache
def _expected(seed, depth):
    """Brute force: every tree enumerated when there are at most 3 features (up to
    7204 trees at depth 3), the memoised exhaustive search otherwise."""
    X, y, w, K = random_binary_case(seed)
    if X.shape[1] <= 3:
        return enumerated(X, y, w, K, depth)
    return exhaustive(X, y, w, K, depth)


def test_the_memoised_search_is_what_enumerating_every_tree_gives():
    for seed in range(N_CASES):
        X, y, w, K = random_binary_case(seed)
        X = X[:, :3]
        for depth in (0, 1, 2, 3):
            assert exhaustive(X, y, w, K, depth) == pytest.approx(
                enumerated(X, y, w, K, depth)), seed


def _check(result, X, y, w, expected, depth, where):
    assert result.optimal and result.status == Status.OPTIMAL, where
    assert result.train_error == pytest.approx(expected, abs=1e-9), where
    assert result.tree.error(X, y, w) == result.train_error, where
    assert result.stats["kernel_error"] == pytest.approx(expected, abs=1e-9), where
    assert result.lower_bound == result.train_error, where
    assert result.tree.depth <= depth, where
    errors = [e for _, e, _ in result.incumbents]
    assert errors == sorted(errors, reverse=True), where
    assert errors[-1] == pytest.approx(result.train_error, abs=1e-9), where


@pytest.mark.parametrize("algorithm,params", CONFIGS, ids=IDS)
def test_run_to_completion_it_agrees_with_brute_force(algorithm, params):
    """Every rule and relaxation ends with the optimum (depths 0-3, up to 6 features,
    2-3 classes, integer, zero and fractional weights, duplicated and redundant
    features); orderings and, for CA, the rule at the last level vary with the seed."""
    for seed in range(N_CASES):
        X, y, w, K = random_binary_case(seed)
        extra = {"ordering": ORDERINGS[seed % 4]}
        if algorithm == "cadl85":
            extra["rule_last_level"] = seed % 3 == 0
        for depth in range(4):
            result = train(dataset_from_arrays(X, y, w, K), algorithm,
                           {"depth": depth, **params, **extra})
            _check(result, X, y, w, _expected(seed, depth), depth, (seed, depth))


@pytest.mark.parametrize("plan", ["no depth-two step", "pair counts at the last level"])
def test_the_other_counting_paths_agree_with_brute_force(monkeypatch, plan):
    """Without the depth-two step (too many features) every branch is searched down to
    stumps; with pair counts only two levels above the bottom, they are scanned there."""
    original = dl85_module.Problem.pair_plan

    def plan_none(self, depth, budget):
        return False, 0, 0

    def plan_last(self, depth, budget):
        use, _, _ = original(self, depth, budget)
        return (use, depth - 2, 0) if use else (False, 0, 0)

    monkeypatch.setattr(dl85_module.Problem, "pair_plan",
                        plan_none if plan.startswith("no") else plan_last)
    configs = [("dl85", {}), ("cadl85", {"rule": "discrepancy", "relax": "luby"}),
               ("cadl85", {"rule": "purity", "relax": "monotonic", "rule_last_level": True})]
    levels = []
    for seed in range(N_CASES):
        X, y, w, K = random_binary_case(seed)
        for depth in range(5):
            expected = _expected(seed, depth) if depth < 4 else exhaustive(X, y, w, K, 4)
            for algorithm, params in configs:
                result = train(dataset_from_arrays(X, y, w, K), algorithm,
                               {"depth": depth, **params})
                _check(result, X, y, w, expected, depth, (seed, depth, algorithm))
                levels.append(result.stats["pair_count_levels"])
    assert set(levels) == ({0} if plan.startswith("no") else {0, 1})


def test_minimum_support_against_brute_force():
    rng = np.random.default_rng(11)
    for trial in range(24):
        n, F, K = int(rng.integers(20, 70)), int(rng.integers(3, 8)), int(rng.integers(2, 4))
        X = (rng.random((n, F)) < 0.5).astype(np.uint8)
        y = ((X[:, 0] & X[:, 1]) | X[:, 2]).astype(np.int64) % K
        noisy = rng.random(n) < 0.25
        y[noisy] = rng.integers(0, K, noisy.sum())
        w = rng.integers(1, 4, n).astype(float) if trial % 2 else np.ones(n)
        support = (2, 3, 5, 8)[trial % 4]
        depth = 2 + trial % 3
        expected = exhaustive(X, y, w, K, depth, support)
        for algorithm, params in CONFIGS[::4]:
            result = train(dataset_from_arrays(X, y, w, K), algorithm,
                           {"depth": depth, "min_support": support, **params})
            assert result.optimal and result.train_error == expected, (trial, algorithm)
            tree = result.tree
            assert tree.value[tree.feature < 0].sum(axis=1).min() >= support, trial


# ------------------------------------------------------------------ pystreed
def _streed_error(data, depth):
    """pystreed's proven optimal misclassification count (accuracy, leaves >= 1 row)."""
    streed = pytest.importorskip("pystreed")
    X = data.X.astype(np.int64)
    clf = streed.STreeDClassifier(max_depth=depth, min_leaf_node_size=1, time_limit=60)
    clf.fit(X, data.y)
    assert clf.fit_result.is_optimal()
    return float((clf.predict(X) != data.y).sum())


STREED_CASES = ["zoo-1", "hepatitis", "lymph", "vote", "tic-tac-toe", "primary-tumor",
                "soybean", "heart-cleveland", "anneal", "yeast"]


@pytest.mark.parametrize("name", STREED_CASES)
def test_same_optimum_as_pystreed_oncp4im(name):
    data = cp4im(name)
    for depth in (2, 3, 4):
        expected = _streed_error(data, depth)
        for algorithm, params in (("dl85", {}), ("cadl85", {}),
                                  ("cadl85", {"rule": "topk_star", "relax": "exponential"})):
            result = train(data, algorithm, {"depth": depth, **params}, time_limit=60)
            assert result.optimal and result.train_error == expected, (depth, algorithm)


@pytest.mark.parametrize("relative", ["inferdt/iris.csv", "inferdt/wine.csv",
                                      "inferdt/balance-scale.csv", "odd/car-evaluation.csv",
                                      "odd/dermatology.csv"])
def test_same_optimum_as_pystreed_on_multiclass_data(relative):
    data = shared_dataset(relative, binarize="quantile:4")
    assert data.n_classes >= 3
    for depth in (2, 3):
        expected = _streed_error(data, depth)
        for algorithm in ("dl85", "cadl85"):
            result = train(data, algorithm, {"depth": depth}, time_limit=60)
            assert result.optimal and result.train_error == expected, (depth, algorithm)


# ------------------------------------------------------------------ the CA loop
def test_luby_and_the_relaxations():
    assert [luby(i) for i in range(1, 16)] == [1, 1, 2, 1, 1, 2, 4, 1, 1, 2, 1, 1, 2, 4, 8]
    assert relax(RELAXATIONS["monotonic"], 3.0, 1.0, 2.0, 5) == 4.0
    assert relax(RELAXATIONS["exponential"], 0.0, 1.0, 2.0, 1) == 1.0
    assert relax(RELAXATIONS["exponential"], 3.0, 1.0, 2.0, 2) == 6.0
    assert relax(RELAXATIONS["luby"], 3.0, 1.0, 2.0, 7) == 7.0


def test_restarts_improve_the_incumbent_until_the_proof():
    data = cp4im("yeast")
    exact = train(data, "dl85", {"depth": 4})
    for relaxation in RELAXATIONS:
        result = train(data, "cadl85", {"depth": 4, "rule": "discrepancy",
                                        "relax": relaxation}, time_limit=60)
        assert result.optimal and result.train_error == exact.train_error == 366
        assert result.stats["restarts"] > 2 and result.stats["pruned_by_rule"] > 0
        errors = [e for _, e, _ in result.incumbents]
        assert len(errors) >= 3 and all(a > b for a, b in itertools.pairwise(errors))
    monotonic = train(data, "cadl85", {"depth": 4, "rule": "topk", "relax": "monotonic"})
    exponential = train(data, "cadl85", {"depth": 4, "rule": "topk",
                                         "relax": "exponential"})
    assert monotonic.stats["restarts"] > exponential.stats["restarts"]


def test_the_first_restart_of_top_k_one_is_the_greedy_path():
    """k = 1 expands only the first feature of each branch; the first incumbent after
    the root leaf is that restart's tree, worse than the optimum here."""
    data = cp4im("anneal")
    result = train(data, "cadl85", {"depth": 4, "rule": "topk", "k": 1}, time_limit=60)
    assert result.optimal and result.stats["restarts"] > 1
    assert result.incumbents[1][1] > result.train_error


# ------------------------------------------------------------------ anytime, monitor
@pytest.fixture(scope="module")
def splice():
    return cp4im("splice-1")


@pytest.mark.parametrize("algorithm,params,improves", [
    ("dl85", {}, False),     # depth-first: in 0.3 s no better than the greedy warm start
    ("cadl85", {}, True), ("cadl85", {"rule": "topk_star"}, True)])
def test_time_limit_returns_promptly_with_a_valid_incumbent(splice, algorithm, params,
                                                             improves):
    result = stopped_by_time_limit(splice, algorithm, {"depth": 6, **params}, 0.3)
    assert result.train_error <= result.incumbents[0][1]
    assert (result.train_error < result.incumbents[0][1]) == improves


@pytest.mark.parametrize("algorithm", ["dl85", "cadl85"])
def test_cancel_from_another_thread_is_prompt(splice, algorithm):
    params = {"depth": 7, "rule": "gain"} if algorithm == "cadl85" else {"depth": 7}
    cancelled_from_another_thread(splice, algorithm, params, 0.3)


def test_the_kernel_releases_the_gil(splice):
    """Python keeps running in this thread while the kernel searches in another."""
    done = threading.Event()
    worker = threading.Thread(target=lambda: (train(splice, "dl85", {"depth": 8},
                                                    time_limit=0.8), done.set()))
    worker.start()
    time.sleep(0.1)
    longest, last, count = 0.0, time.perf_counter(), 0
    while not done.is_set() and count < 10 ** 8:
        now = time.perf_counter()
        longest, last, count = max(longest, now - last), now, count + 1
    worker.join()
    assert count > 100_000 and longest < 0.1, (count, longest)


def test_without_anytime_trees_only_complete_root_trees_are_published(splice):
    """dl85 on one thread then publishes the root leaf and, within 0.5 s on splice at
    depth 6, no complete tree at the root but the stop-now tree at the end; cadl85
    publishes the root's improvements of each restart.  (On threads each task's
    complete trees count, and the Monitor shows those better than all before.)"""
    one = {"depth": 6, "threads": 1}
    result = without_warm_start(splice, "dl85", {**one, "anytime_trees": False}, 0.5)
    live = without_warm_start(splice, "dl85", one, 0.5)
    assert len(live.incumbents) > 2
    assert result.incumbents[0][1] == live.incumbents[0][1]     # the root leaf
    assert len(result.incumbents) == 2 and result.incumbents[1][0] >= 0.45
    assert result.tree.error(splice.X, splice.y, splice.w) == result.train_error
    ca = without_warm_start(splice, "cadl85", {"depth": 6, "anytime_trees": False}, 0.5)
    errors = [e for _, e, _ in ca.incumbents]
    assert len(errors) >= 3 and all(a > b for a, b in itertools.pairwise(errors))


def test_stops_with_a_proof_at_the_unavoidable_error():
    """hypothyroid has 17 rows contradicting identical rows of the other class: at depth
    10 a tree erring only on them exists, and finding it ends the search."""
    data = cp4im("hypothyroid")
    for algorithm in ("dl85", "cadl85"):
        result = train(data, algorithm, {"depth": 10}, time_limit=20)
        assert result.optimal and result.train_error == 17, algorithm
        assert result.stats["unavoidable_error"] == 17 and result.time_s < 5


# ------------------------------------------------------------------ memory
def test_a_small_cache_evicts_and_still_proves_the_optimum():
    data = cp4im("yeast")
    roomy = train(data, "dl85", {"depth": 5}, time_limit=60)
    small = train(data, "dl85", {"depth": 5, "cache_mb": 16}, time_limit=60)
    assert roomy.optimal and roomy.stats["evicted_entries"] == 0
    assert small.optimal and small.stats["evicted_entries"] > 0
    assert small.train_error == roomy.train_error == 313
    two = train(data, "dl85", {"depth": 5, "cache_mb": 16, "threads": 2}, time_limit=60)
    assert two.optimal and two.train_error == 313 and two.stats["threads"] == 2
    assert two.stats["evicted_entries"] > 0 and two.stats["bounds_shared"] > 0
    ca = train(data, "cadl85", {"depth": 5, "cache_mb": 16, "rule": "topk_star",
                                "relax": "exponential"}, time_limit=60)
    assert ca.optimal and ca.train_error == 313


def test_cache_table_stores_finds_and_evicts_least_recently_used():
    keys, vals, ints, slots, meta = cache_new(64)
    R, RC, rfree, rmeta = records_new(16)
    stack = np.zeros(16, dtype=np.int64)
    Z = zobrist_table(40)
    for j in range(40):
        cache_store(keys, vals, ints, slots, meta, Z[2 * j, 0], Z[2 * j, 1], float(j), 0.0,
                    np.inf, 0.0, LEAF, 3, 1, R, RC, rfree, rmeta, stack)
    assert meta[M_COUNT] == 40
    assert cache_find(keys, slots, Z[2 * 7, 0], Z[2 * 7, 1]) == 7
    assert cache_find(keys, slots, Z[1, 0], Z[1, 1]) == -1
    assert cache_evict(keys, vals, ints, slots, meta, R, RC, rfree, rmeta, stack) == 20
    for j in range(40):
        e = cache_find(keys, slots, Z[2 * j, 0], Z[2 * j, 1])
        assert (e >= 0) == (j >= 20) and (e < 0 or vals[e, 0] == j)


def test_threads_pass_each_other_the_bounds_of_exact_entries_only():
    """Export: the exact entries stored since a clock, an optimum as its error, a
    failed search as its bound.  Absorb: new keys become tree-less bound entries
    (never exported again), a known branch without a tree keeps the larger bound,
    one with its optimal tree is left alone; room and Stop end it early."""
    Z = zobrist_table(8)
    R, RC, rfree, rmeta = records_new(16)
    stack = np.zeros(16, dtype=np.int64)
    mine = cache_new(16)

    def store(table, j, err, lb, flags):
        cache_store(*table, Z[j, 0], Z[j, 1], err, lb, np.inf, 0.0, LEAF if flags &
                    FLAG_FOUND else -1, flags, 1, R, RC, rfree, rmeta, stack)

    store(mine, 0, 4.0, 4.0, FLAG_EXACT + FLAG_FOUND)   # solved: optimum 4
    store(mine, 1, np.inf, 6.0, FLAG_EXACT)              # nothing below 6
    store(mine, 2, 3.0, 1.0, FLAG_FOUND)                 # inexact (CA rule): not given
    since = int(mine[4][M_CLOCK])
    store(mine, 3, 2.0, 2.0, FLAG_EXACT + FLAG_FOUND)
    keys, bounds = cache_export(mine[0], mine[1], mine[2], mine[4], 0)
    assert [int(k) for k in keys[:, 1]] == [int(Z[j, 1]) for j in (0, 1, 3)]
    assert list(bounds) == [4.0, 6.0, 2.0]
    later = cache_export(mine[0], mine[1], mine[2], mine[4], since)
    assert list(later[1]) == [2.0]

    theirs = cache_new(16)
    store(theirs, 0, 5.0, 5.0, FLAG_EXACT + FLAG_FOUND)  # its own tree: kept as is
    store(theirs, 1, np.inf, 2.0, FLAG_EXACT)            # a weaker bound: raised
    control = np.zeros(ks.CONTROL_SIZE)
    control[ks.C_DEADLINE] = np.inf
    *table, reached, added = cache_absorb(*theirs, keys, bounds, 0, 1 << 20, control)
    table = (*table, theirs[4])
    assert reached == 3 and added == 1 and table[4][M_COUNT] == 3

    def entry(j):
        return cache_find(table[0], table[3], Z[j, 0], Z[j, 1])

    assert table[1][entry(0), V_ERR] == 5.0 and table[1][entry(0), V_LB] == 5.0
    assert table[1][entry(1), V_LB] == 6.0
    new = entry(3)
    assert table[1][new, V_LB] == 2.0 and table[1][new, V_ERR] == np.inf
    assert table[2][new, I_FLAGS] == FLAG_EXACT
    # its own entries (one with the bound it took), never the one it was given
    assert list(cache_export(table[0], table[1], table[2], table[4], 0)[1]) == [5.0, 6.0]

    many = np.array([[j, j] for j in range(1, 41)], dtype=np.uint64)
    small = cache_new(16)
    *_, reached, added = cache_absorb(*small, many, np.ones(40), 0, 16 * ENTRY_BYTES,
                                      control)
    assert reached == added == 15       # the table may not grow past its room
    control[ks.C_STOP] = ks.STOP_CANCEL
    *_, reached, added = cache_absorb(*cache_new(16), many, np.ones(40), 0, 1 << 20,
                                      control)
    assert reached == added == 0


def test_the_board_drops_what_every_thread_read_and_the_oldest_beyond_its_limit():
    from engine.solvers.dl85.parallel import Board, Workspace
    control = np.zeros(ks.CONTROL_SIZE)
    control[ks.C_DEADLINE] = np.inf
    board = Board(limit=24 * 20)             # twenty entries of 16 + 8 bytes
    one, two = Workspace(board, 0, control), Workspace(board, 0, control)

    def export(n):
        return np.zeros((n, 2), dtype=np.uint64), np.zeros(n)

    board.add(one, *export(10))
    board.add(two, *export(10))
    assert board.held == 24 * 20 and None not in board.exports
    one.take()
    two.take()                               # both read both: dropped at the next add
    board.add(one, *export(10))
    assert board.exports[:2] == [None, None] and board.held == 24 * 10
    board.add(one, *export(15))              # 25 entries unread: the oldest goes
    assert board.exports[2] is None and board.exports[3] is not None
    board.add(one, *export(10))
    assert board.exports[3] is None and board.exports[4] is not None
    assert board.held == 24 * 10


@pytest.mark.parametrize("candidates", [0, 1, 3, 4, 5, 9, 10, 100])
@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_ca_restarts_on_threads_cut_the_root_order_into_few_contiguous_runs(
        candidates, n_threads):
    from engine.solvers.dl85.parallel import RUNS_PER_THREAD, _runs
    runs = _runs(candidates, n_threads)
    assert [p for first, end in runs for p in range(first, end)] == list(range(candidates))
    assert all(first < end for first, end in runs)
    assert len(runs) <= 2 * RUNS_PER_THREAD * n_threads
    head = min(candidates, RUNS_PER_THREAD * n_threads)
    assert runs[:head] == [(p, p + 1) for p in range(head)]


# ------------------------------------------------------------------ weights, data
def test_merged_duplicates_and_scaled_weights_give_the_same_optimum():
    data = cp4im("primary-tumor")
    merged = merge_duplicates(data)
    assert merged.n_rows < data.n_rows and merged.w.max() > 1
    scaled = dataset_from_arrays(data.X, data.y, data.w * 2.5, data.n_classes)
    for algorithm in ("dl85", "cadl85"):
        for min_support in (1, 4):
            params = {"depth": 3, "min_support": min_support}
            a = train(data, algorithm, params)
            b = train(merged, algorithm, params)
            assert a.optimal and b.optimal and a.train_error == b.train_error
            assert b.tree.error(data.X, data.y, data.w) == a.train_error
        c = train(scaled, algorithm, {"depth": 3})
        assert c.optimal and c.train_error == pytest.approx(2.5 * a.train_error)


def test_orderings_change_the_path_not_the_optimum():
    data = cp4im("lymph")
    results = [train(data, "dl85", {"depth": 4, "ordering": o}) for o in ORDERINGS]
    assert all(r.optimal for r in results)
    assert len({r.train_error for r in results}) == 1
    assert len({r.stats["branches"] for r in results}) > 1


def test_tree_uses_the_original_columns_on_the_bundled_sample():
    data = prepare(read_table(SAMPLES / "loans.csv"), PrepOptions(binarize="quantile:10"))
    result = train(data, "dl85", {"depth": 3})
    assert result.optimal and result.stats["features_flipped"] > 0
    tree = result.tree
    assert tree.features is data.features
    assert (tree.threshold[tree.feature >= 0] == 0.5).all()
    frame = read_table(SAMPLES / "loans.csv").frame
    assert np.array_equal(tree.predict_frame(frame), tree.predict(data.X))
    assert tree.value[0].sum() == data.n_rows == tree.value[tree.feature < 0].sum()
    # the blossom solver agrees on the optimum
    assert train(data, "blossom", {"depth": 3}).train_error == result.train_error


def test_redundant_and_flipped_features_are_mapped_back():
    rng = np.random.default_rng(3)
    base = (rng.random((80, 4)) < 0.5).astype(np.uint8)
    base[:, 3] = rng.random(80) < 0.9                    # mostly 1: flipped inside
    y = (base[:, 1] & base[:, 2]) | (base[:, 3] & ~base[:, 1] & 1)
    # columns: constant, base0, not base1, base1, base2, base2 again, base3
    X = np.column_stack([np.ones(80, np.uint8), base[:, 0], 1 - base[:, 1], base[:, 1],
                         base[:, 2], base[:, 2], base[:, 3]])
    for algorithm in ("dl85", "cadl85"):
        result = train(dataset_from_arrays(X, y, np.ones(80), 2), algorithm, {"depth": 2})
        assert result.stats["features_used"] == 4 and result.stats["features_flipped"] >= 1
        assert result.optimal and result.train_error == 0
        used = set(result.tree.feature[result.tree.feature >= 0].tolist())
        assert used <= {1, 2, 4, 6}
        assert np.array_equal(result.tree.predict(X), y)


@pytest.mark.parametrize("algorithm", ["dl85", "cadl85"])
def test_tiny_and_degenerate_data(algorithm):
    cases = [
        ([[1, 0]], [1], [1.0], 2),                          # one row
        ([[0, 1], [0, 1], [0, 1]], [0, 1, 1], [1, 1, 1], 2),  # identical inputs
        ([[1], [1], [0]], [2, 2, 0], [1, 1, 1], 3),         # a class never seen
        ([[0, 1], [1, 0]], [0, 1], [0.0, 0.0], 2),          # no weight at all
        ([[1, 1], [1, 1]], [0, 1], [2.0, 1.0], 2),          # constant features only
    ]
    for X, y, w, K in cases:
        X, y, w = np.array(X), np.array(y), np.array(w)
        for depth in (0, 1, 2, 5):
            result = train(dataset_from_arrays(X, y, w, K), algorithm, {"depth": depth})
            assert result.optimal, (X.tolist(), depth)
            assert result.train_error == exhaustive(X, y, w, K, depth)
            assert result.tree.error(X, y, w) == result.train_error


def test_warm_up_trains_both_on_the_tiny_table():
    report = warm_up(["dl85", "cadl85"])
    assert report.errors == {} and set(report.timings) == {"dl85", "cadl85"}


def test_registered_with_their_parameters():
    for name in ("dl85", "cadl85"):
        solver = get_solver(name)
        assert solver.needs == "binary" and solver.proves_optimality
        assert "\n" not in solver.summary
    assert get_solver("dl85").resolve({"depth": "4", "ordering": "gini"}) == {
        "depth": 4, "min_support": 1, "leaf_cost": 0.0, "ordering": "gini", "anytime_trees": True,
        "cache_mb": 1024, "threads": 0}
    ca = get_solver("cadl85").resolve({"rule": "topk_star", "relax": "luby", "k": "3"})
    assert ca["rule"] == "topk_star" and ca["relax"] == "luby" and ca["k"] == 3
    assert ca["step"] == 1.0 and ca["factor"] == 2.0 and ca["max_discrepancy"] == 0
