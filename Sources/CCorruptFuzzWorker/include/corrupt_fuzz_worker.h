// corrupt-fuzz's persistent-worker protocol for loaders written in C, C++, Rust (through its
// C ABI) or anything else that links C: the loader executable starts once and loads input after
// input for `corrupt-fuzz run --worker`, and still works one file at a time otherwise.
//
//     #include "corrupt_fuzz_worker.h"
//
//     static int load(const uint8_t *data, size_t size, cf_worker_reply *reply) {
//         if (size < 4 || memcmp(data, "HBTS", 4) != 0) {
//             cf_worker_reject(reply, "corrupt", "bad magic");
//             return 1;
//         }
//         cf_worker_accept(reply, "ok");
//         return 0;
//     }
//
//     int main(int argc, char **argv) { return cf_worker_main(argc, argv, load); }
//
// Protocol (the same as CorruptFuzzWorker.serve in Swift): corrupt-fuzz sets
// CORRUPT_FUZZ_WORKER_FD to the result descriptor (3); the worker writes `H 1` (hello, protocol
// version 1) there, then corrupt-fuzz writes one input path per line on its standard input;
// for each, the worker writes one line to the result descriptor:
// `A <digest>` (accepted), `V <message>` (accepted, but the app's own check of the value
// failed) or `R <reason|-> <message>` (rejected). Newlines in the text become spaces there
// (a one-shot run prints them as they are). A worker whose loader takes bytes (cf_worker_main)
// says `H 1 bytes`: corrupt-fuzz then sends an input of up to CF_WORKER_MAX_SENT_BYTES whole,
// as the line `#<size>` followed by its bytes, instead of writing a file and sending its path
// (larger inputs, and a missing file, still come as a path). Without
// CORRUPT_FUZZ_WORKER_FD, cf_worker_main loads argv[1] (or standard input) once, prints the
// digest and returns 0, or prints `reason: WORD` and the message on stderr and returns 1.
//
// Copy this header and corrupt_fuzz_worker.c into a project that does not build with SwiftPM
// (and corrupt_fuzz_coverage.[ch] for coverage guidance, corrupt_fuzz_coverage.h says how).
#ifndef CORRUPT_FUZZ_WORKER_H
#define CORRUPT_FUZZ_WORKER_H

#include <stddef.h>
#include <stdint.h>

/// The protocol's version, announced in the hello line (`H 1`). corrupt-fuzz refuses a worker
/// that announces another version. The Swift side (CorruptFuzzWorker's WorkerProtocol) has the
/// same constants, and a test checks that they agree.
#define CF_WORKER_PROTOCOL_VERSION 1
/// The environment variable corrupt-fuzz sets to the result descriptor's number.
#define CF_WORKER_FD_VARIABLE "CORRUPT_FUZZ_WORKER_FD"
/// The result descriptor corrupt-fuzz hands a worker.
#define CF_WORKER_RESULT_FD 3
/// The first letters of the protocol's lines: hello, accepted, accepted but invalid, rejected,
/// and the fork server's line for a child that ended mid-input (`C <wait status> <peak kB>`).
enum {
    CF_WORKER_HELLO = 'H',
    CF_WORKER_ACCEPTED = 'A',
    CF_WORKER_ACCEPTED_INVALID = 'V',
    CF_WORKER_REJECTED = 'R',
    CF_WORKER_CHILD_ENDED = 'C',
    /// corrupt-fuzz's line (this byte alone) to a fork server's child that lived through a trap,
    /// when it wants inputs run by a child that did not (a recheck): the child exits
    /// (status CF_WORKER_RETIRED_STATUS), and its server says `C` for it and lets the spare serve.
    CF_WORKER_RETIRE = 0x01,
    /// The first byte of corrupt-fuzz's line for an input sent whole: `#<size>`, then that many
    /// bytes (to a worker whose hello has the word CF_WORKER_BYTES_FEATURE).
    CF_WORKER_SENT_BYTES = '#'
};
/// The hello's word for a worker that takes an input's bytes on its standard input
/// (`H 1 bytes`): one whose loader gets bytes, not a path (cf_worker_main, not
/// cf_worker_main_paths). Its inputs then cost no file: neither corrupt-fuzz's write nor the
/// worker's open and reads.
#define CF_WORKER_BYTES_FEATURE "bytes"
/// The largest input corrupt-fuzz sends whole (below a pipe's 64 kB, so that sending it never
/// waits for the worker); a larger one comes as a path.
#define CF_WORKER_MAX_SENT_BYTES 61440
/// A retired child's exit status.
#define CF_WORKER_RETIRED_STATUS 3
/// Exits as a retired child does (CF_WORKER_RETIRE): with CF_WORKER_RETIRED_STATUS.
void cf_worker_retire(void) __attribute__((noreturn));
/// The environment variable corrupt-fuzz sets to 1 when it wants a fork server
/// (cf_worker_fork_server).
#define CF_WORKER_FORK_SERVER_VARIABLE "CORRUPT_FUZZ_FORK_SERVER"

