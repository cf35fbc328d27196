"""The names of the files the recorder writes, apart from their readers, so that a
command that only tells them apart (`record`, after the run) loads no reader:

    heapscope.<host>.<pid>.hsp, heapscope.<job>.r<rank>.<host>.<pid>.hsp   profiles
    (.<n>.hsp when the name was taken)
    heapscope.<job>.job.hsj (.<n>.hsj when taken)                          job files
"""
import os
import re

JOB_FILE = re.compile(r"^heapscope\.(?P<job>.+)\.job(?:\.\d+)?\.hsj$")
# a rank's file: heapscope.<job>.r<rank>.<host>.<pid>[.<n>].hsp (.<n> when the name was
# taken: a process that exec'd keeps its pid)
RANK_FILE = re.compile(r"^heapscope\.(?P<job>.+)\.r(?P<rank>\d+)\.(?P<host>[^.]+)\.(?P<pid>\d+)"
                       r"(?:\.\d+)?\.hsp$")


def is_job_file(path) -> bool:
    return bool(JOB_FILE.match(os.path.basename(str(path))))


def rank_of(path):
    """The MPI rank in a rank profile's name, None for other files."""
    m = RANK_FILE.match(os.path.basename(str(path)))
    return int(m.group("rank")) if m else None
