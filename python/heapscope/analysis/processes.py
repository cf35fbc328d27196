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


def exec_successors(profiles) -> dict:
    """id(p) -> the profile p became by exec, for the pre-exec images among `profiles`:
    a file whose snapshot was taken at an exec ("exec"), with the same host and pid as
    a file that started at or after it (the exec'd program keeps the pid)."""
    by_pid: dict = {}
    for p in profiles:
        by_pid.setdefault((p.host, p.pid), []).append(p)
    out = {}
    for p in profiles:
        if p.snapshot_reason != "exec":
            continue
        later = [q for q in by_pid[(p.host, p.pid)] if q is not p and q.start_real_ns >= p.start_real_ns]
        if later:
            out[id(p)] = min(later, key=lambda q: q.start_real_ns)
    return out


def leave_out_launchers(profiles, include: bool = False, even_all: bool = False):
    """(the profiles to merge, a one-line note or None): left out, unless `include` or
    unless they are all there is, the launcher and daemon processes, the forks that
    exec'd them, and the launchers' forks that exec'd the program (a rank's pre-exec
    image: mpirun or orted forks, sets the rank's environment, then execs; its file has
    the launcher's name but is not a launcher). The note counts and names each kind as
    what it is. `even_all`: left out even when they are all there is (the ranks' figures
    are elsewhere, in a job file)."""
    became = exec_successors(profiles)
    daemons = [p for p in profiles if is_launcher(p.exe) and id(p) not in became]
    into_daemon = [p for p in profiles if id(p) in became and is_launcher(became[id(p)].exe)]
    into_program = [p for p in profiles if id(p) in became and is_launcher(p.exe)
                    and not is_launcher(became[id(p)].exe)]
    left = {id(p) for p in daemons + into_daemon + into_program}
    if include or not left or (len(left) == len(profiles) and not even_all):
        return list(profiles), None
    return [p for p in profiles if id(p) not in left], _left_out_note(daemons, into_daemon,
                                                                     into_program, became)


def _names(profiles) -> str:
    return "/".join(sorted({p.exe.rsplit("/", 1)[-1] for p in profiles}))


def _left_out_note(daemons, into_daemon, into_program, became) -> str:
    parts = []
    n = len(daemons)
    if n:
        names = ", ".join(f"{p.exe.rsplit('/', 1)[-1]} pid {p.pid}" for p in daemons[:4])
        parts.append(f"{n} launcher/daemon process{'es' if n != 1 else ''} ({names}"
                     f"{', ...' if n > 4 else ''})")
    for forks in (into_daemon, into_program):
        if not forks:
            continue
        k = len(forks)
        pids = ", ".join(str(p.pid) for p in forks[:4]) + (", ..." if k > 4 else "")
        became_ = _names(became[id(p)] for p in forks)
        parts.append(f"{k} fork{'s' if k != 1 else ''} of {_names(forks)} before "
                     f"{'they' if k != 1 else 'it'} exec'd {became_} (pid{'s' if k != 1 else ''} "
                     f"{pids}, which {became_} kept)")
    total = n + len(into_daemon) + len(into_program)
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"left out {listed}: --launchers includes {'them' if total != 1 else 'it'}"
