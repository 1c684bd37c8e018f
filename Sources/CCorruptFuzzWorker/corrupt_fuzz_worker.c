// The persistent-worker loop and fork server of corrupt_fuzz_worker.h.
// POSIX and the system's own calls (getline, sigaction, wait4, syscall), also when a user's build
// compiles this file with a strict -std=c99 or c11.
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif
#include "corrupt_fuzz_worker.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#include <dirent.h>
#include <dlfcn.h>
#include <poll.h>
#include <sys/syscall.h>
#include <ucontext.h>
#elif defined(__APPLE__)
#include <mach/mach.h>
#endif

// corrupt_fuzz_coverage.c, when it is linked: folds the 8-bit counters of an instrumented loader
// into corrupt-fuzz's edge map after each input. This file still works alone without it.
extern void cf_coverage_collect(void) __attribute__((weak));

static void copy_text(char *to, size_t capacity, const char *from) {
    if (!from) from = "";
    size_t n = 0;
    for (; from[n] != '\0' && n + 1 < capacity; n++) to[n] = from[n];
    to[n] = '\0';
}

/// Newlines become spaces: a protocol reply is one line.
static void flatten(char *text) {
    for (; *text; text++)
        if (*text == '\n' || *text == '\r') *text = ' ';
}

void cf_worker_accept(cf_worker_reply *reply, const char *digest) {
    reply->kind = CF_WORKER_ACCEPTED;
    reply->reason[0] = '\0';
    copy_text(reply->text, sizeof reply->text, digest);
}

void cf_worker_accept_invalid(cf_worker_reply *reply, const char *message) {
    reply->kind = CF_WORKER_ACCEPTED_INVALID;
    reply->reason[0] = '\0';
    copy_text(reply->text, sizeof reply->text, message);
}

void cf_worker_reject(cf_worker_reply *reply, const char *reason, const char *message) {
    reply->kind = CF_WORKER_REJECTED;
    copy_text(reply->reason, sizeof reply->reason, reason);
    for (char *c = reply->reason; *c; c++)
        if (*c == ' ' || *c == '\t') *c = '-';
    copy_text(reply->text, sizeof reply->text, message);
}

/// Reads a whole file; *size is set; NULL with errno when it cannot.
static uint8_t *read_file(FILE *file, size_t *size) {
    size_t capacity = 65536, length = 0;
    uint8_t *data = malloc(capacity);
    if (!data) return NULL;
    for (;;) {
        size_t n = fread(data + length, 1, capacity - length, file);
        length += n;
        if (n == 0) break;
        if (length == capacity) {
            uint8_t *grown = realloc(data, capacity * 2);
            if (!grown) { free(data); errno = ENOMEM; return NULL; }
            data = grown;
            capacity *= 2;
        }
    }
    if (ferror(file)) { free(data); return NULL; }
    *size = length;
    return data;
}

/// Loads `size` bytes at `data` into `reply`; returns the load's status.
static int cf_worker_load_bytes(cf_worker_load_fn load, const uint8_t *data, size_t size, cf_worker_reply *reply) {
    memset(reply, 0, sizeof *reply);
    reply->kind = CF_WORKER_REJECTED;
    int status = load(data, size, reply);
    if (status == 0 && reply->kind == CF_WORKER_REJECTED) reply->kind = CF_WORKER_ACCEPTED;
    if (status != 0) reply->kind = CF_WORKER_REJECTED;
    return status;
}

/// Loads the file at `path` (or `file` when given) into `reply`; returns the load's status.
static int cf_worker_read_and_load(const char *path, FILE *given, cf_worker_load_fn load, cf_worker_reply *reply) {
    FILE *file = given ? given : fopen(path, "rb");
    if (!file) {
        cf_worker_reject(reply, "not-found", "the file does not exist");
        return 1;
    }
    size_t size = 0;
    uint8_t *data = read_file(file, &size);
    if (!given) fclose(file);
    if (!data) {
        cf_worker_reject(reply, "unreadable", strerror(errno));
        return 1;
    }
    int status = cf_worker_load_bytes(load, data, size, reply);
    free(data);
    return status;
}

