"""What each `orchard` command does once its arguments are parsed (`engine.cli`).

Kept apart from the parser so that `orchard --help`, a typo and every argument error
answer before numpy, pandas, numba and the solvers are imported (issue 49); this
module imports them all.  Every user error is an `OrchardError`, output files are
written only after training succeeded, all or nothing.
"""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from engine.cli import EXIT_INTERRUPTED
from engine.data.class_weights import parse_class_weight
from engine.data.columns import ColumnKind, choose_target
from engine.data.csv_reader import read_table
from engine.data.dataset import PrepOptions
from engine.data.task import choose_task
from engine.featurize import prepare
from engine.errors import OrchardError, ParameterError
from engine.terminal import ProgressBar, StageLine, clock
from engine.export import export_writer, model_rules, write_predictions
from engine.export.files import check_output, write_all
from engine.metrics import class_scores, regression_scores
from engine.model import load_model
from engine.prediction import predict_table
from engine.solvers import compile_ahead, default_solver_name, get_solver
from engine.solvers.monitor import Monitor
from engine.training import default_binarization, train
from engine.warmup import on_first_compile

if TYPE_CHECKING:
    from engine.evaluation import Plan

COMPILING = ("Compiling the solver once for this computer (about a minute; "
             "not counted in the time limit)...")

# --flag -> export kind of engine.export.export_writer
EXPORT_FLAGS = {"out": "json", "rules": "rules", "python": "python", "sql": "sql",
                "dot": "dot"}


_DELIMITER_NAMES = {"\\t": "\t", "tab": "\t", "comma": ",", "semicolon": ";",
                    "space": " ", "whitespace": " "}


def _delimiter(text: str | None) -> str | None:
    """The user's --delimiter, with shell-friendly names (`tab`, `\\t`, ...)."""
    return None if text is None else _DELIMITER_NAMES.get(text.lower(), text)


def _params(pairs: list[str]) -> dict[str, str]:
    params = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise OrchardError(f"Parameter '{pair}' should look like KEY=VALUE.")
        params[key.strip()] = value.strip()
    return params


def fit(args, render_image: Callable | None) -> dict:
    """Train as asked; the time limit and Ctrl-C cover every stage from here on."""
    algorithm = args.algo or default_solver_name()
    params = _params(args.param)
    if args.depth is not None:
        params["depth"] = str(args.depth)
    _check_request(args, render_image)
    get_solver(algorithm).resolve(params)   # a bad parameter is said before reading
    plan = None
    if args.validate:   # cross-validation's and tuning's modules only where used
        from engine.evaluation import Plan
        plan = Plan("kfold", args.validate)
    if plan is not None and not 2 <= args.validate <= 100:
        raise OrchardError("--validate takes a number of folds from 2 to 100.")
    _check_outputs(args)
    compile_ahead.start(algorithm)   # a first run's kernels compile while it reads
    line = StageLine()
    monitor = Monitor(args.time_limit, on_incumbent=line.incumbent, on_progress=line.stage)
    previous = signal.signal(signal.SIGINT, lambda *_: monitor.cancel())
    try:
        with on_first_compile(lambda: line.note(COMPILING)):
            data, options, result, raw, algorithm = _train(
                args, algorithm, params, monitor, line.note, keep_raw=plan is not None)
    finally:
        signal.signal(signal.SIGINT, previous)
        line.close()
    summary = _finish(args, algorithm, params, data, options, result, render_image)
    if plan is not None:
        summary["validation"] = _validate(args, raw, options, algorithm, params, plan)
    elif not args.json and not data.regression:
        print("Accuracy on new rows: not estimated; add --validate 5 to estimate it.")
    return summary


