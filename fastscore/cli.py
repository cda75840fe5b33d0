"""Command line: argument parsing only; the work is done by the modules.

Exit 0 when the job ran (whatever the submissions said); exit 2 with one clear line
for unusable input or an output that cannot be written (read-only, full disk); exit
130 on Ctrl-C and 143 on SIGTERM, each a clean stop with one line (a ``score`` run
then resumes where it stopped when re-run)."""
from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path
from typing import get_args

from fastscore import __version__
from fastscore.problems.bundled import resolve
from fastscore.problems.splits import Layout
from fastscore.run.executors import ExecutorName
from fastscore.service.protocol import DEFAULT_BUDGET, DEFAULT_CACHE
from fastscore.settings import Settings, out_of_range, scalar_settings
from fastscore.support import extras

EXIT_USAGE = 2
EXIT_INVALID = 1
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is, so that it stops as on Ctrl-C."""


def _on_sigterm(signum, frame):
    raise Terminated


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``fastscore`` command."""
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if threading.current_thread() is threading.main_thread() \
        else None
    try:
        return args.handler(args)
    except (ValueError, OSError, ImportError) as error:  # unusable input; an unwritable output; a missing extra
        if isinstance(error, ImportError) and not isinstance(error, extras.MissingExtra):
            if (extra := extras.extra_of(error)) is None:
                raise
            error = extras.MissingExtra(extras.message(extra))
        print(f"fastscore {args.command}: error: {_one_line(error)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt as error:
        resume = "; the rows scored so far are kept: re-run the same command to resume" if args.command == "score" else ""
        stopped = "stopped by SIGTERM" if isinstance(error, Terminated) else "interrupted"
        print(f"fastscore {args.command}: {stopped}{resume}", file=sys.stderr)
        return EXIT_TERMINATED if isinstance(error, Terminated) else EXIT_INTERRUPTED
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _one_line(error: BaseException) -> str:
    """An error as one line; a missing file as ``PATH: not found`` (no ``[Errno 2]``)."""
    if isinstance(error, FileNotFoundError) and error.filename is not None:
        return f"{error.filename}: not found"
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fastscore", description="Bulk scorer for scientific-discovery "
                                     "benchmarks: laws, mechanisms and probe answers against a problem set.",
                                     epilog="Run 'fastscore COMMAND --help' for a command's options and an example.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    score = commands.add_parser("score", help="score a sweep of submissions (the main job)")
    score.add_argument("--problems", **_PROBLEMS)
    score.add_argument("--sweep", required=True, type=Path, help="sweep: .parquet, .csv, .jsonl or a directory tree")
    score.add_argument("--out", required=True, type=Path, help="output directory")
    score.add_argument("--tasks", type=Path, help="score only these task ids (a file, one a line), e.g. a Core set")
    score.add_argument("--executor", choices=get_args(ExecutorName), default="auto",
                       help="auto: in-process for small sweeps, Ray for large ones (default)")
    score.add_argument("--address", help="join an existing Ray cluster at this address")
    score.add_argument("--workers", type=int, help="most Ray workers to use")
    score.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                       help="progress bar (default: on a terminal only)")
    names = score.add_mutually_exclusive_group()
    names.add_argument("--exp-pattern", metavar="PATTERN",
                       help="MechBench run folders: how experiment names give config and run, e.g. '{config}_run{run}'")
    names.add_argument("--exp-map", type=Path, metavar="FILE",
                       help="MechBench run folders: a CSV/TSV file of 'exp_name,config[,run]' rows")
    score.add_argument("--strict", action="store_true",
                       help="stop (exit 2) when sweep rows name a task that is not in the problem set "
                            "(default: skip them with a warning)")
    _add_settings(score, [s.name for s in scalar_settings()])
    score.set_defaults(handler=_score)

    data = commands.add_parser("data", help="write the train/ID/OOD splits, one .npz per task")
    data.add_argument("--problems", **_PROBLEMS)
    data.add_argument("--out", required=True, type=Path)
    _add_settings(data, _SPLIT_SETTINGS)
    data.set_defaults(handler=_data)

    validate = commands.add_parser("validate", help="check each mechanism derives its law and each probe is internal")
    validate.add_argument("--problems", **_PROBLEMS)
    validate.set_defaults(handler=_validate)

    report = commands.add_parser("report", help="tables and figures from a scored output directory")
    report.add_argument("directory", type=Path, help="a scored output directory (fastscore score --out)")
    report.add_argument("--out", type=Path, help="where the report goes (default DIRECTORY/report)")
    report.add_argument("--baseline", metavar="CONFIG",
                        help="compare each configuration with this one (default: every pair up to 6 "
                             "configurations, else the first configuration); every pair is in pairwise.parquet")
    report.set_defaults(handler=_report)

    prepare = commands.add_parser("prepare", help="public task views (problem.json and the training data)")
    prepare.add_argument("--problems", **_PROBLEMS)
    prepare.add_argument("--out", required=True, type=Path)
    prepare.add_argument("--layout", choices=get_args(Layout), default="mdbench",
                         help="mdbench: OUT/<task>/problem.json + data_train.npy; mechbench: MechBench's harness "
                              "export OUT/<task>/agent/{problem.json,train.npy} (+ answer/ with --save-answer)")
    prepare.add_argument("--save-answer", action="store_true", help="also write the answers (kept private otherwise)")
    prepare.add_argument("--force", action="store_true", help="write into an --out folder that is not empty")
    _add_settings(prepare, _SPLIT_SETTINGS)
    prepare.set_defaults(handler=_prepare)

    graph = commands.add_parser("graph", help="draw a reference or submitted mechanism (.dot, .svg, .png)")
    graph.add_argument("--problems", **_PROBLEMS)
    graph.add_argument("--task", required=True, help="task id")
    graph.add_argument("--sweep", type=Path, help="draw this sweep's submission instead of the reference")
    graph.add_argument("--config", help="the submission's config (with --sweep)")
    graph.add_argument("--run", type=int, default=0, help="the submission's run (default %(default)d)")
    graph.add_argument("--out", required=True, type=Path, help="FILE.dot, FILE.svg or FILE.png")
    graph.add_argument("--engine", choices=("auto", "matplotlib", "graphviz"), default="auto",
                       help="SVG/PNG: Graphviz's dot when on PATH, else matplotlib (auto, default)")
    graph.set_defaults(handler=_graph)

    feedback = commands.add_parser("feedback", help="the feedback service's answer for one submission, here")
    feedback.add_argument("--task", required=True, type=Path, help="public task folder (problem.json, train.npy)")
    feedback.add_argument("--submission", required=True, type=Path, help="mechanism text, one equation a line")
    feedback.add_argument("--json", action="store_true", help="print the answer as JSON, with fastscore's extras")
    feedback.add_argument("--budget", type=float, default=DEFAULT_BUDGET,
                          help="seconds one evaluation may take; the solver gets half (default %(default)g)")
    feedback.set_defaults(handler=_feedback)

    serve = commands.add_parser("serve", help="the feedback service agents call (mdbench-proposal-v1 + JSON API)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000, help="0 picks a free port (default %(default)d)")
    serve.add_argument("--workers", type=int, default=max(1, min(4, os.cpu_count() or 1)),
                       help="worker processes (default %(default)d)")
    serve.add_argument("--tasks", type=Path, help="public task folders to load for POST /v1/feedback")
    serve.add_argument("--budget", type=float, default=DEFAULT_BUDGET,
                       help="seconds one evaluation may take; a worker past it is replaced (default %(default)g)")
    serve.add_argument("--cache-size", type=int, default=DEFAULT_CACHE, help="answers kept (default %(default)d)")
    serve.set_defaults(handler=_serve)
    _add_examples(commands)
    return parser


_PROBLEMS = dict(required=True, type=Path, nargs="+", action="extend", metavar="PATH",
                 help="problem files and/or directories of them (YAML, MechBench task files or folders)")


def _add_examples(commands) -> None:
    """Each command's example (``fastscore.cli_examples``) as the epilog of its help."""
    from fastscore.cli_examples import EXAMPLES
    for name, command in commands.choices.items():
        command.formatter_class = argparse.RawDescriptionHelpFormatter
        command.epilog = "example:\n  " + EXAMPLES[name]


def _problems(paths: list[Path]):
    """The --problems paths as the library takes them: one path, or a list of several
    (a name that is no path here names a bundled set: ``fastscore.problems.bundled``)."""
    paths = [resolve(path) for path in paths]
    return paths[0] if len(paths) == 1 else paths


_SPLIT_SETTINGS = ("n_samples", "data_seed")
_OLD_FLAGS = {"n_points": ("--points",), "n_samples": ("--samples",), "data_seed": ("--seed",)}
"""Flags from before the CLI named each setting as ``Settings`` does; still accepted."""


def _add_settings(parser: argparse.ArgumentParser, names) -> None:
    """One flag per setting, named as the setting (``n_points`` -> ``--n-points``)."""
    group = parser.add_argument_group("settings (fastscore.settings.Settings; recorded in meta.json)")
    for setting in scalar_settings():
        if setting.name in names:
            kind = int if setting.metadata["kind"] is int else float
            flag = "--" + setting.name.replace("_", "-")
            group.add_argument(flag, *_OLD_FLAGS.get(setting.name, ()), dest=setting.name, type=_checked(setting),
                               default=setting.default, metavar=kind.__name__.upper(),
                               help=f"{setting.metadata['help']} (default {setting.default:{'d' if kind is int else 'g'}})")


def _checked(setting):
    """The argparse type of a setting's flag: its number (the range is checked with the
    other settings, ``_settings``, so that the error is one line naming the flag)."""
    kind = int if setting.metadata["kind"] is int else float

    def parse(text: str):
        try:
            return kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {'an integer' if kind is int else 'a number'}, "
                                             f"got {text!r}") from None
    parse.__name__ = kind.__name__  # argparse names the type in some messages
    return parse


