"""The Export dialog: pick formats, preview them, write them all into one folder.

Pictures (PNG, SVG, PDF) are drawn by Qt from the same scene as the window's view;
rules, Python, SQL, DOT and the JSON model come from `engine.export.write_export`,
which writes trees and decision diagrams alike: the dialog offers the kinds the
engine has for the model and previews exactly the file it would write.  Every file
is written atomically (a failure leaves no half-written file) and any problem is
reported in a dialog; the files written are listed in the dialog.

Every export starts in the folder the user last exported into (`last_export_folder`):
this dialog and the predictions' Save both remember in the settings where they wrote.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QFontDatabase, QGuiApplication, QImage, QPainter, QPixmap
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
)

from engine.export import write_export
from gui import settings
from gui.image_export import save_tree_image
from gui.models import export_kinds, scene_for
from gui.worker import error_message

PREVIEW_MAX_CHARS = 200_000
THUMBNAIL_SIDE = 1800     # pixels on the longer side of the picture preview's source
MAX_PREVIEW_SCALE = 1.25  # a small tree is not blown up beyond this (as in the view)
EXPORT_FOLDER = "export"  # the settings' name of the last folder exported into


@dataclass(frozen=True)
class Format:
    key: str           # "png", ... or an engine export kind
    label: str
    suffix: str        # file name ending, after the base name
    image: bool
    default: bool


FORMATS = (
    Format("png", "Picture (PNG)", "-tree.png", True, True),
    Format("svg", "Picture (SVG, vector)", "-tree.svg", True, False),
    Format("pdf", "Picture (PDF, vector)", "-tree.pdf", True, False),
    Format("rules", "Rules (text)", "-rules.txt", False, True),
    Format("python", "Python function", "-model.py", False, False),
    Format("sql", "SQL CASE expression", "-model.sql", False, False),
    Format("json", "Orchard model (JSON)", "-model.json", False, True),
    Format("dot", "Graphviz DOT", "-tree.dot", False, False),
)


def last_export_folder(fallback: str | Path) -> str:
    """The folder the user last exported into while it still exists, else `fallback`."""
    folder = settings.last_folder(EXPORT_FOLDER)
    return folder if folder and Path(folder).is_dir() else str(fallback)


def write_format(tree, fmt: Format, path: Path) -> None:
    if fmt.image:
        save_tree_image(tree, path)
    else:
        write_export(tree, path, fmt.key)


class PicturePreview(QLabel):
    """Shows a picture whole: scaled down to fit the label (proportions kept, never
    cropped), again whenever the label is resized; never enlarged beyond its size."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setAlignment(Qt.AlignCenter)
        self.setStyleSheet("background: white; border: 1px solid #c9ced4;")
        self.setMinimumSize(300, 240)
        # the label takes the room it is given; the picture never asks for more
        self.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Ignored)
        self.image: QImage | None = None

    def set_image(self, image: QImage) -> None:
        self.image = image
        self._rescale()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._rescale()

    def _rescale(self) -> None:
        if self.image is None:
            return
        ratio = self.image.devicePixelRatio()
        room = self.contentsRect().adjusted(4, 4, -4, -4).size()
        if room.width() < 50 or room.height() < 50:   # not laid out yet
            room = self.minimumSize()
        room = room * ratio
        natural = self.image.size()
        if natural.width() <= room.width() and natural.height() <= room.height():
            scaled = self.image
        else:
            scaled = self.image.scaled(room, Qt.KeepAspectRatio, Qt.SmoothTransformation)
            scaled.setDevicePixelRatio(ratio)
        self.setPixmap(QPixmap.fromImage(scaled))