uint8_t *cf_worker_read_sent_bytes(size_t size) {
    // Exactly `size` bytes: a sanitizer sees a read past the input's end, as in a file's copy.
    uint8_t *data = malloc(size > 0 ? size : 1);
    if (!data) return NULL;
    if (size > 0 && fread(data, 1, size, stdin) != size) {
        free(data);
        return NULL;
    }
    return data;
}

/// The size a line `#<size>` (CF_WORKER_SENT_BYTES) gives; -1 for another line.
static long long sent_size(const char *line) {
    if (line[0] != CF_WORKER_SENT_BYTES || line[1] < '0' || line[1] > '9') return -1;
    char *end = NULL;
    long long size = strtoll(line + 1, &end, 10);
    return *end == '\0' && size >= 0 ? size : -1;
}

static int write_all(int fd, const char *bytes, size_t length) {
    while (length > 0) {
        ssize_t n = write(fd, bytes, length);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        bytes += n;
        length -= (size_t)n;
    }
    return 0;
}

// MARK: - Living through a crash (CF_WORKER_RECOVER_VARIABLE)

// A fork server's child that may recover: where a crash returns to, whether an input is running
// (only a crash in the loader, not in this loop, returns), and how many more times it may.
static sigjmp_buf crash_return;
static volatile sig_atomic_t guarding = 0;
static long recoveries_left = 0;
// What CF_WORKER_RECOVER_VARIABLE allows each child; 0 when the crash reporter is not there.
static long recoveries_per_child = 0;
// Whether aborts and memory faults are lived through too, not only traps: not in a process
// with a sanitizer, whose report leaves its own state mid-way.
static int recovers_faults = 0;
// The child's peak resident memory when it started serving (kB): what abandoned stacks leak
// stays below CF_RECOVERY_LEAK_KB over it, or the child dies of its next crash.
static long peak_at_start_kb = 0;
#define CF_RECOVERY_LEAK_KB (64L * 1024)
// The peak resident memory (kB) read when the last crash was lived through, for its reply.
static long peak_at_recovery_kb = 0;

static long peak_kb(void) {
    struct rusage usage;
    memset(&usage, 0, sizeof usage);
    getrusage(RUSAGE_SELF, &usage);
#if defined(__APPLE__)
    return usage.ru_maxrss / 1024;
#else
    return usage.ru_maxrss;
#endif
}

#if defined(__linux__)
/// Whether the interrupted instruction is a trap a compiler put there (x86-64 ud2, arm64 brk):
/// a deliberate stop, not a jump into bytes that are no code.
static int at_trap_instruction(const void *context) {
#if defined(__x86_64__)
    const unsigned char *pc = (const unsigned char *)((const ucontext_t *)context)->uc_mcontext.gregs[REG_RIP];
    return pc && pc[0] == 0x0F && pc[1] == 0x0B;
#elif defined(__aarch64__)
    const uint32_t *pc = (const uint32_t *)((const ucontext_t *)context)->uc_mcontext.pc;
    return pc && (*pc & 0xFFE0001Fu) == 0xD4200000u;
#else
    (void)context;
    return 0;
#endif
}

/// Whether `signo` is a crash of this thread's own making that a child may live through: a trap
/// instruction; and, without a sanitizer, an abort this process raised (abort(), assert) or a
/// fault the kernel raised for an instruction (SIGSEGV, SIGBUS, SIGFPE). Never a signal another
/// process sent.
static int recoverable(int signo, const siginfo_t *info, const void *context) {
    switch (signo) {
    case SIGILL:
    case SIGTRAP:
        return at_trap_instruction(context);
    case SIGABRT:
        return recovers_faults && info && (info->si_code == SI_TKILL || info->si_code == SI_USER) && info->si_pid == getpid();
    case SIGSEGV:
    case SIGBUS:
    case SIGFPE:
        return recovers_faults && info && info->si_code > 0;
    default:
        return 0;
    }
}