def _settings(args, names) -> Settings:
    """The ``Settings`` of a command's flags; a value out of its range is a ValueError
    naming the flag (``--n-samples must be an integer in [1, 10000000], got 0``)."""
    for setting in scalar_settings():
        if setting.name in names and (problem := out_of_range(setting, getattr(args, setting.name))) is not None:
            raise ValueError(f"--{setting.name.replace('_', '-')} {problem}")
    return Settings(**{name: getattr(args, name) for name in names})


def _score(args) -> int:
    import polars as pl

    from fastscore.outputs.passk import PASSK_FILE
    from fastscore.outputs.tables import OUTPUT, shown_rates
    from fastscore.problems.formats import read_task_list
    from fastscore.run.job import score_sweep
    from fastscore.sweeps.mechbench_runs import ExperimentNames
    settings = _settings(args, [s.name for s in scalar_settings()])
    if args.tasks is not None and not args.tasks.is_file():
        raise ValueError(f"--tasks {args.tasks}: file not found")
    tasks = None if args.tasks is None else read_task_list(args.tasks)
    experiments = (ExperimentNames.from_file(args.exp_map) if args.exp_map is not None
                   else ExperimentNames(pattern=args.exp_pattern))
    summary = score_sweep(_problems(args.problems), resolve(args.sweep), args.out, tasks=tasks, executor=args.executor,
                          address=args.address, workers=args.workers, settings=settings, progress=args.progress,
                          experiments=experiments, strict=args.strict)
    with pl.Config(tbl_rows=100, tbl_cols=30, tbl_width_chars=400, float_precision=3, tbl_hide_dataframe_shape=True):
        print(summary.select("config", "n_tasks", "n_runs", *(rate.name for rate in shown_rates(summary))))
    print(f"wrote {args.out}/{', '.join((*OUTPUT, PASSK_FILE))}")
    return 0


