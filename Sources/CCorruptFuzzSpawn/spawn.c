// Process execution for corrupt-fuzz: fork/exec with a process group, resource limits,
// capped capture of stdout/stderr, a deadline enforced with SIGKILL on the whole group.
//
// Written in C rather than Swift because the child side between fork() and execve() may only
// call async-signal-safe functions, and because this is the fuzzing loop's hot path.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE  // memmem, pipe2 on glibc
#endif
#include "CCorruptFuzzSpawn.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#elif defined(__APPLE__)
#include <malloc/malloc.h>
#endif
#ifdef __linux__
#include <sys/prctl.h>
#endif
#ifdef __APPLE__
#include <spawn.h>
#endif

// MARK: - Children we started, and the ones that escaped

// Every process cf_run and cf_worker_spawn start is registered here until it is reaped, so a
// sweep can tell our own children from descendants that were re-parented to us. The lock is
// held from before the child is started until its pid is registered: a sweep on another thread never sees a
// child of ours that is not registered yet.
static pthread_mutex_t children_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t *children = NULL;
static size_t children_count = 0, children_cap = 0;
#ifdef __linux__
static int subreaper = 0;
#endif

static void register_child_locked(pid_t pid) {
    if (children_count == children_cap) {
        size_t cap = children_cap ? children_cap * 2 : 64;
        pid_t *grown = realloc(children, cap * sizeof *grown);
        if (!grown) return;  // the child then looks like an escapee only if we become a subreaper
        children = grown;
        children_cap = cap;
    }
    children[children_count++] = pid;
}

#ifdef __linux__
static int is_child_locked(pid_t pid) {
    for (size_t i = 0; i < children_count; i++)
        if (children[i] == pid) return 1;
    return 0;
}
#endif

void cf_forget_child(int pid) {
    pthread_mutex_lock(&children_lock);
    for (size_t i = 0; i < children_count; i++) {
        if (children[i] == (pid_t)pid) {
            children[i] = children[--children_count];
            break;
        }
    }
    pthread_mutex_unlock(&children_lock);
}

int cf_become_subreaper(void) {
#if defined(__linux__) && defined(PR_SET_CHILD_SUBREAPER)
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0) {
        subreaper = 1;
        return 0;
    }
    return -1;
#else
    errno = ENOSYS;
    return -1;
#endif
}

#ifdef __linux__
/// The parent pid in /proc/PID/stat ("pid (comm) state ppid ..."; comm may hold spaces and
/// parentheses, so the fields are read after the last ')').
static pid_t parent_of(pid_t pid, char *state_out) {
    char path[64], buffer[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buffer, sizeof buffer - 1);
    close(fd);
    if (n <= 0) return -1;
    buffer[n] = 0;
    char *close_paren = strrchr(buffer, ')');
    if (!close_paren) return -1;
    char state = 0;
    int ppid = -1;
    if (sscanf(close_paren + 1, " %c %d", &state, &ppid) != 2) return -1;
    *state_out = state;
    return (pid_t)ppid;
}

/// Whether SIGKILL is pending for `pid` (/proc/PID/status, `ShdPnd` for a signal sent to the
/// process or its group, `SigPnd` for one sent to the thread).
static int kill_pending(pid_t pid) {
    char path[64], buffer[4096];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buffer, sizeof buffer - 1);
    close(fd);
    if (n <= 0) return 0;
    buffer[n] = 0;
    for (const char *name = "SigPnd:"; name; name = strcmp(name, "SigPnd:") == 0 ? "ShdPnd:" : NULL) {
        const char *line = strstr(buffer, name);
        if (line && (strtoull(line + strlen(name), NULL, 16) & (1ULL << (SIGKILL - 1)))) return 1;
    }
    return 0;
}
#endif

