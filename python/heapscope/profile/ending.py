"""How a process ended: the ENDING chunk of its snapshot when not by exit (format table),
written by the recorder's crash handler, its handler of the other signals that end a
process, and the MPI layer's MPI_Abort (Profile.ending is None for every other
snapshot); and the PROCESS_END chunk of every final snapshot (which exit call and its
status, an MPI rank that never reached MPI_Finalize, a parent gone before it).

FINAL_REASONS are the snapshot reasons a process writes as it ends; a file whose last
snapshot has another reason (a dump, a periodic snapshot) does not hold its end."""
import signal
from typing import Optional

from heapscope.profile import format as fmt
from heapscope.profile.layout import Malformed
from heapscope.profile.model import Ending, ProcessEnd, Profile

FINAL_REASONS = frozenset(("exit", "exec", "sigterm", "sigint", "signal", "crash", "mpi-abort"))
PROCESS_ENDS = fmt.TABLE.enums["process_end"].labels()


def signal_name(number: int) -> str:
    """"SIGSEGV" for 11; "signal 70" for a number this system does not name."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def from_snapshot(profile: Profile) -> Optional[Ending]:
    """The chosen snapshot's ENDING chunk (the last one, if a crash handler wrote two),
    or None. A malformed payload raises layout.Malformed (the reader's one-line error)."""
    payloads = profile.extra_chunks.get(fmt.ENDING)
    if not payloads:
        return None
    r = fmt.CODECS[fmt.ENDING].decode(payloads[-1])
    kind = fmt.reason_name(r.kind)
    if kind not in ("crash", "signal", "mpi-abort"):
        raise Malformed(f"ENDING kind {r.kind} is none of crash, signal, mpi-abort")
    by_signal = kind in ("crash", "signal")
    return Ending(kind=kind, signal=r.signal if by_signal else 0,
                  signal_name=signal_name(r.signal) if by_signal else "",
                  si_code=r.si_code, error_code=r.error_code, fault_address=r.fault_address)


def process_end(profile: Profile) -> Optional[ProcessEnd]:
    """The chosen snapshot's PROCESS_END chunk, or None (not a final snapshot, or an
    older recorder). A malformed payload raises layout.Malformed."""
    payloads = profile.extra_chunks.get(fmt.PROCESS_END)
    if not payloads:
        return None
    r = fmt.CODECS[fmt.PROCESS_END].decode(payloads[-1])
    if not 0 <= r.how < len(PROCESS_ENDS) or not PROCESS_ENDS[r.how]:
        raise Malformed(f"PROCESS_END how {r.how} is unknown")
    return ProcessEnd(how=PROCESS_ENDS[r.how],
                      status=r.status if r.flags & fmt.END_STATUS_KNOWN else None,
                      mpi_unfinalized=bool(r.flags & fmt.END_MPI_UNFINALIZED),
                      orphaned=bool(r.flags & fmt.END_ORPHANED))


def describe(ending: Optional[Ending]) -> str:
    """One phrase for reports: "crashed: SIGSEGV", "killed: SIGHUP", "MPI_Abort(17)", or ""."""
    if ending is None:
        return ""
    if ending.kind == "crash":
        return f"crashed: {ending.signal_name}"
    if ending.kind == "signal":
        return f"killed: {ending.signal_name}"
    return f"MPI_Abort({ending.error_code})"


EXIT_CALLS = {"exit": "exit", "exit-now": "_exit", "quick-exit": "quick_exit"}


def describe_exit(end: Optional[ProcessEnd]) -> str:
    """"exit(1)", "_exit(0)", "quick_exit(3)", "exit" (status not seen: main returned),
    "last thread ended"; "" when not an exit."""
    if end is None:
        return ""
    if end.how == "last-thread":
        return "last thread ended (main called pthread_exit)"
    call = EXIT_CALLS.get(end.how)
    if call is None:
        return ""
    return f"{call}({end.status})" if end.status is not None else call
