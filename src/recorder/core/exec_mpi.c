/*
 * exec_mpi.c — which MPI an exec'd program links, read from its ELF dynamic section
 * (DT_NEEDED), so that `heapscope record -- mpirun ...` preloads the matching MPI
 * layer into each rank and into nothing else (core/exec_env.c).
 *
 *   openmpi   a needed library libmpi.so.N (N != 12) or libmpi_*.so (mpifh, usempif08,
 *             cxx: Open MPI's Fortran and C++ bindings)
 *   mpich     libmpich*.so, or libmpi.so.12 / libmpifort.so.12 / libmpicxx.so.12 (the
 *             MPICH ABI: MPICH, Intel MPI, MVAPICH)
 *
 * A library the program needs that is not an MPI is looked into once more (a
 * program linking PETSc, which links MPI), found in the program's RUNPATH/RPATH,
 * LD_LIBRARY_PATH and the system directories. Everything is read with pread into
 * stack buffers: this runs in the exec hook, which must not allocate.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/lifecycle.h"

#define MAX_PHDRS 64
#define MAX_NEEDED 64
#define NAME_MAX_ 256
#define DYN_BATCH 64

static const char *const system_dirs[] = {"/lib/x86_64-linux-gnu",
                                          "/usr/lib/x86_64-linux-gnu",
                                          "/lib/aarch64-linux-gnu",
                                          "/usr/lib/aarch64-linux-gnu",
                                          "/lib64",
                                          "/usr/lib64",
                                          "/lib",
                                          "/usr/lib",
                                          "/usr/local/lib"};

static int family_of_name(const char *name)
{
    if (strncmp(name, "libmpich", 8) == 0)
        return HSR_MPI_MPICH;
    if (strncmp(name, "libmpi", 6) != 0)
        return HSR_MPI_NONE;
    if (strstr(name, ".so.12"))
        return HSR_MPI_MPICH;
    if (strncmp(name, "libmpi.so", 9) == 0 || name[6] == '_')
        return HSR_MPI_OPENMPI;
    return HSR_MPI_NONE; /* libmpifoo: not an MPI library we know */
}

/* Libraries every program needs: never an MPI, not worth opening. */
static int is_base_library(const char *name)
{
    static const char *const base[] = {"libc.so",     "libm.so",  "libdl.so",    "libpthread",
                                       "librt.so",    "ld-linux", "libgcc_s",    "libstdc++",
                                       "libgfortran", "libz.so",  "libheapscope"};
    for (size_t i = 0; i < sizeof base / sizeof *base; i++)
        if (strncmp(name, base[i], strlen(base[i])) == 0)
            return 1;
    return 0;
}

/* vaddr -> file offset through the PT_LOAD segments; 0 when not mapped. */
static uint64_t file_offset(const Elf64_Phdr *ph, int n, uint64_t vaddr)
{
    for (int i = 0; i < n; i++)
        if (ph[i].p_type == PT_LOAD && vaddr >= ph[i].p_vaddr &&
            vaddr < ph[i].p_vaddr + ph[i].p_filesz)
            return vaddr - ph[i].p_vaddr + ph[i].p_offset;
    return 0;
}

static int read_string(int fd, uint64_t at, char *out, size_t cap)
{
    ssize_t n = pread(fd, out, cap - 1, (off_t)at);
    if (n <= 0)
        return -1;
    out[n] = 0;
    return memchr(out, 0, (size_t)n) ? 0 : -1;
}

static int find_library(const char *name, const char *runpath, char *out, size_t cap);
static int family_of_file(const char *path, int depth);

