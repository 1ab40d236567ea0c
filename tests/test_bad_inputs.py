"""Every case of the malformed-input corpus (tests/bad_inputs.py, 511 cases) ends
cleanly: exit 0 with its outputs written, or exit 2 with one sentence on stderr, no
traceback and nothing written; never another exit code, an exception or a hang."""

from __future__ import annotations

import faulthandler
import json
import os
import sys
from pathlib import Path

import pytest
from bad_inputs import BASE, Case, cases
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.cli import main
from engine.data.csv_reader import read_table
from engine.data.dataset import PrepOptions
from engine.featurize import prepare
from engine.errors import OrchardError
from engine.training import train

CASES = cases()
HANG_S = 60   # far above any case's time; a case still running then is a hang


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("model")
    (folder / "base.csv").write_text(BASE)
    path = folder / "model.json"
    assert main(["fit", str(folder / "base.csv"), "--algo", "greedy", "--depth", "2",
                 "--out", str(path)]) == 0
    return path


def materialise(case: Case, folder: Path, model: Path) -> dict[str, str]:
    data = folder / "data.csv"
    if case.data is not None:
        data.write_bytes(case.data if isinstance(case.data, bytes) else
                         case.data.encode("utf-8"))
    special = case.special
    if special == "fifo":
        os.mkfifo(data)
    elif special == "folder":
        data.mkdir()
    elif special == "symlink-loop":
        data.symlink_to(data)
    elif special == "broken-symlink":
        data.symlink_to(folder / "nowhere")
    elif special == "sparse-zeros":   # 4 GB that occupy no disk: must not be read whole
        with data.open("wb") as handle:
            handle.truncate(4 << 30)
    elif special and special.startswith("dev-"):
        data = Path("/dev") / special[4:]
    base = folder / "base.csv"
    base.write_text(BASE)
    if case.spec is not None:
        (folder / "sweep.json").write_text(case.spec if isinstance(case.spec, str)
                                           else json.dumps(case.spec))
    (folder / "existing").mkdir()
    return {"data": str(data), "base": str(base), "model": str(model),
            "out": str(folder / "out" / "result"), "dir": str(folder / "existing"),
            "spec": str(folder / "sweep.json")}


def run(argv: list[str]) -> int | BaseException:
    """`main(argv)`'s exit code, or what escaped it.  It runs in the main thread (the
    command line installs its Ctrl-C handler there); a case still running after
    HANG_S aborts the whole session with every thread's stack (faulthandler)."""
    faulthandler.dump_traceback_later(HANG_S, exit=True, file=sys.__stderr__)
    try:
        return main(argv)
    except SystemExit as exc:   # --help and argparse's own exits
        return exc.code
    except BaseException as exc:  # noqa: BLE001 - reported by the test
        return exc
    finally:
        faulthandler.cancel_dump_traceback_later()


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_bad_input_ends_cleanly(case, tmp_path, capsys, model):
    paths = materialise(case, tmp_path, model)
    (tmp_path / "out").mkdir()
    argv = [part.format(**paths) for part in case.argv]
    code = run(argv)
    out, err = capsys.readouterr()
    assert not isinstance(code, BaseException), f"{type(code).__name__}: {code}"
    assert "Traceback" not in err and "Traceback" not in out
    if case.expect is not None:
        assert code == case.expect, err
    else:
        assert code in (0, 2), (code, err)
    written = [paths[name] for name in case.outputs]
    if code in (2, 3):   # 3: the time limit ran out before a tree (CLI contract)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("orchard: "), err
        assert case.says is None or case.says in lines[0], err
        assert not any(Path(path).exists() for path in written), written
        assert os.listdir(tmp_path / "out") == [], "a failed run left files behind"
    else:
        assert all(Path(path).exists() for path in written), written
        summary = json.loads(out.strip().splitlines()[-1]) if "--json" in argv else None
        if case.check is not None:
            case.check(summary, err)


# ------------------------------------------------------------------- fuzzing
MUTATIONS = st.lists(st.tuples(st.sampled_from(["insert", "delete", "replace"]),
                               st.integers(0, 10_000),
                               st.sampled_from(list(',;\t "\'\n\r\x00?-.e+1aé€\ufeff'))),
                     min_size=1, max_size=12)


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mutations=MUTATIONS, encoding=st.sampled_from(["utf-8", "latin-1", "utf-16"]))
def test_mutated_csv_files_never_crash(mutations, encoding, tmp_path):
    """Characters inserted, deleted or replaced anywhere in the base table: reading,
    preparing and training either work or raise one of Orchard's own errors."""
    text = list(BASE)
    for action, position, character in mutations:
        position %= len(text) + 1
        if action == "insert":
            text.insert(position, character)
        elif text and position < len(text):
            if action == "delete":
                del text[position]
            else:
                text[position] = character
    path = tmp_path / "fuzz.csv"
    path.write_bytes("".join(text).encode(encoding, errors="replace"))
    faulthandler.dump_traceback_later(HANG_S, exit=True, file=sys.__stderr__)
    try:
        raw = read_table(path)
        options = PrepOptions(binarize="guided", depth=2)
        data = prepare(raw, options)
        result = train(data, "greedy", {"depth": 2})
        assert result.tree is not None
        assert len(result.tree.predict_frame(raw.frame)) == len(raw.frame)
    except OrchardError:
        pass
    finally:
        faulthandler.cancel_dump_traceback_later()


# ------------------------------------------------------------------- outputs
def test_an_output_symlink_is_written_through_not_replaced(tmp_path):
    (tmp_path / "base.csv").write_text(BASE)
    target = tmp_path / "real.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    assert main(["fit", str(tmp_path / "base.csv"), "--algo", "greedy", "--out",
                 str(link)]) == 0
    assert link.is_symlink() and json.loads(target.read_text())["format"] == "orchard-tree"


def test_an_output_pipe_is_written_into(tmp_path):
    import threading
    (tmp_path / "base.csv").write_text(BASE)
    pipe = tmp_path / "rules.pipe"
    os.mkfifo(pipe)
    received = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_text()), daemon=True)
    reader.start()
    assert main(["fit", str(tmp_path / "base.csv"), "--algo", "greedy", "--rules",
                 str(pipe)]) == 0
    reader.join(30)
    assert "income" in received[0] and pipe.exists() and not pipe.is_file()
