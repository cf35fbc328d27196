/*
 * timeline.h — heap in use, RSS and PSS over time (timeline.c), the MPI calipers
 * (calipers.c) and the reads of /proc (smaps.c).
 *
 * Samples go into a lock-free ring (any thread, signal handlers too) and are
 * appended to the file as TIMELINE chunks by the sampler thread every flush period,
 * when the ring fills, and before every snapshot (profile_format.h, types 20..29).
 */
#ifndef HSR_TIMELINE_H
#define HSR_TIMELINE_H

#include "common.h"

extern HSR_HIDDEN int hsr_timeline_on; /* HEAPSCOPE_TIMELINE_MS != 0 */
extern HSR_HIDDEN uint64_t
    hsr_snapshot_period_ns;                  /* HEAPSCOPE_SNAPSHOT_MS: periodic snapshots, 0 none */
HSR_HIDDEN void hsr_timeline_settings(void); /* read HEAPSCOPE_TIMELINE_* (before counting) */
HSR_HIDDEN void hsr_timeline_start(void);    /* ring, sampler thread (file open) */
HSR_HIDDEN void hsr_timeline_region(unsigned kind, uint32_t region); /* process-wide boundary */
HSR_HIDDEN void hsr_timeline_snapshot(
    int from_signal); /* "final" sample + flush, before a snapshot */
HSR_HIDDEN void hsr_timeline_after_fork_child(void);
/* Maxima over the samples written to the file so far (the job summary's row: the
 * same figures the job report takes from the file's samples). n: samples; heap
 * -1 when never measured, rss/pss -1 when never read. rss/pss: the program's, net of
 * the recorder's own memory (own: its largest; -1 when never measured). */
struct hsr_timeline_peaks {
    uint64_t n;
    int64_t heap, heap_component, heap_app, rss, pss, own;
};
HSR_HIDDEN void hsr_timeline_peaks(struct hsr_timeline_peaks *out);
struct hsr_sample {
    uint64_t mono_ns;
    uint32_t kind; /* HS_SAMPLE_* */
    uint32_t region;
    const char *label; /* MPI function (a string that lives forever), or NULL */
    int64_t heap, heap_component, rss, pss; /* -1: not measured; rss, pss: the process's */
    int64_t own; /* of them, the recorder's own resident memory (own_memory.c); -1: unknown */
};
/* hsr_timeline_measure's `how` */
#define HSR_MEASURE_PSS 1   /* smaps_rollup (RSS and PSS), else statm (RSS) */
#define HSR_MEASURE_FRESH 2 /* the recorder's own memory read page by page (own_memory.h) */
HSR_HIDDEN void hsr_timeline_measure(struct hsr_sample *s, int how); /* heap + memory now */
HSR_HIDDEN void hsr_timeline_add(const struct hsr_sample *s); /* append (may flush when full) */
HSR_HIDDEN void hsr_timeline_calipers_reset(void);
/* the caliper totals written in every TIMELINE chunk */
struct hsr_caliper_totals {
    uint64_t taken, skipped;
    int64_t rss_delta, pss_delta; /* the running sums of the measured calls' growth, now */
    int64_t rss_peak, pss_peak;   /* the highest they reached (from 0): the job file's figures,
                                   * as analysis/timeline.py's caliper_figures computes them;
                                   * -1: no pair measured it (PSS without smaps_rollup) */
};
HSR_HIDDEN void hsr_calipers_totals(struct hsr_caliper_totals *t);
extern HSR_HIDDEN int64_t hsr_caliper_ns;     /* rate limit; 0 every call; -1 off */
HSR_HIDDEN uint64_t hsr_caliper_period(void); /* ns until the next measured call */
/* The sampler thread arms the calipers every hsr_caliper_ns once they are active (a
 * layer attached); the next outermost MPI call disarms and is measured. The flag is
 * the layer's own word once it gave it (hsr_calipers_flag, at attach). */
extern HSR_HIDDEN _Atomic int hsr_calipers_active, hsr_sampler_running;
HSR_HIDDEN void hsr_calipers_set_armed(int armed);
HSR_HIDDEN void hsr_calipers_flag(_Atomic int *layer);
HSR_HIDDEN uint64_t *hsr_calipers_thread_calls(void);       /* this thread's call counter */
HSR_HIDDEN int hsr_read_memory(int64_t *rss, int64_t *pss); /* smaps_rollup; pss -1 if unknown */
HSR_HIDDEN int hsr_read_rss(int64_t *rss);                  /* statm (cheap) */

#endif
