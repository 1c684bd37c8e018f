// A loader with a bug behind four independent 4-byte comparisons at different offsets: the
// classic maze that blind mutation does not solve (2^128 inputs), and coverage guidance with
// comparison feedback solves in seconds. BENCHMARKS.md ("Coverage guidance") measures it.
//
//     clang -O1 -c -fsanitize-coverage=trace-pc-guard,trace-cmp maze.c   (compile only: linked
//     clang maze.o corrupt_fuzz_worker.c corrupt_fuzz_coverage.c -o maze  with the flag, clang
//                                                    adds a runtime whose callbacks win over ours)
//     AFL_LLVM_LAF_ALL=1 afl-clang-fast -O1 maze.c corrupt_fuzz_worker.c -o maze-afl   (AFL++)
//
// Either runs as `corrupt-fuzz run --target './maze @@'` (add --worker for one process).
#include "corrupt_fuzz_worker.h"

#include <stdlib.h>
#include <string.h>

static uint32_t read32(const uint8_t *data) {
    uint32_t value;
    memcpy(&value, data, 4);
    return value;
}

__attribute__((noinline)) static int check(const uint8_t *data, size_t size, cf_worker_reply *reply) {
    if (size == 0) {
        cf_worker_reject(reply, "empty", "the file is empty");
        return 1;
    }
    if (size < 32) {
        cf_worker_reject(reply, "corrupt", "shorter than a header");
        return 1;
    }
    if (read32(data) == 0x455A414Du) {            // "MAZE"
        if (read32(data + 8) == 0x0BADF00Du) {
            if (read32(data + 16) == 0x13579BDFu) {
                if (read32(data + 28) == 0x2468ACE0u) {
                    abort();                      // the bug
                }
            }
        }
    }
    cf_worker_accept(reply, "ok");
    return 0;
}

int main(int argc, char **argv) { return cf_worker_main(argc, argv, check); }
