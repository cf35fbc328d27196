/*
 * job_file.c — rank 0 writes the job file, heapscope.<job>.job.hsj beside the rank
 * files, from the part reduced over every rank and the ranks' rows
 * (heapscope__job_write, layer_abi.h), and decides which ranks keep their own file.
 *
 *   [header][JOB][JOB_REGIONS][JOB_SIZE_COUNTS]*[JOB_API_COUNTS][JOB_RANKS]*[JOB_HOSTS]
 *   [JOB_PEAK_STACKS][JOB_RECORDER]*[JOB_MPI_LIBRARY][JOB_COMMAND]
 *   [JOB_ACCESS JOB_ACCESS_SIZES* JOB_ACCESS_RANKS*]
 *
 * (layouts in profile_format.table, ids 40..46, 56, 61, 62 and 52..54; JOB_PEAK_STACKS:
 * job_peak_stacks.c; JOB_RECORDER: below; JOB_MPI_LIBRARY and JOB_COMMAND: mpi_library.c;
 * JOB_ACCESS*: access/job.c, record --access only). The file is written under a
 * temporary name and renamed, so a reader sees a whole job file or none.
 *
 * Which ranks keep their per-rank file (HEAPSCOPE_PER_RANK, record --per-rank):
 * "all"; "none"; N (default HSR_JOB_PER_RANK_SAMPLED): N ranks evenly spaced
 * (rank 0 first) plus the ranks holding the minimum and the maximum of each
 * metric (allocated blocks and bytes, heap, RSS and PSS peaks). A rank without a
 * summary always keeps its file: the job file holds nothing of it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access/access.h"
#include "core/guard.h"
#include "core/lifecycle.h"
#include "core/pool.h"
#include "layer_abi.h"
#include "output/job_file.h"
#include "output/job_peak_stacks.h"
#include "output/mpi_library.h"
#include "output/process_identity.h"
#include "output/profile_writer.h"

/* ---- hosts: name -> index, first rank first ---- */

struct hosts {
    uint32_t *slot; /* host index + 1, by hash */
    uint32_t mask, n;
    const char **name;
    uint32_t *ranks;
    int64_t *rss_sum, *rss_max, *pss_sum, *pss_max;
};

static uint64_t fnv(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    return h;
}

static uint32_t host_index(struct hosts *h, const char *name)
{
    for (uint64_t i = fnv(name);; i++) {
        uint32_t *s = &h->slot[i & h->mask];
        if (*s == 0) {
            *s = ++h->n;
            h->name[h->n - 1] = name;
            return h->n - 1;
        }
        if (strcmp(h->name[*s - 1], name) == 0)
            return *s - 1;
    }
}

static void host_add(int64_t *sum, int64_t *max, int64_t v)
{
    *sum += v;
    if (v > *max)
        *max = v;
}

/* ---- which ranks keep their file ---- */

static int64_t metric(const struct heapscope_job_rank *r, int m)
{
    switch (m) {
    case 0:
        return r->present & HEAPSCOPE_JOB_COUNTS
                   ? (int64_t)(r->alloc_app_blocks + r->alloc_mpi_blocks)
                   : -1;
    case 1:
        return r->present & HEAPSCOPE_JOB_COUNTS
                   ? (int64_t)(r->alloc_app_bytes + r->alloc_mpi_bytes)
                   : -1;
    case 2:
        return r->present & HEAPSCOPE_JOB_HEAP ? r->heap_peak : -1;
    case 3:
        return r->present & HEAPSCOPE_JOB_RSS ? r->rss_peak : -1;
    default:
        return r->present & HEAPSCOPE_JOB_PSS ? r->pss_peak : -1;
    }
}

static void choose_kept(const struct heapscope_job_rank *rows, uint32_t n, unsigned char *keep)
{
    const char *spec = getenv("HEAPSCOPE_PER_RANK");
    long sampled = HSR_JOB_PER_RANK_SAMPLED;
    if (spec && strcmp(spec, "all") == 0) {
        memset(keep, 1, n);
        return;
    }
    memset(keep, 0, n);
    for (uint32_t i = 0; i < n; i++)
        if (rows[i].rank < 0)
            keep[i] = 1; /* no summary: its file is all there is */
    if (spec && strcmp(spec, "none") == 0)
        return;
    if (spec && *spec) {
        char *end;
        long v = strtol(spec, &end, 10);
        if (*end == 0 && v >= 0)
            sampled = v;
    }
    for (long i = 0; i < sampled && (uint64_t)i < n; i++)
        keep[(uint64_t)i * n / (uint64_t)(sampled < (long)n ? sampled : (long)n)] = 1;
    for (int m = 0; m < 5; m++) {
        int64_t lo = -1, hi = -1;
        for (uint32_t i = 0; i < n; i++) {
            int64_t v = metric(&rows[i], m);
            if (v < 0)
                continue;
            if (lo < 0 || v < metric(&rows[lo], m))
                lo = i;
            if (hi < 0 || v > metric(&rows[hi], m))
                hi = i;
        }
        if (lo >= 0)
            keep[lo] = keep[hi] = 1;
    }
}

/* ---- chunks ---- */

