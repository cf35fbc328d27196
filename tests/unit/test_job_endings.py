"""How the job report says each rank ended, on synthetic rank files (the format table's
writer): a crash's signal, MPI_Abort's code, a launcher's SIGTERM, a rank number with no
file, and the merged reports' launcher filter."""
from heapscope.analysis import job
from heapscope.analysis.processes import is_launcher, leave_out_launchers
from heapscope.profile import format as fmt
from heapscope.profile import read_profile
from heapscope.render.job_text import render

from helpers.profile_builder import ProfileBuilder, payload


def _rank(tmp_path, rank, reason="exit", ending=None, pid=None):
    pid = pid or 100 + rank
    b = ProfileBuilder(pid=pid, rank=rank, job_id="77", exe="/apps/sim")
    extra = [(fmt.ENDING, payload("ENDING", **ending))] if ending else []
    b.snapshot(sizes=[(0, 1000, rank + 1)], reason=reason, extra=extra)
    return job.summarize(read_profile(b.write(tmp_path / f"heapscope.77.r{rank}.vm.{pid}.hsp")))


def test_endings_of_a_job_with_a_crash_an_abort_and_a_missing_rank(tmp_path):
    crash = dict(kind=fmt.REASON_CRASH, signal=7, si_code=2, error_code=0, fault_address=64)
    abort = dict(kind=fmt.REASON_MPI_ABORT, signal=0, si_code=0, error_code=3, fault_address=0)
    ranks = [_rank(tmp_path, 0, "sigterm"), _rank(tmp_path, 1, "crash", crash),
             _rank(tmp_path, 3, "mpi-abort", abort), _rank(tmp_path, 4)]
    doc = job.build(ranks)
    assert doc["endings"] == dict(crashed=[dict(rank=1, signal="SIGBUS")],
                                  aborted=[dict(rank=3, error_code=3)],
                                  killed=[dict(rank=0, signal="SIGTERM")], unfinalized=[],
                                  no_snapshot=[], no_data=[], missing=[2], missing_count=1)
    assert [(r["rank"], r["ended"], r["text"]) for r in doc["per_rank"]] == [
        (0, "killed", "killed: SIGTERM"), (1, "crash", "crashed: SIGBUS"),
        (3, "mpi-abort", "MPI_Abort(3)"), (4, "exit", "exit")]
    # the crashed and aborted ranks' counts are used as any other's
    assert [r["alloc_blocks"] for r in doc["per_rank"]] == [1, 2, 4, 5]
    # the recorded launcher asked for 6 ranks: 5 has no file either
    b = ProfileBuilder(pid=99, exe="/usr/bin/orterun", cmdline=("mpirun", "-np", "6", "sim"))
    b.snapshot()
    launcher = job.summarize(read_profile(b.write(tmp_path / "heapscope.vm.99.hsp")))
    assert job.build(ranks + [launcher])["endings"]["missing"] == [2, 5]
    text = render(doc)
    for line in ("crashed   rank 1 (SIGBUS)", "aborted   rank 3 called MPI_Abort(3)",
                 "killed    rank 0 by SIGTERM", "missing   rank 2: no profile file"):
        assert line in text, text


def test_launchers_and_the_forks_that_became_them_are_left_out(tmp_path):
    def profile(name, pid, exe, reason="exit"):
        b = ProfileBuilder(pid=pid, exe=exe)
        b.snapshot(sizes=[(0, 24, 1)], reason=reason)
        return read_profile(b.write(tmp_path / name))
    app = profile("a.hsp", 10, "/apps/sim")
    fork = profile("b.hsp", 11, "/apps/sim", reason="exec")     # became orted
    orted = profile("c.hsp", 11, "/usr/bin/orted")
    other = profile("d.hsp", 12, "/apps/sim", reason="exec")    # became something else
    kept, note = leave_out_launchers([app, fork, orted, other])
    assert kept == [app, other]
    assert note == ("left out 1 launcher/daemon process (orted pid 11) and 1 fork of sim before "
                    "it exec'd orted (pid 11, which orted kept): --launchers includes them")
    assert leave_out_launchers([app, fork, orted], include=True) == ([app, fork, orted], None)
    assert leave_out_launchers([orted], include=False) == ([orted], None)   # all there is
    assert all(map(is_launcher, ["/usr/bin/orterun", "mpirun.openmpi", "/usr/bin/mpiexec.hydra",
                                 "hydra_pmi_proxy", "/usr/bin/srun", "prted"]))
    assert not any(map(is_launcher, ["/apps/sim", "mpicc", "/usr/bin/mpi_solver"]))


def test_a_pre_exec_image_of_a_rank_known_only_from_the_job_file():
    """A launcher's fork that exec'd rank 3 (same host and pid) is that rank's pre-exec
    image even though the rank's row, from the job file, carries the job file's start
    time (rank 0's recorder start, before this fork): it was called "not a rank"."""
    from types import SimpleNamespace as NS
    from heapscope.analysis.job_processes import describe_others

    def proc(path, rank, pid, start, reason):
        return NS(path=path, rank=rank, pid=pid, ppid=1, host="vm", exe="/usr/bin/orterun",
                  start_real_ns=start, reason=reason)
    row = proc("out/heapscope.7.job.hsj", 3, 105, 1000, "finalize")
    fork = proc("out/heapscope.vm.105.hsp", -1, 105, 2000, "exec")
    (other,) = describe_others([row], [fork], [row, fork])
    assert (other["role"], other["of_rank"], other["of_pid"]) == ("pre-exec", 3, 105)
    # a rank file of its own, started before the fork, is no successor of it
    own = proc("out/heapscope.7.r3.vm.105.hsp", 3, 105, 1000, "finalize")
    (other,) = describe_others([own], [fork], [own, fork])
    assert other["role"] == "other"
