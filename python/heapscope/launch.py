"""Starting a user's program, shared by the commands that do it (record, run)."""
import os
import shutil
import signal
import subprocess

from heapscope.errors import HeapscopeError


def check_program(program: str) -> None:
    """One clear error, with the shell's exit codes (127 missing, 126 not executable)."""
    if "/" in program:
        if not os.path.isfile(program):
            raise HeapscopeError(f"program not found: {program}", exit_code=127)
        if not os.access(program, os.X_OK):
            raise HeapscopeError(f"program is not executable: {program}", exit_code=126)
    elif shutil.which(program) is None:
        raise HeapscopeError(f"program not found in PATH: {program}", exit_code=127)


def run_forwarding(command, env, forwarded=(signal.SIGINT, signal.SIGTERM)) -> int:
    """Run the program; returns its exit code (128+N if killed by signal N).

    The `forwarded` signals sent to heapscope by another process (kill, a batch
    scheduler) are passed on to the program. Those typed at the terminal already reach
    it (same process group), so they are not sent twice (si_code SI_KERNEL).
    """
    waited = set(forwarded) | {signal.SIGCHLD}
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, waited)
    try:
        child = subprocess.Popen(
            command, env=env,
            preexec_fn=lambda: signal.pthread_sigmask(signal.SIG_SETMASK, old_mask))
    except OSError as exc:
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        raise HeapscopeError(f"cannot run {command[0]}: {exc.strerror}", exit_code=127) from None
    try:
        while child.poll() is None:
            info = signal.sigtimedwait(waited, 1.0)
            if info and info.si_signo in forwarded and info.si_code != 0x80:  # 0x80: SI_KERNEL
                child.send_signal(info.si_signo)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
    rc = child.returncode
    return 128 - rc if rc < 0 else rc
