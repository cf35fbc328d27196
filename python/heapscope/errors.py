"""The one exception type the CLI turns into a one-line message and a non-zero exit."""


class HeapscopeError(Exception):
    """A user-facing error: bad input, missing file, corrupt profile, missing tool.

    `exit_code` is what the heapscope command returns (2 unless said otherwise).
    """

    def __init__(self, message: str, exit_code: int = 2):
        super().__init__(message)
        self.exit_code = exit_code
