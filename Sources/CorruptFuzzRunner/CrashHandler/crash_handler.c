// corrupt-fuzz's crash reporter, preloaded into every target it runs (LD_PRELOAD, Linux): a C,
// C++, Rust or Swift loader dies of SIGSEGV, SIGILL or SIGABRT, and this says where. It
// installs handlers for the crash signals that nothing else has claimed: a sanitizer's own
// handler, or Swift's backtracer when the user turned it on (SWIFT_BACKTRACE), wins, and its
// report is read as it is.
//
// On a crash it writes the crashed thread's frames to standard error, then dies of the same
// signal:
//
//     [crash reporter in the target] signal 11 at 0x0
//         #0 0x5581a2c3e1b4 in (/work/parser+0x11b4)
//         #1 0x5581a2c3e2f0 in (/work/parser+0x12f0)
//
// Each frame is its module and its offset there, nothing else: corrupt-fuzz names the frames
// itself (Symbolizer.swift: the program's own symbol table, static functions included, and its
// debug info's lines), the same way for every mode that runs the target. The frames come from
// the unwinder with CFI (backtrace(), libgcc's), which goes through libc's abort() and raise()
// and through frames without frame pointers, as Swift's own backtracer on Linux does not.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <ucontext.h>
#include <unistd.h>

static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP};

static void write_text(const char *text, size_t length) {
    while (length > 0) {
        ssize_t n = write(STDERR_FILENO, text, length);
        if (n <= 0) return;
        text += n;
        length -= (size_t)n;
    }
}

// The main program's path, for frames in it (the dynamic linker names it "").
static char program[512];

struct module_lookup {
    uintptr_t address;
    const char *name;
    uintptr_t base;
};

static int find_module(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct module_lookup *lookup = data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        if (segment->p_type != PT_LOAD) continue;
        uintptr_t start = info->dlpi_addr + segment->p_vaddr;
        if (lookup->address >= start && lookup->address < start + segment->p_memsz) {
            lookup->name = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : program;
            lookup->base = info->dlpi_addr;
            return 1;
        }
    }
    return 0;
}

// A frame as its module's path and the offset in it. No symbol: dladdr looks for one through all
// of a module's symbols (tens of thousands in the Swift runtime and Foundation), for every
// frame, and knows only exported ones.
static void describe(void *address, char *line, size_t size, int index) {
    struct module_lookup lookup = {(uintptr_t)address, NULL, 0};
    if (dl_iterate_phdr(find_module, &lookup) && lookup.name) {
        snprintf(line, size, "    #%d %p in (%s+0x%lx)\n", index, address, lookup.name, (unsigned long)((uintptr_t)address - lookup.base));
    } else {
        snprintf(line, size, "    #%d %p in (?+0x%lx)\n", index, address, (unsigned long)(uintptr_t)address);
    }
}

// A persistent worker's fork server waits for its child to end; the report is written, so it
// need not wait for the kernel to tear this process down (CORRUPT_FUZZ_DYING, set by
// corrupt_fuzz_worker.c: the descriptor to write to and the server's process id, which must
// be this process's parent: a program the child ran has the variable too).
static void tell_fork_server(int signo) {
    const char *dying = getenv("CORRUPT_FUZZ_DYING");
    if (!dying) return;
    char *end = NULL;
    long fd = strtol(dying, &end, 10);
    if (!end || *end != ':') return;
    long server = strtol(end + 1, NULL, 10);
    if (fd < 0 || server <= 0 || getppid() != (pid_t)server) return;
    struct rusage usage;
    memset(&usage, 0, sizeof usage);
    getrusage(RUSAGE_SELF, &usage);
    struct {
        int pid, signal;
        long peak_kb;
    } notice = {(int)getpid(), signo, usage.ru_maxrss};
    ssize_t n = write((int)fd, &notice, sizeof notice);
    (void)n;
}

// A persistent worker's fork server child that may live through a crash
// (CORRUPT_FUZZ_RECOVER_CRASHES, corrupt_fuzz_worker.c) hands this reporter the function that
// decides: called once the report is written, it returns only when the child is to die.
static void (*recovery)(int, siginfo_t *, void *) = NULL;

__attribute__((visibility("default"))) void cf_crash_reporter_recover_crashes_with(void (*decide)(int, siginfo_t *, void *)) {
    recovery = decide;
}

static void on_crash(int signo, siginfo_t *info, void *context);

static void install(int signo) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_crash;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    sigaction(signo, &action, NULL);
}

// The report, written at once: a child that lives through crashes (recovery) writes one per
// crash, and a write per frame cost it a fifth of a crash's time.
static char report[64 * 1024];

// How many frames a report has at most: enough for a recursion's cycle to show many times over
// (a stack overflow is named by what recursed).
#define MAX_FRAMES 160

static void on_crash(int signo, siginfo_t *info, void *context) {
    char line[1024];
    size_t length = 0;
    snprintf(report, sizeof report, "[crash reporter in the target] signal %d at %p\n", signo, info ? info->si_addr : NULL);
    length = strlen(report);
    static void *frames[MAX_FRAMES];
    int count = backtrace(frames, MAX_FRAMES);
    // The frames of this handler and of the kernel's return trampoline come first: start at the
    // interrupted instruction.
    void *pc = NULL;
#if defined(__x86_64__)
    if (context) pc = (void *)((ucontext_t *)context)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    if (context) pc = (void *)((ucontext_t *)context)->uc_mcontext.pc;
#endif
    int first = 0;
    for (int i = 0; i < count; i++) {
        if (frames[i] == pc) { first = i; break; }
        if (i == count - 1) first = count > 2 ? 2 : 0;
    }
    int index = 0;
    for (int i = first; i < count; i++) {
        // A return address points after the call: one byte back is inside it (not for the
        // faulting instruction itself).
        void *address = i == first && pc ? frames[i] : (void *)((uintptr_t)frames[i] - 1);
        describe(address, line, sizeof line, index++);
        size_t n = strlen(line);
        if (length + n >= sizeof report) {
            write_text(report, length);
            length = 0;
        }
        memcpy(report + length, line, n);
        length += n;
    }
    write_text(report, length);
    if (recovery) {
        // Handled again next time (SA_RESETHAND put the default back) if the child lives on.
        install(signo);
        recovery(signo, info, context);
        signal(signo, SIG_DFL);
    }
    tell_fork_server(signo);
    // Die of the same signal, as the process would have without this handler.
    signal(signo, SIG_DFL);
    raise(signo);
}

__attribute__((constructor)) static void corrupt_fuzz_install_crash_handler(void) {
    // Swift programs too: corrupt-fuzz turns Swift's backtracer off (SWIFT_BACKTRACE=enable=no)
    // unless the user asked for it, and then its handler, installed by the runtime, is the
    // one that reports.
    ssize_t length = readlink("/proc/self/exe", program, sizeof program - 1);
    program[length > 0 ? length : 0] = '\0';
    // An alternate stack, so a stack overflow can still be reported.
    static char stack[64 * 1024];
    stack_t alternate = {.ss_sp = stack, .ss_size = sizeof stack, .ss_flags = 0};
    sigaltstack(&alternate, NULL);
    // backtrace() loads libgcc on its first call; not in a signal handler, then.
    void *warm[1];
    backtrace(warm, 1);
    for (size_t i = 0; i < sizeof crash_signals / sizeof crash_signals[0]; i++) {
        struct sigaction old;
        if (sigaction(crash_signals[i], NULL, &old) != 0) continue;
        if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) continue;  // someone else's
        install(crash_signals[i]);
    }
}