static void write_ranks(struct hsr_buf *b, const struct heapscope_job_rank *rows, uint32_t n,
                        const uint32_t *host_of, const unsigned char *keep)
{
    struct hsr_rows out = {.type = HS_JOB_RANKS, .per_chunk = HSR_JOB_ROWS_PER_CHUNK};
    for (uint32_t i = 0; i < n; i++) {
        const struct heapscope_job_rank *r = &rows[i];
        if (r->rank < 0)
            continue;
        hsr_rows_next(b, &out);
        hsr_buf_u32(b, (uint32_t)r->rank);
        hsr_buf_u32(b, host_of[i]);
        hsr_buf_u32(b, (uint32_t)r->pid);
        hsr_buf_u32(b, (uint32_t)r->reason);
        hsr_buf_u32(b, (uint32_t)r->present & ~(uint32_t)HEAPSCOPE_JOB_RECORDER);
        hsr_buf_u32(b, keep[i]);
        hsr_buf_u64(b, r->alloc_app_blocks);
        hsr_buf_u64(b, r->alloc_mpi_blocks);
        hsr_buf_u64(b, r->alloc_app_bytes);
        hsr_buf_u64(b, r->alloc_mpi_bytes);
        const int64_t v[] = {r->heap_peak, r->heap_app_peak, r->heap_mpi_peak, r->rss_peak,
                             r->pss_peak,  r->mpi_rss,       r->mpi_pss};
        for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
            hsr_buf_u64(b, (uint64_t)v[k]);
    }
    hsr_rows_done(b, &out);
}

/* The recorder's own memory per rank (JOB_RECORDER: its rows in JOB_RANKS' order). */
static void write_recorder(struct hsr_buf *b, const struct heapscope_job_rank *rows, uint32_t n)
{
    struct hsr_rows out = {.type = HS_JOB_RECORDER, .per_chunk = HSR_JOB_ROWS_PER_CHUNK};
    for (uint32_t i = 0; i < n; i++) {
        const struct heapscope_job_rank *r = &rows[i];
        if (r->rank < 0)
            continue;
        hsr_rows_next(b, &out);
        hsr_buf_u32(b, (uint32_t)r->rank);
        hsr_buf_u32(b, 0);
        hsr_buf_u64(b, (uint64_t)(r->present & HEAPSCOPE_JOB_RECORDER ? r->recorder_peak : -1));
    }
    hsr_rows_done(b, &out);
}

static void write_counts(struct hsr_buf *b, const struct hsr_job_part_view *v)
{
    size_t c = hsr_chunk_begin(b, HS_JOB_REGIONS);
    hsr_buf_u32(b, v->nregions);
    const uint8_t *p = v->regions;
    for (uint32_t i = 0; i < v->nregions; i++) {
        uint32_t n;
        memcpy(&n, p, 4);
        hsr_buf_bytes(b, p, 4 + n);
        p += 4 + n;
    }
    hsr_chunk_end(b, c);
    struct hsr_rows sizes = {.type = HS_JOB_SIZE_COUNTS, .per_chunk = HSR_JOB_ROWS_PER_CHUNK};
    for (uint32_t i = 0; i < v->nsizes; i++) {
        hsr_rows_next(b, &sizes);
        hsr_buf_bytes(b, v->sizes + (size_t)i * 24, 24);
    }
    hsr_rows_done(b, &sizes);
    struct hsr_rows apis = {.type = HS_JOB_API_COUNTS, .per_chunk = HSR_JOB_ROWS_PER_CHUNK};
    for (uint32_t i = 0; i < v->napis; i++) {
        hsr_rows_next(b, &apis);
        hsr_buf_bytes(b, v->apis + (size_t)i * 16, 16);
    }
    hsr_rows_done(b, &apis);
}

