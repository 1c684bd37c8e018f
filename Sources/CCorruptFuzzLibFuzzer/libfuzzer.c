#include "corrupt_fuzz_libfuzzer.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef size_t (*cf_mutate_fn)(uint8_t *, size_t, size_t);
typedef int (*cf_callback_fn)(const uint8_t *, size_t);
typedef int (*cf_driver_fn)(int *, char ***, cf_callback_fn);

#if defined(__APPLE__)
#include <dlfcn.h>
// Mach-O has no weak undefined symbols without linker flags; an executable's symbols are
// visible to dlsym.
static cf_mutate_fn cf_find_mutate(void) { return (cf_mutate_fn)dlsym(RTLD_DEFAULT, "LLVMFuzzerMutate"); }
static cf_driver_fn cf_find_driver(void) { return (cf_driver_fn)dlsym(RTLD_DEFAULT, "LLVMFuzzerRunDriver"); }
#else
// ELF: a weak reference is null unless libFuzzer (linked by -sanitize=fuzzer) defines it.
extern size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size) __attribute__((weak));
extern int LLVMFuzzerRunDriver(int *argc, char ***argv, cf_callback_fn callback) __attribute__((weak));
static cf_mutate_fn cf_find_mutate(void) { return LLVMFuzzerMutate; }
static cf_driver_fn cf_find_driver(void) { return LLVMFuzzerRunDriver; }
#endif

int cf_libfuzzer_run_driver(int *argc, char ***argv, cf_callback_fn callback) {
    cf_driver_fn driver = cf_find_driver();
    return driver ? driver(argc, argv, callback) : -1;
}

int cf_libfuzzer_has_mutate(void) { return cf_find_mutate() != NULL; }

size_t cf_libfuzzer_mutate(uint8_t *data, size_t size, size_t max_size) {
    cf_mutate_fn mutate = cf_find_mutate();
    return mutate ? mutate(data, size, max_size) : size;
}

void cf_libfuzzer_report_and_abort(const char *text) {
    size_t length = strlen(text), written = 0;
    while (written < length) {
        ssize_t n = write(2, text + written, length - written);
        if (n <= 0) break;
        written += (size_t)n;
    }
    abort();
}