int cf_process_ending(int pid) {
#ifdef __linux__
    char path[64], buffer[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 1;  // gone
    ssize_t n = read(fd, buffer, sizeof buffer - 1);
    close(fd);
    if (n <= 0) return 1;
    buffer[n] = 0;
    // "pid (comm) state ppid pgrp session tty_nr tpgid flags ..."; comm may hold spaces and
    // parentheses, so the fields are read after the last ')'.
    char *close_paren = strrchr(buffer, ')');
    if (!close_paren) return 0;
    char state = 0;
    int ppid, pgrp, session, tty, tpgid;
    unsigned int flags = 0;
    int got = sscanf(close_paren + 1, " %c %d %d %d %d %d %u", &state, &ppid, &pgrp, &session, &tty, &tpgid, &flags);
    if (got >= 1 && (state == 'Z' || state == 'X')) return 1;
    if (got == 7 && (flags & 0x4)) return 1;  // PF_EXITING
    return kill_pending((pid_t)pid);
#else
    (void)pid;
    return 0;
#endif
}

int cf_reap_escapees(void) {
#ifdef __linux__
    if (!subreaper) return 0;
    pid_t self = getpid();
    int found = 0;
    pthread_mutex_lock(&children_lock);
    DIR *proc = opendir("/proc");
    if (proc) {
        struct dirent *entry;
        while ((entry = readdir(proc)) != NULL) {
            char *end;
            long pid = strtol(entry->d_name, &end, 10);
            if (*end != 0 || pid <= 0 || pid == self) continue;
            char state = 0;
            if (parent_of((pid_t)pid, &state) != self || is_child_locked((pid_t)pid)) continue;
            // A process already ending was not left running: a worker's fork server child
            // killed with the worker's group, still being torn down when its server was reaped.
            int ending = cf_process_ending((pid_t)pid);
            // A descendant of a target that outlived it (a daemon, `setsid cmd &`), or its
            // zombie: kill it with its group, and reap it.
            kill(-(pid_t)pid, SIGKILL);
            kill((pid_t)pid, SIGKILL);
            int status;
            for (int tries = 0; tries < 200; tries++) {
                pid_t r = waitpid((pid_t)pid, &status, WNOHANG);
                if (r == (pid_t)pid || (r < 0 && errno != EINTR)) break;
                struct timespec pause = {0, 1000000};
                nanosleep(&pause, NULL);
            }
            if (!ending) found++;  // one already dead or dying: reaped, not counted
        }
        closedir(proc);
    }
    pthread_mutex_unlock(&children_lock);
    return found;
#else
    return 0;
#endif
}

static int64_t now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

/// Whether any process of group `pgid` is alive: not a zombie, not gone. Linux reads each
/// process's /proc stat; elsewhere a zombie counts as alive (kill(2) cannot tell them apart).
static int group_has_live_member(pid_t pgid) {
#ifdef __linux__
    DIR *proc = opendir("/proc");
    if (!proc) return kill(-pgid, 0) == 0;
    int alive = 0;
    struct dirent *entry;
    while (!alive && (entry = readdir(proc)) != NULL) {
        if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
        char path[64], buffer[512];
        snprintf(path, sizeof path, "/proc/%s/stat", entry->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        ssize_t n = read(fd, buffer, sizeof buffer - 1);
        close(fd);
        if (n <= 0) continue;
        buffer[n] = 0;
        // "pid (comm) state ppid pgrp ...": fields after the last ')'.
        char *close_paren = strrchr(buffer, ')');
        char state = 0;
        int ppid = 0, pgrp = 0;
        if (!close_paren || sscanf(close_paren + 1, " %c %d %d", &state, &ppid, &pgrp) != 3) continue;
        if (pgrp == (int)pgid && state != 'Z' && state != 'X') alive = 1;
    }
    closedir(proc);
    return alive;
#else
    return kill(-pgid, 0) == 0;
#endif
}

/// Waits until nothing of a run's process group is left alive, once its leader is reaped. What
/// the target left behind was sent SIGKILL with its group, but a killed process exits only when
/// it is next scheduled: on a loaded machine that can take longer than the run's last look at
/// its output, and a run that returned then left a process of its own running beside the next
/// one (a test saw a target's leftover child alive after its run). Killed again at each look.
/// Bounded at 5 s, so that a process stuck in an uninterruptible wait cannot hold up a campaign.
static void await_group_end(pid_t pgid) {
    if (kill(-pgid, 0) != 0) return;  // nothing left: the usual case, one system call
    int64_t until = now_us() + 5 * 1000000LL;
    for (;;) {
        kill(-pgid, SIGKILL);
        if (!group_has_live_member(pgid) || now_us() >= until) return;
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
    }
}

/// Reads what is available on `fd` into `cap`; returns 0 on EOF, 1 if more may come.
static int drain(int fd, cf_capture *cap) {
    uint8_t scratch[65536];
    for (;;) {
        uint8_t *dst;
        size_t room;
        if (cap->length < cap->cap) {
            dst = cap->bytes + cap->length;
            room = cap->cap - cap->length;
        } else {
            dst = scratch;
            room = sizeof scratch;
        }
        ssize_t n = read(fd, dst, room);
        if (n > 0) {
            if (dst != scratch) cap->length += (size_t)n;
            cap->total += (uint64_t)n;
            continue;
        }
        if (n == 0) return 0;
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return 1;
        return 0;
    }
}

/// How long a target that is printing a crash report at its deadline may go on: symbolicating
/// a 100,000-frame stack overflow takes about a second.
#define CF_CRASH_GRACE_US (5 * 1000000LL)

/// Whether the captured stderr shows a crash report being written (Swift's backtracer, a
/// sanitizer).
static int crashing(const cf_capture *err) {
    static const char *markers[] = {"*** Program crashed:", ": Backtracing from ", "ERROR: AddressSanitizer", "ERROR: UndefinedBehaviorSanitizer"};
    if (err->length == 0) return 0;
    for (size_t m = 0; m < sizeof markers / sizeof markers[0]; m++) {
        if (memmem(err->bytes, err->length, markers[m], strlen(markers[m])) != NULL) return 1;
    }
    return 0;
}

#ifndef __APPLE__
/// In a vforked child: a process group of its own, default signal handlers, no core dumps,
/// the memory limit, and all signals unblocked (the parent blocked them around vfork).
/// Async-signal-safe calls only.
static void prepare_child(int64_t memory_limit) {
    setpgid(0, 0);
    for (int sig = 1; sig < NSIG; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP) continue;
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigaction(sig, &dfl, NULL);  // fails harmlessly for signals glibc reserves
    }
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    if (memory_limit > 0) {
        struct rlimit as = {(rlim_t)memory_limit, (rlim_t)memory_limit};
        setrlimit(RLIMIT_AS, &as);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}
#endif

/// Starts `path` in a process group of its own with `fds[0..2]` as its standard input, output
/// and error and, when `extra_fd` >= 0, that descriptor as its fd 3; registers it as our child.
/// Returns its pid, or -1 with errno set when it could not be started (fork or exec failed).
///
/// Linux: vfork, so starting a target costs no page-table copy (the fuzzing loop's hot path).
/// All signals stay blocked across the vfork so no handler of ours runs on the child's side;
/// the child resets them, sets its limits and unblocks them before execve, and reports an exec
/// failure through `child_errno` (shared memory until execve).
/// Darwin: posix_spawn with its own process group, default signal handlers and an empty mask.
/// It cannot set resource limits: the memory limit is judged from the child's peak RSS there
/// (RLIMIT_AS is not enforced by macOS anyway), and core dumps are off by default.
static pid_t start_child_once(const char *path, char *const argv[], char *const envp[], const int fds[3], int extra_fd,
                              int64_t memory_limit) {
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_mutex_lock(&children_lock);
#ifdef __APPLE__
    (void)memory_limit;
    pid_t pid = -1;
    int spawn_errno = 0;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_t actions;
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_init(&actions);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK
                                        | POSIX_SPAWN_CLOEXEC_DEFAULT);
    for (int i = 0; i < 3; i++) {
        if (fds[i] >= 0) posix_spawn_file_actions_adddup2(&actions, fds[i], i);
    }
    if (extra_fd >= 0) posix_spawn_file_actions_adddup2(&actions, extra_fd, 3);
    spawn_errno = posix_spawn(&pid, path, &actions, &attr, argv, envp);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (spawn_errno != 0) pid = -1;
    else register_child_locked(pid);
    pthread_mutex_unlock(&children_lock);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (pid < 0) { errno = spawn_errno; return -1; }
    return pid;
#else
    volatile int child_errno = 0;
    pid_t pid = vfork();
    if (pid == 0) {
        prepare_child(memory_limit);
        if ((fds[0] >= 0 && dup2(fds[0], STDIN_FILENO) < 0) || dup2(fds[1], STDOUT_FILENO) < 0
            || dup2(fds[2], STDERR_FILENO) < 0 || (extra_fd >= 0 && dup2(extra_fd, 3) < 0)) {
            child_errno = errno;
            _exit(127);
        }
        execve(path, argv, envp);
        child_errno = errno;
        _exit(127);
    }
    int fork_errno = errno;
    if (pid > 0) register_child_locked(pid);
    pthread_mutex_unlock(&children_lock);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (pid < 0) { errno = fork_errno; return -1; }
    setpgid(pid, pid);  // also from the parent, so the group exists before we may kill it
    if (child_errno != 0) {
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
        cf_forget_child(pid);
        errno = child_errno;
        return -1;
    }
    return pid;
#endif
}

/// start_child_once, again while exec fails with ETXTBSY, for up to a second: an executable
/// written just before (a script a test or a build wrote) is "busy" for as long as any process
/// forked meanwhile, by any thread, still holds the writer's descriptor; that clears in
/// milliseconds, and a target must not be refused for it.
static pid_t start_child(const char *path, char *const argv[], char *const envp[], const int fds[3], int extra_fd,
                         int64_t memory_limit) {
    for (int attempt = 0;; attempt++) {
        pid_t pid = start_child_once(path, argv, envp, fds, extra_fd, memory_limit);
        if (pid >= 0 || errno != ETXTBSY || attempt >= 100) return pid;
        struct timespec pause = {0, 10 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
}

int cf_run(const char *path, char *const argv[], char *const envp[], int stdin_fd,
           int64_t memory_limit, int timeout_ms, int cpu_timeout_ms, cf_result *r) {
    r->end = CF_SPAWN_FAILED;
    r->code = 0;
    r->max_rss_kb = 0;
    r->elapsed_us = 0;
    r->starved = 0;
    r->out.length = 0;
    r->out.total = 0;
    r->err.length = 0;
    r->err.total = 0;

    int out_pipe[2], err_pipe[2];
    if (cf_pipe_cloexec(out_pipe) != 0) { r->code = errno; return -1; }
    if (cf_pipe_cloexec(err_pipe) != 0) {
        r->code = errno; close(out_pipe[0]); close(out_pipe[1]); return -1;
    }
    int null_fd = -1;
    if (stdin_fd < 0) null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int in_fd = stdin_fd >= 0 ? stdin_fd : null_fd;

    int64_t start = now_us();
    const int child_fds[3] = {in_fd, out_pipe[1], err_pipe[1]};
    pid_t pid = start_child(path, argv, envp, child_fds, -1, memory_limit);
    int start_errno = errno;
    close(out_pipe[1]);
    close(err_pipe[1]);
    if (null_fd >= 0) close(null_fd);
    if (pid < 0) {
        r->end = CF_SPAWN_FAILED;
        r->code = start_errno;
        close(out_pipe[0]); close(err_pipe[0]);
        return -1;
    }

    fcntl(out_pipe[0], F_SETFL, O_NONBLOCK);
    fcntl(err_pipe[0], F_SETFL, O_NONBLOCK);
    int pidfd = open_pidfd(pid);
    int out_open = 1, err_open = 1, exited = 0, timed_out = 0, grace_used = 0;
    int64_t deadline = timeout_ms > 0 ? start + (int64_t)timeout_ms * 1000 : INT64_MAX;
    cf_cpu_deadline cpu_deadline;
    if (cpu_timeout_ms > 0) {
        cf_cpu_deadline_start(&cpu_deadline, pid, cpu_timeout_ms, timeout_ms > 0 ? timeout_ms : INT32_MAX);
        deadline = start + (int64_t)cpu_timeout_ms * 1000;
    }
    siginfo_t info;

    while (!exited) {
        struct pollfd fds[3];
        int n = 0, out_i = -1, err_i = -1, pid_i = -1;
        if (out_open) { fds[n].fd = out_pipe[0]; fds[n].events = POLLIN; out_i = n++; }
        if (err_open) { fds[n].fd = err_pipe[0]; fds[n].events = POLLIN; err_i = n++; }
        if (pidfd >= 0) { fds[n].fd = pidfd; fds[n].events = POLLIN; pid_i = n++; }
        int64_t left_us = deadline - now_us();
        if (left_us <= 0) {
            // A target that is crashing at the deadline (its runtime is printing a backtrace,
            // which takes a second for a deep stack) is a crash, not a hang: give it a grace
            // period to die of its signal, once.
            if (!grace_used && crashing(&r->err)) {
                grace_used = 1;
                deadline = now_us() + CF_CRASH_GRACE_US;
                continue;
            }
            if (cpu_timeout_ms > 0) {
                int64_t more = cf_cpu_deadline_more(&cpu_deadline);
                if (more > 0) {
                    deadline = now_us() + more;
                    continue;
                }
                // It may have exited while its usage was read.
                memset(&info, 0, sizeof info);
                if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid) {
                    exited = 1;
                    break;
                }
            }
            timed_out = 1;
            break;
        }
        int wait_ms = left_us > INT32_MAX / 2 ? INT32_MAX / 2 : (int)((left_us + 999) / 1000);
        if (pidfd < 0 && wait_ms > 5) wait_ms = 5;  // no pidfd: poll for the exit
        int ready = poll(fds, (nfds_t)n, wait_ms);
        if (ready < 0 && errno != EINTR) break;
        if (ready > 0) {
            if (out_i >= 0 && fds[out_i].revents) out_open = drain(out_pipe[0], &r->out);
            if (err_i >= 0 && fds[err_i].revents) err_open = drain(err_pipe[0], &r->err);
        }
        if (pid_i >= 0 && ready > 0 && !fds[pid_i].revents) continue;
        memset(&info, 0, sizeof info);
        // WNOWAIT: keep the child unreaped, so its pid (= the group id) cannot be reused
        // before we have killed what it left behind.
        if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid) {
            exited = 1;
        }
    }
    r->elapsed_us = now_us() - start;
    // Kill the whole group: on timeout the target itself, otherwise whatever it left running.
    kill(-pid, SIGKILL);
    if (timed_out) kill(pid, SIGKILL);

    struct rusage usage;
    int status = 0;
    memset(&usage, 0, sizeof usage);
    while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {}
    cf_forget_child(pid);
    if (pidfd >= 0) close(pidfd);
    await_group_end(pid);
    // The child was vforked: at exec, Linux folds the high-water RSS of the address space it
    // left (ours) into its own maxrss. A peak that is not above our own is ours, not the
    // target's, so it is reported as unknown (0).
    int64_t child_kb = cf_max_rss_kb(&usage), own_kb = cf_self_max_rss_kb();
    r->max_rss_kb = child_kb > own_kb ? child_kb : 0;

    // Collect the rest of the output. Everything in the group is dead now, so EOF comes at once
    // unless a grandchild escaped into its own session; bound the wait for that case.
    int64_t drain_deadline = now_us() + 50000;
    while (out_open || err_open) {
        struct pollfd fds[2];
        int n = 0, out_i = -1, err_i = -1;
        if (out_open) { fds[n].fd = out_pipe[0]; fds[n].events = POLLIN; out_i = n++; }
        if (err_open) { fds[n].fd = err_pipe[0]; fds[n].events = POLLIN; err_i = n++; }
        int64_t left = drain_deadline - now_us();
        if (left <= 0) break;
        int ready = poll(fds, (nfds_t)n, (int)(left / 1000) + 1);
        if (ready <= 0) { if (ready < 0 && errno == EINTR) continue; break; }
        if (out_i >= 0 && fds[out_i].revents) out_open = drain(out_pipe[0], &r->out);
        if (err_i >= 0 && fds[err_i].revents) err_open = drain(err_pipe[0], &r->err);
    }
    close(out_pipe[0]);
    close(err_pipe[0]);

    if (timed_out) {
        r->end = CF_TIMED_OUT;
        r->code = SIGKILL;
        r->starved = cpu_timeout_ms > 0 && cpu_deadline.starved;
    } else if (WIFSIGNALED(status)) {
        r->end = CF_SIGNALED;
        r->code = WTERMSIG(status);
    } else {
        r->end = CF_EXITED;
        r->code = WEXITSTATUS(status);
    }
    return 0;
}

// MARK: - Persistent workers

int cf_worker_spawn(const char *path, char *const argv[], char *const envp[], int command_fd, int result_fd,
                    int log_fd, int64_t memory_limit) {
    const int child_fds[3] = {command_fd, log_fd, log_fd};
    return start_child(path, argv, envp, child_fds, result_fd, memory_limit);
}

int cf_pipe_cloexec(int fds[2]) {
#ifdef __linux__
    return pipe2(fds, O_CLOEXEC);
#else
    // No pipe2: the descriptors are inheritable until FD_CLOEXEC is set. Every spawn of ours
    // holds children_lock while it starts the child, so holding it here keeps other slots' children from
    // inheriting them in between.
    pthread_mutex_lock(&children_lock);
    int made = pipe(fds);
    if (made == 0) {
        fcntl(fds[0], F_SETFD, FD_CLOEXEC);
        fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    }
    pthread_mutex_unlock(&children_lock);
    return made;
#endif
}

int64_t cf_max_rss_kb(const struct rusage *usage) {
#ifdef __APPLE__
    return (int64_t)usage->ru_maxrss / 1024;  // bytes on Darwin
#else
    return (int64_t)usage->ru_maxrss;         // kilobytes on Linux
#endif
}

int64_t cf_self_max_rss_kb(void) {
    struct rusage self;
    memset(&self, 0, sizeof self);
    getrusage(RUSAGE_SELF, &self);
    return cf_max_rss_kb(&self);
}

// MARK: - Interrupts

static volatile sig_atomic_t interrupted = 0;

static void on_interrupt(int sig) {
    if (interrupted) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    interrupted = 1;
}

void cf_install_interrupt_handler(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int cf_interrupted(void) { return interrupted != 0; }

void cf_request_interrupt(void) { interrupted = 1; }

void cf_return_large_blocks_at_once(void) {
#if defined(__GLIBC__)
    // A fixed threshold turns off glibc's dynamic one, which after the first large block is
    // freed serves blocks up to 32 MB from the heap, where freed ones stay resident.
    mallopt(M_MMAP_THRESHOLD, 256 << 10);
#endif
}

void cf_release_freed_memory(void) {
#if defined(__GLIBC__)
    malloc_trim(0);
#elif defined(__APPLE__)
    malloc_zone_pressure_relief(NULL, 0);
#endif
}
