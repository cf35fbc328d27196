/*
 * exec_env.c — the environment of an exec'd program: keep it recorded, and give it
 * the MPI layer that matches the MPI it links.
 *
 * At start the recorder saves LD_PRELOAD and every HEAPSCOPE_* variable. Before an
 * exec, the new environment is the program's (its envp, or environ for execv/execvp),
 * plus each saved variable it lacks (`env -i`, a build tool that cleans the
 * environment of its jobs), with LD_PRELOAD rebuilt as
 *
 *     libheapscope.so [the MPI layer] <the rest, as it was>
 *
 * The MPI layer: with HEAPSCOPE_MPI=auto (what `heapscope record` sets without --mpi)
 * the layer of the MPI the exec'd program links (core/exec_mpi.c: Open MPI's
 * libheapscope_mpi.so, MPICH's libheapscope_mpich.so, both beside libheapscope.so),
 * and none for a program linking no MPI (mpirun, orted, hydra_pmi_proxy, a shell);
 * HEAPSCOPE_MPI=openmpi|mpich: that layer for every program linking an MPI. Unset
 * (LD_PRELOAD set by hand, or `record --mpi`, which preloads one layer into the whole
 * job): LD_PRELOAD keeps its layers. Everything is built on the caller's stack (the
 * hooks size it), no allocation.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/lifecycle.h"
#include "core/pool.h"

static const char *saved[HSR_EXEC_ENV_SAVED]; /* "NAME=value", from our environment at start */
static int nsaved;
static const char *self_path = ""; /* libheapscope.so, as the dynamic linker found it */
static int mpi_mode;               /* 0 off, -1 auto, else the forced HSR_MPI_* family */
static const char *layers[3];      /* [HSR_MPI_OPENMPI], [HSR_MPI_MPICH]: built layers */
static const char *const layer_names[3] = {"", "libheapscope_mpi.so", "libheapscope_mpich.so"};

extern char **environ;

/* The layer file beside libheapscope.so, if it was built. */
static const char *layer_beside_self(const char *name)
{
    const char *slash = strrchr(self_path, '/');
    char buf[4096];
    size_t dir = slash ? (size_t)(slash - self_path) + 1 : 0;
    if (dir + strlen(name) + 1 > sizeof buf)
        return NULL;
    memcpy(buf, self_path, dir);
    strcpy(buf + dir, name);
    return access(buf, R_OK) == 0 ? hsr_pool_strdup(buf) : NULL;
}

void hsr_exec_env_init(void)
{
    Dl_info self;
    if (dladdr((void *)hsr_exec_env_init, &self) && self.dli_fname)
        self_path = hsr_pool_strdup(self.dli_fname);
    if (!self_path)
        self_path = "";
    for (char **e = environ; e && *e && nsaved < HSR_EXEC_ENV_SAVED; e++)
        if (strncmp(*e, "HEAPSCOPE_", 10) == 0 || strncmp(*e, "LD_PRELOAD=", 11) == 0) {
            const char *copy = hsr_pool_strdup(*e);
            if (copy)
                saved[nsaved++] = copy;
        }
    const char *mode = getenv("HEAPSCOPE_MPI");
    if (mode && strcmp(mode, "auto") == 0)
        mpi_mode = -1;
    else if (mode && strcmp(mode, "openmpi") == 0)
        mpi_mode = HSR_MPI_OPENMPI;
    else if (mode && strcmp(mode, "mpich") == 0)
        mpi_mode = HSR_MPI_MPICH;
    if (mpi_mode && *self_path) {
        layers[HSR_MPI_OPENMPI] = layer_beside_self(layer_names[HSR_MPI_OPENMPI]);
        layers[HSR_MPI_MPICH] = layer_beside_self(layer_names[HSR_MPI_MPICH]);
    }
}

static size_t name_len(const char *var)
{
    const char *eq = strchr(var, '=');
    return eq ? (size_t)(eq - var) + 1 : strlen(var);
}