/// Called by the crash reporter once a crash's report is written: returns to cf_worker_guarded
/// when this child may live through it, else returns (and the child dies of it).
static void recover_from_crash(int signo, siginfo_t *info, void *context) {
    if (!guarding || recoveries_left <= 0 || !context) return;
    // Only on the thread that runs the inputs (a child's first thread, whose id is the
    // process's): a thread the loader started has a stack of its own.
    if ((pid_t)syscall(SYS_gettid) != getpid()) return;
    if (!recoverable(signo, info, context)) return;
    long peak = peak_kb();
    if (peak > peak_at_start_kb + CF_RECOVERY_LEAK_KB) return;
    peak_at_recovery_kb = peak;
    recoveries_left--;
    guarding = 0;
    siglongjmp(crash_return, signo);
}

/// How many crashes each child may live through: CF_WORKER_RECOVER_VARIABLE, when corrupt-fuzz's
/// crash reporter is there to hand them over (it reports them; nothing else could).
static long recoveries_asked(void) {
    const char *asked = getenv(CF_WORKER_RECOVER_VARIABLE);
    long count = asked ? atol(asked) : 0;
    if (count <= 0) return 0;
    typedef void (*decider)(int, siginfo_t *, void *);
    void (*hand_over)(decider) = (void (*)(decider))dlsym(RTLD_DEFAULT, "cf_crash_reporter_recover_crashes_with");
    if (!hand_over) return 0;
    hand_over(recover_from_crash);
    recovers_faults = dlsym(RTLD_DEFAULT, "__sanitizer_print_stack_trace") == NULL;
    return count;
}

#else
static long recoveries_asked(void) { return 0; }
#endif

int cf_worker_guarded(void (*body)(void *), void *context) {
    if (recoveries_left <= 0) {
        body(context);
        return 0;
    }
    int signo = sigsetjmp(crash_return, 1);
    if (signo != 0) return signo;
    guarding = 1;
    body(context);
    guarding = 0;
    return 0;
}

int cf_worker_recovered_line(char *line, size_t capacity, int signal) {
    // The peak read when the crash was handed over (no second system call per crash).
    int n = snprintf(line, capacity, "%c %d %ld r\n", CF_WORKER_CHILD_ENDED, signal & 0x7F, peak_at_recovery_kb > 0 ? peak_at_recovery_kb : peak_kb());
    return n < 0 ? 0 : (size_t)n >= capacity ? (int)capacity - 1 : n;
}

// MARK: - The fork server (a crash costs a fork, not a process start)

/// How many threads this process runs; 0 when that cannot be told.
static int thread_count(void) {
#if defined(__linux__)
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks) return 0;
    int count = 0;
    struct dirent *entry;
    while ((entry = readdir(tasks)) != NULL)
        if (entry->d_name[0] != '.') count++;
    closedir(tasks);
    return count;
#elif defined(__APPLE__)
    thread_act_array_t threads;
    mach_msg_type_number_t count = 0;
    if (task_threads(mach_task_self(), &threads, &count) != KERN_SUCCESS) return 0;
    for (mach_msg_type_number_t i = 0; i < count; i++) mach_port_deallocate(mach_task_self(), threads[i]);
    vm_deallocate(mach_task_self(), (vm_address_t)threads, count * sizeof *threads);
    return (int)count;
#else
    return 0;
#endif
}

// What a crash costs a fork server. A child dies mid-input; the next child must serve the
// next input. Measured on a Swift loader (20 MB resident, 105 mappings, Foundation): the dying
// child's teardown (~0.4 ms of CPU: unmapping its pages), the fork (~0.25 ms) and, in the new
// child, ~70 page faults on its first input (~0.3 ms: a fork does not copy the page tables of
// code, so each code page is faulted in again, and each page written is copied). Two of these
// are taken off the way from one input to the next:
//
// - a spare child is forked ahead of need, while the current one serves;
// - corrupt-fuzz's crash reporter (crash_handler.c, preloaded on Linux) tells the server that
//   its child is dying once its report is written (CF_WORKER_DYING_VARIABLE), so the server
//   says `C` and lets the spare serve while the kernel still tears the dying child down.
//
// The CPU a crash costs stays the same: it runs beside the next inputs, on another core when
// one is free. (Faulting in the spare, before it is needed, the pages a child used, learned from
// a child's page map, made it slower: MADV_POPULATE_READ cost more than the faults it saved.)

