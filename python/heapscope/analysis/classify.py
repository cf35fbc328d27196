"""Which frames are the user's code, which are the runtime's, which are entry points.

The call graph draws every frame but ranks only user code: entry points lie on every
path and runtime frames (allocator, libc, libstdc++, the loader, MPI and OpenMP
runtimes, and code instantiated from system headers such as std::vector or Eigen
internals) on most, so ranking them would tell the developer nothing.

Rules, in order:
  1. entry point: the function is one of ENTRY_FUNCTIONS (main, _start, ...) or a
     Fortran main program;
  2. runtime: the frame is unresolved (function ?? : a library or plugin without
     symbols, or an address in no module): nothing there a developer could edit by name.
     Except in a program without any symbols (`unnamed_program`: every frame of the
     main executable is ??, Debian's stripped pw.x): then its frames are its user code,
     ranked by module and offset (resolved later with its symbols), and the unnamed
     frames of its start and main (program_start) are entry points;
  3. runtime: the module is one of heapscope's own libraries, or a library of a known
     runtime family (RUNTIME_LIBRARIES: libc, libstdc++, OpenMP, MPI, BLAS/LAPACK,
     FFTW ... wherever it is installed), or a shared library in a system directory that
     is not one of the application's own (`app_modules`: a distribution installs an
     application's code as libraries there, e.g. Debian's /usr/lib/.../liblammps.so.0
     and Octave's liboctave.so; callgraph finds them as the libraries the main program
     calls directly, application_modules, and as those built from the program's own
     source package, symbolize.packages: what the code is, not where it lies);
  4. runtime: the source file is a system header (/usr/include/..., a compiler's
     include directory);
  5. runtime: no source file and the name is a standard-library or Eigen symbol
     (std::, __gnu_cxx::, operator new ...): a template instantiated in the program
     that lost its debug info;
  6. user code otherwise (the main program and libraries outside system directories).
"""
from typing import Collection, Iterable, Set

from heapscope.symbolize.names import MAIN_PROGRAM

ENTRY = "entry"
RUNTIME = "runtime"
USER = "user"

ENTRY_FUNCTIONS = frozenset({
    "main", "_start", "__libc_start_main", "__libc_start_call_main", "__libc_start_main_impl",
    "__libc_start_main_alias_2", "_dl_start_user", "_dl_start",
    "MAIN__",  # gfortran's main program
})


def is_entry(function: str) -> bool:
    """main, _start, ..., or a Fortran main program (its symbol, or as the reports name it)."""
    return function in ENTRY_FUNCTIONS or function.startswith(MAIN_PROGRAM)

# Where a thread other than the main one starts (the C library's clone and its thread
# trampoline, as glibc, musl and the BSDs name them): a stack rooted there is a worker's.
THREAD_START_FUNCTIONS = frozenset({
    "clone", "__clone", "__clone2", "__clone3", "start_thread", "thread_start",
    "__thread_start", "_pthread_start", "pthread_start", "__pthread_start",
})

SYSTEM_LIBRARY_DIRS = ("/lib/", "/lib32/", "/lib64/", "/usr/lib/", "/usr/lib32/", "/usr/lib64/",
                       "/usr/libexec/")
HEAPSCOPE_LIBRARIES = ("libheapscope", "libhsmalloc")
SYSTEM_HEADER_DIRS = ("/usr/include/", "/usr/local/include/c++/", "/usr/lib/gcc/",
                      "/usr/lib/llvm")
UNRESOLVED = "??"
# Libraries that are a runtime wherever they are installed (an MPI built in /opt is still
# MPI), by family: the family names the runtime in "allocates per call" patterns.
RUNTIME_LIBRARIES = (
    ("OpenMP runtime", ("libgomp.", "libiomp", "libomp.", "libomptarget")),
    ("MPI", ("libmpi", "libopen-pal", "libopen-rte", "libmpich", "mca_", "libpmix", "libpmi",
             "libucp", "libucs", "libuct", "libucm", "libfabric", "libpsm", "libhwloc",
             "libevent", "libprrte", "libibverbs", "librdmacm")),
    ("C++ standard library", ("libstdc++.", "libc++.", "libc++abi.")),
    ("Fortran runtime", ("libgfortran.", "libquadmath.", "libifcore", "libflang")),
    ("C library", ("libc.", "libc-", "libm.", "libm-", "libpthread", "libdl.", "librt.",
                   "ld-linux", "ld64.", "libgcc_s.")),
    ("Python", ("libpython",)),
    ("BLAS/LAPACK", ("libblas", "libcblas", "liblapack", "libopenblas", "libmkl_", "libatlas",
                     "libtatlas", "libsatlas", "libblis", "libflexiblas", "libscalapack",
                     "libessl", "libsci_", "libarmpl", "libelpa")),
    ("FFTW", ("libfftw3",)),
    ("GPU runtime", ("libcudart", "libcuda.", "libcublas", "libcufft", "libcusparse", "libnvrtc",
                     "libamdhip64", "libhsa-runtime", "librocblas", "libOpenCL")),
    ("compiler runtime", ("libimf", "libsvml", "libirng", "libintlc", "libirc", "libnvf.",
                          "libnvc.", "libnvcpumath", "libnvhpcatm", "libpgmath", "libatomic.")),
)
RUNTIME_SYMBOL_PREFIXES = ("std::", "__gnu_cxx::", "__cxxabiv1::", "__cxa_", "operator new",
                           "operator delete", "Eigen::", "void std::", "void* std::",
                           "__libc_", "__GI_", "_dl_", "_IO_")


