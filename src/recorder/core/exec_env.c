/*
 * exec_env.c — keep exec'd children recorded when the program passes its own
 * environment (execve, execle, execvpe, fexecve) without our variables: e.g.
 * `env -i`, or a build tool that cleans the environment of its jobs.
 *
 * At start the recorder saves LD_PRELOAD and every HEAPSCOPE_* variable. Before
 * such an exec, the new environment is the program's, plus each saved variable
 * it lacks; an LD_PRELOAD without libheapscope.so gets it put first. Everything
 * is built on the caller's stack (the hooks size it), no allocation.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

#include "core/lifecycle.h"
#include "core/pool.h"

static const char *saved[HSR_EXEC_ENV_SAVED]; /* "NAME=value", from our environment at start */
static int nsaved;
static const char *self_path = ""; /* libheapscope.so, as the dynamic linker found it */

extern char **environ;

void hsr_exec_env_init(void)
{
    Dl_info self;
    if (dladdr((void *)hsr_exec_env_init, &self) && self.dli_fname)
        self_path = hsr_pool_strdup(self.dli_fname);
    for (char **e = environ; e && *e && nsaved < HSR_EXEC_ENV_SAVED; e++)
        if (strncmp(*e, "HEAPSCOPE_", 10) == 0 || strncmp(*e, "LD_PRELOAD=", 11) == 0) {
            const char *copy = hsr_pool_strdup(*e);
            if (copy)
                saved[nsaved++] = copy;
        }
    if (!self_path)
        self_path = "";
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
    return n + HSR_EXEC_ENV_SAVED + 1;
}

size_t hsr_exec_env_bytes(char *const envp[])
{
    char *const *preload = find(envp, "LD_PRELOAD=");
    return strlen(self_path) + (preload ? strlen(*preload) : 0) + 16;
}

char *const *hsr_exec_env(char *const envp[], char **room, char *buf, size_t buflen)
{
    if (!atomic_load(&hsr_recording) || !*self_path)
        return envp;
    size_t n = 0;
    for (char *const *e = envp; e && *e; e++) {
        room[n] = *e;
        if (strncmp(*e, "LD_PRELOAD=", 11) == 0 && !strstr(*e, self_path) &&
            strlen(self_path) + strlen(*e) + 2 < buflen) {
            /* LD_PRELOAD=<us> <theirs> */
            size_t len = strlen(self_path);
            memcpy(buf, "LD_PRELOAD=", 11);
            memcpy(buf + 11, self_path, len);
            buf[11 + len] = ' ';
            strcpy(buf + 12 + len, *e + 11);
            room[n] = buf;
        }
        n++;
    }
    for (int i = 0; i < nsaved; i++)
        if (!find(envp, saved[i]))
            room[n++] = (char *)saved[i];
    room[n] = NULL;
    return room;
}