void cf_worker_retire(void) { _exit(CF_WORKER_RETIRED_STATUS); }

/// In a child: the loader's own SIGPIPE disposition back; 1, for the child to serve.
static int became_child(const struct sigaction *pipe_action) {
    sigaction(SIGPIPE, pipe_action, NULL);
    recoveries_left = recoveries_per_child;
    peak_at_start_kb = peak_kb();
    return 1;
}

/// A child forked ahead of need, waiting for the server's word before it serves.
typedef struct {
    pid_t pid;  // 0: none
    int go;     // the server's end of the child's pipe
} spare_child;

/// Forks a spare: returns 1 in the spare once the server tells it to serve (the spare leaves
/// with status 0 when the server ends first), 0 in the server (`spare->pid` is 0 when the fork
/// failed).
static int fork_spare(spare_child *spare, const struct sigaction *pipe_action) {
    spare->pid = 0;
    int go[2];
    if (pipe(go) != 0) return 0;
    fcntl(go[0], F_SETFD, FD_CLOEXEC);
    fcntl(go[1], F_SETFD, FD_CLOEXEC);
    pid_t pid = fork();
    if (pid < 0) {
        close(go[0]);
        close(go[1]);
        return 0;
    }
    if (pid == 0) {
        close(go[1]);
        char word = 0;
        ssize_t n;
        while ((n = read(go[0], &word, 1)) < 0 && errno == EINTR) {}
        close(go[0]);
        if (n != 1) _exit(0);
        return became_child(pipe_action);
    }
    close(go[0]);
    spare->pid = pid;
    spare->go = go[1];
    return 0;
}

/// Tells a spare to serve; false when it cannot (it has ended: it is reaped).
static int release(spare_child *spare) {
    char word = 'g';
    ssize_t n;
    while ((n = write(spare->go, &word, 1)) < 0 && errno == EINTR) {}
    close(spare->go);
    if (n == 1) return 1;
    while (waitpid(spare->pid, NULL, 0) < 0 && errno == EINTR) {}
    spare->pid = 0;
    return 0;
}

/// How a child ended: its wait status and peak memory; `early` when its crash reporter said
/// so before it was gone (the server reaps it later).
typedef struct {
    int status;
    long peak_kb;
    int early;
} child_end;

static long peak_kilobytes(const struct rusage *usage) {
#if defined(__APPLE__)
    return usage->ru_maxrss / 1024;  // bytes on Darwin
#else
    return usage->ru_maxrss;
#endif
}

static child_end reap(pid_t child) {
    child_end end = {0, 0, 0};
    struct rusage usage;
    memset(&usage, 0, sizeof usage);
    while (wait4(child, &end.status, 0, &usage) < 0) {
        if (errno != EINTR) _exit(1);
    }
    end.peak_kb = peak_kilobytes(&usage);
    return end;
}

#if defined(__linux__)
/// The read end of the pipe children's crash reporters write to (-1: none).
static int dying_fd = -1;

/// Sets up the pipe crash reporters say a child is dying on, and tells them where it is.
static void listen_for_dying(void) {
#if defined(SYS_pidfd_open)
    // Only a server that can wait for its child and the pipe at once reads the pipe (pidfd,
    // Linux 5.3; a sandbox may refuse it): else no child is told where to write.
    int probe = (int)syscall(SYS_pidfd_open, getpid(), 0);
    if (probe < 0) return;
    close(probe);
    int fds[2];
    if (pipe(fds) != 0) return;
    // Not inherited by what a child executes; the write end stays in this process and its
    // children (forked, not executed). Neither end blocks: a notice that finds the pipe full is
    // dropped, and the server sees the child end all the same.
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    fcntl(fds[1], F_SETFL, O_NONBLOCK);
    char value[64];
    snprintf(value, sizeof value, "%d:%d", fds[1], (int)getpid());
    setenv(CF_WORKER_DYING_VARIABLE, value, 1);
    dying_fd = fds[0];
#endif
}