/* Writes b to dir/heapscope.<job>.job[.n].hsp through a temporary name. */
static int write_file(const struct hsr_buf *b)
{
    const char *rank_file = hsr_profile_path();
    const char *slash = strrchr(rank_file, '/');
    if (!slash)
        return -1;
    char dir[4096], tmp[4200], name[4200];
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - rank_file), rank_file);
    const char *job = *hsr_profile_job_id() ? hsr_profile_job_id() : "job";
    snprintf(tmp, sizeof tmp, "%s/.heapscope.%s.job.%d.tmp", dir, job, (int)getpid());
    int f = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (f < 0)
        return -1;
    hsr_owner_may_use(f, NULL);
    size_t done = 0;
    while (done < b->len) {
        ssize_t n = write(f, b->p + done, b->len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    int rc = done == b->len && close(f) == 0 ? 0 : -1;
    if (rc != 0) {
        unlink(tmp);
        return -1;
    }
    for (int n = 0; n < 1000; n++) { /* link: never over another run's job file */
        if (n == 0)
            snprintf(name, sizeof name, "%s/heapscope.%s.job.hsj", dir, job);
        else
            snprintf(name, sizeof name, "%s/heapscope.%s.job.%d.hsj", dir, job, n);
        if (link(tmp, name) == 0 || errno != EEXIST)
            break;
    }
    unlink(tmp);
    struct stat st;
    return stat(name, &st) == 0 && (size_t)st.st_size == b->len ? 0 : -1;
}

__attribute__((visibility("default"))) int heapscope__job_write(
    const void *part, size_t len, const struct heapscope_job_rank *rows, uint32_t n,
    unsigned char *keep, uint64_t summary_ns, uint64_t reduce_ns)
{
    memset(keep, 1, n); /* whatever fails below, every rank keeps its file */
    struct hsr_job_part_view v;
    if (!hsr_profile_is_open() || hsr_job_part_visit(part, len, &v) != 0)
        return -1;
    int saved = hsr_guard;
    hsr_guard = 1;
    struct hosts h = {0};
    uint32_t slots = 64;
    while (slots < 2 * n)
        slots *= 2;
    size_t bytes = slots * 4 + (size_t)n * (sizeof(char *) + 4 + 4 + 4 * 8);
    uint8_t *mem = hsr_map(bytes);
    int rc = -1;
    if (mem) {
        h.slot = (uint32_t *)mem;
        h.mask = slots - 1;
        h.name = (const char **)(mem + slots * 4);
        h.rss_sum = (int64_t *)(h.name + n);
        h.rss_max = h.rss_sum + n;
        h.pss_sum = h.rss_max + n;
        h.pss_max = h.pss_sum + n;
        h.ranks = (uint32_t *)(h.pss_max + n);
        uint32_t *host_of = h.ranks + n;
        uint32_t summarized = 0;
        for (uint32_t i = 0; i < n; i++) {
            if (rows[i].rank < 0)
                continue;
            summarized++;
            uint32_t at = host_index(&h, rows[i].host[HEAPSCOPE_JOB_HOST - 1] ? "?" : rows[i].host);
            if (h.ranks[at] == 0)
                h.rss_max[at] = h.pss_max[at] = -1;
            host_of[i] = at;
            h.ranks[at]++;
            if (rows[i].present & HEAPSCOPE_JOB_RSS)
                host_add(&h.rss_sum[at], &h.rss_max[at], rows[i].rss_peak);
            if (rows[i].present & HEAPSCOPE_JOB_PSS)
                host_add(&h.pss_sum[at], &h.pss_max[at], rows[i].pss_peak);
        }
        choose_kept(rows, n, keep);

        struct hsr_buf b = {0};
        hsr_header_append(&b);
        size_t c = hsr_chunk_begin(&b, HS_JOB);
        hsr_buf_u32(&b, n);
        hsr_buf_u32(&b, h.n);
        hsr_buf_u32(&b, summarized);
        hsr_buf_u32(&b, 0);
        hsr_buf_u64(&b, summary_ns);
        hsr_buf_u64(&b, reduce_ns);
        const char *job = hsr_profile_job_id();
        const char *spec = getenv("HEAPSCOPE_PER_RANK");
        hsr_buf_str(&b, job, strlen(job));
        hsr_buf_str(&b, spec ? spec : "", spec ? strlen(spec) : 0);
        hsr_buf_str(&b, HSR_VERSION, strlen(HSR_VERSION));
        char exe[4096];
        ssize_t e = readlink("/proc/self/exe", exe, sizeof exe - 1);
        hsr_buf_str(&b, exe, e > 0 ? (size_t)e : 0);
        hsr_chunk_end(&b, c);
        write_counts(&b, &v);
        write_ranks(&b, rows, n, host_of, keep);
        c = hsr_chunk_begin(&b, HS_JOB_HOSTS);
        hsr_buf_u32(&b, h.n);
        for (uint32_t i = 0; i < h.n; i++) {
            hsr_buf_str(&b, h.name[i], strlen(h.name[i]));
            hsr_buf_u32(&b, h.ranks[i]);
            hsr_buf_u32(&b, 0);
            hsr_buf_u64(&b, (uint64_t)h.rss_sum[i]);
            hsr_buf_u64(&b, (uint64_t)h.rss_max[i]);
            hsr_buf_u64(&b, (uint64_t)h.pss_sum[i]);
            hsr_buf_u64(&b, (uint64_t)h.pss_max[i]);
        }
        hsr_chunk_end(&b, c);
        rc = hsr_job_peaks_chunk(&b, v.peaks, v.peaks_len);
        write_recorder(&b, rows, n);
        hsr_mpi_library_job_chunks(&b);
        rc = rc || hsr_access_job_write(&b, v.access, v.access_len); /* access/job.c */
        rc = rc || b.failed ? -1 : write_file(&b);
        hsr_buf_release(&b);
        hsr_unmap(mem, bytes);
    }
    if (rc != 0) {
        memset(keep, 1, n);
        hsr_warn("cannot write the job file: every rank keeps its profile file");
    }
    hsr_guard = saved;
    return rc;
}

/* The file is unlinked, its descriptor kept: later writes (the exit snapshot, the
 * timeline) go to the unlinked inode, freed at exit, and need no new state. */
__attribute__((visibility("default"))) void heapscope__job_drop_rank_file(void)
{
    if (hsr_profile_is_open() && hsr_profile_pid() == (int)getpid())
        unlink(hsr_profile_path());
}
