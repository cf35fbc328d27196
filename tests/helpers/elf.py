"""ELF files for the allocator's per-module decisions (tests/allocator)."""
import shutil
import subprocess


def without_comment(path):
    """A copy of `path` beside it without its .comment section (as Debian ships binaries):
    its compiler unknown."""
    out = path.with_name(path.name + "-nocomment")
    shutil.copy(path, out)
    subprocess.run(["objcopy", "--remove-section=.comment", str(out)], check=True)
    return out
