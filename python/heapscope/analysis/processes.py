"""A profile's process as the documents carry it: who ran, where, which snapshot."""
from heapscope.profile.ending import describe as describe_ending, describe_exit
from heapscope.profile.model import Profile


def describe(p: Profile) -> dict:
    """A profile's process, as the JSON documents carry it."""
    return dict(file=p.path, pid=p.pid, ppid=p.ppid, rank=p.rank if p.rank >= 0 else None,
                host=p.host, exe=p.exe,
                cmdline=list(p.cmdline), job_id=p.job_id, snapshot=p.snapshot_seq,
                reason=p.snapshot_reason, complete=p.complete, threads=p.total_threads,
                lost_stacks=p.lost_stacks, settings=dict(p.settings), warnings=list(p.warnings),
                ending=_ending(p), process_end=_process_end(p))


def _process_end(p: Profile):
    """How the process ended (PROCESS_END of its final snapshot), or None."""
    e = p.process_end
    if e is None:
        return None
    return dict(how=e.how, status=e.status, mpi_unfinalized=e.mpi_unfinalized, orphaned=e.orphaned,
                text=describe_exit(e))


def _ending(p: Profile):
    """A crash (its signal) or MPI_Abort (its code), or None for any other ending."""
    e = p.ending
    if e is None:
        return None
    return dict(kind=e.kind, signal=e.signal, signal_name=e.signal_name, si_code=e.si_code,
                error_code=e.error_code, fault_address=e.fault_address, text=describe_ending(e))


# MPI launchers and their daemons: they start the ranks, their allocations are not the
# program's. By executable name (the real path's, so mpirun -> orterun is found too).
LAUNCHERS = frozenset({"mpirun", "mpiexec", "orterun", "orted", "prterun", "prted", "prte",
                       "prun", "hydra_pmi_proxy", "mpiexec.hydra", "mpiexec.gforker", "srun",
                       "slurmstepd", "pmix_server", "ompi-server"})


def is_launcher(exe: str) -> bool:
    """Whether the executable is an MPI launcher or daemon (mpirun.openmpi and
    mpiexec.mpich count: Debian's names for them)."""
    name = exe.rsplit("/", 1)[-1]
    return name in LAUNCHERS or name.split(".", 1)[0] in ("mpirun", "mpiexec")


def leave_out_launchers(profiles, include: bool = False, even_all: bool = False):
    """(the profiles to merge, a one-line note or None): the launcher and daemon
    processes left out, with the fork that exec'd each (same host and pid, snapshot
    "exec"), unless `include` or unless they are all there is (but for `even_all`: the
    ranks' figures are elsewhere, in a job file)."""
    daemons = {(p.host, p.pid) for p in profiles if is_launcher(p.exe)}
    left = [p for p in profiles if is_launcher(p.exe) or
            (p.snapshot_reason == "exec" and (p.host, p.pid) in daemons)]
    if include or not left or (len(left) == len(profiles) and not even_all):
        return list(profiles), None
    out = [p for p in profiles if not any(p is q for q in left)]
    named = [p for p in left if is_launcher(p.exe)]
    names = ", ".join(f"{p.exe.rsplit('/', 1)[-1]} pid {p.pid}" for p in named[:4])
    n, forks = len(named), len(left) - len(named)
    return out, (f"left out {n} launcher/daemon process{'es' if n != 1 else ''} ({names}"
                 f"{', ...' if n > 4 else ''})"
                 + (f" and the fork{'s' if forks != 1 else ''} that exec'd "
                    f"{'them' if n != 1 else 'it'}" if forks else "")
                 + f": --launchers includes {'them' if n + forks != 1 else 'it'}")
