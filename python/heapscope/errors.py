"""The one exception type the CLI turns into a one-line message and a non-zero exit."""


class HeapscopeError(Exception):
    """A user-facing error: bad input, missing file, corrupt profile, missing tool.

    `exit_code` is what the heapscope command returns (2 unless said otherwise).
    """

    def __init__(self, message: str, exit_code: int = 2):
        super().__init__(message)
        self.exit_code = exit_code


class NoSnapshotError(HeapscopeError):
    """A profile file that holds no complete snapshot (the process was killed before its
    first dump, e.g. by SIGKILL, or is still running). Its timeline may still be read
    (heapscope.profile.timeline.read_timeline); `path` is the file."""

    def __init__(self, message: str, path: str):
        super().__init__(message)
        self.path = path