def _validate(args, raw, options, algorithm: str, params: dict, plan: Plan) -> dict:
    """`fit --validate K`: the tree's expected accuracy on new rows (a regression's
    RMSE, MAE and R²), after its files are written (the folds share a time limit of
    their own; Ctrl-C ends them, the folds done are kept).  Its JSON is
    `Evaluation.brief` (a regression's keys: `test_rmse`, `test_mae`, `test_r2`
    with `_std` and `per_fold_`, `mean_r2` and `mean_rmse` of always predicting the
    training rows' mean, `beats_mean`)."""
    from engine.evaluation import CrossValidation
    from engine.vocabulary import REGRESSION
    validation = CrossValidation(raw, options, algorithm, params, plan, baselines=True)
    measure = "error" if validation.task == REGRESSION else "accuracy"
    line = StageLine()
    previous = signal.signal(signal.SIGINT, lambda *_: validation.cancel())
    try:
        evaluation = validation.run(
            on_fold=lambda fold, n: line.stage(
                f"estimating the {measure} on new rows: {fold.fold + 1} of {n} folds "
                "done", (fold.fold + 1) / n),
            clock=Monitor(args.time_limit))
    except OrchardError as exc:   # a fold that cannot be prepared: the tree stands
        line.note(f"{measure.capitalize()} on new rows was not estimated: {exc}")
        return {"plan": plan.to_dict(), "error": str(exc)}
    finally:
        signal.signal(signal.SIGINT, previous)
        line.close()
    if not args.json:
        print(evaluation.summary() + evaluation.baselines_text())
        if evaluation.verdict():
            print(evaluation.verdict())
    return evaluation.brief()


def _check_request(args, render_image: Callable | None) -> None:
    """The flags every training command shares, checked before any work."""
    if args.image and render_image is None:
        raise OrchardError("Image export needs Orchard's GUI package, which is not available.")
    if args.image and Path(args.image).suffix.lower() not in (".png", ".svg", ".pdf"):
        raise OrchardError("The image file must end in .png, .svg or .pdf.")
    if args.time_limit is not None and not args.time_limit > 0:
        raise OrchardError("The time limit must be a positive number of seconds.")


def _check_outputs(args) -> None:
    """An output that cannot be written is said before any training."""
    for flag in (*EXPORT_FLAGS, "image"):
        if getattr(args, flag):
            check_output(getattr(args, flag))


def _read(args, monitor: Monitor):
    return read_table(args.data, delimiter=_delimiter(args.delimiter), header=args.header,
                      progress=monitor.checkpoint)


def _ordered(specs: list[str]) -> dict[str, tuple[str, ...]]:
    """`--ordered COLUMN=LOW,MID,HIGH` (or COLUMN alone): column -> its levels."""
    out = {}
    for spec in specs:
        column, _, levels = spec.partition("=")
        if not column.strip():
            raise ParameterError(f"--ordered {spec!r}: give a column name, then "
                                 "optionally =its levels, lowest first.")
        out[column.strip()] = tuple(v.strip() for v in levels.split(",") if v.strip())
    return out


def _options(args, algorithm: str, depth: int | None) -> PrepOptions:
    orders = _ordered(args.ordered)
    return PrepOptions(
        target=args.target, ignore=tuple(args.ignore),
        kinds={**{name: ColumnKind.CATEGORICAL for name in args.categorical},
               **{name: ColumnKind.ORDERED for name in orders}},
        orders={name: levels for name, levels in orders.items() if levels},
        missing=args.missing,
        binarize=args.binarize or default_binarization(algorithm),
        remove_redundant=args.remove_redundant, merge_duplicates=args.merge_duplicates,
        drop_inconsistent=args.drop_inconsistent, depth=depth, task=args.task,
        class_weight=parse_class_weight(args.class_weight) if args.class_weight else None)


