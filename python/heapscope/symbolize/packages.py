"""Which of a program's libraries are built from the program's own source package: the
application's code wherever the distribution installs it (analysis/classify.py).

Debian ships Octave as /usr/bin/octave-cli with liboctinterp.so and liboctave.so in
/usr/lib/x86_64-linux-gnu/octave/7.3.0/, all three from the source package `octave`;
gmsh's libgmsh.so and LAMMPS' liblammps.so come from the `gmsh` and `lammps` sources.
A library of another source (zlib, HDF5, OpenCASCADE) is someone else's code. The
package database says so: `dpkg-query -S` names each file's binary package, and
`dpkg-query -W` each binary package's source. Where there is no dpkg, or a file belongs
to no package (built from source into /opt or a home directory), nothing is found here
and the other rules of classify decide.
"""
import os
import shutil
import subprocess
from typing import Dict, Iterable, List, Set

TIMEOUT = 30   # seconds for one dpkg-query (it reads the whole package database once)


_KNOWN: Dict[str, str] = {}   # path -> its source package ("" for none), asked once a process


def application_libraries(program: str, modules: Iterable[str]) -> Set[str]:
    """The modules (paths as recorded) built from the same source package as `program`."""
    candidates = {m for m in modules if m.startswith("/") and m != program}
    if not program.startswith("/") or not candidates:
        return set()
    unknown = [p for p in sorted(candidates | {program}) if p not in _KNOWN]
    if unknown:
        found = source_packages(unknown)
        _KNOWN.update((p, found.get(p, "")) for p in unknown)
    mine = _KNOWN[program]
    return {m for m in candidates if mine and _KNOWN[m] == mine}


def _spellings(path: str) -> List[str]:
    """The names a package database may list a file under: as recorded, with the
    symbolic links resolved, and with or without /usr on a merged-/usr system."""
    out = [path, os.path.realpath(path)]
    for p in list(out):
        if p.startswith("/usr/"):
            out.append(p[len("/usr"):])
        elif p.startswith(("/lib", "/bin/", "/sbin/")):
            out.append("/usr" + p)
    return list(dict.fromkeys(out))


def source_packages(paths: Iterable[str]) -> Dict[str, str]:
    """Each path's source package, for the paths that belong to one."""
    if shutil.which("dpkg-query") is None:
        return {}
    spelled = {p: _spellings(p) for p in paths}
    owner = _owners(sorted({s for names in spelled.values() for s in names}))
    binary = {p: next((owner[s] for s in names if s in owner), "") for p, names in spelled.items()}
    source = _sources(sorted({b for b in binary.values() if b}))
    return {p: source.get(b, b) for p, b in binary.items() if b}


def _query(args: List[str]) -> str:
    """dpkg-query's standard output; it exits 1 when some of the names are not found,
    and still prints what it found."""
    try:
        res = subprocess.run(["dpkg-query", *args], capture_output=True, text=True,
                             timeout=TIMEOUT)
    except (OSError, subprocess.SubprocessError):
        return ""
    return res.stdout


def _owners(files: List[str]) -> Dict[str, str]:
    """file -> its (first) binary package, from `dpkg-query -S`: "pkg:arch, pkg2: /path"."""
    out: Dict[str, str] = {}
    if not files:
        return out
    for line in _query(["-S", *files]).splitlines():
        packages, sep, path = line.partition(": /")
        if not sep or packages.startswith("diversion by"):
            continue
        out.setdefault("/" + path, packages.split(",")[0].strip())
    return out


def _sources(binaries: List[str]) -> Dict[str, str]:
    """binary package (as dpkg -S names it, with or without :arch) -> source package."""
    out: Dict[str, str] = {}
    if not binaries:
        return out
    text = _query(["-W", "-f", "${binary:Package}\t${Package}\t${source:Package}\n", *binaries])
    for line in text.splitlines():
        fields = line.split("\t")
        if len(fields) == 3 and fields[2]:
            out[fields[0]] = out[fields[1]] = fields[2]
    return out