def _data(args) -> int:
    from fastscore.export import write_splits
    count = write_splits(_problems(args.problems), args.out, settings=_settings(args, _SPLIT_SETTINGS))
    print(f"wrote {count} split files to {args.out}")
    return 0


def _prepare(args) -> int:
    from fastscore.export import write_task_views
    if not args.force and args.out.is_dir() and any(args.out.iterdir()):
        raise ValueError(f"--out {args.out} is not empty; choose another folder or add --force")
    count = write_task_views(_problems(args.problems), args.out, layout=args.layout, save_answer=args.save_answer,
                             settings=_settings(args, _SPLIT_SETTINGS))
    print(f"wrote {count} task views to {args.out}" + (" (with answers)" if args.save_answer else ""))
    return 0


def _validate(args) -> int:
    from fastscore.problems.formats import load_problems
    from fastscore.scoring.validate import validate_problems
    failed, tasks, warnings = set(), set(), 0
    for finding in validate_problems(load_problems(_problems(args.problems))):
        tasks.add(finding.task)
        if not finding.ok:
            failed.add(finding.task)
            print(f"FAIL {finding.task}: {finding.check}: {finding.detail}")
        elif finding.warning:
            warnings += 1
            print(f"WARN {finding.task}: {finding.check}: {finding.detail}")
    noted = f" ({warnings} warning{'s' * (warnings != 1)})" if warnings else ""
    print(f"{len(tasks) - len(failed)} of {len(tasks)} problems valid{noted}")
    return EXIT_INVALID if failed else 0


