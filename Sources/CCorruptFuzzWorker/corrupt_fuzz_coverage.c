// SanitizerCoverage callbacks writing corrupt-fuzz's edge map and comparison log
// (corrupt_fuzz_coverage.h). Never instrumented itself.
#include "corrupt_fuzz_coverage.h"

#include <stdlib.h>
#include <string.h>
#if !defined(_WIN32)
#include <sys/shm.h>
#endif

#if defined(__clang__)
#define CF_NO_COVERAGE __attribute__((no_sanitize("coverage")))
#else
#define CF_NO_COVERAGE
#endif
#define CF_WEAK __attribute__((weak, visibility("default"))) CF_NO_COVERAGE

static uint8_t local_map[CF_COVERAGE_MAP_SIZE];
static cf_comparison_log local_log;
static uint8_t *area = local_map;
static cf_comparison_log *comparison_log = &local_log;
static int attached;
/// Edges registered so far; the next one's index.
static size_t edges;

/// The 8-bit counter regions of the instrumented modules, with the index of their first edge.
static struct {
    uint8_t *start, *stop;
    size_t base;
} regions[256];
static size_t region_count;

/// Attaches the segment the variable names; its size in *size (0 when the system will not say).
CF_NO_COVERAGE static void *attach_segment(const char *variable, size_t *size) {
    const char *value = getenv(variable);
    if (!value || !*value) return NULL;
    char *end = NULL;
    long id = strtol(value, &end, 10);
    if (end == value || id < 0) return NULL;
    struct shmid_ds status;
    *size = shmctl((int)id, IPC_STAT, &status) == 0 ? (size_t)status.shm_segsz : 0;
    void *segment = shmat((int)id, NULL, 0);
    return segment == (void *)-1 ? NULL : segment;
}

/// Uses the shared segment only as far as it reaches: a segment made by another version of
/// corrupt-fuzz (or by AFL++) may be smaller than this layout, and a write past its end would be
/// a crash of the loader that is not the loader's.
CF_NO_COVERAGE static void attach(void) {
    if (attached) return;
    attached = 1;
    size_t size = 0;
    uint8_t *segment = attach_segment(CF_COVERAGE_VARIABLE, &size);
    if (segment && size >= CF_COVERAGE_MAP_SIZE) {
        area = segment;
        comparison_log = size >= CF_COVERAGE_SEGMENT_SIZE ? (cf_comparison_log *)(segment + CF_COVERAGE_LOG_OFFSET) : NULL;
        return;
    }
    if (segment) shmdt(segment);
    segment = attach_segment(CF_COVERAGE_AFL_VARIABLE, &size);
    if (segment && size >= CF_COVERAGE_MAP_SIZE) {
        area = segment;
        comparison_log = NULL;
    } else if (segment) {
        shmdt(segment);
    }
}

CF_NO_COVERAGE __attribute__((constructor)) static void attach_early(void) { attach(); }

CF_WEAK void __sanitizer_cov_trace_pc_guard_init(uint32_t *start, uint32_t *stop) {
    attach();
    if (start == stop || *start) return;
    for (uint32_t *guard = start; guard < stop; guard++) {
        edges++;
        // Index 0 is left to AFL++'s runtime, which marks it.
        *guard = (uint32_t)(1 + (edges - 1) % (CF_COVERAGE_MAP_SIZE - 1));
    }
}

CF_WEAK void __sanitizer_cov_trace_pc_guard(uint32_t *guard) {
    // Never back to zero after 256 hits (AFL++'s NeverZero).
    uint8_t hits = (uint8_t)(area[*guard] + 1);
    area[*guard] = hits ? hits : 1;
}

CF_WEAK void __sanitizer_cov_8bit_counters_init(uint8_t *start, uint8_t *stop) {
    attach();
    if (start >= stop || region_count == sizeof regions / sizeof regions[0]) return;
    for (size_t i = 0; i < region_count; i++)
        if (regions[i].start == start) return;
    regions[region_count].start = start;
    regions[region_count].stop = stop;
    regions[region_count].base = edges;
    region_count++;
    edges += (size_t)(stop - start);
}

CF_WEAK void __sanitizer_cov_pcs_init(const uintptr_t *start, const uintptr_t *stop) {
    (void)start;
    (void)stop;
}

