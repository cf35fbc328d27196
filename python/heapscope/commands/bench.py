"""`heapscope bench`: compare allocators (or profilers) on the bundled workloads or on
any command, with interleaved runs and bootstrap confidence intervals.

    heapscope bench [--allocators glibc,jemalloc,...] [-n 10] [--workloads all|NAME,...]
    heapscope bench [options] -- CMD [ARGS...]
    heapscope bench --profilers [options] [-- CMD [ARGS...]]

The result: --format text (the tables, default), json (every run and statistic) or csv
(one row per counted run), to -o FILE or stdout; --csv FILE and --markdown FILE also
write those (one run of hours can give all of them), --plot DIR the charts.

Exit status: 0, or 1 when a configuration failed or checksums differed (the results
of the others are still printed), 2 for bad options.
"""
import argparse
import os
import shlex
import sys
from pathlib import Path
from typing import Dict, List

from heapscope import allocators
from heapscope.atomic import write_atomic
from heapscope.bench import configs as cfgs
from heapscope.bench import machine, results, runner
from heapscope.bench.workloads import BY_NAME, select
from heapscope.commands.options import (add_output_options, deprecated, duration_ns, emit)
from heapscope.render.json_text import to_json
from heapscope.errors import HeapscopeError
from heapscope.native import native_dir
from heapscope.render import bench_text


def register(sub):
    p = sub.add_parser(
        "bench", help="compare allocators or profilers on workloads or any command",
        description="Run commands under several allocators (or, with --profilers, plain and "
                    "under each profiler), interleaved (A B C A B C ...) after a warm-up; "
                    "report wall, CPU, max RSS and minor faults per run from wait4, mean and "
                    "median with 95%% bootstrap intervals and ratios to a baseline. Without a "
                    "command, runs the bundled workloads (%s)." % ", ".join(BY_NAME),
        usage="heapscope bench [options] [-- CMD [ARGS...]]")
    p.add_argument("--allocators", default=",".join(allocators.ALL), metavar="LIST",
                   help="allocators to compare (default: %(default)s; missing ones are "
                        "reported and skipped)")
    p.add_argument("--profilers", action="store_true",
                   help="compare a plain run, heapscope's recording modes, heaptrack and "
                        "Valgrind Massif instead of allocators")
    p.add_argument("-n", "--runs", type=int, default=10, metavar="N",
                   help="counted runs per configuration (default 10)")
    p.add_argument("--warmup", type=int, default=1, metavar="N",
                   help="uncounted warm-up rounds first (default 1)")
    p.add_argument("--workloads", metavar="all|NAME,...",
                   help="bundled workloads to run (default: all, when no command is given)")
    p.add_argument("--quick", action="store_true",
                   help="run the bundled workloads at their small test sizes")
    p.add_argument("--baseline", metavar="NAME",
                   help="configuration the ratios are relative to (default: glibc, or "
                        "plain with --profilers)")
    p.add_argument("--stack-size", type=int, metavar="BYTES",
                   help="--profilers: the size whose stacks 'record-stacks-N' records "
                        "(default: the most frequent size of the first command, from a counting run)")
    p.add_argument("--timeout", default="3600", metavar="DURATION",
                   help="kill a run after DURATION and count it as failed (90s, 10m; a bare "
                        "number is in seconds; default 3600)")
    add_output_options(p)
    p.add_argument("--json", metavar="FILE",
                   help="deprecated: use --format json -o FILE (this spelling also prints the "
                        "tables)")
    p.add_argument("--csv", metavar="FILE", help="also write one CSV row per counted run to FILE")
    p.add_argument("--html", metavar="FILE",
                   help="also write the results as one offline HTML page (docs/html-report.md)")
    p.add_argument("--markdown", metavar="FILE",
                   help="also write the tables as Markdown, with the machine (for BENCHMARKS.md)")
    p.add_argument("--plot", metavar="DIR",
                   help="write one chart per metric into DIR (bench-<metric>.png and .svg)")
    p.add_argument("--no-progress", action="store_true", help="no progress output on stderr")
    p.add_argument("command", nargs=argparse.REMAINDER, metavar="CMD",
                   help="the command to measure and its arguments, after --")
    p.set_defaults(func=run)


def _command(args) -> List[str]:
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    elif command:
        raise HeapscopeError(f"unexpected argument {command[0]!r} (put the command after --)")
    return command


