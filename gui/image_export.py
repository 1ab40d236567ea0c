"""Save the picture of a tree or decision diagram as PNG, SVG or PDF (chosen by the
file extension), drawn by the same scene as the window's view (`gui.models.scene_for`).

Used by the window's File > Export image and, headless, by the command line, so it
creates its own Qt application when there is none, and on a Linux machine without
a display it selects Qt's offscreen platform first.  The file is written under a
temporary name beside the target and then renamed, so a failed or interrupted
export never leaves a half-written picture behind.
"""

from __future__ import annotations

import math
import os
import sys
import tempfile
from pathlib import Path

from engine.errors import OrchardError

FORMATS = {".png": "PNG image", ".svg": "SVG drawing", ".pdf": "PDF document"}

PNG_SCALE = 2.0
MAX_PNG_SIDE = 16000           # image viewers (and ImageMagick) often refuse more
MAX_PNG_PIXELS = 120_000_000   # about 480 MB of ARGB32 at most
MAX_PDF_POINTS = 14400.0       # 200 inches: the largest page PDF readers accept
SCREEN_DPI = 96

_app = None  # the application created here, kept alive for later exports


class _WriteFailed(Exception):
    """Qt could not open or write the temporary file."""


def ensure_gui_application():
    """The running Qt application, or a new one (offscreen when there is no display)."""
    global _app
    from PySide6.QtCore import QCoreApplication
    from PySide6.QtWidgets import QApplication

    app = QCoreApplication.instance()
    if app is None:
        if (sys.platform.startswith("linux") and not os.environ.get("DISPLAY")
                and not os.environ.get("WAYLAND_DISPLAY")
                and not os.environ.get("QT_QPA_PLATFORM")):
            os.environ["QT_QPA_PLATFORM"] = "offscreen"
        # A widgets application: the tree picture is a QGraphicsScene.
        _app = app = QApplication([sys.argv[0] if sys.argv else "orchard"])
    elif not isinstance(app, QApplication):
        raise RuntimeError("Drawing a tree needs a QApplication; this process already "
                           f"runs a {type(app).__name__}.")
    return app


def save_tree_image(tree, path: str | os.PathLike, **display) -> None:
    """Draw `tree` (or a diagram) into `path`: .png (2x, white background), .svg or .pdf.

    `display` draws a tree as the window shows it (`TreeView.display_options()`:
    folded subtrees as "+N" badges, edge widths); a picture never has the overview.
    """
    path = Path(path)
    ext = path.suffix.lower()
    if ext not in FORMATS:
        shown = f"'{path.suffix}'" if path.suffix else "no extension"
        raise OrchardError(f"Cannot save a tree picture as {shown}: the file name must end "
                           "in .png, .svg or .pdf.")
    folder = path.parent
    if not folder.is_dir():
        raise OrchardError(f"Cannot save '{path.name}': the folder '{folder}' does not exist.")

    ensure_gui_application()
    from gui.models import scene_for

    scene = scene_for(tree, **display)
    try:
        # a short prefix, so any name the file system allows leaves room for the rest
        fd, tmp = tempfile.mkstemp(prefix=f".{path.stem[:40]}.", suffix=ext, dir=folder)
    except OSError as error:
        raise OrchardError(f"Cannot write into the folder '{folder}' "
                           f"({error.strerror or error}).") from None
    os.close(fd)
    try:
        if ext == ".png":
            _write_png(scene, tmp)
        elif ext == ".svg":
            _write_svg(scene, tmp, path.stem)
        else:
            _write_pdf(scene, tmp, path.stem)
        _give_default_permissions(tmp)
        os.replace(tmp, path)
    except _WriteFailed:
        _remove(tmp)
        raise OrchardError(f"Could not write the {FORMATS[ext]} '{path}'.") from None
    except OSError as error:
        _remove(tmp)
        raise OrchardError(f"Cannot write '{path}' ({error.strerror or error}).") from None
    except BaseException:
        _remove(tmp)
        raise


def _remove(tmp: str) -> None:
    try:
        os.remove(tmp)
    except OSError:
        pass


def _give_default_permissions(tmp: str) -> None:
    """mkstemp makes owner-only files; give the picture the usual umask permissions."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)


def _render(scene, painter, width: float, height: float) -> None:
    from PySide6.QtCore import QRectF, Qt

    painter.setRenderHint(painter.RenderHint.Antialiasing)
    painter.setRenderHint(painter.RenderHint.TextAntialiasing)
    target = QRectF(0, 0, width, height)
    painter.fillRect(target, Qt.white)
    scene.render(painter, target, scene.sceneRect(), Qt.KeepAspectRatio)


def _write_png(scene, tmp: str) -> None:
    from PySide6.QtGui import QImage, QPainter

    rect = scene.sceneRect()
    scale = min(PNG_SCALE, MAX_PNG_SIDE / rect.width(), MAX_PNG_SIDE / rect.height(),
                math.sqrt(MAX_PNG_PIXELS / (rect.width() * rect.height())))
    width, height = max(1, round(rect.width() * scale)), max(1, round(rect.height() * scale))
    image = QImage(width, height, QImage.Format_ARGB32_Premultiplied)
    if image.isNull():
        raise OrchardError("The tree is too large to draw as a PNG image; save it as SVG "
                           "or PDF instead.")
    image.setDotsPerMeterX(round(SCREEN_DPI * scale / 0.0254))
    image.setDotsPerMeterY(round(SCREEN_DPI * scale / 0.0254))
    painter = QPainter(image)
    try:
        _render(scene, painter, width, height)
    finally:
        painter.end()
    if not image.save(tmp, "PNG"):
        raise _WriteFailed


def _write_svg(scene, tmp: str, title: str) -> None:
    from PySide6.QtCore import QRect, QSize
    from PySide6.QtGui import QPainter
    from PySide6.QtSvg import QSvgGenerator

    rect = scene.sceneRect()
    width, height = math.ceil(rect.width()), math.ceil(rect.height())
    generator = QSvgGenerator()
    generator.setFileName(tmp)
    generator.setSize(QSize(width, height))
    generator.setViewBox(QRect(0, 0, width, height))
    generator.setResolution(SCREEN_DPI)
    generator.setTitle(title)
    generator.setDescription(f"{scene.description} drawn by Orchard")
    scene.always_detailed = True
    painter = QPainter()
    if not painter.begin(generator):
        raise _WriteFailed
    try:
        _render(scene, painter, width, height)
    finally:
        painter.end()
        scene.always_detailed = False


def _write_pdf(scene, tmp: str, title: str) -> None:
    from PySide6.QtCore import QMarginsF, QSizeF
    from PySide6.QtGui import QPageLayout, QPageSize, QPainter, QPdfWriter

    rect = scene.sceneRect()
    points = QSizeF(rect.width() * 72 / SCREEN_DPI, rect.height() * 72 / SCREEN_DPI)
    shrink = min(1.0, MAX_PDF_POINTS / points.width(), MAX_PDF_POINTS / points.height())
    points *= shrink
    writer = QPdfWriter(tmp)
    writer.setTitle(title)
    writer.setCreator("Orchard")
    writer.setResolution(SCREEN_DPI)
    layout = QPageLayout(QPageSize(points, QPageSize.Point, "", QPageSize.ExactMatch),
                         QPageLayout.Portrait, QMarginsF(0, 0, 0, 0))
    writer.setPageLayout(layout)
    scene.always_detailed = True
    painter = QPainter()
    if not painter.begin(writer):
        raise _WriteFailed
    try:
        _render(scene, painter, writer.width(), writer.height())
    finally:
        painter.end()
        scene.always_detailed = False
