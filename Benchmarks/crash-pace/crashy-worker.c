// A persistent worker (corrupt_fuzz_worker.h) that checks a magic and sums the bytes, as
// Benchmarks/exec-speed/trivial-worker.c does, and aborts on about one input in three (those
// whose FNV-1a hash is 0 modulo 3) unless CRASHY_CRASH=0: a frequent, shallow crash. Built with
// -DCRASH_BY_TRAP, it traps instead (__builtin_trap, x86-64's ud2), as a failed Swift check does;
// with -DCRASH_BY_FAULT, it writes to address 8 (a memory fault, SIGSEGV).
//   cc -O2 -I Sources/CCorruptFuzzWorker/include Benchmarks/crash-pace/crashy-worker.c
//       Sources/CCorruptFuzzWorker/corrupt_fuzz_worker.c -o crashy-worker
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corrupt_fuzz_worker.h"

static int crashes = 1;

static int load(const uint8_t *data, size_t size, cf_worker_reply *reply) {
    uint64_t hash = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < size; i++) hash = (hash ^ data[i]) * 0x100000001b3ULL;
#if defined(CRASH_BY_TRAP)
    if (crashes && hash % 3 == 0) __builtin_trap();
#elif defined(CRASH_BY_FAULT)
    if (crashes && hash % 3 == 0) *(volatile int *)(uintptr_t)8 = 1;
#else
    if (crashes && hash % 3 == 0) abort();
#endif
    if (size == 0) { cf_worker_reject(reply, "empty", "the file is empty"); return 1; }
    if (size < 4 || memcmp(data, "HBTS", 4) != 0) { cf_worker_reject(reply, "corrupt", "bad magic"); return 1; }
    unsigned sum = 0;
    for (size_t i = 0; i < size; i++) sum += data[i];
    char digest[32];
    snprintf(digest, sizeof digest, "%u", sum);
    cf_worker_accept(reply, digest);
    return 0;
}

int main(int argc, char **argv) {
    const char *setting = getenv("CRASHY_CRASH");
    crashes = !(setting && strcmp(setting, "0") == 0);
    return cf_worker_main(argc, argv, load);
}
