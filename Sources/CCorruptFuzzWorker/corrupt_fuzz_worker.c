// The persistent-worker loop and fork server of corrupt_fuzz_worker.h.
#include "corrupt_fuzz_worker.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#include <dirent.h>
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

/// Loads the file at `path` (or `file` when given) into `reply`; returns the load's status.
static int load_path(const char *path, FILE *given, cf_worker_load_fn load, cf_worker_reply *reply) {
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
    memset(reply, 0, sizeof *reply);
    reply->kind = CF_WORKER_REJECTED;
    int status = load(data, size, reply);
    free(data);
    if (status == 0 && reply->kind == CF_WORKER_REJECTED) reply->kind = CF_WORKER_ACCEPTED;
    if (status != 0) reply->kind = CF_WORKER_REJECTED;
    return status;
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

int cf_worker_fork_server(int result_fd) {
    const char *asked = getenv(CF_WORKER_FORK_SERVER_VARIABLE);
    if (!asked || strcmp(asked, "1") != 0) return 0;
    // A fork copies only the calling thread: a lock another thread held (malloc's, the
    // runtime's) would stay held forever in the child. Only a single-threaded worker forks.
    if (thread_count() != 1) return 0;
    for (;;) {
        pid_t child = fork();
        if (child < 0) return 0;  // serve in this process, as without a fork server
        if (child == 0) return 1;
        int status = 0;
        struct rusage usage;
        memset(&usage, 0, sizeof usage);
        while (wait4(child, &status, 0, &usage) < 0) {
            if (errno != EINTR) _exit(1);
        }
        // Standard input ended: corrupt-fuzz is done with this worker.
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) _exit(0);
#if defined(__APPLE__)
        long peak_kb = usage.ru_maxrss / 1024;  // bytes on Darwin
#else
        long peak_kb = usage.ru_maxrss;
#endif
        char line[64];
        int n = snprintf(line, sizeof line, "%c %d %ld\n", CF_WORKER_CHILD_ENDED, status, peak_kb);
        if (n <= 0 || write_all(result_fd, line, (size_t)n) != 0) _exit(0);
    }
}

/// Runs one input through whichever kind of load function was given.
typedef struct {
    cf_worker_load_fn load_data;
    cf_worker_load_path_fn load_path;
} loader;

static int run_input(const char *path, loader how, cf_worker_reply *reply) {
    if (how.load_data) return load_path(path, path ? NULL : stdin, how.load_data, reply);
    memset(reply, 0, sizeof *reply);
    reply->kind = CF_WORKER_REJECTED;
    int status = how.load_path(path, reply);
    if (status == 0 && reply->kind == CF_WORKER_REJECTED) reply->kind = CF_WORKER_ACCEPTED;
    if (status != 0) reply->kind = CF_WORKER_REJECTED;
    return status;
}

static int serve(int argc, char **argv, loader how) {
    static cf_worker_reply reply;
    const char *variable = getenv(CF_WORKER_FD_VARIABLE);
    if (variable && *variable) {
        int fd = atoi(variable);
        char *line = NULL;
        size_t capacity = 0;
        ssize_t length;
        static char out[sizeof reply.reason + sizeof reply.text + 8];
        char hello[32];
        int said = snprintf(hello, sizeof hello, "%c %d\n", CF_WORKER_HELLO, CF_WORKER_PROTOCOL_VERSION);
        if (write_all(fd, hello, (size_t)said) != 0) return 0;
        int served = 0;
        while ((length = getline(&line, &capacity, stdin)) > 0) {
            if (line[length - 1] == '\n') line[--length] = '\0';
            run_input(line, how, &reply);
            if (cf_coverage_collect) cf_coverage_collect();
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
    int status = run_input(argc > 1 ? argv[1] : NULL, how, &reply);
    if (status == 0) {
        printf("%s\n", reply.text);
        return 0;
    }
    fprintf(stderr, "reason: %s\n%s\n", reply.reason[0] ? reply.reason : "-", reply.text);
    return 1;
}

int cf_worker_main(int argc, char **argv, cf_worker_load_fn load) {
    loader how = {load, NULL};
    return serve(argc, argv, how);
}

int cf_worker_main_paths(int argc, char **argv, cf_worker_load_path_fn load) {
    loader how = {NULL, load};
    return serve(argc, argv, how);
}
