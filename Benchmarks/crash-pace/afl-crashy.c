// crashy-worker.c's loader for AFL++'s persistent mode with shared-memory test cases
// (afl-clang-fast): the peer's figure for a frequent, shallow crash.
//   AFL_LLVM_... afl-clang-fast -O2 Benchmarks/crash-pace/afl-crashy.c -o afl-crashy
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__AFL_FUZZ_INIT();

int main(void) {
    const char *setting = getenv("CRASHY_CRASH");
    int crashes = !(setting && strcmp(setting, "0") == 0);
    __AFL_INIT();
    unsigned char *data = __AFL_FUZZ_TESTCASE_BUF;
    volatile unsigned sink = 0;
    while (__AFL_LOOP(100000)) {
        size_t size = (size_t)__AFL_FUZZ_TESTCASE_LEN;
        uint64_t hash = 0xcbf29ce484222325ULL;
        for (size_t i = 0; i < size; i++) hash = (hash ^ data[i]) * 0x100000001b3ULL;
        if (crashes && hash % 3 == 0) abort();
        if (size < 4 || memcmp(data, "HBTS", 4) != 0) continue;
        unsigned sum = 0;
        for (size_t i = 0; i < size; i++) sum += data[i];
        sink = sum;
    }
    (void)sink;
    return 0;
}