def _train(args, algorithm: str, params: dict, monitor: Monitor,
           warn: Callable[[str], None] | None = None, keep_raw: bool = False):
    """(prepared data, options, result, the table read when `keep_raw`, else None)."""
    raw = _read(args, monitor)
    if args.algo is None:   # the default grows what the target asks for
        algorithm = default_solver_name(_task(args, raw))
    options = _options(args, algorithm, get_solver(algorithm).resolve(params)["depth"])
    data = prepare(raw, options, progress=monitor.checkpoint)
    if not keep_raw:
        # its text cells (3 GB at 3 million rows × 16 columns) are not needed now
        raw = None
    warn = warn or (lambda text: print(f"orchard: {text}", file=sys.stderr))
    for warning in data.report.warnings:   # e.g. a target that may be no class
        warn(f"Warning: {warning}")
    result = train(data, algorithm, params, monitor=monitor)
    return data, options, result, raw, algorithm


def _task(args, raw) -> str:
    """The task `prepare` will choose for the table `raw` (`choose_task`)."""
    columns = [str(c) for c in raw.frame.columns]
    target = choose_target(columns, args.target, raw)
    return choose_task(target, raw.frame[target], args.task)[0]


def tune(args, render_image: Callable | None) -> dict:
    """Cross-validate the depths (least leaf sizes, costs per leaf) asked, train the choice on all
    rows; the summary is `fit`'s with the candidates' scores under "tuning".  Without
    --algo a regression is tuned with greedy (as `fit` trains it), its grid then made
    once the table is read; --metric defaults to the task's (accuracy, R²)."""
    from engine.evaluation import Plan
    from engine.tuning import Tuner, candidates, measure, shown
    algorithm = args.algo or default_solver_name()
    params = _params(args.param)
    for name, flag in (("depth", "--depths"), ("leaf_cost", "--leaf-cost")):
        if name in params:
            raise OrchardError(f"Give the values to try with {flag}, not --param {name}.")
    get_solver(algorithm).resolve(params)
    values = (None if args.depths is None else _number_list(args.depths, "--depths", int),
              None if args.min_leaf is None else
              _number_list(args.min_leaf, "--min-leaf", float),
              None if args.leaf_cost is None else
              _number_list(args.leaf_cost, "--leaf-cost", float))
    # said before reading when the algorithm is known; the default's follows the task
    grid = candidates(algorithm, *values) if args.algo else None
    plan = Plan("kfold", args.folds, seed=args.seed)
    plan.check()
    _check_request(args, render_image)
    _check_outputs(args)
    compile_ahead.start(algorithm)
    line = StageLine()
    monitor = Monitor(args.time_limit, on_incumbent=line.incumbent, on_progress=line.stage)
    tuner: list[Tuner] = []

    def stop(*_) -> None:
        monitor.cancel()
        for running in tuner:
            running.cancel()

    def scored(score, i: int, n: int) -> None:
        line.note(f"{i + 1} of {n}: {score.candidate.label()}: " + (
            f"{measure(options, score.metric)} {shown(score.metric, score.mean)}, "
            f"{score.mean_leaves:.1f} leaves"
            if score.complete else score.note))

    previous = signal.signal(signal.SIGINT, stop)
    try:
        with on_first_compile(lambda: line.note(COMPILING)):
            raw = _read(args, monitor)
            if grid is None:   # the default grows what the target asks for (as fit)
                algorithm = default_solver_name(_task(args, raw))
                grid = candidates(algorithm, *values)
                compile_ahead.start(algorithm)
            options = _options(args, algorithm, max(c.depth for c in grid))
            tuner.append(Tuner(raw, options, algorithm, grid, params, plan,
                               args.time_limit, args.metric))
            tuning = tuner[0].run(scored, clock=monitor)
    finally:
        signal.signal(signal.SIGINT, previous)
        line.close()
    if not args.json:
        print("\n".join(tuning.table()))
    summary = _finish(args, algorithm, tuning.params, tuning.data, tuning.options,
                      tuning.result, render_image)
    summary["tuning"] = {**tuning.to_dict(), "wall_s": round(monitor.elapsed(), 3)}
    return summary