def _report(args) -> int:
    extras.require("report")
    from fastscore.report.document import write_report
    path = write_report(args.directory, out=args.out, baseline=args.baseline)
    print(f"wrote {path}, {path.with_name('report.html')} and figures in {path.parent}")
    return 0


def _graph(args) -> int:
    from fastscore.report.task_graph import draw_task
    path = draw_task(_problems(args.problems), args.task, args.out, sweep=args.sweep, config=args.config, run=args.run,
                     engine=args.engine)
    print(f"wrote {path}")
    return 0


def _feedback(args) -> int:
    import json

    from fastscore.service.feedback import feedback
    from fastscore.service.protocol import EXTRAS
    from fastscore.service.public import load_task
    from fastscore.support.collector import paused
    task = load_task(args.task)
    submission = args.submission.read_bytes()
    try:
        with paused():  # as in the service's workers (fastscore.service.workers)
            answer = feedback(task, submission, budget=args.budget)
    except Exception as error:  # noqa: BLE001 - as in the service: a bad submission is an answer
        answer = {"ok": False, "error": f"internal error: {error}".splitlines()[0], "error_type": type(error).__name__}
    if args.json:
        print(json.dumps(answer, indent=2, allow_nan=False))
        return 0
    if not answer["ok"]:
        print(f"not ok: {answer['error_type']}: {answer['error']}")
        return 0
    print("ok")
    for name, expr in answer["solution"].items():
        print(f"  {name} = {expr}")
    for name in answer[EXTRAS]["numeric"]:
        print(f"  {name}: solved numerically at each sample")
    print("train: " + ", ".join(f"{key} {value:.6g}" if isinstance(value, float) else f"{key} {value}"
                                for key, value in answer["train"].items()))
    for warning in answer[EXTRAS]["warnings"]:
        print(f"warning: {warning}")
    return 0


def _serve(args) -> int:
    import asyncio

    from fastscore.service.workers import start_fork_server
    if args.workers < 1 or args.budget <= 0 or args.cache_size < 1:
        raise ValueError("--workers and --cache-size must be at least 1 and --budget positive")
    extras.require("serve")
    start_fork_server()  # warms up while the rest loads
    from fastscore.service.app import load_task_folders, serve
    tasks = load_task_folders(args.tasks) if args.tasks is not None else None
    asyncio.run(serve(args.host, args.port, workers=args.workers, budget=args.budget,
                      cache_size=args.cache_size, tasks=tasks))
    return 0


if __name__ == "__main__":
    sys.exit(main())
