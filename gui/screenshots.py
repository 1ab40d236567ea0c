"""Take the documentation screenshots of the main window's states (a developer tool).

    xvfb-run -a -s "-screen 0 1400x900x24" .venv/bin/python -m gui.screenshots docs/screenshots

Writes data-loaded.png (preview and column settings), live-training.png (blossom
improving its tree, mid-run), finished-tree.png (an optimal tree, one path
highlighted), results.png (history of three runs, two curves compared),
export-dialog.png (the Export dialog over the window, whole screen) and diagram.png
(an `odd` decision diagram, every path into one class terminal highlighted).
`... -m gui.screenshots docs/screenshots diagram` takes only the last one, and
`... analysis` the analyst's tools around a tree instead: node-rows.png (a node's
rows in the Data tab), row-path.png (a row's path lit), predict-file.png (Predict a
file), edit-menu.png and edited-tree.png (a node's menu, a subtree collapsed),
confusion-rows.png (a confusion cell's rows), evaluation-per-class.png,
evaluation-roc.png and evaluation-importance.png (the Evaluation tab), class-weights.png
(a balanced run's weighted figures) and big-tree.png (a depth limit, a search and the
overview of a depth-8 tree).
`--size 1280x720` (or `--size max`, maximised by the window manager: run one such as
openbox on the Xvfb display) takes them at another window size; the default is the
documentation's 1400x900.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from PySide6.QtCore import QEventLoop
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QApplication

from gui.main_window import (
    SAMPLES_DIR,
    TAB_DATA,
    TAB_EVALUATION,
    TAB_RESULTS,
    TAB_TREE,
    MainWindow,
)
from gui.tree_scene import NodeItem

DEFAULT_SIZE = "1400x900"


def _pump(app, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents(QEventLoop.AllEvents, 20)


def _wait(app, condition, timeout: float = 120) -> None:
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            raise TimeoutError("the window did not get there in time")
        app.processEvents(QEventLoop.AllEvents, 20)
    _pump(app, 0.3)


def _run(app, window, algorithm: str, depth: int) -> None:
    window.set_algorithm(algorithm)
    _wait(app, lambda: window.dataset is not None and not window.preparing)
    window.depth_spin.setValue(depth)
    ended = []
    window.run_ended.connect(ended.append)
    window.run_button.click()
    _wait(app, lambda: bool(ended) and not window.view.is_building
          and not window.validator.busy)   # its accuracy on new rows shown too
    window.run_ended.disconnect()


def _open_window(folder: Path, size: str = DEFAULT_SIZE):
    folder.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication([sys.argv[0]])
    window = MainWindow(warm_up=True)
    if size == "max":
        window.showMaximized()
    else:
        width, height = (int(x) for x in size.split("x"))
        window.setGeometry(0, 0, width, height)
        window.show()
    _wait(app, lambda: window.warmup_report is not None, 600)
    return app, window


def _shooter(app, window, folder: Path, shots: list[Path]):
    """`shoot(name, dialog=None)`: save the window (or the screen with `dialog`)."""
    def shoot(name: str, dialog=None) -> None:
        _pump(app, 0.5)
        path = folder / name
        if dialog is None:
            pixmap = window.grab()
        else:  # the whole screen; Xvfb has no window manager, so outline the dialog
            pixmap = app.primaryScreen().grabWindow(0)
            painter = QPainter(pixmap)
            frame = dialog.frameGeometry().adjusted(-1, -1, 0, 0)
            for width, alpha in ((6, 30), (3, 60)):
                painter.setPen(QPen(QColor(0, 0, 0, alpha), width))
                painter.drawRect(frame.adjusted(-width // 2, -width // 2, width // 2,
                                                width // 2))
            painter.setPen(QPen(QColor("#6b7580"), 1))
            painter.drawRect(frame)
            painter.end()
        pixmap.save(str(path))
        shots.append(path)
    return shoot


def _diagram(app, window, shoot) -> None:
    """`odd` at depth 3 on play_tennis (proven optimal in seconds), hovering the class
    terminal the most paths reach, so all of them are highlighted.  `odd` takes the
    features as they are, so binarisation is turned off (as a first run would have it)."""
    window.set_algorithm("odd")
    window.data_panel.set_binarize("none", notify=False)
    window.load_path(SAMPLES_DIR / "play_tennis.csv")
    _wait(app, lambda: not window.loading)
    _run(app, window, "odd", 3)
    window.tabs.setCurrentIndex(TAB_TREE)
    scene = window.view.tree_scene()
    scene.hover_node(max(scene.tree.terminals_used, key=scene.count_paths))
    shoot("diagram.png")
    scene.hover_node(None)


def take_diagram(folder: Path, size: str = DEFAULT_SIZE) -> list[Path]:
    app, window = _open_window(folder, size)
    shots: list[Path] = []
    _diagram(app, window, _shooter(app, window, folder, shots))
    window.state.mark_saved()   # nothing of a developer tool's runs to save
    window.close()
    return shots


def take(folder: Path, size: str = DEFAULT_SIZE) -> list[Path]:
    app, window = _open_window(folder, size)
    shots: list[Path] = []
    shoot = _shooter(app, window, folder, shots)

    # 1. data loaded
    window.set_algorithm("blossom")
    window.load_path(SAMPLES_DIR / "loans.csv")
    _wait(app, lambda: window.dataset is not None and not window.preparing)
    window.tabs.setCurrentIndex(TAB_DATA)
    window.data_view.columns_view.selectRow(1)
    shoot("data-loaded.png")

    # 2. live training: blossom at depth 5 proves its optimum after several seconds
    window.depth_spin.setValue(5)
    window.time_spin.setValue(60)
    ended = []
    window.run_ended.connect(ended.append)
    window.run_button.click()
    _pump(app, 2.5)
    window.tabs.setCurrentIndex(TAB_TREE)
    shoot("live-training.png")
    _wait(app, lambda: bool(ended))
    window.run_ended.disconnect()

    # 3. finished tree: readable depth 3, a path highlighted as under the mouse
    _run(app, window, "greedy", 3)
    _run(app, window, "blossom", 3)
    window.tabs.setCurrentIndex(TAB_TREE)
    scene = window.view.tree_scene()
    tree = scene.tree
    leaf = max((n for n in range(tree.n_nodes) if tree.is_leaf(n)),
               key=lambda n: (len(scene.path_to(n)), tree.value[n].sum()))
    scene.hover_node(leaf)
    shoot("finished-tree.png")
    scene.hover_node(None)

    # 4. results: the history, greedy and blossom at depth 3 compared
    window.tabs.setCurrentIndex(TAB_RESULTS)
    runs = window.results.runs
    window.results.show_run(runs[-1])
    window.results.select_runs([runs[-2].number, runs[-1].number])
    shoot("results.png")

    # 5. the Export dialog over the window, previewing the rules
    window.tabs.setCurrentIndex(TAB_TREE)
    window.show_run(runs[-1])
    _pump(app, 0.5)
    dialog = window.files.export_dialog_all()
    keys = [dialog.format_list.item(i).data(256) for i in range(dialog.format_list.count())]
    dialog.format_list.setCurrentRow(keys.index("rules"))
    dialog.move(window.geometry().center() - dialog.rect().center())
    shoot("export-dialog.png", dialog=dialog)
    dialog.close()

    # 6. a decision diagram
    _diagram(app, window, shoot)
    window.state.mark_saved()   # nothing of a developer tool's runs to save
    window.close()
    return shots


def _screen_shot(app, window, shoot, name: str, widget) -> None:
    """A popup or dialog with the window under it: the screen, cut to the window."""
    _pump(app, 0.5)
    shoot(name, dialog=widget)


def take_analysis(folder: Path, size: str = DEFAULT_SIZE) -> list[Path]:
    app, window = _open_window(folder, size)
    shots: list[Path] = []
    shoot = _shooter(app, window, folder, shots)
    window.load_path(SAMPLES_DIR / "loans.csv")
    _wait(app, lambda: window.dataset is not None and not window.preparing)
    _run(app, window, "blossom", 3)
    tree = window.tree

    # node -> rows: the root's right child clicked
    window.tabs.setCurrentIndex(TAB_TREE)
    _pump(app, 0.3)
    window.analysis.show_node(int(tree.right[0]))
    _wait(app, lambda: window.data_view.node_bar.isVisible())
    shoot("node-rows.png")
    window.data_view.all_rows_button.click()

    # row -> path: the fifth row chosen in the preview, the tree shown beside
    window.tabs.setCurrentIndex(TAB_DATA)
    window.data_view.preview_view.selectRow(4)
    window.tabs.setCurrentIndex(TAB_TREE)
    window.analysis.show_row(4)
    shoot("row-path.png")

    # predict a file
    dialog = window.analysis.predict_dialog()
    dialog.resize(900, 560)
    dialog.move(window.geometry().center() - dialog.rect().center())
    read = []
    dialog.finished_reading.connect(lambda: read.append(True))
    dialog.open_path(SAMPLES_DIR / "loans.csv")
    _wait(app, lambda: bool(read))
    _screen_shot(app, window, shoot, "predict-file.png", dialog)
    dialog.close()

    # edit by hand: the menu of the root's left child, then that subtree collapsed
    view = window.view
    node = int(tree.left[0])
    item = next(i for i in view.tree_scene().items()
                if isinstance(i, NodeItem) and i.node == node)
    point = view.mapFromScene(item.sceneBoundingRect().center())
    window.analysis.open_node_menu(node, view.viewport().mapToGlobal(point))
    _screen_shot(app, window, shoot, "edit-menu.png", window.analysis.node_menu)
    window.analysis.node_menu.close()
    window.analysis.collapse_node(node)
    _wait(app, lambda: not view.is_building)
    shoot("edited-tree.png")
    window.editor.undo(window.current_run)
    _wait(app, lambda: not view.is_building)

    # a confusion-matrix cell's rows
    window.tabs.setCurrentIndex(TAB_RESULTS)
    window.results.train_matrix.choose_cell(0, 1)
    _wait(app, lambda: window.data_view.node_bar.isVisible())
    shoot("confusion-rows.png")
    window.data_view.all_rows_button.click()

    # the Evaluation tab's three views
    window.tabs.setCurrentIndex(TAB_EVALUATION)
    for index, name in enumerate(("per-class", "roc", "importance")):
        window.evaluation_views.setCurrentIndex(index)
        shoot(f"evaluation-{name}.png")

    # class weights: a balanced run's weighted figures
    window.data_panel.class_weight_edit.setText("balanced")
    window.data_panel.class_weight_edit.editingFinished.emit()
    _pump(app, 0.5)
    _run(app, window, "blossom", 3)
    window.tabs.setCurrentIndex(TAB_RESULTS)
    shoot("class-weights.png")

    # a big tree: greedy at depth 8 shown to depth 4, a search zoomed in (overview)
    window.data_panel.class_weight_edit.setText("")
    window.data_panel.class_weight_edit.editingFinished.emit()
    _pump(app, 0.5)
    _run(app, window, "greedy", 8)
    window.tabs.setCurrentIndex(TAB_TREE)
    tools = window.tree_tools
    tools.depth_spin.setValue(4)
    tools.search_edit.setText("income")
    tools.find_next()
    shoot("big-tree.png")
    window.state.mark_saved()   # nothing of a developer tool's runs to save
    window.close()
    return shots


SETS = {"diagram": take_diagram, "analysis": take_analysis}

if __name__ == "__main__":
    args = sys.argv[1:]
    size = DEFAULT_SIZE
    if "--size" in args:
        at = args.index("--size")
        size = args[at + 1]
        del args[at:at + 2]
    target = Path(args[0] if args else "docs/screenshots")
    for shot in SETS.get(args[1] if args[1:] else "", take)(target, size):
        print(shot)
