"""How a process ended when it was not a plain exit: the ENDING chunk of its snapshot
(format table), written by the recorder's crash handler (a fatal signal) and by the MPI
layer's MPI_Abort. Profile.ending is None for every other snapshot."""
import signal
from typing import Optional

from heapscope.profile import format as fmt
from heapscope.profile.layout import Malformed
from heapscope.profile.model import Ending, Profile


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
    if kind not in ("crash", "mpi-abort"):
        raise Malformed(f"ENDING kind {r.kind} is neither crash nor mpi-abort")
    return Ending(kind=kind, signal=r.signal if kind == "crash" else 0,
                  signal_name=signal_name(r.signal) if kind == "crash" else "",
                  si_code=r.si_code, error_code=r.error_code, fault_address=r.fault_address)


def describe(ending: Optional[Ending]) -> str:
    """One phrase for reports: "crashed: SIGSEGV", "MPI_Abort(17)", or ""."""
    if ending is None:
        return ""
    if ending.kind == "crash":
        return f"crashed: {ending.signal_name}"
    return f"MPI_Abort({ending.error_code})"