class ExportDialog(QDialog):
    """Writes `tree` into the last export folder, or `folder` before any export."""

    exported = Signal(list)     # paths written

    def __init__(self, tree, folder: str | Path, base_name: str,
                 show_error: Callable[[str], None], parent=None):
        super().__init__(parent)
        self.setWindowTitle("Export the tree")
        self.setObjectName("exportDialog")
        self.resize(860, 560)
        self.tree = tree
        self._show_error = show_error
        self._image: QImage | None = None
        self.written: list[Path] = []
        layout = QVBoxLayout(self)
        heading = QLabel("<b>Export the tree</b> — tick the formats to write; the "
                         "selected one is previewed on the right.", self)
        layout.addWidget(heading)

        splitter = QSplitter(Qt.Horizontal, self)
        self.format_list = QListWidget(splitter)
        kinds = export_kinds(tree)
        for fmt in FORMATS:
            if not fmt.image and fmt.key not in kinds:
                continue
            item = QListWidgetItem(fmt.label, self.format_list)
            item.setData(Qt.UserRole, fmt.key)
            item.setFlags(item.flags() | Qt.ItemIsUserCheckable)
            item.setCheckState(Qt.Checked if fmt.default else Qt.Unchecked)
        self.format_list.setMaximumWidth(260)
        self.format_list.currentItemChanged.connect(self._preview)
        self.preview = QStackedWidget(splitter)
        self.text_preview = QPlainTextEdit(self.preview)
        self.text_preview.setReadOnly(True)
        self.text_preview.setLineWrapMode(QPlainTextEdit.NoWrap)
        self.text_preview.setFont(QFontDatabase.systemFont(QFontDatabase.FixedFont))
        self.image_preview = PicturePreview(self.preview)
        self.preview.addWidget(self.text_preview)
        self.preview.addWidget(self.image_preview)
        splitter.setStretchFactor(1, 1)
        layout.addWidget(splitter, 1)

        form = QFormLayout()
        folder_row = QHBoxLayout()
        self.folder_edit = QLineEdit(last_export_folder(folder), self)
        browse = QPushButton("Browse…", self)
        browse.clicked.connect(self._browse)
        folder_row.addWidget(self.folder_edit, 1)
        folder_row.addWidget(browse)
        form.addRow("Folder:", folder_row)
        self.name_edit = QLineEdit(base_name, self)
        self.name_edit.textChanged.connect(self._update_names)
        form.addRow("File names:", self.name_edit)
        self.names_label = QLabel(self)
        self.names_label.setWordWrap(True)
        self.names_label.setStyleSheet("color: #505863;")
        form.addRow("", self.names_label)
        layout.addLayout(form)

        buttons = QDialogButtonBox(self)
        self.export_button = buttons.addButton("Export", QDialogButtonBox.AcceptRole)
        buttons.addButton(QDialogButtonBox.Close)
        self.export_button.clicked.connect(self.export_checked)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.format_list.itemChanged.connect(self._update_names)
        self.format_list.setCurrentRow(0)
        self._update_names()

    # ------------------------------------------------------------- choices
    def formats(self) -> list[Format]:
        return [f for f in FORMATS if any(
            self.format_list.item(i).data(Qt.UserRole) == f.key
            for i in range(self.format_list.count()))]

    def checked(self) -> list[Format]:
        keys = {self.format_list.item(i).data(Qt.UserRole)
                for i in range(self.format_list.count())
                if self.format_list.item(i).checkState() == Qt.Checked}
        return [f for f in FORMATS if f.key in keys]

    def set_checked(self, keys: list[str]) -> None:
        for i in range(self.format_list.count()):
            item = self.format_list.item(i)
            item.setCheckState(Qt.Checked if item.data(Qt.UserRole) in keys else Qt.Unchecked)

    def target(self, fmt: Format) -> Path:
        return Path(self.folder_edit.text()).expanduser() / f"{self.name_edit.text()}{fmt.suffix}"

    def _update_names(self, *_) -> None:
        names = [self.target(f).name for f in self.checked()]
        self.names_label.setText(", ".join(names) if names else "Tick at least one format.")
        self.export_button.setEnabled(bool(names) and bool(self.name_edit.text().strip()))

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Export into folder",
                                                  self.folder_edit.text())
        if folder:
            self.folder_edit.setText(folder)

    # ------------------------------------------------------------- preview
    def _preview(self, item: QListWidgetItem | None, _previous=None) -> None:
        if item is None:
            return
        key = item.data(Qt.UserRole)
        fmt = next(f for f in FORMATS if f.key == key)
        if fmt.image:
            self.preview.setCurrentWidget(self.image_preview)
            self.image_preview.set_image(self._thumbnail())
            return
        self.preview.setCurrentWidget(self.text_preview)
        try:
            text = self._file_text(key)
        except Exception as exc:  # noqa: BLE001 - shown, never fatal
            text = f"Cannot preview: {error_message(exc)}"
        if len(text) > PREVIEW_MAX_CHARS:
            text = text[:PREVIEW_MAX_CHARS] + "\n… (preview truncated; the file is complete)"
        self.text_preview.setPlainText(text)

    def _file_text(self, kind: str) -> str:
        """The very text the export of `kind` writes (written to a scratch folder)."""
        with tempfile.TemporaryDirectory(prefix="orchard-preview-") as folder:
            path = Path(folder) / f"preview.{kind}"
            write_export(self.tree, path, kind)
            return path.read_text(encoding="utf-8")

    def _thumbnail(self) -> QImage:
        """The whole picture (the scene the exports draw), with its own proportions,
        at most THUMBNAIL_SIDE pixels on its longer side; `PicturePreview` fits it."""
        if self._image is not None:
            return self._image
        scene = scene_for(self.tree)
        rect = scene.sceneRect()
        ratio = QGuiApplication.primaryScreen().devicePixelRatio() if \
            QGuiApplication.primaryScreen() else 1.0
        scale = min(ratio * MAX_PREVIEW_SCALE,
                    THUMBNAIL_SIDE / max(rect.width(), rect.height(), 1.0))
        image = QImage(max(1, round(rect.width() * scale)),
                       max(1, round(rect.height() * scale)), QImage.Format_ARGB32)
        image.fill(Qt.white)
        painter = QPainter(image)
        painter.setRenderHints(QPainter.Antialiasing | QPainter.TextAntialiasing)
        scene.render(painter, QRectF(image.rect()), rect, Qt.KeepAspectRatio)
        painter.end()
        image.setDevicePixelRatio(ratio)   # shown no larger than MAX_PREVIEW_SCALE
        self._image = image
        return image

    # -------------------------------------------------------------- export
    def export_checked(self) -> list[Path]:
        """Write every ticked format; errors go to a dialog, the rest is still written."""
        folder = Path(self.folder_edit.text()).expanduser()
        if not self.name_edit.text().strip():
            self._show_error("Please give the exported files a name.")
            return []
        if not folder.is_dir():
            self._show_error(f"The folder '{folder}' does not exist.")
            return []
        written, failures = [], []
        QGuiApplication.setOverrideCursor(Qt.WaitCursor)
        try:
            for fmt in self.checked():
                path = self.target(fmt)
                try:
                    write_format(self.tree, fmt, path)
                except Exception as exc:  # noqa: BLE001 - reported to the user
                    failures.append(error_message(exc))
                    continue
                written.append(path)
        finally:
            QGuiApplication.restoreOverrideCursor()
        self.written = written
        if written:
            settings.remember_folder(EXPORT_FOLDER, written[0])
            self.names_label.setText("Written: " + ", ".join(p.name for p in written))
            self.exported.emit(written)
        if failures:
            self._show_error(" ".join(failures))
        return written
