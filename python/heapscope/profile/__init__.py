"""Reading heapscope profile files (format: src/format/profile_format.h, the prose, and
src/format/profile_format.table, every constant and layout).

    from heapscope.profile import read_profile, load_profiles
    p = read_profile("run/host.1234.hsp")
    p.size_counts[("local", 12)]      # allocations of 12 bytes in region "local"

Modules, bottom up (none imports one above it):
  table      parses profile_format.table (also the C generator's parser)
  layout     decodes and encodes a payload by its table layout
  format     the constants (C name minus "HS_") and the codec of every chunk type
  model      Profile and friends: plain data
  framing    header, chunks, crc and truncation: the one framing every reader uses
  decode     the snapshot chunks -> plain values
  tracking   TRACK_* chunks -> Tracking;  trace: the event trace replayed -> Tracking
  timeline   TIMELINE chunks -> Timeline; read_timeline (files without a snapshot)
  reader     snapshot choice, read_profile, profile_files (FILE|DIR... -> files), load_profiles
"""
import importlib

# Loaded on first use (PEP 562), so that a command that reads one module of this package
# (`record` reads a file header with framing) does not pay for the whole reader.
_EXPORTS = {"Module": "model", "Profile": "model", "Region": "model", "StackType": "model",
            "read_profile": "reader", "load_profiles": "reader", "profile_files": "reader",
            "PROFILE_SUFFIX": "reader"}

__all__ = list(_EXPORTS)


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'heapscope.profile' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"heapscope.profile.{module}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