def _check(args, command):
    if args.runs < 1:
        raise HeapscopeError(f"-n must be at least 1, not {args.runs}")
    if args.warmup < 0:
        raise HeapscopeError(f"--warmup must be 0 or more, not {args.warmup}")
    args.timeout = duration_ns(args.timeout, "--timeout", default_unit="s") / 1e9
    if args.json:
        deprecated("bench --json FILE", "--format json -o FILE")
    if command and args.workloads:
        raise HeapscopeError("give either --workloads or a command after --, not both")
    if command and args.quick:
        raise HeapscopeError("--quick sizes the bundled workloads; it does not apply to a command")
    if args.stack_size is not None and (not args.profilers or args.stack_size < 0):
        raise HeapscopeError("--stack-size is a size in bytes, for --profilers")
    if command:
        runner.check_program(command, None, None)
    _check_outputs(args)


def _check_outputs(args):
    """Fail before hours of runs, not after, when an output cannot be written."""
    for path in (args.output, args.json, args.csv, args.markdown, args.html):
        if path and path != "-":
            parent = Path(path).parent
            try:
                parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise HeapscopeError(f"cannot write {path}: {exc.strerror}")
            if Path(path).is_dir() or not os.access(parent, os.W_OK):
                raise HeapscopeError(f"cannot write {path}: not a writable file location")
    if args.plot:
        try:
            Path(args.plot).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise HeapscopeError(f"cannot create {args.plot}: {exc.strerror}")


def _targets(args, command):
    """[(name, argv)] of what to measure."""
    if command:
        return [(Path(command[0]).name, command)]
    return [(w.name, w.argv(small=args.quick)) for w in select(args.workloads or "all")]


def _configs(args, targets, env):
    if args.profilers:
        size = args.stack_size
        if size is None:
            size = cfgs.hottest_size(targets[0][1], env, args.timeout)
        return cfgs.profiler_configs(size)
    names = [n.strip() for n in args.allocators.split(",") if n.strip()]
    if not names:
        raise HeapscopeError("--allocators is empty")
    if len(set(names)) != len(names):
        raise HeapscopeError(f"--allocators lists a name twice: {args.allocators}")
    return cfgs.allocator_configs(names)


def run(args) -> int:
    command = _command(args)
    _check(args, command)
    env = dict(os.environ)
    targets = _targets(args, command)
    configs, missing = _configs(args, targets, env)
    for message in missing.values():
        print(f"heapscope bench: {message}", file=sys.stderr)
    if not configs:
        raise HeapscopeError("nothing to compare: no configuration is available")
    baseline = args.baseline or ("plain" if args.profilers else "glibc")
    names = [c.name for c in configs]
    if baseline not in names:
        raise HeapscopeError(f"baseline '{baseline}' is not among the configurations run "
                             f"({', '.join(names)})")
    by_name: Dict[str, cfgs.Config] = {c.name: c for c in configs}
    per_target = len(configs) * (args.runs + args.warmup)
    progress = runner.Progress(per_target * len(targets), enabled=not args.no_progress)
    done = []
    for name, argv in targets:
        run_one = runner.runner_for(argv, by_name, env, args.timeout)
        outcomes = runner.run_interleaved(names, args.runs, args.warmup, run_one, progress, name)
        done.append(results.analyze(name, argv, outcomes, baseline))

    settings = {"runs": args.runs, "warmup": args.warmup, "baseline": baseline,
                "configs": names, "mode": "profilers" if args.profilers else "allocators",
                "resamples": 1000, "confidence": 0.95}
    # the machine is described (dpkg queries) only for the outputs that show it
    described = machine.describe() if (args.format == "json" or args.json or args.markdown) else {}
    doc = results.document(done, described, settings, missing)
    bindir = str(native_dir() / "bin") + "/"
    emit(args, doc, {"text": lambda d: bench_text.render(d, bindir), "csv": bench_text.render_csv})
    if args.json:
        write_atomic(args.json, to_json(doc))
    if args.csv:
        write_atomic(args.csv, bench_text.render_csv(doc))
    if args.html:
        from heapscope.render.html import render_bench_page
        write_atomic(args.html, render_bench_page(doc))
    if args.markdown:
        # scripts/bench_*.sh name themselves as the command that regenerates the tables
        invocation = os.environ.get("HEAPSCOPE_BENCH_REGENERATE") or (
            "heapscope bench " + " ".join(shlex.quote(a) for a in sys.argv[2:])
            if len(sys.argv) > 1 and sys.argv[1] == "bench" else "heapscope bench")
        legend = {c.name: c.what for c in configs} if args.profilers else None
        write_atomic(args.markdown, bench_text.markdown(doc, invocation, legend, bindir))
    if args.plot:
        from heapscope.render.plots import write_bench_plots
        write_bench_plots(doc, args.plot, [(key, title) for key, title, _ in results.METRICS])

    errors = [e for r in done for e in r.errors]
    for e in errors:
        print(f"heapscope bench: error: {e}", file=sys.stderr)
    return 1 if errors else 0
