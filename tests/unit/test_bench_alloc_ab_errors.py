"""scripts/bench_alloc_ab.py without its measuring helper: one line and exit 1, no traceback
(it used to start the rounds and die in subprocess with a FileNotFoundError)."""
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_alloc_ab.py"


def test_missing_hs_measure_is_one_line(tmp_path):
    env = dict(os.environ, HEAPSCOPE_NATIVE_DIR=str(tmp_path / "no-native"))
    r = subprocess.run([sys.executable, str(SCRIPT), "1", "/bin/true", "--", "glibc=none"],
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "hs-measure is missing" in lines[0] and "Traceback" not in r.stderr
