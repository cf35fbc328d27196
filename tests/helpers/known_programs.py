"""Small facts about the programs in tests/programs/ that several tests need."""
import subprocess
from pathlib import Path

PROGRAMS = Path(__file__).resolve().parent.parent / "programs"


def quiet_libraries(tmp: Path) -> Path:
    """tests/programs/quiet_libs.c: three libraries built without debug information
    (libquiet1.so ... libquiet3.so in tmp, 16-byte blocks 10 times each) and the program
    calling them (built with -g); returns the program's path."""
    for n in (1, 2, 3):
        subprocess.run(["gcc", "-O0", "-fPIC", "-shared", f"-DLIB={n}", "-o", tmp / f"libquiet{n}.so",
                        PROGRAMS / "quiet_libs.c"], check=True)
    program = tmp / "quiet_main"
    subprocess.run(["gcc", "-g", "-O0", "-o", program, PROGRAMS / "quiet_libs.c", f"-L{tmp}",
                    "-lquiet1", "-lquiet2", "-lquiet3", f"-Wl,-rpath,{tmp}"], check=True)
    return program


def glibc_extra(build, size):
    """usable - requested bytes of a block of `size` that glibc gives a fresh process."""
    res = subprocess.run([str(build("rep_usable.c")), str(size)], capture_output=True, text=True, check=True)
    return int(res.stdout) - size


def user_frames(t):
    """(function, line) of the frames up to and including main."""
    out = []
    for f in t["frames"]:
        out.append((f["function"], f["line"]))
        if f["function"] == "main":
            break
    return out
