"""scripts/bench_mimalloc_suite.py's tables: a run of hsmalloc against its secure mode
only (--allocators hsmalloc,hsmalloc-secure, no peer) writes the secure mode's ratios
to the markdown after each round, with no table against peers it did not run."""
import importlib.util
from pathlib import Path
from types import SimpleNamespace

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_mimalloc_suite.py"


def load_script():
    spec = importlib.util.spec_from_file_location("bench_mimalloc_suite", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run(cpu, rss):
    return {"time": cpu, "wall": cpu, "cpu": cpu, "cpu_work": cpu, "rss_mib": rss,
            "minflt": 100}


def test_secure_against_plain_without_peers(tmp_path):
    suite = load_script()
    names = ["hsmalloc", "hsmalloc-secure"]
    results = {"glibc-simple": {"hsmalloc": [run(1.0, 2.0), run(1.2, 2.0)],
                                "hsmalloc-secure": [run(1.5, 2.1), run(1.7, 2.1)]},
               "cfrac": {"hsmalloc": [run(2.0, 3.0)], "hsmalloc-secure": [run(2.2, 3.3)]}}
    args = SimpleNamespace(checkout="/tmp/mb", warmup=1, procs=2, metric="cpu",
                           markdown=str(tmp_path / "t.md"), json="")
    suite.write(args, names, results, 1, "2026-01-01 00:00:00 UTC", 1.0, quiet=True)
    text = (tmp_path / "t.md").read_text()
    assert "(no table against the peers: --allocators ran hsmalloc)" in text
    # medians 1.6 / 1.1 and 2.2 / 2.0: geomean sqrt(1.4545 * 1.1) = 1.265, worst glibc-simple
    assert "secure hsmalloc / hsmalloc (cpu_work): geomean 1.265, worst 1.45 (glibc-simple)" in text
    assert "secure hsmalloc / hsmalloc (rss_mib): geomean 1.075, worst 1.10 (cfrac)" in text


def test_a_relative_native_dir_still_finds_its_programs(tmp_path, monkeypatch):
    """The rows run in the programs' own directory: a relative HEAPSCOPE_NATIVE_DIR was
    looked up from there, and the first round died with FileNotFoundError on hs-measure."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HEAPSCOPE_NATIVE_DIR", "rel/native")
    suite = load_script()
    assert suite.NATIVE == tmp_path / "rel" / "native"
