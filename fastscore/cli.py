"""Command line (SPEC §7): argument parsing only; the work is done by the modules.

Exit 0 when the job ran (whatever the submissions said); exit 2 with one clear line
for unusable input or an output that cannot be written (read-only, full disk); exit
130 on Ctrl-C (a ``score`` run then resumes where it stopped when re-run)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fastscore.settings import Settings

EXIT_USAGE = 2
EXIT_INVALID = 1
EXIT_INTERRUPTED = 130


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``fastscore`` command."""
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return args.handler(args)
    except (ValueError, OSError) as error:  # unusable input; an output that cannot be written
        message = str(error).splitlines()[0] if str(error) else type(error).__name__
        print(f"fastscore {args.command}: error: {message}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        resume = "; the rows scored so far are kept: re-run the same command to resume" if args.command == "score" else ""
        print(f"fastscore {args.command}: interrupted{resume}", file=sys.stderr)
        return EXIT_INTERRUPTED


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fastscore", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    score = commands.add_parser("score", help="score a sweep of submissions (the main job)")
    score.add_argument("--problems", required=True, type=Path, help="problem directory (YAML files)")
    score.add_argument("--sweep", required=True, type=Path, help="sweep: .parquet, .csv, .jsonl or a directory tree")
    score.add_argument("--out", required=True, type=Path, help="output directory")
    score.add_argument("--tasks", type=Path, help="score only these task ids (a file, one a line), e.g. a Core set")
    score.add_argument("--executor", choices=("auto", "local", "ray"), default="auto",
                       help="auto: in-process for small sweeps, Ray for large ones (default)")
    score.add_argument("--address", help="join an existing Ray cluster at this address")
    score.add_argument("--workers", type=int, help="most Ray workers to use")
    score.add_argument("--rtol", type=float, default=Settings().rtol, help="equivalence tolerance (default %(default)g)")
    score.add_argument("--points", type=int, default=Settings().n_points,
                       help="random domain points per comparison (default %(default)d)")
    score.add_argument("--acc-tol", type=float, default=Settings().acc_tol,
                       help="Acc tolerance on max relative error (default %(default)g)")
    score.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                       help="progress bar (default: on a terminal only)")
    score.set_defaults(handler=_score)

    data = commands.add_parser("data", help="write the train/ID/OOD splits, one .npz per task")
    data.add_argument("--problems", required=True, type=Path)
    data.add_argument("--out", required=True, type=Path)
    data.add_argument("--seed", type=int, default=Settings().data_seed)
    data.add_argument("--samples", type=int, default=Settings().n_samples)
    data.set_defaults(handler=_data)

    validate = commands.add_parser("validate", help="check each mechanism derives its law and each probe is internal")
    validate.add_argument("--problems", required=True, type=Path)
    validate.set_defaults(handler=_validate)

    report = commands.add_parser("report", help="tables and figures from a scored output directory")
    report.add_argument("directory", type=Path)
    report.set_defaults(handler=_report)

    prepare = commands.add_parser("prepare", help="public task views (problem.json, data_train.npy)")
    prepare.add_argument("--problems", required=True, type=Path)
    prepare.add_argument("--out", required=True, type=Path)
    prepare.add_argument("--save-answer", action="store_true", help="also write the answers (kept private otherwise)")
    prepare.add_argument("--seed", type=int, default=Settings().data_seed)
    prepare.set_defaults(handler=_prepare)
    return parser


def _score(args) -> int:
    import polars as pl

    from fastscore.run import read_task_list, score_sweep
    settings = Settings(rtol=args.rtol, n_points=args.points, acc_tol=args.acc_tol)
    tasks = None if args.tasks is None else read_task_list(args.tasks)
    summary = score_sweep(args.problems, args.sweep, args.out, tasks=tasks, executor=args.executor,
                          address=args.address, workers=args.workers, settings=settings, progress=args.progress)
    with pl.Config(tbl_rows=100, tbl_cols=20, float_precision=3, tbl_hide_dataframe_shape=True):
        print(summary.select("config", "n_tasks", "n_runs", "sa_p", "sa_m", "cond_fail", "acc_id", "acc_ood"))
    print(f"wrote {args.out}/scores.parquet, probes.parquet, summary.parquet, strata.parquet, meta.json")
    return 0


def _splits_of(problems_dir: Path, *, seed: int, samples: int):
    from fastscore.problems import load_problems
    from fastscore.reference import build_reference
    settings = Settings(data_seed=seed, n_samples=samples)
    for problem in load_problems(problems_dir):
        yield problem, build_reference(problem, settings=settings).splits


def _data(args) -> int:
    from fastscore.data import write_npz
    count = 0
    for problem, splits in _splits_of(args.problems, seed=args.seed, samples=args.samples):
        path = args.out / f"{problem.task_id}.npz"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_npz(splits, path, generation_config={"seed": args.seed, "n_samples": args.samples,
                                                   "task": problem.task_id, "generator": "fastscore"})
        count += 1
    print(f"wrote {count} split files to {args.out}")
    return 0


def _prepare(args) -> int:
    from fastscore.data import write_prepared
    count = 0
    for problem, splits in _splits_of(args.problems, seed=args.seed, samples=Settings().n_samples):
        write_prepared(problem, splits, args.out / problem.task_id, save_answer=args.save_answer)
        count += 1
    print(f"wrote {count} task views to {args.out}" + (" (with answers)" if args.save_answer else ""))
    return 0


def _validate(args) -> int:
    from fastscore.problems import load_problems
    from fastscore.validate import validate_problems
    failed, tasks = set(), set()
    for finding in validate_problems(load_problems(args.problems)):
        tasks.add(finding.task)
        if not finding.ok:
            failed.add(finding.task)
            print(f"FAIL {finding.task}: {finding.check}: {finding.detail}")
    print(f"{len(tasks) - len(failed)} of {len(tasks)} problems valid")
    return EXIT_INVALID if failed else 0


def _report(args) -> int:
    from fastscore.report import write_report
    path = write_report(args.directory)
    print(f"wrote {path}, {path.with_name('report.html')} and figures in {path.parent}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
