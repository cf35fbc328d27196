"""Starting a user's program, shared by the commands that do it (record, run).

With os.fork and os.execvpe rather than subprocess (and a PATH search of its own rather
than shutil's): importing those costs `record` more start-up time than all else it does
before the program starts. The program inherits heapscope's descriptors as they are (a
launcher's PMI_FD, a shell's redirections), as it would without heapscope.
"""
import ctypes
import errno
import os
import signal

from heapscope.errors import HeapscopeError


def program_words(words, missing: str) -> list:
    """The program and its arguments from what argparse left (REMAINDER): the words after
    an optional "--". An option before the program is an unknown option of ours; no
    program at all is the error `missing`."""
    command = list(words)
    if command[:1] == ["--"]:
        command = command[1:]
    elif command and command[0].startswith("-"):
        raise HeapscopeError(f"unknown option {command[0]!r} (put the program after --)")
    if not command:
        raise HeapscopeError(missing)
    return command


def check_program(program: str) -> None:
    """One clear error, with the shell's exit codes: 127 when there is no such file, 126
    when there is one that cannot be run (a directory, a file without execute permission)."""
    if "/" in program:
        if not os.path.exists(program):
            raise HeapscopeError(f"program not found: {program}", exit_code=127)
        if os.path.isdir(program):
            raise HeapscopeError(f"{program} is a directory, not a program", exit_code=126)
        if not os.path.isfile(program):
            raise HeapscopeError(f"{program} is not a regular file, not a program", exit_code=126)
        if not os.access(program, os.X_OK):
            raise HeapscopeError(f"program is not executable: {program} (no execute permission)",
                                 exit_code=126)
    elif which(program) is None:
        raise HeapscopeError(f"program not found in PATH: {program}", exit_code=127)


def which(program: str, path=None):
    """The file the shell would run for `program` (a name without a slash) in PATH (or
    `path`), as shutil.which finds it; None when there is none."""
    if "/" in program:
        return program if os.path.isfile(program) and os.access(program, os.X_OK) else None
    for directory in (path if path is not None else os.environ.get("PATH", os.defpath)).split(":"):
        candidate = os.path.join(directory or ".", program)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


PR_SET_PDEATHSIG = 1
PARENT_DEATH_SIGNAL = signal.SIGTERM   # the program's recorder writes its snapshot on it


def _libc():
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def _child_setup(old_mask, libc, parent):
    """In the child, before exec: the signal mask heapscope had, the default action of
    SIGPIPE and SIGXFSZ (Python ignores both, and an ignored signal stays ignored across
    exec: `prog | head` would see EPIPE instead of dying of SIGPIPE; subprocess restores
    them too), and SIGTERM when heapscope dies (PR_SET_PDEATHSIG, kept across exec), so
    a killed `heapscope record` does not leave the program running unseen; if heapscope
    died already, now."""
    for number in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(number, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
    if libc is not None:
        libc.prctl(PR_SET_PDEATHSIG, int(PARENT_DEATH_SIGNAL), 0, 0, 0)
        if os.getppid() != parent:
            os.kill(os.getpid(), PARENT_DEATH_SIGNAL)


def _start(command, env, old_mask, libc, parent) -> int:
    """Fork and exec the program (PATH searched in env's PATH, as the shell would); its
    pid. An exec that fails comes back as the OSError it raised in the child, through a
    close-on-exec pipe (as subprocess does)."""
    read, write = os.pipe()   # both close-on-exec (Python's default)
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            _child_setup(old_mask, libc, parent)
            os.execvpe(command[0], command, env)
        except OSError as exc:
            os.write(write, f"{exc.errno}:{exc.strerror or ''}".encode())
        except BaseException:   # never back into heapscope's own code in the child
            os.write(write, f"{errno.EINVAL}:cannot start the program".encode())
        finally:
            os._exit(127)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        failure = pipe.read()
    if failure:
        os.waitpid(pid, 0)
        number, _, text = failure.decode(errors="replace").partition(":")
        raise OSError(int(number), text)
    return pid


def run_forwarding(command, env, forwarded=(signal.SIGINT, signal.SIGTERM)) -> int:
    """Run the program; returns its exit code (128+N if killed by signal N).

    The `forwarded` signals sent to heapscope by another process (kill, a batch
    scheduler) are passed on to the program. Those typed at the terminal already reach
    it (same process group), so they are not sent twice (si_code SI_KERNEL). The
    program gets SIGTERM if heapscope itself dies (_child_setup).
    """
    waited = set(forwarded) | {signal.SIGCHLD}
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, waited)
    libc, parent = _libc(), os.getpid()
    try:
        child = _start(command, env, old_mask, libc, parent)
    except OSError as exc:
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        # as the shell: 127 when nothing is there, 126 when something is but cannot be run
        # (e.g. ENOEXEC, a text file without #! line)
        code = 127 if exc.errno == errno.ENOENT else 126
        raise HeapscopeError(f"cannot run {command[0]}: {exc.strerror}", exit_code=code) from None
    try:
        while True:
            done, status = os.waitpid(child, os.WNOHANG)
            if done:
                break
            info = signal.sigtimedwait(waited, 1.0)
            if info and info.si_signo in forwarded and info.si_code != 0x80:  # 0x80: SI_KERNEL
                os.kill(child, info.si_signo)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
    rc = os.waitstatus_to_exitcode(status)
    return 128 - rc if rc < 0 else rc