def classify(function: str, file: str, module: str, main_executable: str = "",
             app_modules: Collection[str] = (), unnamed: bool = False) -> str:
    """ENTRY, RUNTIME or USER for one symbolized frame; unnamed: the main executable
    has no symbols (unnamed_program)."""
    if is_entry(function):
        return ENTRY
    if not function or function == UNRESOLVED:
        return USER if unnamed and main_executable and module == main_executable else RUNTIME
    if not application_code(module, main_executable, app_modules):
        return RUNTIME
    if file:
        if file.startswith(SYSTEM_HEADER_DIRS) or "/include/c++/" in file:
            return RUNTIME
        return USER
    if function.startswith(RUNTIME_SYMBOL_PREFIXES):
        return RUNTIME
    return USER


def application_code(module: str, main_executable: str = "",
                     app_modules: Collection[str] = ()) -> bool:
    """Whether code in `module` is the application's by where it comes from (rule 3): not
    heapscope's, not a known runtime, not another package's library in a system
    directory. Its unnamed frames are the application's too, though never ranked."""
    base = module.rsplit("/", 1)[-1]
    if base.startswith(HEAPSCOPE_LIBRARIES) or runtime_family(module):
        return False
    is_main = bool(main_executable) and module == main_executable
    return not (module and not is_main and ".so" in base and module.startswith(SYSTEM_LIBRARY_DIRS)
                and module not in app_modules)


def classify_frame(frame, main_executable: str = "", app_modules: Collection[str] = (),
                   unnamed: bool = False) -> str:
    return classify(frame.function, frame.file, frame.module, main_executable, app_modules,
                    unnamed)


C_START_FUNCTIONS = frozenset({"__libc_start_call_main", "__libc_start_main",
                               "__libc_start_main_impl", "__libc_start_main_alias_2"})


def unnamed_program(stacks: Iterable, main_executable: str) -> bool:
    """Whether the main executable has frames in `stacks` and none of them is named: a
    program stripped of its symbols (and without debug information)."""
    seen = False
    for stack in stacks:
        for frame in stack.frames:
            if main_executable and frame.module == main_executable:
                if frame.function and frame.function != UNRESOLVED:
                    return False
                seen = True
    return seen


def program_start(frames, depth: int) -> bool:
    """Whether the unresolved frame at `depth` (innermost first) is the start of an unnamed
    program or its main: the outermost frame, or the one the C library's start calls."""
    return depth + 1 == len(frames) or frames[depth + 1].function in C_START_FUNCTIONS


def runtime_family(module: str) -> str:
    """The runtime family of a library ("OpenMP runtime", "MPI", ...), or "" when the
    module is not a known runtime library."""
    base = module.rsplit("/", 1)[-1]
    if ".so" not in base:
        return ""
    for family, prefixes in RUNTIME_LIBRARIES:
        if base.startswith(prefixes):
            return family
    return ""


def package_candidates(stacks: Iterable, main_executable: str = "") -> Set[str]:
    """The shared libraries in frames of `stacks` whose kind the package they come from
    decides (rule 3): in a system directory, not a known runtime, not heapscope's."""
    out: Set[str] = set()
    seen: Set[str] = set()
    for stack in stacks:
        for frame in stack.frames:
            module = frame.module
            if module in seen:
                continue
            seen.add(module)
            base = module.rsplit("/", 1)[-1]
            if (module != main_executable and ".so" in base and module.startswith(SYSTEM_LIBRARY_DIRS)
                    and not runtime_family(module) and not base.startswith(HEAPSCOPE_LIBRARIES)):
                out.add(module)
    return out


def application_modules(stacks: Iterable, main_executable: str = "") -> Set[str]:
    """Shared libraries the program's start calls directly: walking a stack from its
    outermost frame past the entry points, the main executable's own frames and the C
    library, the first frame's library is the application's own code, wherever it is
    installed (Debian's lmp calls liblammps.so.0 from main; gmsh's main tail-calls
    libgmsh, so libc's __libc_start_call_main is the caller), unless it is a known
    runtime library (MPI_Init called from main does not make libmpi the application's).
    Stacks of threads (start_thread, no entry point) say nothing."""
    found: Set[str] = set()
    for stack in stacks:
        started = False
        for frame in reversed(stack.frames):          # outermost first
            base = frame.module.rsplit("/", 1)[-1]
            in_main = bool(main_executable) and frame.module == main_executable
            if is_entry(frame.function) or in_main:
                started = True
                continue
            if runtime_family(frame.module) == "C library":
                continue
            if (started and ".so" in base and not runtime_family(frame.module)
                    and not base.startswith(HEAPSCOPE_LIBRARIES)):
                found.add(frame.module)
            break
    return found
