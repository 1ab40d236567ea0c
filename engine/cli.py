"""Orchard's headless command line: `orchard fit`, `tune`, `predict` and `sweep`.

This module parses and checks the arguments with nothing heavier than the standard
library imported, so `orchard --help` and a mistyped flag answer at once; the work
itself is `engine.commands`, imported once the arguments are sound.

The contract (DESIGN.md) is relied on by outside checks: flags and JSON keys only
ever grow.  Every user error becomes exit status 2 with one sentence on stderr, and
output files are written only after training succeeded, all or nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence

from engine.errors import Interrupted, OrchardError
from engine.vocabulary import METRICS, MISSING_POLICIES, TASKS

EXIT_USAGE = 2
EXIT_NO_TREE = 3          # the time limit ran out before any tree was trained
EXIT_INTERRUPTED = 130
DEFAULT_TUNE_SECONDS = 60.0   # tuning tries dozens of settings: never unbounded by default


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one sentence, not a usage dump, pointing
    to the help of the parser that failed (`prog` is "orchard" or "orchard fit")."""

    def error(self, message: str):
        raise OrchardError(f"{message[:1].upper()}{message[1:]} (see '{self.prog} "
                           "--help').")


class _CommandParser(_Parser):
    """A subcommand's parser.  It refuses unknown flags itself: argparse would hand
    them up to the top-level parser, whose message points to 'orchard --help'."""

    def parse_known_args(self, args=None, namespace=None):
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return namespace, extras


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="orchard", description="Optimal decision trees from CSV files.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_CommandParser)

    fit = sub.add_parser("fit", help="train a tree headlessly")
    fit.add_argument("data", help="CSV/TSV/whitespace table")
    fit.add_argument("--target", help="class column: NAME, INDEX, first or last")
    fit.add_argument("--algo", default=None,
                     help="algorithm (default: blossom; auto for a regression)")
    fit.add_argument("--depth", type=int, help="maximum depth")
    fit.add_argument("--time-limit", type=float, help="seconds")
    fit.add_argument("--validate", type=int, default=0, metavar="K",
                     help="then estimate the accuracy on new rows by K-fold "
                          "cross-validation (the folds share another --time-limit), "
                          "beside the most common class and the greedy tree")
    _add_data_flags(fit)
    _add_output_flags(fit)

    tune = sub.add_parser("tune", help="choose the depth (least leaf size, cost per "
                          "leaf) by cross-validation, then train that tree on every row")
    tune.add_argument("data", help="CSV/TSV/whitespace table")
    tune.add_argument("--target", help="class column: NAME, INDEX, first or last")
    tune.add_argument("--algo", default=None,
                      help="algorithm (default: blossom; auto for a regression)")
    tune.add_argument("--depths", help="depths to try: a range 1-6 or a list 2,3,4 "
                      "(default 1-6, and 8,10,12 for auto and hybrid, 8,10,12,16 for "
                      "greedy)")
    tune.add_argument("--min-leaf", help="least rows in a leaf to try, e.g. 1,5,20 "
                      "(default 1,5,20 for greedy; auto, dl85 and cadl85 try only "
                           "the sizes given; the others have none)")
    tune.add_argument("--leaf-cost", help="costs per leaf to try, as shares of the rows, "
                      "e.g. 0,0.005,0.02 (default 0,0.01; 0,0.005,0.02 for greedy; "
                      "not for the algorithms without one)")
    tune.add_argument("--folds", type=int, default=5, help="inner folds (default 5)")
    tune.add_argument("--metric", choices=sorted(METRICS), default=None,
                      help="what settings are ranked by on the validation rows: for "
                           "classes accuracy (weighted under class weights; their "
                           "default), balanced (the mean recall of the classes) or auc "
                           "(two classes); for a regression r2 (its default) or rmse")
    tune.add_argument("--seed", type=int, default=0, help="seed of the folds")
    tune.add_argument("--time-limit", type=float, default=DEFAULT_TUNE_SECONDS,
                      help=f"seconds for the whole tuning and the final fit "
                           f"(default {DEFAULT_TUNE_SECONDS:g})")
    _add_data_flags(tune)
    _add_output_flags(tune)

    predict = sub.add_parser("predict", help="predict with a saved model")
    predict.add_argument("model", help="model JSON from 'orchard fit --out'")
    predict.add_argument("data")
    _add_table_flags(predict)
    predict.add_argument("--out", help="write predictions as CSV")
    predict.add_argument("--json", action="store_true", help="print one JSON summary")

    sweep = sub.add_parser("sweep", help="cross-validate algorithms over datasets and "
                           "parameters")
    sweep.add_argument("spec", help="sweep description (.json or .toml)")
    sweep.add_argument("--out", help="results table, .csv or .parquet (default: "
                       "SPEC.results.csv beside the spec); rerun to resume")
    sweep.add_argument("--workers", type=int, help="fits at a time (default: all cores)")
    sweep.add_argument("--scheduler", metavar="ADDR", help="run on a Dask cluster: "
                       "tcp://HOST:PORT, or 'local' for one on this machine")
    sweep.add_argument("--json", action="store_true", help="print one JSON summary")
    return parser


