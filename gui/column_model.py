"""The column settings of the Data tab: one row per column, with its use.

Each column shows what Orchard found (kind, number of different values, missing
cells) and how it will be used: automatically (by its kind), forced continuous,
forced categorical, ordered (text levels in an order, split as thresholds), or
ignored.  The choices become `PrepOptions.ignore`, `PrepOptions.kinds` and
`PrepOptions.orders` (an ordered column's levels, set with `set_order`; without one
the engine guesses it); `changed` fires after every edit so the data is prepared
again.
"""

from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QComboBox, QStyledItemDelegate

from engine.data.columns import ColumnInfo, ColumnKind
from gui.preview_model import describe

AUTO, CONTINUOUS, CATEGORICAL, IGNORE = "auto", "continuous", "categorical", "ignore"
ORDERED = "ordered"
# A choice's kind (`auto` and `ignore` have none)
KIND_OF = {CONTINUOUS: ColumnKind.NUMERIC, CATEGORICAL: ColumnKind.CATEGORICAL,
           ORDERED: ColumnKind.ORDERED}
HEADERS = ("Column", "Found", "Values", "Missing", "Use as")
COL_NAME, COL_FOUND, COL_VALUES, COL_MISSING, COL_USE = range(5)

_AUTO_USE = {
    ColumnKind.NUMERIC: "continuous",
    ColumnKind.CATEGORICAL: "categorical",
    ColumnKind.BINARY: "yes/no test",
    ColumnKind.CONSTANT: "ignored: one value",
    ColumnKind.ID: "ignored: id-like",
}
GREY = QBrush(QColor("#8a929c"))


def use_text(info: ColumnInfo, choice: str, short: bool = False,
             left_out: str = "") -> str:
    """How a column is used, in words (`auto` says what it resolves to; a column left
    out, by its kind or by the preparation (`left_out`: why), says why in its first
    clause, unless `short`)."""
    if choice == AUTO:
        by_kind = bool(info.reason) or info.kind in (ColumnKind.CONSTANT, ColumnKind.ID)
        if left_out and not by_kind:
            first = left_out.split(",")[0].split(";")[0]
            if short and "identifier" in first:
                first = "identifier-like"
            return f"ignored: {first} (auto)"
        if info.reason and not short:
            return f"ignored: {info.reason} (auto)"
        return f"{_AUTO_USE.get(info.kind, info.kind.value)} (auto)"
    return {CONTINUOUS: "continuous", CATEGORICAL: "categorical", IGNORE: "ignored",
            ORDERED: "ordered levels"}[choice]


def allowed_choices(info: ColumnInfo) -> list[str]:
    choices = [AUTO]
    if info.numeric:
        choices.append(CONTINUOUS)
    choices.append(CATEGORICAL)
    if not info.numeric and info.n_distinct > 2:   # text levels with an order
        choices.append(ORDERED)
    choices.append(IGNORE)
    return choices


_ROOT = QModelIndex()  # the invisible root: a flat table has no children