/// Waits until `child` ends or its crash reporter says it is dying.
static child_end wait_for(pid_t child) {
#if defined(SYS_pidfd_open)
    int pidfd = dying_fd >= 0 ? (int)syscall(SYS_pidfd_open, child, 0) : -1;
    if (pidfd >= 0) {
        for (;;) {
            struct pollfd watched[2] = {{pidfd, POLLIN, 0}, {dying_fd, POLLIN, 0}};
            int ready = poll(watched, 2, -1);
            if (ready < 0 && errno == EINTR) continue;
            if (ready < 0 || (watched[0].revents & (POLLIN | POLLHUP | POLLERR))) break;
            struct {
                int pid, signal;
                long peak_kb;
            } notice;
            ssize_t n = read(dying_fd, &notice, sizeof notice);
            if (n == (ssize_t)sizeof notice && notice.pid == (int)child) {
                close(pidfd);
                // It dies of its signal once its report is out; SIGKILL makes sure no part
                // of it reads another input.
                kill(child, SIGKILL);
                return (child_end){notice.signal & 0x7F, notice.peak_kb, 1};
            }
        }
        close(pidfd);
    }
#endif
    return reap(child);
}
#else
static void listen_for_dying(void) {}
static child_end wait_for(pid_t child) {
    return reap(child);
}
#endif

int cf_worker_fork_server(int result_fd) {
    const char *asked = getenv(CF_WORKER_FORK_SERVER_VARIABLE);
    if (!asked || strcmp(asked, "1") != 0) return 0;
    // A fork copies only the calling thread: a lock another thread held (malloc's, the
    // runtime's) would stay held forever in the child. Only a single-threaded worker forks.
    if (thread_count() != 1) return 0;
    // A spare that ended early must not end the server with SIGPIPE; children get the
    // loader's own disposition back.
    struct sigaction ignore, previous;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ignore, &previous);
    listen_for_dying();
    recoveries_per_child = recoveries_asked();
    spare_child spare;
    if (fork_spare(&spare, &previous)) return 1;
    pid_t dying = 0;
    for (;;) {
        pid_t child = spare.pid;
        if (child == 0 || !release(&spare)) {
            child = fork();
            if (child < 0) {
                if (dying) reap(dying);
                sigaction(SIGPIPE, &previous, NULL);
                return 0;  // serve in this process, as without a fork server
            }
            if (child == 0) return became_child(&previous);
        }
        // The next child is forked, and the last one reaped, while this one serves.
        if (fork_spare(&spare, &previous)) return 1;
        if (dying) reap(dying);
        child_end end = wait_for(child);
        dying = end.early ? child : 0;
        // Standard input ended: corrupt-fuzz is done with this worker.
        if (!end.early && WIFEXITED(end.status) && WEXITSTATUS(end.status) == 0) _exit(0);
        char line[64];
        int n = snprintf(line, sizeof line, "%c %d %ld\n", CF_WORKER_CHILD_ENDED, end.status, end.peak_kb);
        if (n <= 0 || write_all(result_fd, line, (size_t)n) != 0) _exit(0);
    }
}

/// Runs one input through whichever kind of load function was given.
typedef struct {
    cf_worker_load_fn load_data;
    cf_worker_load_path_fn load_path;
} loader;

static int cf_worker_run_input(const char *path, loader how, cf_worker_reply *reply) {
    if (how.load_data) return cf_worker_read_and_load(path, path ? NULL : stdin, how.load_data, reply);
    memset(reply, 0, sizeof *reply);
    reply->kind = CF_WORKER_REJECTED;
    int status = how.load_path(path, reply);
    if (status == 0 && reply->kind == CF_WORKER_REJECTED) reply->kind = CF_WORKER_ACCEPTED;
    if (status != 0) reply->kind = CF_WORKER_REJECTED;
    return status;
}

