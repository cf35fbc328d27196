/*
 * modules.c — the loaded objects (executable, shared libraries, dlopen'ed ones)
 * as a snapshot's MODULES chunk: path, load bias, GNU build-id (read from the
 * PT_NOTE segments in memory) and the runtime ranges of executable PT_LOADs, so
 * the analysis symbolizes addresses offline. Also: where our own code lies, so
 * the stack capture can drop the recorder's frames.
 *
 * dl_iterate_phdr takes the loader's (recursive) lock: fine in a signal handler
 * unless the signal hit another thread inside dlopen, which then finishes first.
 *
 * dlclose is interposed: a library about to be unloaded is remembered (its
 * encoded entry, in pool memory) and still listed in later snapshots, so the
 * stacks it appears in can be symbolized. Listed after the loaded modules: an
 * address that a library loaded later reuses resolves to that later library.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "core/guard.h"
#include "core/lifecycle.h"
#include "core/pool.h"
#include "hooks/hooks.h"
#include "output/profile_writer.h"
#include "stacks/modules.h"
#include "stacks/unwind_cache.h"

#define MAX_OWN_RANGES 4
static uintptr_t own_lo[MAX_OWN_RANGES], own_hi[MAX_OWN_RANGES];
static int own_n;

static int find_own(struct dl_phdr_info *info, size_t size, void *base)
{
    (void)size;
    if ((void *)info->dlpi_addr != base)
        return 0;
    for (int i = 0; i < info->dlpi_phnum && own_n < MAX_OWN_RANGES; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            own_lo[own_n] = info->dlpi_addr + ph->p_vaddr;
            own_hi[own_n] = own_lo[own_n] + ph->p_memsz;
            own_n++;
        }
    }
    return 1;
}

void hsr_modules_init(void)
{
    Dl_info self;
    if (own_n == 0 && dladdr((void *)hsr_modules_init, &self))
        dl_iterate_phdr(find_own, self.dli_fbase);
}

void hsr_recorder_text(uintptr_t *lo, uintptr_t *hi)
{
    *lo = UINTPTR_MAX;
    *hi = 0;
    for (int i = 0; i < own_n; i++) {
        *lo = own_lo[i] < *lo ? own_lo[i] : *lo;
        *hi = own_hi[i] > *hi ? own_hi[i] : *hi;
    }
}

int hsr_in_recorder(uintptr_t addr)
{
    for (int i = 0; i < own_n; i++)
        if (addr >= own_lo[i] && addr < own_hi[i])
            return 1;
    return 0;
}

/* The GNU build-id of a loaded object, from its notes in memory. */
static size_t build_id(struct dl_phdr_info *info, const uint8_t **id)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        const uint8_t *end = p + ph->p_memsz;
        size_t align = ph->p_align == 8 ? 8 : 4;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
            size_t name_at = sizeof *n;
            size_t desc_at = name_at + ((n->n_namesz + align - 1) & ~(align - 1));
            size_t next = desc_at + ((n->n_descsz + align - 1) & ~(align - 1));
            if (p + desc_at + n->n_descsz > end)
                break;
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
                memcmp(p + name_at, "GNU", 4) == 0) {
                *id = p + desc_at;
                return n->n_descsz;
            }
            p += next;
        }
    }
    return 0;
}

struct write_ctx {
    struct hsr_buf *b;
    uint32_t count;
    uintptr_t match_bias; /* hsr_modules_forget: only this module */
    uint32_t nloaded;
    uintptr_t loaded[HSR_MODULES_LISTED]; /* biases written, to skip departed duplicates */
};

struct departed {
    struct departed *next;
    uintptr_t bias;
    size_t len;
    uint8_t entry[]; /* one MODULES entry, encoded */
};
static struct departed *_Atomic departed_list;

static int write_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct write_ctx *ctx = arg;
    if (ctx->match_bias && info->dlpi_addr != ctx->match_bias)
        return 0;
    uint32_t nranges = 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD && (info->dlpi_phdr[i].p_flags & PF_X))
            nranges++;
    if (nranges == 0)
        return 0;
    char exe[4096];
    const char *path = info->dlpi_name;
    if (!path || !*path) { /* the main program */
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = 0;
        path = exe;
    }
    const uint8_t *id = NULL;
    size_t id_len = build_id(info, &id);
    hsr_buf_u64(ctx->b, (uint64_t)info->dlpi_addr);
    hsr_buf_u32(ctx->b, nranges);
    hsr_buf_u32(ctx->b, (uint32_t)id_len);
    hsr_buf_bytes(ctx->b, id, id_len);
    hsr_buf_str(ctx->b, path, strlen(path));
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            hsr_buf_u64(ctx->b, info->dlpi_addr + ph->p_vaddr);
            hsr_buf_u64(ctx->b, info->dlpi_addr + ph->p_vaddr + ph->p_memsz);
        }
    }
    ctx->count++;
    if (ctx->nloaded < HSR_MODULES_LISTED)
        ctx->loaded[ctx->nloaded++] = info->dlpi_addr;
    return 0;
}

static int was_written(const struct write_ctx *ctx, uintptr_t bias)
{
    for (uint32_t i = 0; i < ctx->nloaded; i++)
        if (ctx->loaded[i] == bias)
            return 1;
    return 0;
}

void hsr_modules_write(struct hsr_buf *b)
{
    static struct write_ctx ctx; /* big; dumps are serialized */
    memset(&ctx, 0, offsetof(struct write_ctx, loaded));
    ctx.b = b;
    size_t count_at = hsr_count_slot(b);
    dl_iterate_phdr(write_module, &ctx);
    for (struct departed *d = atomic_load(&departed_list); d; d = d->next)
        if (!was_written(&ctx, d->bias)) {
            hsr_buf_bytes(b, d->entry, d->len);
            ctx.count++;
        }
    hsr_count_fill(b, count_at, ctx.count);
}

/* Remember the module of `handle`, which dlclose may unload. */
static void forget(void *handle)
{
    struct link_map *lm = NULL;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_addr)
        return;
    for (struct departed *d = atomic_load(&departed_list); d; d = d->next)
        if (d->bias == lm->l_addr)
            return; /* already remembered (dlopen'ed again at the same place) */
    struct hsr_buf one = {0};
    static struct write_ctx ctx;
    static atomic_flag busy = ATOMIC_FLAG_INIT;
    while (atomic_flag_test_and_set(&busy))
        ;
    memset(&ctx, 0, offsetof(struct write_ctx, loaded));
    ctx.b = &one;
    ctx.match_bias = lm->l_addr;
    dl_iterate_phdr(write_module, &ctx);
    atomic_flag_clear(&busy);
    struct departed *d = one.failed || !ctx.count ? NULL : hsr_pool_alloc(sizeof *d + one.len);
    if (d) {
        d->bias = lm->l_addr;
        d->len = one.len;
        memcpy(d->entry, one.p, one.len);
        struct departed *head = atomic_load(&departed_list);
        do
            d->next = head;
        while (!atomic_compare_exchange_weak(&departed_list, &head, d));
    }
    hsr_buf_release(&one);
}

int dlclose(void *handle)
{
    static int (*next)(void *);
    if (!next)
        next = hsr_next("dlclose");
    if (atomic_load(&hsr_recording)) {
        int saved = hsr_guard;
        hsr_guard = 1;
        forget(handle);
        hsr_guard = saved;
    }
    int rc = next ? next(handle) : -1;
    hsr_unwind_code_changed(); /* its rules must not serve code loaded there later */
    return rc;
}
