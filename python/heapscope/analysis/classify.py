"""Which frames are the user's code, which are the runtime's, which are entry points.

The call graph draws every frame but ranks only user code: entry points lie on every
path and runtime frames (allocator, libc, libstdc++, the loader, MPI and OpenMP
runtimes, and code instantiated from system headers such as std::vector or Eigen
internals) on most, so ranking them would tell the developer nothing.

Rules, in order:
  1. entry point: the function is one of ENTRY_FUNCTIONS (main, _start, ...);
  2. runtime: the module is a shared library in a system directory, or one of
     heapscope's own libraries;
  3. runtime: the source file is a system header (/usr/include/..., a compiler's
     include directory);
  4. runtime: no source file and the name is a standard-library or Eigen symbol
     (std::, __gnu_cxx::, operator new ...): a template instantiated in the program
     that lost its debug info;
  5. user code otherwise (the main program and libraries outside system directories).
"""
ENTRY = "entry"
RUNTIME = "runtime"
USER = "user"

ENTRY_FUNCTIONS = frozenset({
    "main", "_start", "__libc_start_main", "__libc_start_call_main", "__libc_start_main_impl",
    "__libc_start_main_alias_2", "_dl_start_user", "_dl_start",
    "MAIN__",  # gfortran's main program
})

SYSTEM_LIBRARY_DIRS = ("/lib/", "/lib32/", "/lib64/", "/usr/lib/", "/usr/lib32/", "/usr/lib64/",
                       "/usr/libexec/")
HEAPSCOPE_LIBRARIES = ("libheapscope", "libhsmalloc")
SYSTEM_HEADER_DIRS = ("/usr/include/", "/usr/local/include/c++/", "/usr/lib/gcc/",
                      "/usr/lib/llvm")
RUNTIME_SYMBOL_PREFIXES = ("std::", "__gnu_cxx::", "__cxxabiv1::", "__cxa_", "operator new",
                           "operator delete", "Eigen::", "void std::", "void* std::",
                           "__libc_", "__GI_", "_dl_", "_IO_")


def classify(function: str, file: str, module: str, main_executable: str = "") -> str:
    """ENTRY, RUNTIME or USER for one symbolized frame."""
    if function in ENTRY_FUNCTIONS:
        return ENTRY
    base = module.rsplit("/", 1)[-1]
    if base.startswith(HEAPSCOPE_LIBRARIES):
        return RUNTIME
    is_main = bool(main_executable) and module == main_executable
    if module and not is_main and ".so" in base and module.startswith(SYSTEM_LIBRARY_DIRS):
        return RUNTIME
    if file:
        if file.startswith(SYSTEM_HEADER_DIRS) or "/include/c++/" in file:
            return RUNTIME
        return USER
    if function.startswith(RUNTIME_SYMBOL_PREFIXES):
        return RUNTIME
    return USER


def classify_frame(frame, main_executable: str = "") -> str:
    return classify(frame.function, frame.file, frame.module, main_executable)
