"""Reading heapscope profile files (format: src/format/profile_format.h).

    from heapscope.profile import read_profile, load_profiles
    p = read_profile("run/host.1234.hsp")
    p.size_counts[("local", 12)]      # allocations of 12 bytes in region "local"

Modules: format (constants mirrored from the C header), chunks (framing, crc,
truncation), decode (payload layouts), model (Profile and friends), reader
(snapshot choice, read_profile, load_profiles), sizespec (size lists "12,24,100-200").
"""
from heapscope.profile.model import Module, Profile, Region, StackType
from heapscope.profile.reader import PROFILE_SUFFIX, load_profiles, read_profile

__all__ = ["Module", "Profile", "Region", "StackType", "read_profile", "load_profiles",
           "PROFILE_SUFFIX"]