#ifdef __cplusplus
extern "C" {
#endif

/// What one load says: filled in by the load function through cf_worker_accept,
/// cf_worker_accept_invalid or cf_worker_reject.
typedef struct cf_worker_reply {
    /// 'A', 'V' or 'R'.
    char kind;
    /// The reason word of a rejection ("" for none).
    char reason[64];
    /// The digest of an accepted input, or the message.
    char text[2048];
} cf_worker_reply;

/// Loads one input. Returns 0 when it accepted the data, anything else when it rejected it.
/// The data is only valid during the call.
typedef int (*cf_worker_load_fn)(const uint8_t *data, size_t size, cf_worker_reply *reply);

void cf_worker_accept(cf_worker_reply *reply, const char *digest);
void cf_worker_accept_invalid(cf_worker_reply *reply, const char *message);
void cf_worker_reject(cf_worker_reply *reply, const char *reason, const char *message);

/// Reads an input sent whole (`#<size>` line, CF_WORKER_SENT_BYTES): its `size` bytes from
/// standard input, into memory of exactly that size from malloc (at least one byte), which the
/// caller frees; NULL when standard input ends first or there is no memory. For worker loops
/// written in other languages on top of this file (CorruptFuzzWorker.serve in Swift).
uint8_t *cf_worker_read_sent_bytes(size_t size);

/// Loads the input at `path` (NULL: standard input), opening the file itself as an app does.
typedef int (*cf_worker_load_path_fn)(const char *path, cf_worker_reply *reply);

/// Serves inputs as a worker, or loads one file; returns the process's exit status. A missing
/// file is rejected as `not-found` without calling `load`.
int cf_worker_main(int argc, char **argv, cf_worker_load_fn load);

/// cf_worker_main for a loader that opens the file itself (it sees missing files too).
int cf_worker_main_paths(int argc, char **argv, cf_worker_load_path_fn load);

/// The environment variable a fork server sets for its children (`FD:SERVER PID`): corrupt-fuzz's
/// crash reporter writes `{int pid; int signal; long peak kB}` to that descriptor once its
/// report is written, when the server is its parent, so the server need not wait for the
/// kernel to tear the dying child down.
#define CF_WORKER_DYING_VARIABLE "CORRUPT_FUZZ_DYING"

/// Makes the worker a fork server, when corrupt-fuzz asked for one (CF_WORKER_FORK_SERVER_VARIABLE
/// is 1) and the process runs a single thread: called by the worker loops (cf_worker_main and
/// CorruptFuzzWorker.serve) after the first input's reply, so that each child starts with the
/// loader warm (its code paged in, its lazy state made), as AFL++'s deferred fork server
/// does. The process forks a child that returns 1 from here and serves inputs until it
/// crashes, and a spare child that waits for its turn; the process itself stays in here and
/// waits. When the child dies mid-input (a signal, or an exit status other than 0; or its crash
/// reporter says it is dying, CF_WORKER_DYING_VARIABLE), it writes
/// `C <wait status> <peak memory in kB>` to `result_fd` as that input's reply, lets the spare
/// serve and forks the next spare: a crash costs a fork instead of a new worker (the loader's
/// start-up, its runtime, its libraries), off the way from one input to the next. A child that
/// exits 0 (standard input ended) ends the server too.
/// Returns 0 without forking when no fork server is wanted or possible: the caller then serves
/// inputs itself, as before.
int cf_worker_fork_server(int result_fd);

/// The environment variable that lets a fork server's children live through a crash: its value
/// is how many times one child may (0, or unset: never). A crash here is a compiler-inserted trap
/// instruction (Swift's precondition failures, an index out of range, a forced unwrap of nil, an
/// overflow; C's __builtin_trap: x86-64's ud2, arm64's brk) and, when no sanitizer is loaded,
/// an abort the process raised itself (abort(), assert) or a fault of its own instruction
/// (SIGSEGV, SIGBUS, SIGFPE), on the thread that runs the inputs. Its crash report is written as
/// before; then, instead of dying, the child abandons the input's stack (what it held is leaked,
/// never freed), answers `C <wait status> <peak kB> r` itself and reads the next input: a known
/// crash site costs a report, not a process. A child that used up its count, or whose peak
/// memory grew 64 MB past its peak when it started serving, dies of its crash as before.
/// corrupt-fuzz checks in a fresh process what a child showed after it recovered.
#define CF_WORKER_RECOVER_VARIABLE "CORRUPT_FUZZ_RECOVER_CRASHES"

/// Runs `body(context)`; in a fork server's child that may recover (CF_WORKER_RECOVER_VARIABLE),
/// a crash in it returns here: the crash's signal is returned (0: the body returned). Needs
/// corrupt-fuzz's crash reporter (preloaded on Linux), which reports the crash and hands it over;
/// elsewhere it just runs the body.
int cf_worker_guarded(void (*body)(void *), void *context);

/// The line a child that recovered from a crash writes as that input's reply
/// (`C <wait status> <peak kB> r`), in `line` (64 bytes are enough); its length.
int cf_worker_recovered_line(char *line, size_t capacity, int signal);

#ifdef __cplusplus
}
#endif

#endif
