"""The names of the files the recorder writes, apart from their readers, so that a
command that only tells them apart (`record`, after the run) loads no reader:

    heapscope.<host>.<pid>.hsp, heapscope.<job>.r<rank>.<host>.<pid>.hsp   profiles
    heapscope.<job>.job.hsj (.<n>.hsj when taken)                          job files
"""
import os
import re

JOB_FILE = re.compile(r"^heapscope\.(?P<job>.+)\.job(?:\.\d+)?\.hsj$")
RANK_PROFILE = re.compile(r"^heapscope\.(?P<job>.+)\.r(?P<rank>\d+)\.(?P<host>[^.]+)\.(?P<pid>\d+)\.hsp$")


def is_job_file(path) -> bool:
    return bool(JOB_FILE.match(os.path.basename(str(path))))


def rank_of(path):
    """The MPI rank in a rank profile's name, None for other files."""
    m = RANK_PROFILE.match(os.path.basename(str(path)))
    return int(m.group("rank")) if m else None
