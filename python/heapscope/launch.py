"""Checks shared by the commands that start a user's program (record, run)."""
import os
import shutil

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