static char *const *find(char *const envp[], const char *var)
{
    size_t n = name_len(var);
    for (char *const *e = envp; e && *e; e++)
        if (strncmp(*e, var, n) == 0)
            return e;
    return NULL;
}

size_t hsr_exec_env_slots(char *const envp[])
{
    size_t n = 0;
    for (char *const *e = envp; e && *e; e++)
        n++;
    return n + HSR_EXEC_ENV_SAVED + 2;
}

static const char *saved_preload(void)
{
    for (int i = 0; i < nsaved; i++)
        if (strncmp(saved[i], "LD_PRELOAD=", 11) == 0)
            return saved[i];
    return NULL;
}

size_t hsr_exec_env_bytes(char *const envp[])
{
    char *const *preload = find(envp, "LD_PRELOAD=");
    const char *p = preload ? *preload : saved_preload();
    return strlen(self_path) + 4096 + (p ? strlen(p) : 0) + 32;
}

/* The word [w, w+len) of LD_PRELOAD is libheapscope.so or one of its MPI layers. */
static int ours(const char *w, size_t len)
{
    if (len == strlen(self_path) && strncmp(w, self_path, len) == 0)
        return 1;
    for (int f = HSR_MPI_OPENMPI; f <= HSR_MPI_MPICH; f++) {
        size_t n = strlen(layer_names[f]);
        if (len >= n && strncmp(w + len - n, layer_names[f], n) == 0 &&
            (len == n || w[len - n - 1] == '/'))
            return 1;
    }
    return 0;
}

static void put(char *buf, size_t *at, const char *s, size_t n)
{
    if (*at > 11 && buf[*at - 1] != '=')
        buf[(*at)++] = ' ';
    memcpy(buf + *at, s, n);
    *at += n;
}

/* LD_PRELOAD=<us> [<layer>] <the others> into buf; 0, or -1 when it does not fit. */
static int rebuild_preload(const char *old, const char *layer, char *buf, size_t buflen)
{
    size_t need =
        12 + strlen(self_path) + (layer ? strlen(layer) + 1 : 0) + (old ? strlen(old) : 0);
    if (need + 1 > buflen)
        return -1;
    size_t at = 11;
    memcpy(buf, "LD_PRELOAD=", 11);
    put(buf, &at, self_path, strlen(self_path));
    if (layer)
        put(buf, &at, layer, strlen(layer));
    for (const char *p = old ? old + 11 : ""; *p;) {
        size_t skip = strspn(p, " :"), len;
        p += skip;
        len = strcspn(p, " :");
        if (len &&
            (!mpi_mode ? len == strlen(self_path) && !strncmp(p, self_path, len) : ours(p, len)))
            ; /* put back in its place above */
        else if (len)
            put(buf, &at, p, len);
        p += len;
    }
    buf[at] = 0;
    return 0;
}

char *const *hsr_exec_env(char *const envp[], const char *program, char **room, char *buf,
                          size_t buflen)
{
    if (!atomic_load(&hsr_recording) || !*self_path)
        return envp;
    const char *layer = NULL;
    if (mpi_mode) {
        int family = hsr_mpi_family(program);
        if (family && mpi_mode > 0)
            family = mpi_mode;
        layer = family ? layers[family] : NULL;
    }
    char *const *preload = find(envp, "LD_PRELOAD=");
    const char *old = preload ? *preload : saved_preload();
    int rebuilt = rebuild_preload(old, layer, buf, buflen) == 0;
    size_t n = 0;
    for (char *const *e = envp; e && *e; e++)
        room[n++] = (e == preload && rebuilt) ? buf : *e;
    if (!preload && rebuilt)
        room[n++] = buf;
    for (int i = 0; i < nsaved; i++)
        if (!find(envp, saved[i]) && !(rebuilt && strncmp(saved[i], "LD_PRELOAD=", 11) == 0))
            room[n++] = (char *)saved[i];
    room[n] = NULL;
    return room;
}
