"""Draw Orchard's app icon and write it for each OS: `python resources/icons/make_icons.py`.

A decision tree (a root, two splits, four leaves in two classes) on a green rounded
square, drawn with Qt so the PNG (Linux and the window), the ICO (Windows, several
sizes) and the ICNS (macOS) come from one drawing.  The written files are committed;
run this again only to change the drawing.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

from PySide6.QtCore import QBuffer, QIODevice, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QImage, QImageWriter, QPainter, QPen

HERE = Path(__file__).resolve().parent
GREEN, WHITE = QColor("#2e7d32"), QColor("#ffffff")
LEAVES = (QColor("#ffca28"), QColor("#90caf9"), QColor("#90caf9"), QColor("#ffca28"))


def draw(size: int) -> QImage:
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    p = QPainter(image)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.scale(size / 100, size / 100)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(GREEN)
    p.drawRoundedRect(QRectF(4, 4, 92, 92), 20, 20)
    root, splits = QPointF(50, 24), (QPointF(30, 50), QPointF(70, 50))
    leaves = (QPointF(20, 76), QPointF(40, 76), QPointF(60, 76), QPointF(80, 76))
    p.setPen(QPen(WHITE, 5, c=Qt.PenCapStyle.RoundCap))
    for i, split in enumerate(splits):
        p.drawLine(root, split)
        p.drawLine(split, leaves[2 * i])
        p.drawLine(split, leaves[2 * i + 1])
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(WHITE)
    for node in (root, *splits):
        p.drawEllipse(node, 8, 8)
    for leaf, colour in zip(leaves, LEAVES):
        p.setBrush(colour)
        p.drawRoundedRect(QRectF(leaf.x() - 7, leaf.y() - 7, 14, 14), 3, 3)
    p.end()
    return image


def write(image: QImage, path: Path, fmt: str) -> None:
    writer = QImageWriter(str(path), fmt.encode())
    if not writer.write(image):
        sys.exit(f"could not write {path}: {writer.errorString()}")


def write_ico(path: Path, sizes=(16, 24, 32, 48, 64, 128, 256)) -> None:
    """A Windows icon of several sizes, each stored as PNG (Qt's ICO writer stores one
    uncompressed size)."""
    images = []
    for size in sizes:
        buffer = QBuffer()
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        draw(size).save(buffer, "PNG")
        images.append((size, bytes(buffer.data())))
    header = struct.pack("<HHH", 0, 1, len(images))
    offset = len(header) + 16 * len(images)
    entries, data = b"", b""
    for size, png in images:
        entries += struct.pack("<BBBBHHII", size % 256, size % 256, 0, 0, 1, 32, len(png),
                               offset + len(data))
        data += png
    path.write_bytes(header + entries + data)


def main() -> None:
    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # noqa: F841
    write(draw(256), HERE / "orchard.png", "png")
    write_ico(HERE / "orchard.ico")
    write(draw(512), HERE / "orchard.icns", "icns")


if __name__ == "__main__":
    main()