/* The family of the needed libraries of an open ELF file (0 when none). */
static int family_of_fd(int fd, int depth)
{
    Elf64_Ehdr eh;
    if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) ||
        eh.e_phnum == 0 || eh.e_phnum > MAX_PHDRS)
        return HSR_MPI_NONE;
    Elf64_Phdr ph[MAX_PHDRS];
    size_t phbytes = (size_t)eh.e_phnum * sizeof *ph;
    if (pread(fd, ph, phbytes, (off_t)eh.e_phoff) != (ssize_t)phbytes)
        return HSR_MPI_NONE;
    const Elf64_Phdr *dyn = NULL;
    for (int i = 0; i < eh.e_phnum; i++)
        if (ph[i].p_type == PT_DYNAMIC)
            dyn = &ph[i];
    if (!dyn)
        return HSR_MPI_NONE; /* static */
    uint64_t strtab = 0, runpath = 0, needed[MAX_NEEDED];
    int nneeded = 0, has_runpath = 0;
    Elf64_Dyn d[DYN_BATCH];
    for (uint64_t off = 0; off < dyn->p_filesz; off += sizeof d) {
        ssize_t got = pread(fd, d, sizeof d, (off_t)(dyn->p_offset + off));
        if (got <= 0)
            break;
        int end = 0;
        for (size_t i = 0; i < (size_t)got / sizeof *d && !end; i++) {
            if (d[i].d_tag == DT_NULL)
                end = 1;
            else if (d[i].d_tag == DT_STRTAB)
                strtab = d[i].d_un.d_ptr;
            else if (d[i].d_tag == DT_NEEDED && nneeded < MAX_NEEDED)
                needed[nneeded++] = d[i].d_un.d_val;
            else if (d[i].d_tag == DT_RUNPATH || (d[i].d_tag == DT_RPATH && !has_runpath)) {
                runpath = d[i].d_un.d_val;
                has_runpath = 1;
            }
        }
        if (end)
            break;
    }
    uint64_t str = file_offset(ph, eh.e_phnum, strtab);
    if (!str)
        return HSR_MPI_NONE;
    char rp[1024] = "";
    if (has_runpath && read_string(fd, str + runpath, rp, sizeof rp) != 0)
        rp[0] = 0;
    char name[NAME_MAX_];
    for (int i = 0; i < nneeded; i++) /* the program's own MPI first */
        if (read_string(fd, str + needed[i], name, sizeof name) == 0 && family_of_name(name))
            return family_of_name(name);
    for (int i = 0; depth > 0 && i < nneeded; i++) {
        char lib[4096];
        if (read_string(fd, str + needed[i], name, sizeof name) != 0 || is_base_library(name) ||
            find_library(name, rp, lib, sizeof lib) != 0)
            continue;
        int f = family_of_file(lib, depth - 1);
        if (f)
            return f;
    }
    return HSR_MPI_NONE;
}

static int family_of_file(const char *path, int depth)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return HSR_MPI_NONE;
    int f = family_of_fd(fd, depth);
    close(fd);
    return f;
}

/* dir/name into out if that file exists. */
static int try_dir(const char *dir, size_t dirlen, const char *name, char *out, size_t cap)
{
    size_t n = strlen(name);
    if (dirlen == 0 || dirlen + n + 2 > cap)
        return -1;
    memcpy(out, dir, dirlen);
    out[dirlen] = '/';
    memcpy(out + dirlen + 1, name, n + 1);
    return access(out, R_OK);
}

/* Each entry of a ':' list ("$ORIGIN" entries are skipped). */
static int try_list(const char *list, const char *name, char *out, size_t cap)
{
    for (const char *p = list; p && *p;) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        if (len && p[0] != '$' && try_dir(p, len, name, out, cap) == 0)
            return 0;
        p = colon ? colon + 1 : NULL;
    }
    return -1;
}

static int find_library(const char *name, const char *runpath, char *out, size_t cap)
{
    if (strchr(name, '/'))
        return strlen(name) < cap ? (memcpy(out, name, strlen(name) + 1), 0) : -1;
    if (try_list(runpath, name, out, cap) == 0 ||
        try_list(getenv("LD_LIBRARY_PATH"), name, out, cap) == 0)
        return 0;
    for (size_t i = 0; i < sizeof system_dirs / sizeof *system_dirs; i++)
        if (try_dir(system_dirs[i], strlen(system_dirs[i]), name, out, cap) == 0)
            return 0;
    return -1;
}

int hsr_mpi_family(const char *path) { return path ? family_of_file(path, 1) : HSR_MPI_NONE; }

/* execvp's search: the first executable file/PATH entry, into out. */
const char *hsr_exec_resolve(const char *file, char *out, size_t cap)
{
    if (!file || strchr(file, '/'))
        return file;
    const char *path = getenv("PATH");
    for (const char *p = path ? path : "/bin:/usr/bin"; p && *p;) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        if (try_dir(len ? p : ".", len ? len : 1, file, out, cap) == 0 && access(out, X_OK) == 0)
            return out;
        p = colon ? colon + 1 : NULL;
    }
    return NULL;
}