class ColumnsModel(QAbstractTableModel):
    changed = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self._infos: list[ColumnInfo] = []
        self._choice: dict[str, str] = {}
        self._left_out: dict[str, str] = {}   # name -> why the preparation left it out
        self._target_use = "target (class)"    # the target's use, as its row says
        self._orders: dict[str, tuple[str, ...]] = {}   # ordered column -> its levels
        self._target: str | None = None
        self._bold = QFont()
        self._bold.setBold(True)

    # ------------------------------------------------------------ settings
    def set_table(self, infos: list[ColumnInfo]) -> None:
        self.beginResetModel()
        self._infos = list(infos)
        self._choice = {info.name: AUTO for info in infos}
        self._orders = {}
        self.endResetModel()

    def set_left_out(self, reasons: dict[str, str]) -> None:
        """The columns the last preparation left out by itself (an identifier, say),
        with why: shown as their use while they are on `auto`."""
        self._left_out = dict(reasons)
        if self._infos:
            self.dataChanged.emit(self.index(0, COL_USE),
                                  self.index(len(self._infos) - 1, COL_USE))

    def names(self) -> list[str]:
        return [info.name for info in self._infos]

    def info(self, name: str) -> ColumnInfo:
        return next(info for info in self._infos if info.name == name)

    def set_target(self, name: str | None, regression: bool = False) -> None:
        """The target column, and whether it is a regression's (a number to predict)."""
        self._target = name
        self._target_use = "target (a number)" if regression else "target (class)"
        if self._infos:
            self.dataChanged.emit(self.index(0, 0),
                                  self.index(len(self._infos) - 1, len(HEADERS) - 1))

    def choice(self, name: str) -> str:
        return self._choice.get(name, AUTO)

    def set_choice(self, name: str, choice: str, notify: bool = True) -> None:
        info = self.info(name)
        if choice not in allowed_choices(info):
            raise ValueError(f"column {name!r} cannot be {choice!r}")
        if self._choice.get(name) == choice:
            return
        self._choice[name] = choice
        row = self.names().index(name)
        self.dataChanged.emit(self.index(row, COL_USE), self.index(row, COL_USE))
        if notify:
            self.changed.emit()

    def choices(self) -> dict[str, str]:
        """The columns whose use the user changed (name -> choice)."""
        return {n: c for n, c in self._choice.items() if c != AUTO}

    def set_choices(self, choices: dict[str, str]) -> None:
        """Apply saved choices (unknown columns and impossible choices are skipped)."""
        names = set(self.names())
        for name, choice in choices.items():
            if name in names and choice in allowed_choices(self.info(name)):
                self.set_choice(name, choice, notify=False)

    def orders(self) -> dict[str, tuple[str, ...]]:
        """The levels set for the columns used as ordered (lowest first)."""
        return {n: self._orders[n] for n, c in self._choice.items()
                if c == ORDERED and n in self._orders}

    def set_order(self, name: str, levels, notify: bool = True) -> None:
        """Use `name` as ordered with `levels` (lowest first)."""
        self._orders[name] = tuple(str(level) for level in levels)
        if self._choice.get(name) != ORDERED:
            self.set_choice(name, ORDERED, notify)
        else:
            row = self.names().index(name)
            self.dataChanged.emit(self.index(row, COL_USE), self.index(row, COL_USE))
            if notify:
                self.changed.emit()

    def set_orders(self, orders: dict) -> None:
        """Apply saved orders (of columns this table has)."""
        names = set(self.names())
        self._orders.update({n: tuple(levels) for n, levels in orders.items()
                             if n in names})

    def ignore(self) -> tuple[str, ...]:
        return tuple(n for n, c in self._choice.items() if c == IGNORE and n != self._target)

    def kinds(self) -> dict[str, ColumnKind]:
        return {name: KIND_OF[choice] for name, choice in self._choice.items()
                if name != self._target and choice in KIND_OF}

    def roles(self) -> dict[str, str]:
        """Each column's use in words, for the preview's headers."""
        return {info.name: use_text(info, self._choice.get(info.name, AUTO), short=True,
                                    left_out=self._left_out.get(info.name, ""))
                for info in self._infos}

    # --------------------------------------------------------------- model
    def rowCount(self, parent=_ROOT) -> int:
        return 0 if parent.isValid() else len(self._infos)

    def columnCount(self, parent=_ROOT) -> int:
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if orientation == Qt.Horizontal and role == Qt.DisplayRole:
            return HEADERS[section]
        if orientation == Qt.Horizontal and role == Qt.ToolTipRole and section == COL_USE:
            return ("Click to choose: automatic, continuous, categorical, ordered levels "
                    "(text, split as thresholds; Order levels… sets their order) or "
                    "ignore.")
        return None

    def flags(self, index: QModelIndex):
        flags = Qt.ItemIsEnabled | Qt.ItemIsSelectable
        if index.column() == COL_USE and self._infos[index.row()].name != self._target:
            flags |= Qt.ItemIsEditable
        return flags

    def data(self, index: QModelIndex, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        info = self._infos[index.row()]
        column = index.column()
        is_target = info.name == self._target
        choice = self._choice.get(info.name, AUTO)
        if role in (Qt.DisplayRole, Qt.EditRole):
            if column == COL_NAME:
                return info.name
            if column == COL_FOUND:
                return describe(info)
            if column == COL_VALUES:
                return f"{info.n_distinct:,}"
            if column == COL_MISSING:
                return f"{info.n_missing:,}" if info.n_missing else ""
            if column == COL_USE:
                if role == Qt.EditRole:
                    return choice
                if is_target:
                    return self._target_use
                if choice == ORDERED and info.name in self._orders:
                    return "ordered: " + " < ".join(self._orders[info.name])
                return use_text(info, choice, left_out=self._left_out.get(info.name, ""))
        if role == Qt.FontRole and is_target:
            return self._bold
        if role == Qt.ForegroundRole and not is_target and (
                choice == IGNORE or (choice == AUTO and (
                    info.kind in (ColumnKind.CONSTANT, ColumnKind.ID)
                    or info.name in self._left_out))):
            return GREY
        if role == Qt.TextAlignmentRole and column in (COL_VALUES, COL_MISSING):
            return int(Qt.AlignRight | Qt.AlignVCenter)
        if role == Qt.ToolTipRole and column == COL_USE and not is_target:
            reason = info.reason or self._left_out.get(info.name, "")
            why = (f"Ignored: {reason}. " if choice == AUTO and reason else "")
            return f"{why}Click to change how this column is used."
        return None

    def setData(self, index: QModelIndex, value, role=Qt.EditRole) -> bool:
        if not index.isValid() or index.column() != COL_USE or role != Qt.EditRole:
            return False
        name = self._infos[index.row()].name
        if name == self._target:
            return False
        try:
            self.set_choice(name, str(value))
        except ValueError:
            return False
        return True


class UseDelegate(QStyledItemDelegate):
    """A drop-down of the uses a column allows (continuous only for numbers)."""

    def createEditor(self, parent, option, index):
        model = index.model()
        info = model.info(model.names()[index.row()])
        combo = QComboBox(parent)
        for choice in allowed_choices(info):
            combo.addItem(use_text(info, choice), choice)
        combo.activated.connect(lambda _=0, c=combo: self._commit(c))
        return combo

    def _commit(self, combo: QComboBox) -> None:
        self.commitData.emit(combo)
        self.closeEditor.emit(combo)

    def setEditorData(self, editor: QComboBox, index) -> None:
        editor.setCurrentIndex(max(0, editor.findData(index.data(Qt.EditRole))))

    def setModelData(self, editor: QComboBox, model, index) -> None:
        model.setData(index, editor.currentData(), Qt.EditRole)