CF_NO_COVERAGE void cf_coverage_collect(void) {
    for (size_t r = 0; r < region_count; r++) {
        uint8_t *start = regions[r].start;
        size_t count = (size_t)(regions[r].stop - start), base = regions[r].base;
        size_t i = 0;
        while (i < count) {
            // Eight at a time while they are all zero, as most are.
            if (i + 8 <= count) {
                uint64_t word;
                memcpy(&word, start + i, 8);
                if (!word) {
                    i += 8;
                    continue;
                }
            }
            uint8_t hits = start[i];
            if (hits) {
                uint8_t *counter = &area[1 + (base + i) % (CF_COVERAGE_MAP_SIZE - 1)];
                unsigned sum = (unsigned)*counter + hits;
                *counter = (uint8_t)(sum > 255 ? 255 : sum);
                start[i] = 0;
            }
            i++;
        }
    }
}

CF_NO_COVERAGE __attribute__((destructor)) static void collect_at_exit(void) { cf_coverage_collect(); }

CF_NO_COVERAGE size_t cf_coverage_edges(void) { return edges; }
CF_NO_COVERAGE uint8_t *cf_coverage_map(void) {
    attach();
    return area;
}
CF_NO_COVERAGE cf_comparison_log *cf_coverage_comparisons(void) {
    attach();
    return comparison_log;
}

CF_NO_COVERAGE void cf_coverage_reset(void) {
    attach();
    for (size_t r = 0; r < region_count; r++) memset(regions[r].start, 0, (size_t)(regions[r].stop - regions[r].start));
    memset(area, 0, CF_COVERAGE_MAP_SIZE);
    if (comparison_log) {
        comparison_log->count = 0;
        comparison_log->epoch++;
    }
}

// MARK: - Comparisons

/// Logs a comparison that did not hold in its call site's slot.
CF_NO_COVERAGE static inline void log_comparison(uint64_t observed, uint64_t wanted, uint32_t size, uintptr_t site) {
    cf_comparison_log *log = comparison_log;
    if (!log || observed == wanted) return;
    log->count++;
    cf_comparison *entry = &log->entries[(uint32_t)(((uint64_t)site * 0x9E3779B97F4A7C15ull) >> 40) % CF_COVERAGE_COMPARISONS];
    entry->observed = observed;
    entry->wanted = wanted;
    entry->size = size;
    entry->epoch = log->epoch;
}

#define CF_SITE ((uintptr_t)__builtin_return_address(0))

CF_WEAK void __sanitizer_cov_trace_cmp1(uint8_t a, uint8_t b) { (void)a, (void)b; }
CF_WEAK void __sanitizer_cov_trace_const_cmp1(uint8_t a, uint8_t b) { (void)a, (void)b; }
CF_WEAK void __sanitizer_cov_trace_cmp2(uint16_t a, uint16_t b) { log_comparison(a, b, 2, CF_SITE), log_comparison(b, a, 2, CF_SITE + 1); }
CF_WEAK void __sanitizer_cov_trace_cmp4(uint32_t a, uint32_t b) { log_comparison(a, b, 4, CF_SITE), log_comparison(b, a, 4, CF_SITE + 1); }
CF_WEAK void __sanitizer_cov_trace_cmp8(uint64_t a, uint64_t b) { log_comparison(a, b, 8, CF_SITE), log_comparison(b, a, 8, CF_SITE + 1); }
// Which operand came from the input is not known: both ways. With a constant, it is the first.
CF_WEAK void __sanitizer_cov_trace_const_cmp2(uint16_t a, uint16_t b) { log_comparison(b, a, 2, CF_SITE); }
CF_WEAK void __sanitizer_cov_trace_const_cmp4(uint32_t a, uint32_t b) { log_comparison(b, a, 4, CF_SITE); }
CF_WEAK void __sanitizer_cov_trace_const_cmp8(uint64_t a, uint64_t b) { log_comparison(b, a, 8, CF_SITE); }

/// cases[0] values of cases[1] bits follow in cases[2...].
CF_WEAK void __sanitizer_cov_trace_switch(uint64_t value, uint64_t *cases) {
    uint32_t size = (uint32_t)(cases[1] / 8);
    if (size < 2) return;
    for (uint64_t i = 0; i < cases[0] && i < 16; i++) log_comparison(value, cases[2 + i], size, CF_SITE + i);
}

CF_WEAK void __sanitizer_cov_trace_div4(uint32_t value) { (void)value; }
CF_WEAK void __sanitizer_cov_trace_div8(uint64_t value) { (void)value; }
CF_WEAK void __sanitizer_cov_trace_gep(uintptr_t index) { (void)index; }
CF_WEAK void __sanitizer_cov_trace_pc_indir(uintptr_t callee) { (void)callee; }

/// The deepest stack a thread reached, which swiftc's -sanitize=fuzzer tracks (stack-depth).
__attribute__((weak, visibility("default"))) __thread uintptr_t __sancov_lowest_stack;