def _number_list(text: str, flag: str, kind: type) -> list:
    """`1-6` or `2,3,5` (ranges and single values, comma-separated) as numbers."""
    values = []
    try:
        for part in text.split(","):
            low, dash, high = part.strip().partition("-")
            if dash and kind is int:
                values.extend(range(int(low), int(high) + 1))
            else:
                values.append(kind(part))
    except ValueError:
        raise OrchardError(f"{flag} takes numbers like 1-6 or 1,5,20, not '{text}'.") \
            from None
    if not values:
        raise OrchardError(f"{flag} names no value.")
    return values


def _finish(args, algorithm: str, params: dict, data, options, result,
            render_image: Callable | None) -> dict:
    """Write the outputs and the summary of a finished training run."""
    tree = result.tree
    outputs = {flag: (getattr(args, flag), export_writer(tree, kind))
               for flag, kind in EXPORT_FLAGS.items() if getattr(args, flag)}
    if args.image:
        outputs["image"] = (args.image, lambda path: render_image(tree, path))
    write_all(list(outputs.values()))   # all or nothing: no model without its script
    written = {flag: path for flag, (path, _) in outputs.items()}
    counts = data.row_counts
    if data.regression:
        fitted = regression_scores(data.y, tree.predict(data.X), counts)
        scores = {"accuracy": None, "balanced_accuracy": None, "per_class": {}}
    else:
        scores = class_scores(data.y, tree.predict(data.X), data.class_names, counts)
    summary = {
        "task": data.prep.task,
        "task_reason": data.report.task_reason,
        "algorithm": algorithm,
        # `auto` names the algorithm it ran and why; any other is its own choice.
        "chosen_algorithm": result.stats.get("chosen_algorithm", algorithm),
        "reason": result.stats.get("reason", ""),
        # a non-answer (no proof, a skipped step, no consistent tree) in one sentence
        "message": result.stats.get("message", ""),
        "n_rows": round(float(counts.sum())),
        "n_features": data.n_features,
        "n_classes": data.n_classes,   # 0 for a regression
        "depth": tree.depth,
        "max_depth": get_solver(algorithm).resolve(params)["depth"],
        # the error the solver minimised (weighted by class if asked; a regression's
        # squared error), and how the tree does on the rows themselves (a regression
        # has no accuracy: its RMSE, MAE and R² below)
        "train_error": result.train_error,
        "train_accuracy": scores["accuracy"],
        "balanced_accuracy": scores["balanced_accuracy"],
        "per_class": scores["per_class"],
        "class_weight": (None if data.class_weights is None else
                         dict(zip(data.class_names, data.class_weights.tolist()))),
        # with a cost per leaf the search minimised train_error + leaf_penalty x leaves
        # (the objective); the lower bound and the incumbents are about that objective
        "objective": result.objective,
        "leaf_penalty": result.leaf_penalty,
        "lower_bound": result.lower_bound,
        "optimal": bool(result.optimal),
        "status": result.status.value,
        "time_s": result.time_s,
        "n_leaves": tree.n_leaves,
        "n_nodes": tree.n_nodes,
        "incumbents": [[t, error] for t, error, _ in result.incumbents],
        "target": data.prep.target,
        "class_names": data.class_names,
        "binarize": options.binarize,
        "preparation": data.report.lines(),
        "warnings": list(data.report.warnings),
        "stats": result.stats,
        "outputs": written,
    }
    if data.regression:
        summary.update({f"train_{key}": fitted[key] for key in ("rmse", "mae", "r2")})
    if not args.json:
        errors = "weighted error" if data.class_weights is not None else "errors"
        if data.regression:
            errors = "squared error"
            print(f"{algorithm}: training RMSE {fitted['rmse']:.6g}, MAE "
                  f"{fitted['mae']:.6g}, R² {fitted['r2']:.4f} (squared error "
                  f"{result.train_error:.6g} on {summary['n_rows']} rows), depth "
                  f"{tree.depth}, {tree.n_leaves} leaves, status {result.status.value}, "
                  f"{result.time_s:.3f} s")
        else:
            print(f"{algorithm}: training accuracy {summary['train_accuracy']:.4f} "
                  f"({result.train_error:g} {errors} on {summary['n_rows']} rows), depth "
                  f"{tree.depth}, {tree.n_leaves} leaves, status {result.status.value}, "
                  f"{result.time_s:.3f} s")
        if result.leaf_penalty:
            print(f"objective {result.objective:g} = {result.train_error:g} {errors} + "
                  f"{result.leaf_penalty:g} for each of the {tree.n_leaves} leaves")
        if "compile_s" in result.stats:
            print(f"(and {result.stats['compile_s']:.1f} s compiling the solver, once for "
                  "this computer, not counted in the time limit)")
        if data.regression:
            print(data.report.task_reason)
        else:
            print(f"balanced accuracy {summary['balanced_accuracy']:.4f}"
                  + (" (classes weighted)" if data.class_weights is not None else ""))
        for line in data.report.lines():
            print(line)
        if result.stats.get("reason"):
            print(f"Chose {result.stats['chosen_algorithm']}: {result.stats['reason']}.")
        if "message" in result.stats:
            print(result.stats["message"])
        print(model_rules(tree))
    return summary


