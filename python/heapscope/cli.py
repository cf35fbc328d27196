"""The `heapscope` command: one sub-command per module in heapscope.commands.

Each module in COMMANDS defines `register(subparsers)` (adds its parser and sets
`func`) and does its work in the function it sets. Errors the user can act on are
raised as HeapscopeError and printed as one line; nothing prints a traceback unless
HEAPSCOPE_DEBUG=1.
"""
import argparse
import importlib
import os
import sys

from heapscope import __version__
from heapscope.commands import progress
from heapscope.commands.options import (HelpFormatter, add_verbosity_options, one_line_errors,
                                        write_html)
from heapscope.errors import HeapscopeError

# Sub-command modules, in the order `heapscope --help` lists them.
COMMANDS = [
    "record",
    "run",
    "report",
    "stacks",
    "callgraph",
    "diff",
    "scaling",
    "lifetimes",
    "temporaries",
    "peak",
    "leaks",
    "access",
    "timeline",
    "html",
    "export",
    "bench",
    "demo",
    "alloc-stats",
]


def build_parser(names=COMMANDS) -> argparse.ArgumentParser:
    """The parser with the sub-commands `names` (all by default)."""
    parser = argparse.ArgumentParser(
        prog="heapscope", formatter_class=HelpFormatter,
        description="Heap-memory toolkit for HPC codes: identify, locate, characterize, compare.")
    parser.add_argument("--version", action="version", version=f"heapscope {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in names:
        module = importlib.import_module(f"heapscope.commands.{name.replace('-', '_')}")
        module.register(sub)
    for command_parser in sub.choices.values():
        one_line_errors(command_parser)
        add_verbosity_options(command_parser)
    return parser


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    # Only the command asked for is imported: the others pull in numpy and the
    # plotting code, 0.3-0.4 s of CPU before `record` could start the program.
    first = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser([first] if first in COMMANDS else COMMANDS)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    progress.configure(getattr(args, "quiet", False), getattr(args, "verbose", False))
    try:
        rc = args.func(args)
        write_html(args)
        return int(rc or 0)
    except HeapscopeError as exc:
        print(f"heapscope: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("heapscope: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # never a traceback for the user
        if os.environ.get("HEAPSCOPE_DEBUG"):
            raise
        print(f"heapscope: internal error: {type(exc).__name__}: {exc} "
              f"(set HEAPSCOPE_DEBUG=1 for details)", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
