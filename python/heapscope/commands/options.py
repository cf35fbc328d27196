"""The command-line grammar every sub-command shares, in one place.

    add_output_options(p, formats)   --format F (text first) and -o/--output FILE (stdout)
    add_selection_options(p)         --size/--sizes SPEC and --region/--regions R
    add_top_option(p)                --top N, one default for every command (0 = all)
    one_line_errors(p)               a bad option is one line "heapscope: error: ...", no usage
    add_verbosity_options(p)         --quiet (no progress bars) and --verbose (every note), every command
    emit(args, doc, renderers)       the document through the chosen renderer, to -o or stdout
    add_html_option(p, inputs)       --html FILE: the page `heapscope html` writes, too
    duration_ns(text)                the one duration grammar: 800ns, 500us, 2ms, 1.5s, 1m, 0
    add_launchers_option(p)          --launchers: MPI launchers/daemons kept in what is merged

A spelling that is going away stays accepted for one release with a note on stderr
(`deprecated`): scripts written against the old one keep working and learn the new one.
"""
from __future__ import annotations

import argparse
import os
import re
import sys

from heapscope.errors import HeapscopeError

TYPE_CHECKING = False
if TYPE_CHECKING:   # annotations only (typing costs `record` start-up time)
    from typing import Callable, Dict, Optional

TOP_DEFAULT = 20


_COLUMNS = []   # the terminal's width, asked once


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, with the terminal's width asked once per command rather than
    by every add_argument (through shutil, whose import alone costs `record` several ms
    of start-up). The width as shutil.get_terminal_size gives it: COLUMNS, else the
    terminal's, else 80."""

    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
        if width is None:
            if not _COLUMNS:
                try:
                    columns = int(os.environ.get("COLUMNS", "0"))
                except ValueError:
                    columns = 0
                if columns <= 0:
                    try:
                        columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
                    except (AttributeError, ValueError, OSError):
                        columns = 0
                _COLUMNS.append(columns or 80)
            width = _COLUMNS[0] - 2
        super().__init__(prog, indent_increment, max_help_position, width)


def add_output_options(p, formats=("text", "json", "csv"), required_format: bool = False) -> None:
    """--format (the first of `formats` is the default) and -o/--output FILE."""
    if required_format:
        p.add_argument("--format", choices=formats, required=True,
                       help=f"output format: {', '.join(formats)}")
    else:
        p.add_argument("--format", choices=formats, default=formats[0],
                       help=f"output format: {', '.join(formats)} (default {formats[0]}); "
                            f"fields in docs/report-formats.md and docs/analysis-formats.md")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write the result to FILE (atomically) instead of standard output")


def add_selection_options(p, size_required: bool = False, size_help: Optional[str] = None,
                          region_help: Optional[str] = None) -> None:
    """--size and --region; the plural spellings (record's) are the same options."""
    p.add_argument("--size", "--sizes", dest="size", metavar="SPEC", required=size_required,
                   help=size_help or 'sizes, e.g. "12", "12,24,100-200" or "all"')
    p.add_argument("--region", "--regions", dest="region", metavar="R",
                   help=region_help or "only this region (its path, or its name)")


def add_top_option(p, what: str = "rows") -> None:
    p.add_argument("--top", type=non_negative("--top"), default=TOP_DEFAULT, metavar="N",
                   help=f"{what} shown (default {TOP_DEFAULT}, 0 = all)")


def add_verbosity_options(p) -> None:
    """--quiet and --verbose, on every sub-command (commands/progress.py)."""
    p.add_argument("--quiet", action="store_true",
                   help="no progress bars (they appear only on a terminal, after a second)")
    p.add_argument("--verbose", action="store_true",
                   help="every note on its own line (repeated notes are otherwise one line "
                        "with a count)")


def add_html_option(p, inputs: Callable) -> None:
    """--html FILE: also write the HTML page of the same inputs (`heapscope html`), after
    the result; `inputs(args)` gives (before paths, after paths or None)."""
    p.add_argument("--html", metavar="FILE", dest="html_page",
                   help="also write the offline HTML report of these inputs to FILE "
                        "(what `heapscope html` writes)")
    p.set_defaults(html_inputs=inputs)


def write_html(args) -> None:
    """The --html page of a command that took add_html_option, if asked for."""
    if getattr(args, "html_page", None):   # bench's own --html FILE is not this one
        from heapscope.commands.html import write_page
        before, after, *runs = args.html_inputs(args)   # diff: also its runs per side
        write_page(before, after, args.html_page, runs=runs[0] if runs else None)


def non_negative(option: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"bad {option} {text!r}: expected a whole number")
        if value < 0:
            raise argparse.ArgumentTypeError(f"{option} must not be negative (got {text!r})")
        return value
    return parse


def one_line_errors(p) -> None:
    """argparse's errors on `p` as one line on stderr (exit 2), like every other error:
    "heapscope: error: --top must not be negative (got '-1')". The "argument --top: "
    prefix is dropped when the message names the option already."""
    def error(message: str):
        m = re.match(r"argument ([^:]+): (.*)$", message, re.S)
        if m and any(name in m.group(2) for name in m.group(1).split("/")):
            message = m.group(2)
        print(f"heapscope: error: {' '.join(message.split())}", file=sys.stderr)
        sys.exit(2)
    p.error = error


def write_result(text: str, path: Optional[str]) -> None:
    """Text to stdout, or to `path` written atomically (never a half-written file)."""
    if not text.endswith("\n"):
        text += "\n"
    if not path or path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    from heapscope.atomic import write_atomic   # (tempfile: not for the commands without -o)
    write_atomic(path, text)


def emit(args, doc, renderers: Dict[str, Callable]) -> None:
    """Render `doc` in args.format (json is always to_json unless a renderer is given) and
    write it where -o says."""
    from heapscope.render.json_text import to_json
    fmt = getattr(args, "format", "text")
    render = renderers.get(fmt) or (to_json if fmt == "json" else None)
    if render is None:
        raise HeapscopeError(f"--format {fmt} is not available here")
    write_result(render(doc), getattr(args, "output", None))


def deprecated(old: str, new: str) -> None:
    print(f"heapscope: note: {old} is deprecated and will go in the next release; use {new}",
          file=sys.stderr)


_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(ns|us|ms|s|m)?\s*$")
_UNIT_NS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000, "m": 60_000_000_000}


def duration_ns(text: str, option: str = "duration", default_unit: Optional[str] = None,
                allow_zero: bool = False) -> int:
    """'800ns', '500us', '2ms', '1.5s', '1m' -> nanoseconds. A bare number takes
    `default_unit` (an error when None); 0 is allowed only where it means "off"."""
    m = _DURATION.match(text)
    unit = (m.group(2) or default_unit) if m else None
    if not m or unit is None:
        bare = f" (a bare number is in {default_unit})" if default_unit else ""
        raise HeapscopeError(f"bad {option} {text!r}: expected a number and a unit ns, us, ms, s "
                             f"or m, like 500us or 2s{bare}")
    ns = round(float(m.group(1)) * _UNIT_NS[unit])
    if ns == 0 and float(m.group(1)) == 0 and allow_zero:
        return 0
    if ns < 1:
        raise HeapscopeError(f"bad {option} {text!r}: shorter than 1 ns")
    return ns


def add_launchers_option(p) -> None:
    """--launchers: keep MPI launcher and daemon processes in what is merged."""
    p.add_argument("--launchers", action="store_true",
                   help="include MPI launcher and daemon processes (mpirun, orted, prted, "
                        "hydra_pmi_proxy, srun ...) in what is merged: they are left out by "
                        "default, with a note")
