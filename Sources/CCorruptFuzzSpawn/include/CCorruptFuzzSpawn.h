#ifndef C_CORRUPT_FUZZ_SPAWN_H
#define C_CORRUPT_FUZZ_SPAWN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>

#ifdef __cplusplus
extern "C" {
#endif

/// How a child run ended.
typedef enum {
    CF_EXITED = 0,       ///< exited normally; `code` is the exit status
    CF_SIGNALED = 1,     ///< killed by a signal it did not get from us; `code` is the signal
    CF_TIMED_OUT = 2,    ///< still running at the deadline; its process group was killed
    CF_SPAWN_FAILED = 3, ///< could not be started; `code` is errno
} cf_end;

/// One captured stream: the first `cap` bytes are kept, the rest is counted and dropped.
typedef struct {
    uint8_t *bytes;  ///< caller-owned buffer of `cap` bytes
    size_t cap;
    size_t length;   ///< bytes kept (<= cap)
    uint64_t total;  ///< bytes the child wrote in all
} cf_capture;

typedef struct {
    cf_end end;
    int code;
    int64_t max_rss_kb;   ///< peak resident set size of the child (getrusage); 0 when unknown
    int64_t elapsed_us;
    cf_capture out;
    cf_capture err;
    /// With a deadline in CPU time: the run reached the wall-clock cap still runnable, with less
    /// than half its CPU time (the machine gave it too little CPU to tell a hang from a slow run).
    int starved;
} cf_result;

/// Runs `path` with `argv`/`envp` in a new process group and waits for it.
///
/// stdin is `stdin_fd` (or /dev/null when negative). stdout and stderr are captured into the
/// caller's buffers. The address space is limited to `memory_limit` bytes when it is positive,
/// core dumps are off. At `timeout_ms` the whole process group gets SIGKILL. When the child
/// exits, whatever it left behind in its group is killed too, so no run can leak processes.
///
/// With `cpu_timeout_ms` > 0 the deadline is in CPU time (a hang's confirmation): at
/// `cpu_timeout_ms` of wall-clock time, and then every quarter second, the group's CPU time is
/// read; the run is a hang when it reaches `cpu_timeout_ms`, when the group sleeps without
/// using CPU, or at `timeout_ms` of wall-clock time, whichever comes first (cf_cpu_deadline).
int cf_run(const char *path, char *const argv[], char *const envp[], int stdin_fd,
           int64_t memory_limit, int timeout_ms, int cpu_timeout_ms, cf_result *result);

/// The CPU time of a process group and whether it can run.
typedef struct {
    int64_t cpu_us;  ///< user and system time of its live processes (not of reaped children)
    int runnable;    ///< a thread of it is running, waiting for a core or for the disk (Linux only)
    int processes;
} cf_usage;

/// Reads the usage of process group `pgid` (Linux: /proc; macOS: libproc). Returns 0, or -1
/// when no process of the group could be read.
int cf_group_usage(int pgid, cf_usage *usage);

/// A deadline in CPU time with a wall-clock cap, for a run that already missed a wall-clock
/// deadline once: a target starved of CPU by a busy machine gets the CPU time it was given,
/// a sleeping or blocked one (no runnable thread, under 5% of a core) does not wait longer.
typedef struct {
    int pgid;
    int64_t cpu_limit_us;
    int64_t started_us, wall_cap_us, checked_us, cpu_at_check_us;
    int64_t baseline_us;  ///< the group's CPU time when the deadline started
    int64_t cpu_us;  ///< the CPU time at the last look
    int starved;  ///< it ended at the wall-clock cap, running or runnable, under half its CPU time
} cf_cpu_deadline;

void cf_cpu_deadline_start(cf_cpu_deadline *deadline, int pgid, int cpu_ms, int wall_ms);
/// Called when the current wait is over: how many microseconds more to wait before asking
/// again, or 0 when the wait is over: a hang (its CPU time reached the limit, it is blocked,
/// or its usage cannot be read), or, at the wall-clock cap while it still ran with less than
/// half its CPU time, starved (`starved` is set: nobody can tell whether it hangs).
int64_t cf_cpu_deadline_more(cf_cpu_deadline *deadline);
/// cf_cpu_deadline_more's decision, given the time (`now_us`, on the clock `started_us` and
/// `wall_cap_us` are on) and the group's usage read then (NULL: it could not be read). What
/// cf_cpu_deadline_more calls with the machine's monotonic clock and /proc; tests call it with
/// times and usages of their own, so the verdicts are checked at any load.
int64_t cf_cpu_deadline_step(cf_cpu_deadline *deadline, int64_t now_us, const cf_usage *usage);

/// Starts a persistent worker in a new process group: `command_fd` becomes its stdin,
/// `result_fd` its fd 3, `log_fd` its stdout and stderr. Same limits as cf_run.
/// Returns the pid, or -1 with errno set.
int cf_worker_spawn(const char *path, char *const argv[], char *const envp[], int command_fd, int result_fd,
                    int log_fd, int64_t memory_limit);

/// pipe2(fds, O_CLOEXEC): both ends close on exec, atomically.
int cf_pipe_cloexec(int fds[2]);

/// Peak resident set size in kilobytes (getrusage gives kilobytes on Linux, bytes on Darwin).
int64_t cf_max_rss_kb(const struct rusage *usage);
/// This process's own peak resident set size in kilobytes.
int64_t cf_self_max_rss_kb(void);

/// Makes this process the subreaper of everything it starts (Linux: PR_SET_CHILD_SUBREAPER):
/// a target's descendants that escape its process group, even into a new session, are
/// re-parented here instead of to init, so cf_reap_escapees can find them. Returns 0 on
/// success, -1 where the platform has no subreapers (then escapees cannot be tracked).
int cf_become_subreaper(void);

/// Kills and reaps every child of this process that cf_run or cf_worker_spawn did not start
/// (re-parented descendants of targets). Returns how many were still running (zombies are
/// reaped and not counted); 0 unless cf_become_subreaper
/// succeeded. Safe to call from any thread.
int cf_reap_escapees(void);

/// Whether process `pid` is ending or gone (Linux: a zombie, PF_EXITING in /proc/PID/stat, or
/// SIGKILL pending): a worker's fork server child killed or crashed, still being torn down.
/// 0 where that cannot be told.
int cf_process_ending(int pid);

/// Makes every allocation of 256 KiB or more a mapping of its own, unmapped when freed (glibc;
/// elsewhere nothing): the megabytes of a large input, and of the validator's parse of it,
/// leave resident memory as soon as the input has run. For a process that runs campaigns (the
/// CLI), not a library's caller.
void cf_return_large_blocks_at_once(void);

/// Gives freed heap memory back to the system (glibc: malloc_trim, every thread's heap;
/// macOS: malloc_zone_pressure_relief), so a campaign's resident memory follows what it holds.
void cf_release_freed_memory(void);

/// Tells the registry a child started by cf_worker_spawn has been reaped.
void cf_forget_child(int pid);

/// Installs a SIGINT/SIGTERM handler that only sets a flag; a second signal exits at once.
void cf_install_interrupt_handler(void);
/// Whether SIGINT or SIGTERM arrived since the handler was installed.
int cf_interrupted(void);
/// Sets the interrupt flag, as a signal would (for tests and for stopping a campaign).
void cf_request_interrupt(void);

/// A SysV shared-memory segment of `size` bytes for a target's coverage (AFL++'s targets attach
/// it by id), zero-filled (by the system) and attached here; NULL with errno when it cannot be made. On Linux it is
/// marked for removal at once (attached processes keep it; none is left behind if corrupt-fuzz
/// is killed); elsewhere cf_shm_release removes it.
void *cf_shm_create(size_t size, int *id);
/// Detaches and removes a segment from cf_shm_create.
void cf_shm_release(void *segment, int id);

/// A thread's CPU mask, kept to be put back (a cpu_set_t's bytes on Linux).
typedef struct {
    unsigned char bits[128];
} cf_cpu_mask;
/// The CPUs this process may run on that no other process's task is bound to alone (AFL++'s
/// free-CPU search; kernel threads, bound per CPU by design, do not count), lowest first: up to
/// `capacity` of them in `cpus`; their number, or -1 where threads cannot be bound (not Linux).
int cf_free_cpus(int *cpus, int capacity);
/// Binds the calling thread (and what it starts from now on) to `cpu`, its mask before in
/// `saved`; 0, or -1 when it cannot.
int cf_bind_thread(int cpu, cf_cpu_mask *saved);
/// Gives the calling thread back the mask cf_bind_thread saved.
int cf_restore_thread(const cf_cpu_mask *saved);
/// The calling thread's CPUs as a list (`0,1`), for tests; -1 where it cannot be told.
int cf_thread_cpu_list(char *text, size_t capacity);
/// Names the calling thread as top -H, perf and /proc/PID/task/TID/comm (Linux) or a debugger
/// (Darwin) show it, cut to 15 bytes; 0, or -1 when it cannot. (Foundation's `Thread.name`
/// does not reach the system's name on Linux.)
int cf_name_thread(const char *name);

#ifdef __cplusplus
}
#endif
#endif
