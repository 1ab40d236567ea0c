"""Ordered text levels declared in the window (issue 46, item 4): Order levels…, the
column split as thresholds, kept by the session and by the file's own settings."""

import numpy as np
from test_gui_support import (  # noqa: F401 - isolated_settings: autouse fixture
    isolated_settings,
    open_window,
    ready,
    run_and_wait,
)

LEVELS = ["Low", "Medium", "High", "Very high"]


def risk_csv(path):
    rng = np.random.default_rng(0)
    rows = ["risk,amount,bad"]
    for _ in range(300):
        r, a = int(rng.integers(0, 4)), int(rng.integers(0, 100))
        rows.append(f"{LEVELS[r]},{a},{'yes' if (r >= 2) ^ (rng.random() < 0.1) else 'no'}")
    path.write_text("\n".join(rows) + "\n")
    return path


def test_order_levels_makes_a_text_column_split_as_thresholds(qtbot, tmp_path):
    path = risk_csv(tmp_path / "risk.csv")
    win = open_window(qtbot, path, algorithm="greedy")
    view = win.data_view
    view.columns_view.setCurrentIndex(win.columns.index(win.columns.names().index("risk"), 0))
    assert view.order_button.isEnabled()
    dialog = win.column_look.order_levels("risk")
    assert dialog.levels() == LEVELS          # a common scale: guessed right
    dialog.list.setCurrentRow(3)              # put "Very high" first, then back
    dialog.move(-1)
    assert dialog.levels() == ["Low", "Medium", "Very high", "High"]
    dialog.move(1)
    dialog.accept()
    qtbot.waitUntil(lambda: ready(win) and any(f.ordered for f in win.dataset.features),
                    timeout=30_000)
    assert win.columns.orders() == {"risk": tuple(LEVELS)}
    use = win.columns.index(win.columns.names().index("risk"), 4).data()
    assert use == "ordered: Low < Medium < High < Very high"
    risk = [f.condition() for f in win.dataset.features if f.column == "risk"]
    assert risk == ["risk <= Low", "risk <= Medium", "risk <= High"]
    run_and_wait(qtbot, win)
    root = win.tree.features[win.tree.feature[0]]
    assert root.column == "risk" and root.value == ("Low", "Medium")
    session = tmp_path / "s.orchard"
    assert win.files.save_session(session)
    win.close()

    other = open_window(qtbot, None)
    assert other.files.open_session(session)
    qtbot.waitUntil(lambda: ready(other), timeout=30_000)
    assert other.columns.orders() == {"risk": tuple(LEVELS)}
    assert any(f.ordered for f in other.dataset.features)
    other.close()
    # the file's own settings bring the order back too
    third = open_window(qtbot, path)
    assert third.columns.orders() == {"risk": tuple(LEVELS)}
    third.close()