def _add_data_flags(parser: argparse.ArgumentParser) -> None:
    """How the table is read and prepared, and the solver's parameters."""
    parser.add_argument("--task", default="auto", choices=["auto", *TASKS],
                        help="what the tree predicts: a class, or a number (regression; "
                             "auto: regression for a target of numbers with more than 20 "
                             "different values)")
    parser.add_argument("--binarize", help="none | quantile:K | midpoints | guided[:K]")
    parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                        help="solver parameter (repeatable)")
    parser.add_argument("--missing", default="route", choices=list(MISSING_POLICIES),
                        help="missing cells: route (each test decides where they go), "
                             "impute (fill), indicator (fill + an 'is missing' feature) "
                             "or drop rows")
    parser.add_argument("--ignore", action="append", default=[], metavar="COLUMN")
    parser.add_argument("--categorical", action="append", default=[], metavar="COLUMN",
                        help="treat a numeric column as categorical (value groups)")
    parser.add_argument("--ordered", action="append", default=[],
                        metavar="COLUMN[=LEVEL,LEVEL,...]",
                        help="a text column of ordered levels, lowest first (without "
                             "levels: their order guessed), split as thresholds")
    parser.add_argument("--remove-redundant", action="store_true",
                        help="drop constant, identical and complementary binary features")
    parser.add_argument("--merge-duplicates", action="store_true",
                        help="merge identical rows into weights")
    parser.add_argument("--drop-inconsistent", action="store_true",
                        help="drop rows contradicting identical rows of another class")
    parser.add_argument("--class-weight", metavar="balanced|CLASS=W,...",
                        help="weigh each class's rows: 'balanced' (every class the same "
                        "total) or weights by class name, e.g. yes=5,no=1")
    _add_table_flags(parser)


def _add_output_flags(parser: argparse.ArgumentParser) -> None:
    """The trained model's files, and the JSON summary."""
    parser.add_argument("--out", help="model JSON")
    parser.add_argument("--rules", help="rules text")
    parser.add_argument("--python", help="Python module")
    parser.add_argument("--sql", help="SQL CASE expression")
    parser.add_argument("--dot", help="Graphviz DOT")
    parser.add_argument("--image", help="tree picture (.png, .svg or .pdf)")
    parser.add_argument("--json", action="store_true", help="print one JSON summary")


def _add_table_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--delimiter", help="field separator: , ; tab space "
                        "(default: detected)")
    header = parser.add_mutually_exclusive_group()
    header.add_argument("--header", dest="header", action="store_true", default=None,
                        help="the first row holds column names")
    header.add_argument("--no-header", dest="header", action="store_false",
                        help="the first row is data")


def main(argv: Sequence[str] | None = None, render_image: Callable | None = None) -> int:
    """Run a CLI command; `render_image(tree, path)` is supplied by the GUI package."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0].startswith("-") and argv[0] not in ("-h", "--help"):
            raise OrchardError(f"Unknown option '{argv[0]}': start with a command, fit, "
                               "tune, predict or sweep (see 'orchard --help').")
        args = build_parser().parse_args(argv)
        from engine import commands
        if args.command == "sweep":
            return commands.sweep(args)
        summary = (commands.predict(args) if args.command == "predict" else
                   getattr(commands, args.command)(args, render_image))
    except Interrupted as exc:
        print(f"orchard: {exc}", file=sys.stderr)
        if getattr(args, "json", False):   # scripts still get one JSON object
            print(json.dumps({"status": exc.status, "message": str(exc), "tree": None}))
        from engine.solvers.protocol import Status
        return EXIT_INTERRUPTED if exc.status == Status.CANCELLED.value else EXIT_NO_TREE
    except OrchardError as exc:
        print(f"orchard: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        print(json.dumps(summary, default=commands.json_default))
    return 0


if __name__ == "__main__":
    sys.exit(main())
