"""The machine a benchmark ran on, for the reports: CPU, cores, memory, OS, library
versions of the allocators (from dpkg when available)."""
import os
import platform
import shutil
import subprocess
from typing import Dict

from heapscope import allocators


def _first(path: str, key: str) -> str:
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key):
                    return line.split(":", 1)[1].strip() if ":" in line else line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return "unknown"


def _package_version(package: str) -> str:
    if not shutil.which("dpkg-query"):
        return ""
    res = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package],
                         capture_output=True, text=True)
    return res.stdout.strip() if res.returncode == 0 else ""


def describe() -> Dict[str, object]:
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 1
    mem_kib = _first("/proc/meminfo", "MemTotal").split()[0] if os.path.exists("/proc/meminfo") else "0"
    libc = os.confstr("CS_GNU_LIBC_VERSION") if hasattr(os, "confstr") else ""
    versions = {"glibc": (libc or "").replace("glibc ", "")}
    for name, (_files, package) in allocators.PEERS.items():
        if allocators.find_allocator(name):
            versions[name] = _package_version(package) or "installed"
    return {
        "cpu": _first("/proc/cpuinfo", "model name"),
        "cpus": os.cpu_count() or 1,
        "cpus_usable": usable,
        "memory_gib": round(int(mem_kib) / 1024 / 1024, 1) if mem_kib.isdigit() else None,
        "os": _first("/etc/os-release", "PRETTY_NAME"),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "versions": versions,
    }
