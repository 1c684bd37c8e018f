// Edge and comparison coverage for corrupt-fuzz, from loaders built with SanitizerCoverage.
//
// Build the loader's code with one of (the code of corrupt-fuzz's own targets needs no flags):
//
//     swiftc -sanitize=fuzzer                                   (8-bit counters and comparisons)
//     swiftc -sanitize=fuzzer -sanitize-coverage=edge,trace-pc-guard,trace-cmp
//     clang  -fsanitize-coverage=trace-pc-guard,trace-cmp       (or inline-8bit-counters,pc-table)
//
// and link corrupt_fuzz_coverage.c (CorruptFuzzWorker and CorruptFuzzTesting do): it defines the
// callbacks the instrumentation calls. In a process corrupt-fuzz starts, they write into the
// shared segment it names in CORRUPT_FUZZ_COVERAGE_SHM (edges, AFL's layout and hit counts, then
// the comparisons' operands); with only AFL++'s __AFL_SHM_ID set (afl-fuzz runs the binary),
// edges go to AFL++'s map; otherwise into a map of this process (in-process checks read it).
// Programs built with afl-clang-fast need none of this: their own runtime writes AFL's map, which
// corrupt-fuzz hands them as __AFL_SHM_ID.
//
// The callbacks are weak: a program that links libFuzzer or AFL++'s runtime keeps theirs.
#ifndef CORRUPT_FUZZ_COVERAGE_H
#define CORRUPT_FUZZ_COVERAGE_H

#include <stddef.h>
#include <stdint.h>

/// Bytes of the edge map (AFL's MAP_SIZE): one hit counter per edge, the edge's index modulo this.
#define CF_COVERAGE_MAP_SIZE 65536
/// How many comparisons one input's log holds.
#define CF_COVERAGE_COMPARISONS 512
/// The shared segment corrupt-fuzz made: edges, then the comparison log (SysV shared memory id).
#define CF_COVERAGE_VARIABLE "CORRUPT_FUZZ_COVERAGE_SHM"
/// AFL++'s variable for its edge map, which corrupt-fuzz also sets to its segment.
#define CF_COVERAGE_AFL_VARIABLE "__AFL_SHM_ID"

/// One comparison the loader made that did not hold: the value it read (`observed`) and the
/// value it compared it with (`wanted`), `size` bytes wide (2, 4 or 8), in the run `epoch`.
typedef struct cf_comparison {
    uint64_t observed;
    uint64_t wanted;
    uint32_t size;
    uint32_t epoch;
} cf_comparison;

/// The comparison log after the edge map: one entry per call site (its address hashed into
/// CF_COVERAGE_COMPARISONS slots), holding the site's last comparison that did not hold, so a
/// loop's thousand comparisons take one slot. An entry belongs to the current run when its
/// `epoch` is the log's (corrupt-fuzz counts the epoch up before each run instead of clearing
/// the slots); `count` is how many comparisons were logged in the run.
typedef struct cf_comparison_log {
    uint32_t count;
    uint32_t epoch;
    cf_comparison entries[CF_COVERAGE_COMPARISONS];
} cf_comparison_log;

/// Where the comparison log starts in the shared segment: after room for 2 MiB of edges, because a
/// large program built with AFL++ numbers its edges past the 64 KiB map (AFL_MAP_SIZE) and
/// writes there; corrupt-fuzz reads the first CF_COVERAGE_MAP_SIZE bytes only. (Pages nobody
/// writes cost no memory.)
#define CF_COVERAGE_LOG_OFFSET (2u << 20)
/// The size of the shared segment: the edge area and the comparison log.
#define CF_COVERAGE_SEGMENT_SIZE (CF_COVERAGE_LOG_OFFSET + sizeof(cf_comparison_log))

#ifdef __cplusplus
extern "C" {
#endif

/// Adds the 8-bit counters the loader's code incremented since the last call to the edge map,
/// and clears them. A worker calls it after each input, before its reply; at exit it runs by
/// itself. (Code built with trace-pc-guard writes the map directly.)
void cf_coverage_collect(void);

/// How many edges instrumented code registered in this process (0: it has none).
size_t cf_coverage_edges(void);

/// The edge map this process writes: the shared one, or its own.
uint8_t *cf_coverage_map(void);

/// The comparison log this process writes (NULL when the shared map is AFL++'s, without one).
cf_comparison_log *cf_coverage_comparisons(void);

/// Clears the map and the comparison log (for in-process checks, before each input).
void cf_coverage_reset(void);

#ifdef __cplusplus
}
#endif

#endif
