// The least a job can do per input with a persistent worker: the protocol's own system calls
// and nothing else. It runs a corrupt-fuzz worker (corrupt_fuzz_worker.h's protocol, with its
// fork server) the way a job of `corrupt-fuzz run --worker` does (to a worker that says
// `H 1 bytes`, the input sent whole on its standard input, `#<size>` and the bytes in one
// write; to another, the input file written over the kept one: fstat, pwrite, ftruncate when it
// shrinks, and the file's path as the command line; the answer read first, polled for only when
// it is not there yet), on one CPU
// with its worker, but makes each input by flipping one byte of a seed and neither validates,
// judges nor counts behaviours. Its share of the core is the floor for a job's share with that
// worker (peer-share.py prints it beside corrupt-fuzz's).
//
//     cc -O2 Benchmarks/coverage-maze/floor-driver.c -o floor-driver
//     ./floor-driver SECONDS SEED-FOLDER WORKER [ARGUMENTS...]
//
// Prints one line: `inputs/s share`, the share being this process's CPU time (user + system,
// from getrusage) over the wall time, both from the end of the first second to the end.
// Linux (sched_setaffinity).
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

typedef struct {
    uint8_t *bytes;
    size_t size;
} seed;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double cpu_seconds(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec / 1e6 + (double)usage.ru_stime.tv_sec +
           (double)usage.ru_stime.tv_usec / 1e6;
}

static void fail(const char *what) {
    fprintf(stderr, "floor-driver: %s: %s\n", what, strerror(errno));
    exit(2);
}

/// Whether the last line read (a hello) ended with the word `bytes`.
static int said_bytes = 0;

/// The next answer line's first byte; -1 when the worker is gone.
static int read_answer(int fd) {
    static char buffer[16384];
    static size_t held = 0;
    for (;;) {
        char *newline = memchr(buffer, '\n', held);
        if (newline) {
            int first = held > 0 ? buffer[0] : -1;
            said_bytes = newline - buffer >= 6 && memcmp(newline - 6, " bytes", 6) == 0;
            size_t used = (size_t)(newline - buffer) + 1;
            memmove(buffer, buffer + used, held - used);
            held -= used;
            return first;
        }
        ssize_t n = read(fd, buffer + held, sizeof buffer - held);
        if (n > 0) {
            held += (size_t)n;
            continue;
        }
        if (n == 0) return -1;
        if (errno == EINTR) continue;
        if (errno != EAGAIN) return -1;
        struct pollfd wait = {fd, POLLIN, 0};
        if (poll(&wait, 1, 10000) <= 0) return -1;
    }
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: floor-driver SECONDS SEED-FOLDER WORKER [ARGUMENTS...]\n");
        return 2;
    }
    double seconds = atof(argv[1]);
    seed seeds[256];
    size_t count = 0;
    DIR *folder = opendir(argv[2]);
    if (!folder) fail(argv[2]);
    for (struct dirent *entry; (entry = readdir(folder)) && count < 256;) {
        if (entry->d_name[0] == '.') continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", argv[2], entry->d_name);
        FILE *file = fopen(path, "rb");
        if (!file) continue;
        uint8_t *bytes = malloc(1 << 20);
        size_t size = fread(bytes, 1, 1 << 20, file);
        fclose(file);
        if (size == 0) { free(bytes); continue; }
        seeds[count++] = (seed){bytes, size};
    }
    closedir(folder);
    if (count == 0) { fprintf(stderr, "floor-driver: no seeds in %s\n", argv[2]); return 2; }

    // One CPU for this process and its worker, as a job of corrupt-fuzz has.
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    CPU_SET(0, &cpus);
    sched_setaffinity(0, sizeof cpus, &cpus);

    char folder_template[] = "/tmp/floor-driver-XXXXXX";
    if (!mkdtemp(folder_template)) fail("mkdtemp");
    char input_path[4200], command[4201];
    snprintf(input_path, sizeof input_path, "%s/input-0", folder_template);
    int command_length = snprintf(command, sizeof command, "%s\n", input_path);

    // Close-on-exec: the worker gets only its own ends (dup2 below), so that it sees the end of
    // its input when this process ends.
    int commands[2], results[2];
    if (pipe2(commands, O_CLOEXEC) != 0 || pipe2(results, O_CLOEXEC) != 0) fail("pipe");
    setenv("CORRUPT_FUZZ_WORKER_FD", "3", 1);
    setenv("CORRUPT_FUZZ_FORK_SERVER", "1", 1);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, commands[0], 0);
    posix_spawn_file_actions_adddup2(&actions, results[1], 3);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    // Its own process group, as corrupt-fuzz starts a worker: the fork server's children are
    // stopped with it.
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
    pid_t worker;
    if (posix_spawn(&worker, argv[3], &actions, &attributes, argv + 3, environ) != 0) fail(argv[3]);
    close(commands[0]);
    close(results[1]);
    fcntl(results[0], F_SETFL, fcntl(results[0], F_GETFL) | O_NONBLOCK);
    if (read_answer(results[0]) != 'H') { fprintf(stderr, "floor-driver: %s said no hello\n", argv[3]); return 2; }

    int input = open(input_path, O_RDWR | O_CREAT, 0600);
    if (input < 0) fail(input_path);
    int sends_bytes = said_bytes;
    uint8_t *buffer = malloc((1 << 20) + 32);
    uint64_t random = 0x9E3779B97F4A7C15ULL;
    long inputs = 0, measured = 0;
    double start = now(), end = start + seconds, window_start = 0, window_cpu = 0;
    for (;;) {
        double t = now();
        if (t >= end) break;
        if (window_start == 0 && t >= start + 1) {
            window_start = t;
            window_cpu = cpu_seconds();
            measured = inputs;
        }
        random ^= random << 13, random ^= random >> 7, random ^= random << 17;
        seed *from = &seeds[random % count];
        if (sends_bytes && from->size <= 61440) {
            // As a job sends an input whole: its line and bytes in one write.
            int header = snprintf((char *)buffer, 32, "#%zu\n", from->size);
            memcpy(buffer + header, from->bytes, from->size);
            buffer[header + (random >> 16) % from->size] ^= (uint8_t)(1u << ((random >> 8) & 7));
            size_t length = (size_t)header + from->size;
            if (write(commands[1], buffer, length) != (ssize_t)length) fail("write");
            if (read_answer(results[0]) < 0) { fprintf(stderr, "floor-driver: the worker ended\n"); return 2; }
            inputs++;
            continue;
        }
        memcpy(buffer, from->bytes, from->size);
        buffer[(random >> 16) % from->size] ^= (uint8_t)(1u << ((random >> 8) & 7));
        // As a job writes its input: over the kept file, cut when it shrinks.
        struct stat info;
        if (fstat(input, &info) != 0 || info.st_nlink == 0) fail("fstat");
        if (pwrite(input, buffer, from->size, 0) != (ssize_t)from->size) fail("pwrite");
        if (info.st_size > (off_t)from->size && ftruncate(input, (off_t)from->size) != 0) fail("ftruncate");
        if (write(commands[1], command, (size_t)command_length) != command_length) fail("write");
        int answer = read_answer(results[0]);
        if (answer < 0) { fprintf(stderr, "floor-driver: the worker ended\n"); return 2; }
        inputs++;
    }
    double wall = now() - window_start, cpu = cpu_seconds() - window_cpu;
    printf("%.0f %.3f\n", (double)(inputs - measured) / wall, cpu / wall);
    close(commands[1]);
    kill(-worker, SIGKILL);
    waitpid(worker, NULL, 0);
    unlink(input_path);
    rmdir(folder_template);
    return 0;
}
