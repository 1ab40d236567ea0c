"""The window's defaults on the table shape analysts bring (issue 33): text columns of
3 to 4,000 values, 2% missing cells in every column, tens of thousands of rows.

Loaded and run as a new user would (the default algorithm, depth and missing-value
policy), the run ends with its own tree: grouped text values and routed missing
cells, an error on the window's data equal to the one it reports, never worse than
the greedy tree of the same depth.  A second run at another depth then replaces it.
"""

from __future__ import annotations

import numpy as np
from big_tables import transport_log
from test_gui_support import isolated_settings, open_window, run_and_wait  # noqa: F401

from engine.data.features import IN
from engine.training import train

ROWS = 40_000
LIMIT_S = 5


def test_the_defaults_train_on_a_transport_log(qtbot, tmp_path):
    path = transport_log(tmp_path / "transport.csv", ROWS, seed=3)
    win = open_window(qtbot, path, algorithm=None)   # the window's default: auto
    data = win.dataset
    assert data.n_rows == ROWS and data.report.cells_routed > 0
    assert data.n_features < 200   # value groups, not a column per shipper
    win.time_spin.setValue(LIMIT_S)
    for depth in (3, 4):
        win.depth_spin.setValue(depth)
        qtbot.waitUntil(lambda: not win.preparing, timeout=30_000)
        result = run_and_wait(qtbot, win)
        assert result is not None, win.last_error
        run, data = win.current_run, win.dataset
        assert run.params["depth"] == depth and run.n_rows == ROWS
        tree = result.tree
        error = float(data.w[tree.predict(data.X) != data.y].sum())
        assert np.isclose(error, run.train_error)
        used = [tree.features[f] for f in tree.feature if f >= 0]
        assert any(f.op == IN for f in used), [str(f) for f in used]
        assert all(f.missing is not None for f in used)   # every test routes missing
        greedy = train(data, "greedy", {"depth": str(depth)})
        assert run.train_error <= greedy.train_error
        assert win.view.tree is tree or win.tree is tree
