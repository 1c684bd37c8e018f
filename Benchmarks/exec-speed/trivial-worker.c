// The trivial loader of trivial-loader.c as a persistent worker (corrupt_fuzz_worker.h):
// checks a magic and sums the bytes.
//   cc -O2 -I Sources/CCorruptFuzzWorker/include Benchmarks/exec-speed/trivial-worker.c
//       Sources/CCorruptFuzzWorker/corrupt_fuzz_worker.c -o trivial-worker
#include <stdio.h>
#include <string.h>

#include "corrupt_fuzz_worker.h"

static int load(const uint8_t *data, size_t size, cf_worker_reply *reply) {
    if (size == 0) { cf_worker_reject(reply, "empty", "the file is empty"); return 1; }
    if (size < 4 || memcmp(data, "HBTS", 4) != 0) { cf_worker_reject(reply, "corrupt", "bad magic"); return 1; }
    unsigned sum = 0;
    for (size_t i = 0; i < size; i++) sum += data[i];
    char digest[32];
    snprintf(digest, sizeof digest, "%u", sum);
    cf_worker_accept(reply, digest);
    return 0;
}

int main(int argc, char **argv) { return cf_worker_main(argc, argv, load); }
