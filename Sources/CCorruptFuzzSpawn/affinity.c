// A job and the process it tests on one core, as AFL++ binds afl-fuzz and its target to a free
// CPU: a persistent worker answers an input in microseconds, and when the job's thread and the
// worker run on different cores each input wakes a sleeping core twice (an inter-processor
// interrupt and an exit from its idle state), which took three quarters of a one-job campaign's
// time (the habit loader: 17,000 inputs/s apart, 62,000/s on one core). Linux only: elsewhere
// nothing is bound.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "CCorruptFuzzSpawn.h"

#include <string.h>
#ifdef __linux__
#include <ctype.h>
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

_Static_assert(sizeof(cpu_set_t) <= sizeof(((cf_cpu_mask *)0)->bits), "cf_cpu_mask holds a cpu_set_t");

/// The single CPU a task's status says it may run on (`Cpus_allowed_list:\t3`), or -1 when it
/// may run on more than one, or is a kernel thread (no `VmSize:`: bound per CPU by design).
static int bound_cpu(const char *status_path) {
    FILE *file = fopen(status_path, "r");
    if (!file) return -1;
    char line[512];
    int user = 0, cpu = -1;
    while (fgets(line, sizeof line, file)) {
        if (strncmp(line, "VmSize:", 7) == 0) user = 1;
        if (strncmp(line, "Cpus_allowed_list:", 18) == 0) {
            const char *list = line + 18;
            while (*list == ' ' || *list == '\t') list++;
            char *end = NULL;
            long first = strtol(list, &end, 10);
            if (end != list && (*end == '\n' || *end == '\0')) cpu = (int)first;
        }
    }
    fclose(file);
    return user ? cpu : -1;
}

int cf_free_cpus(int *cpus, int capacity) {
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return -1;
    // The CPUs another process (or one of its threads) is bound to alone: another fuzzer's.
    static unsigned char taken[CPU_SETSIZE];
    memset(taken, 0, sizeof taken);
    DIR *proc = opendir("/proc");
    if (!proc) return -1;
    pid_t self = getpid();
    struct dirent *entry;
    while ((entry = readdir(proc)) != NULL) {
        if (!isdigit((unsigned char)entry->d_name[0]) || atoi(entry->d_name) == self) continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/%s/task", entry->d_name);
        DIR *tasks = opendir(path);
        if (!tasks) continue;
        struct dirent *task;
        while ((task = readdir(tasks)) != NULL) {
            if (!isdigit((unsigned char)task->d_name[0])) continue;
            char status[96];
            snprintf(status, sizeof status, "/proc/%s/task/%s/status", entry->d_name, task->d_name);
            int cpu = bound_cpu(status);
            if (cpu >= 0 && cpu < CPU_SETSIZE) taken[cpu] = 1;
        }
        closedir(tasks);
    }
    closedir(proc);
    int count = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && count < capacity; cpu++)
        if (CPU_ISSET(cpu, &allowed) && !taken[cpu]) cpus[count++] = cpu;
    return count;
}

int cf_bind_thread(int cpu, cf_cpu_mask *saved) {
    cpu_set_t before, only;
    if (sched_getaffinity(0, sizeof before, &before) != 0) return -1;
    CPU_ZERO(&only);
    CPU_SET(cpu, &only);
    if (sched_setaffinity(0, sizeof only, &only) != 0) return -1;
    memset(saved, 0, sizeof *saved);
    memcpy(saved->bits, &before, sizeof before);
    return 0;
}

int cf_restore_thread(const cf_cpu_mask *saved) {
    cpu_set_t before;
    memcpy(&before, saved->bits, sizeof before);
    return sched_setaffinity(0, sizeof before, &before);
}

int cf_thread_cpu_list(char *text, size_t capacity) {
    cpu_set_t mask;
    if (sched_getaffinity(0, sizeof mask, &mask) != 0) return -1;
    size_t used = 0;
    text[0] = '\0';
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &mask)) continue;
        int n = snprintf(text + used, capacity - used, used ? ",%d" : "%d", cpu);
        if (n < 0 || (size_t)n >= capacity - used) return -1;
        used += (size_t)n;
    }
    return 0;
}
#else
int cf_free_cpus(int *cpus, int capacity) {
    (void)cpus;
    (void)capacity;
    return -1;
}
int cf_bind_thread(int cpu, cf_cpu_mask *saved) {
    (void)cpu;
    memset(saved, 0, sizeof *saved);
    return -1;
}
int cf_restore_thread(const cf_cpu_mask *saved) {
    (void)saved;
    return -1;
}
int cf_thread_cpu_list(char *text, size_t capacity) {
    if (capacity) text[0] = '\0';
    return -1;
}
#endif

// Thread names: outside the Linux-only part above, since Darwin names threads too.
#include <pthread.h>
#include <stdio.h>

int cf_name_thread(const char *name) {
    // Linux keeps 15 bytes and a NUL, and refuses a longer name (ERANGE).
    char cut[16];
    snprintf(cut, sizeof cut, "%s", name);
#if defined(__APPLE__)
    return pthread_setname_np(cut) == 0 ? 0 : -1;
#elif defined(__linux__)
    return pthread_setname_np(pthread_self(), cut) == 0 ? 0 : -1;
#else
    return -1;
#endif
}
