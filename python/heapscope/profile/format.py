"""Constants of the heapscope profile file format, mirrored from src/format/profile_format.h.

That header is the single source of truth (it also documents every payload);
tests/format/test_format_constants.py parses it and checks that these values agree.
"""

MAGIC = b"HEAPSCPE"
FORMAT_VERSION = 1
HEADER_SIZE = 32
CHUNK_HEADER_SIZE = 16
NO_PARENT = 0xFFFFFFFF

# enum hs_chunk_type
CHUNK_PROCESS = 1
CHUNK_SETTINGS = 2
CHUNK_SNAPSHOT_BEGIN = 3
CHUNK_MODULES = 4
CHUNK_REGIONS = 5
CHUNK_SIZE_COUNTS = 6
CHUNK_API_COUNTS = 7
CHUNK_STACK_TYPES = 8
CHUNK_SNAPSHOT_END = 9
# Types from this one on belong to later issues; the reader keeps them raw.
FIRST_EXTENSION_CHUNK = 10

CHUNK_NAMES = {
    CHUNK_PROCESS: "PROCESS",
    CHUNK_SETTINGS: "SETTINGS",
    CHUNK_SNAPSHOT_BEGIN: "SNAPSHOT_BEGIN",
    CHUNK_MODULES: "MODULES",
    CHUNK_REGIONS: "REGIONS",
    CHUNK_SIZE_COUNTS: "SIZE_COUNTS",
    CHUNK_API_COUNTS: "API_COUNTS",
    CHUNK_STACK_TYPES: "STACK_TYPES",
    CHUNK_SNAPSHOT_END: "SNAPSHOT_END",
}

# enum hs_snapshot_reason, index = value
REASON_EXIT = 0
REASON_API = 1
REASON_SIGTERM = 2
REASON_SIGINT = 3
REASON_SIGUSR1 = 4
REASON_EXEC = 5
REASON_PERIODIC = 6
REASON_NAMES = ["exit", "api", "sigterm", "sigint", "sigusr1", "exec", "periodic"]

# enum hs_api, index = value; the names reports print.
API_MALLOC = 0
API_CALLOC = 1
API_REALLOC = 2
API_REALLOCARRAY = 3
API_POSIX_MEMALIGN = 4
API_ALIGNED_ALLOC = 5
API_MEMALIGN = 6
API_VALLOC = 7
API_PVALLOC = 8
API_FREE = 9
API_FAILED = 10
API_OPERATOR_NEW = 11
API_OPERATOR_DELETE = 12
API_COUNT = 13
API_NAMES = [
    "malloc", "calloc", "realloc", "reallocarray", "posix_memalign", "aligned_alloc",
    "memalign", "valloc", "pvalloc", "free", "failed", "operator_new", "operator_delete",
]

# SETTINGS.unwinder
UNWINDER_NAMES = ["dwarf", "frame-pointers"]


def chunk_name(chunk_type: int) -> str:
    return CHUNK_NAMES.get(chunk_type, f"type-{chunk_type}")


def reason_name(reason: int) -> str:
    return REASON_NAMES[reason] if 0 <= reason < len(REASON_NAMES) else f"reason-{reason}"


def api_name(api: int) -> str:
    return API_NAMES[api] if 0 <= api < len(API_NAMES) else f"api-{api}"
