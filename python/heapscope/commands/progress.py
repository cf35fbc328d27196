"""Progress on long work, and how much a command says (--quiet, --verbose).

    progress.configure(quiet=args.quiet, verbose=args.verbose)   # cli.main, once
    with progress.phase("drawing the call graph with dot"):      # elapsed time only
        ...
    with progress.bar("symbolizing", total=12, unit="module") as step:
        step(1)                                                  # one done
    profiles = progress.run("reading run/", load_profiles, paths)  # a call as a phase

A bar appears on standard error only when it is a terminal, --quiet was not given and
the work has gone on for DELAY seconds (HEAPSCOPE_PROGRESS_DELAY overrides it): a pipe,
a log file and a short command get nothing. The bar is erased when the work ends, so
the output reads the same with and without it. Drawn by tqdm.

Analyses never print: they take a callback (`step`), which a command gets from here.
"""
from __future__ import annotations

import os
import sys
from contextlib import contextmanager

TYPE_CHECKING = False
if TYPE_CHECKING:   # annotations only (typing costs `record` start-up time)
    from typing import Callable, Iterator, Optional

DELAY = 1.0        # seconds of work before a bar appears
REFRESH = 0.25     # how often a phase's elapsed time is redrawn

QUIET = False
VERBOSE = False


def configure(quiet: bool = False, verbose: bool = False) -> None:
    global QUIET, VERBOSE
    QUIET, VERBOSE = bool(quiet), bool(verbose)


def enabled() -> bool:
    """Whether bars are drawn: stderr a terminal, not --quiet."""
    if QUIET:
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):   # replaced or closed stderr
        return False


def _delay() -> float:
    try:
        return max(0.0, float(os.environ.get("HEAPSCOPE_PROGRESS_DELAY", DELAY)))
    except ValueError:
        return DELAY


def _tqdm(**kwargs):
    try:
        from tqdm import tqdm
    except ImportError:   # a dependency (pyproject); without it, no bar rather than a failure
        return None
    columns, rows = _size()
    return tqdm(file=sys.stderr, delay=_delay(), leave=False, ncols=columns, nrows=rows, **kwargs)


def _size():
    """The terminal's (columns, rows); 80 x 24 where it says 0 (a pseudo-terminal nobody
    sized, as under `script` or some CI runners: tqdm draws nothing in 0 rows)."""
    try:
        size = os.get_terminal_size(sys.stderr.fileno())
        columns, rows = size.columns, size.lines
    except (OSError, ValueError, AttributeError):
        columns = rows = 0
    return (min(columns, 120) if columns > 0 else 80), (rows if rows > 0 else 24)


def _noop(n: int = 1) -> None:
    pass


@contextmanager
def bar(description: str, total: Optional[int] = None, unit: str = "it") -> Iterator[Callable[[int], None]]:
    """A bar of `total` steps (a counter when None); yields step(n)."""
    t = _tqdm(desc=f"heapscope: {description}", total=total, unit=f" {unit}") if enabled() else None
    if t is None:
        yield _noop
        return
    try:
        yield t.update
    finally:
        t.close()


def run(description: str, fn: Callable, *args, **kwargs):
    """fn(*args, **kwargs) shown as a phase (a one-line change where a call is long)."""
    with phase(description):
        return fn(*args, **kwargs)


@contextmanager
def phase(description: str) -> Iterator[None]:
    """Work of unknown length: its description and the time it has taken, redrawn."""
    t = _tqdm(desc=f"heapscope: {description}", total=None,
              bar_format="{desc} ({elapsed})") if enabled() else None
    if t is None:
        yield
        return
    import threading   # (only where a bar may be drawn: a terminal, long work)
    stop = threading.Event()
    shown_after = _delay()

    def tick():
        while not stop.wait(REFRESH):
            if t._time() - t.start_t >= shown_after:   # tqdm's own clock and start
                t.refresh()

    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    try:
        yield
    finally:
        stop.set()
        ticker.join()
        t.close()