/// One input's run, as cf_worker_guarded calls it: the file at `path`, or the `size` bytes at
/// `sent` (an input sent whole).
typedef struct {
    const char *path;
    loader how;
    cf_worker_reply *reply;
    const uint8_t *sent;
    size_t size;
} input_run;

static void cf_worker_run_guarded_input(void *context) {
    input_run *run = context;
    if (run->sent)
        cf_worker_load_bytes(run->how.load_data, run->sent, run->size, run->reply);
    else
        cf_worker_run_input(run->path, run->how, run->reply);
}

static int cf_worker_serve(int argc, char **argv, loader how) {
    static cf_worker_reply reply;
    const char *variable = getenv(CF_WORKER_FD_VARIABLE);
    if (variable && *variable) {
        int fd = atoi(variable);
        char *line = NULL;
        size_t capacity = 0;
        ssize_t length;
        static char out[sizeof reply.reason + sizeof reply.text + 8];
        int served = 0;
        char hello[32];
        // A loader that takes bytes takes them sent whole, without a file.
        int said = snprintf(
            hello, sizeof hello, "%c %d%s\n", CF_WORKER_HELLO, CF_WORKER_PROTOCOL_VERSION, how.load_data ? " " CF_WORKER_BYTES_FEATURE : "");
        if (write_all(fd, hello, (size_t)said) != 0) return 0;
        while ((length = getline(&line, &capacity, stdin)) > 0) {
            if (line[length - 1] == '\n') line[--length] = '\0';
            if (length == 1 && line[0] == CF_WORKER_RETIRE) cf_worker_retire();
            input_run run = {line, how, &reply, NULL, 0};
            long long size = how.load_data ? sent_size(line) : -1;
            uint8_t *sent = NULL;
            if (size >= 0) {
                sent = cf_worker_read_sent_bytes((size_t)size);
                if (!sent) break;  // standard input ended mid-input: corrupt-fuzz is gone
                run.sent = sent;
                run.size = (size_t)size;
            }
            int crashed = cf_worker_guarded(cf_worker_run_guarded_input, &run);
            if (cf_coverage_collect) cf_coverage_collect();
            // Not after a crash lived through: it may have left the allocator's lock held.
            if (!crashed) free(sent);
            if (crashed) {
                // Lived through a crash: the input's reply says it crashed.
                int n = cf_worker_recovered_line(out, sizeof out, crashed);
                if (write_all(fd, out, (size_t)n) != 0) break;
                continue;
            }
            flatten(reply.reason);
            flatten(reply.text);
            int n;
            if (reply.kind == CF_WORKER_REJECTED)
                n = snprintf(out, sizeof out, "%c %s %s\n", CF_WORKER_REJECTED, reply.reason[0] ? reply.reason : "-", reply.text);
            else
                n = snprintf(out, sizeof out, "%c %s\n", reply.kind, reply.text);
            if (n < 0) n = 0;
            if ((size_t)n >= sizeof out) { n = (int)sizeof out - 1; out[n - 1] = '\n'; }
            if (write_all(fd, out, (size_t)n) != 0) break;
            // After the first input, with the loader warm: every forked child starts from there.
            if (++served == 1) cf_worker_fork_server(fd);
        }
        free(line);
        return 0;
    }
    int status = cf_worker_run_input(argc > 1 ? argv[1] : NULL, how, &reply);
    if (status == 0) {
        printf("%s\n", reply.text);
        return 0;
    }
    fprintf(stderr, "reason: %s\n%s\n", reply.reason[0] ? reply.reason : "-", reply.text);
    return 1;
}

int cf_worker_main(int argc, char **argv, cf_worker_load_fn load) {
    loader how = {load, NULL};
    return cf_worker_serve(argc, argv, how);
}

int cf_worker_main_paths(int argc, char **argv, cf_worker_load_path_fn load) {
    loader how = {NULL, load};
    return cf_worker_serve(argc, argv, how);
}
