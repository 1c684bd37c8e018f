// A hang confirmed in CPU time: on a loaded machine a correct loader that needs 0.9 s of CPU
// can take 5 s of wall-clock time, because it waits for a core, not because it hangs. A
// confirmation run therefore asks how much CPU the target's process group has used and whether
// it is still runnable, and waits longer for a starved target (up to a wall-clock cap), while a
// target that spins past the CPU deadline, or sleeps without using CPU, is a hang at once.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "CCorruptFuzzSpawn.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __APPLE__
#include <libproc.h>
#include <mach/mach_time.h>
#include <sys/resource.h>
#endif

static int64_t monotonic_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

#ifdef __linux__
/// Reads /proc/<pid>/stat (or a task's): its state letter, process group and CPU time in
/// clock ticks. Returns 0 on success.
static int read_stat(const char *path, char *state, long *pgrp, unsigned long long *ticks) {
    FILE *file = fopen(path, "re");
    if (!file) return -1;
    char buffer[1024];
    size_t n = fread(buffer, 1, sizeof buffer - 1, file);
    fclose(file);
    buffer[n] = 0;
    // The command name is in parentheses and may hold spaces or parentheses: fields start
    // after the last ')'.
    char *end = strrchr(buffer, ')');
    if (!end) return -1;
    unsigned long long utime = 0, stime = 0;
    int ppid;
    // state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime
    if (sscanf(end + 1, " %c %d %ld %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", state, &ppid, pgrp, &utime, &stime) != 5) return -1;
    *ticks = utime + stime;
    return 0;
}

/// Whether any thread of process `pid` is running or waiting for a core ('R'), or in an
/// uninterruptible wait ('D': disk I/O, which a loaded machine also slows).
static int any_thread_runnable(const char *pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%s/task", pid);
    DIR *tasks = opendir(path);
    if (!tasks) return 0;
    int runnable = 0;
    struct dirent *task;
    while (!runnable && (task = readdir(tasks)) != NULL) {
        if (task->d_name[0] < '0' || task->d_name[0] > '9') continue;
        char stat_path[96];
        snprintf(stat_path, sizeof stat_path, "/proc/%s/task/%s/stat", pid, task->d_name);
        char state;
        long pgrp;
        unsigned long long ticks;
        if (read_stat(stat_path, &state, &pgrp, &ticks) == 0 && (state == 'R' || state == 'D')) runnable = 1;
    }
    closedir(tasks);
    return runnable;
}

int cf_group_usage(int pgid, cf_usage *usage) {
    usage->cpu_us = 0;
    usage->runnable = 0;
    usage->processes = 0;
    DIR *proc = opendir("/proc");
    if (!proc) return -1;
    long ticks_per_second = sysconf(_SC_CLK_TCK);
    if (ticks_per_second <= 0) ticks_per_second = 100;
    struct dirent *entry;
    while ((entry = readdir(proc)) != NULL) {
        if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/%s/stat", entry->d_name);
        char state;
        long pgrp;
        unsigned long long ticks;
        // A zombie leader whose other threads still run counts by its threads.
        if (read_stat(path, &state, &pgrp, &ticks) != 0 || pgrp != pgid || state == 'X') continue;
        usage->processes++;
        usage->cpu_us += (int64_t)(ticks * 1000000ULL / (unsigned long long)ticks_per_second);
        if (!usage->runnable && (state == 'R' || state == 'D' || any_thread_runnable(entry->d_name))) usage->runnable = 1;
    }
    closedir(proc);
    return usage->processes > 0 ? 0 : -1;
}
#elif defined(__APPLE__)
int cf_group_usage(int pgid, cf_usage *usage) {
    usage->cpu_us = 0;
    usage->runnable = 0;
    usage->processes = 0;
    pid_t pids[256];
    // libproc's wrapper returns the number of pids (not bytes).
    int count = proc_listpgrppids(pgid, pids, (int)sizeof pids);
    if (count <= 0) return -1;
    if (count > 256) count = 256;
    mach_timebase_info_data_t timebase;
    mach_timebase_info(&timebase);
    for (int i = 0; i < count; i++) {
        struct rusage_info_v2 info;
        if (proc_pid_rusage(pids[i], RUSAGE_INFO_V2, (rusage_info_t *)&info) != 0) continue;
        // In Mach time units (nanoseconds on Intel, ticks on Apple silicon).
        uint64_t ticks = info.ri_user_time + info.ri_system_time;
        usage->cpu_us += (int64_t)(ticks * timebase.numer / timebase.denom / 1000);
        usage->processes++;
    }
    // No thread states here: a starved target is told from a sleeping one by its CPU share.
    return usage->processes > 0 ? 0 : -1;
}
#else
int cf_group_usage(int pgid, cf_usage *usage) {
    (void)pgid;
    usage->cpu_us = 0;
    usage->runnable = 0;
    usage->processes = 0;
    return -1;
}
#endif

void cf_cpu_deadline_start(cf_cpu_deadline *deadline, int pgid, int cpu_ms, int wall_ms) {
    deadline->pgid = pgid;
    deadline->cpu_limit_us = (int64_t)cpu_ms * 1000;
    deadline->started_us = monotonic_us();
    deadline->wall_cap_us = deadline->started_us + (int64_t)wall_ms * 1000;
    // CPU the group used before (a worker's start-up, run before its first input) is not the
    // input's.
    cf_usage usage;
    deadline->baseline_us = cf_group_usage(pgid, &usage) == 0 ? usage.cpu_us : 0;
    deadline->checked_us = deadline->started_us;
    deadline->cpu_at_check_us = deadline->baseline_us;
    deadline->cpu_us = deadline->baseline_us;
    deadline->starved = 0;
}

int64_t cf_cpu_deadline_more(cf_cpu_deadline *deadline) {
    int64_t now = monotonic_us();
    cf_usage usage;
    int readable = cf_group_usage(deadline->pgid, &usage) == 0;
    return cf_cpu_deadline_step(deadline, now, readable ? &usage : NULL);
}

int64_t cf_cpu_deadline_step(cf_cpu_deadline *deadline, int64_t now, const cf_usage *usage) {
    if (!usage) return 0;  // cannot tell: a hang, as at a wall-clock deadline
    deadline->cpu_us = usage->cpu_us;
    int64_t spent = usage->cpu_us - deadline->baseline_us;
    if (spent >= deadline->cpu_limit_us) return 0;
    // Starved, not hung: runnable, or it used at least 5% of a core since the last look.
    int64_t used = usage->cpu_us - deadline->cpu_at_check_us, waited = now - deadline->checked_us;
    if (!usage->runnable && used * 20 < waited) return 0;
    if (now >= deadline->wall_cap_us) {
        // Half its CPU time or more: it hangs as surely as this machine can tell.
        deadline->starved = spent * 2 < deadline->cpu_limit_us;
        return 0;
    }
    deadline->checked_us = now;
    deadline->cpu_at_check_us = usage->cpu_us;
    int64_t more = deadline->cpu_limit_us - spent;
    if (more > 250000) more = 250000;  // look again soon: a target may block later
    if (more < 20000) more = 20000;
    if (now + more > deadline->wall_cap_us) more = deadline->wall_cap_us - now;
    return more > 0 ? more : 0;
}