def predict(args) -> dict:
    if args.out:
        check_output(args.out)
    model = load_model(args.model)
    raw = read_table(args.data, delimiter=_delimiter(args.delimiter), header=args.header)
    result = predict_table(model, raw.frame)
    names = result.names
    summary = {"n_rows": len(names), "predictions": names}
    regression = model.prep.regression
    if regression and result.truth is not None:
        summary.update({key: result.scores[key] for key in ("rmse", "mae", "r2")})
        summary["n_scored"] = result.n_scored
    elif result.truth is not None:
        summary["accuracy"] = result.accuracy
        summary["balanced_accuracy"] = result.scores["balanced_accuracy"]
        summary["per_class"] = result.scores["per_class"]
        summary["confusion_matrix"] = result.confusion.astype(int).tolist()
        summary["class_names"] = result.class_names
    if args.out:
        write_predictions(args.out, names, result.target)
        summary["outputs"] = {"out": args.out}
    if not args.json:
        if args.out is None:
            print("\n".join(names))
        if regression and result.truth is not None:
            print(f"RMSE {result.scores['rmse']:.6g}, MAE {result.scores['mae']:.6g}, "
                  f"R² {result.scores['r2']:.4f} on {result.n_scored} rows",
                  file=sys.stderr if args.out is None else sys.stdout)
        if result.accuracy is not None:
            print(f"accuracy {result.accuracy:.4f} on {result.n_scored} rows",
                  file=sys.stderr if args.out is None else sys.stdout)
    return summary


def sweep(args) -> int:
    """Run a sweep with a progress bar on stderr; Ctrl+C stops it, to resume later."""
    spec = Path(args.spec)
    out = Path(args.out) if args.out else spec.with_name(spec.stem + ".results.csv")
    check_output(out)
    from engine.experiments import load_spec, make_backend, run_sweep
    sweep_spec = load_spec(spec)
    backend = make_backend(args.workers, args.scheduler)
    bar = ProgressBar()
    try:
        outcome = run_sweep(sweep_spec, out, backend, progress=bar)
    except KeyboardInterrupt:
        bar.close()
        print(f"orchard: Interrupted; finished fits are kept in {out} and its journal: "
              "run the same command again to resume.", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        bar.close()
    summary = {"fits": outcome.fits, "ran": outcome.ran, "already_done": outcome.skipped,
               "failed": outcome.failed, "time_s": outcome.seconds, "out": str(out),
               "journal": str(outcome.journal)}
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"{outcome.fits} fits ({outcome.ran} run now, {outcome.skipped} already "
              f"done), {outcome.failed} failed, in {clock(outcome.seconds)}; results in "
              f"{out}")
    return 0


def json_default(value):
    """`json.dumps` of a summary: numpy scalars as Python numbers."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot serialise {type(value).__name__}")
