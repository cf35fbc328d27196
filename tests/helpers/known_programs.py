"""Small facts about the programs in tests/programs/ that several tests need."""
import subprocess


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
