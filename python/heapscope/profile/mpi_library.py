"""The MPI library a recording ran on: the MPI layer names it at a process's first MPI
call (MPI_LIBRARY, a stream chunk of the rank's profile) and rank 0 copies it into the
job file (JOB_MPI_LIBRARY), with its command line (JOB_COMMAND); format table ids 60-62.

MpiLibrary keeps MPI_Get_library_version's text whole and reads a short name and release
from it ("Open MPI 4.1.4", "MPICH 4.0.2"): the text's first line when it is of no
implementation known here.
"""
import re
from dataclasses import dataclass
from typing import List, Optional

from heapscope.profile import format as fmt

# (implementation, pattern whose group 1 is its release), tried in order on the text
_KNOWN = (
    ("Open MPI", re.compile(r"^Open MPI v?(\S+?),?(?:\s|$)")),
    ("MVAPICH2", re.compile(r"^MVAPICH2? Version\s*:?\s*(\S+)")),
    ("MPICH", re.compile(r"^MPICH Version\s*:?\s*(\S+)")),
    ("Intel MPI", re.compile(r"^Intel\(R\) MPI Library (\S+)")),
)


@dataclass(frozen=True)
class MpiLibrary:
    text: str                # MPI_Get_library_version's text, as the library gave it
    version: int             # MPI_Get_version: the standard it implements
    subversion: int

    @property
    def name(self) -> str:
        """The implementation ("Open MPI", "MPICH" ...), or the text's first line."""
        return self._parsed()[0]

    @property
    def release(self) -> Optional[str]:
        return self._parsed()[1]

    @property
    def label(self) -> str:
        """"Open MPI 4.1.4": what reports print."""
        name, release = self._parsed()
        return f"{name} {release}" if release else name

    def _parsed(self):
        text = self.text.strip()
        for name, pattern in _KNOWN:
            m = pattern.match(text)
            if m:
                return name, m.group(1)
        first = text.splitlines()[0].strip() if text else ""
        return (first or f"an MPI {self.version}.{self.subversion} library"), None

    def document(self) -> dict:
        return dict(name=self.name, release=self.release, label=self.label,
                    standard=f"{self.version}.{self.subversion}", text=self.text)


def decode(payload) -> MpiLibrary:
    """An MPI_LIBRARY or JOB_MPI_LIBRARY payload (Malformed when it disagrees with its layout)."""
    r = fmt.CODECS[fmt.MPI_LIBRARY].decode(payload, whole=True)
    return MpiLibrary(r.text, r.version, r.subversion)


def decode_command(payload) -> List[str]:
    """A JOB_COMMAND payload: argv."""
    r = fmt.CODECS[fmt.JOB_COMMAND].decode(payload, whole=True)
    return r.cmdline.split("\0") if r.cmdline else []


def of_profile(profile) -> Optional[MpiLibrary]:
    """The library a profile (model.Profile) names: its first MPI_LIBRARY chunk, None
    when it has none (no MPI call, or a recorder before them)."""
    chunks = profile.file_chunks.get(fmt.MPI_LIBRARY)
    return decode(chunks[0]) if chunks else None
