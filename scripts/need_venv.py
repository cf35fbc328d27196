"""The benchmark scripts import heapscope and what it needs (numpy first): under a
Python without them (Debian's own python3), run the script again under the project's
venv (made by scripts/setup.sh), or say in one line how to make it."""
import os
import sys
from pathlib import Path


def reexec_in_venv() -> None:
    try:
        import numpy  # noqa: F401
        return
    except ImportError:
        pass
    venv = Path(__file__).resolve().parent.parent / ".venv"
    python = venv / "bin" / "python"
    if python.exists() and Path(sys.prefix).resolve() != venv.resolve():
        os.execv(str(python), [str(python), *sys.argv])
    sys.exit(f"{Path(sys.argv[0]).name}: this Python lacks heapscope's packages (numpy): "
             f"run `bash scripts/setup.sh`, then `.venv/bin/python {sys.argv[0]}`")
