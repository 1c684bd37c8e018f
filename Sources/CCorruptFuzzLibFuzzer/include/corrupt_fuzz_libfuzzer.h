// The C side of the libFuzzer bridge (CorruptFuzzLibFuzzer): libFuzzer's own byte-level
// mutator, found at run time, so that code linking the bridge builds and runs without the
// fuzzer runtime (in unit tests, in a normal `swift build`).
#ifndef CORRUPT_FUZZ_LIBFUZZER_H
#define CORRUPT_FUZZ_LIBFUZZER_H

#include <stddef.h>
#include <stdint.h>

/// Whether libFuzzer's LLVMFuzzerMutate is linked into this program.
int cf_libfuzzer_has_mutate(void);

/// Calls libFuzzer's LLVMFuzzerMutate (byte-level mutation of data in place, up to max_size
/// bytes) and returns the new size; returns size unchanged when libFuzzer is not linked.
size_t cf_libfuzzer_mutate(uint8_t *data, size_t size, size_t max_size);

/// Runs libFuzzer's driver (LLVMFuzzerRunDriver) on the command line with callback as the
/// target; returns its exit status, or -1 when libFuzzer is not linked. For fuzzers whose
/// `main` is their own (SwiftPM renames an executable's entry point, so libFuzzer's `main` is
/// never linked into a package's executable).
int cf_libfuzzer_run_driver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

/// Writes text to standard error unbuffered, then aborts: how a finding becomes a crash that
/// libFuzzer reports (it catches SIGABRT as a deadly signal and saves the input).
void cf_libfuzzer_report_and_abort(const char *text) __attribute__((noreturn));

#endif
