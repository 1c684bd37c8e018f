// The file-operation recorder of `corrupt-fuzz crashpoints`: a shared library loaded into the
// program under test with LD_PRELOAD (Linux; DYLD_INSERT_LIBRARIES is not supported). It has no
// API: it interposes libc's file functions, and is configured by the environment:
//
//   CORRUPT_FUZZ_DATA_DIR   only operations on files below this folder are recorded
//   CORRUPT_FUZZ_RECORD     the log file: one line per operation, a write's bytes after its line
//   CORRUPT_FUZZ_KILL_AT    the process kills itself (SIGKILL) just before operation N (0-based)
//   CORRUPT_FUZZ_FAULT_LOG  a second log: one line per operation an I/O fault can hit
//                           (`FP INDEX MASK NAME PATH`, MASK the faults that apply, bits of
//                           enum fault), counted apart from the crash points (reads and closes too)
//   CORRUPT_FUZZ_FAULT_AT   that operation (0-based, in the fault log's count) fails instead...
//   CORRUPT_FUZZ_FAULT      ...with this: enospc, edquot, eio, short-write or eintr. The program
//                           runs on. A failed fsync (or close) is logged as `fsync-failed`: the
//                           writes it was to make durable are lost, whatever a later fsync says.
//
// A line: `OP INDEX PID NAME FD OFFSET LENGTH FLAGS PATH[\tPATH2]`, then LENGTH bytes for the
// writes (write, pwrite, writev). At exit the files still open and the locks still held are
// logged as `held-fd` and `held-lock`.
//
// It is not built by SwiftPM: the source is embedded in CorruptFuzzRunner (`embedInCode`) and
// compiled on first use by RecorderLibrary, so that every build of the CLI and of a package
// that uses the test module has it.
//
// Loaded with LD_PRELOAD, it stands in front of libc's open, write, rename, fsync... : for a file
// below CORRUPT_FUZZ_DATA_DIR, it counts the operation, kills the process if this is the
// operation it was told to stop before, performs it, and logs it (with a write's bytes), so that
// corrupt-fuzz can rebuild every state the folder passes through, and the states a power cut
// leaves. Operations on other files pass straight through.
#undef _FORTIFY_SOURCE
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#if defined(__linux__)

#define MAX_FDS 65536

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t mutex = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static char data_dir[PATH_MAX];
static size_t data_dir_len;
static int log_fd = -1;
static long kill_at = -1;
static long op_count;
static int fault_log_fd = -1;
static long fault_at = -1;
static int fault_kind;
static long fault_count;

// The faults an operation can be made to fail with (a bit each in a fault-log line's mask).
enum fault { FAULT_ENOSPC = 1, FAULT_EDQUOT = 2, FAULT_EIO = 4, FAULT_SHORT = 8, FAULT_EINTR = 16 };
#define FAULTS_WRITE (FAULT_ENOSPC | FAULT_EDQUOT | FAULT_EIO | FAULT_SHORT | FAULT_EINTR)
#define FAULTS_SYNC (FAULT_ENOSPC | FAULT_EDQUOT | FAULT_EIO)
#define FAULTS_READ (FAULT_EIO | FAULT_EINTR)
#define FAULTS_NAME FAULT_ENOSPC
static char *fd_paths[MAX_FDS];
static unsigned char fd_locked[MAX_FDS];
static unsigned char fd_writable[MAX_FDS];
static __thread int busy;

// The real functions, found on first use.
#define REAL(name) \
    static __typeof__(name) *real_##name; \
    if (!real_##name) real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

static ssize_t raw_write(int fd, const void *buf, size_t n) {
    REAL(write);
    const char *p = buf;
    size_t done = 0;
    while (done < n) {
        ssize_t w = real_write(fd, p + done, n - done);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        done += (size_t)w;
    }
    return (ssize_t)done;
}

static void setup(void) {
    const char *dir = getenv("CORRUPT_FUZZ_DATA_DIR");
    const char *record = getenv("CORRUPT_FUZZ_RECORD");
    const char *kill = getenv("CORRUPT_FUZZ_KILL_AT");
    if (!dir || !record) return;
    if (!realpath(dir, data_dir)) return;
    data_dir_len = strlen(data_dir);
    REAL(open);
    int saved = errno;
    log_fd = real_open(record, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    errno = saved;
    if (kill && *kill) kill_at = strtol(kill, NULL, 10);
    const char *fault_log = getenv("CORRUPT_FUZZ_FAULT_LOG");
    const char *at = getenv("CORRUPT_FUZZ_FAULT_AT");
    const char *fault = getenv("CORRUPT_FUZZ_FAULT");
    if (fault_log && *fault_log) fault_log_fd = real_open(fault_log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (at && *at && fault) {
        fault_at = strtol(at, NULL, 10);
        fault_kind = !strcmp(fault, "enospc") ? FAULT_ENOSPC
                     : !strcmp(fault, "edquot") ? FAULT_EDQUOT
                     : !strcmp(fault, "eio") ? FAULT_EIO
                     : !strcmp(fault, "short-write") ? FAULT_SHORT
                     : !strcmp(fault, "eintr") ? FAULT_EINTR
                                                 : 0;
    }
    errno = saved;
}

static int active(void) {
    pthread_once(&once, setup);
    return log_fd >= 0 && !busy;
}

/// `out` gets the path of `path` (relative to `dirfd`) relative to the data folder, or the
/// function returns 0 when it is not below it. The file itself need not exist; its folder must.
static int data_path(int dirfd, const char *path, char *out) {
    if (!path || !*path) return 0;
    char joined[PATH_MAX * 2];
    if (path[0] == '/' || dirfd == AT_FDCWD) {
        snprintf(joined, sizeof joined, "%s", path);
    } else {
        char link[64], base[PATH_MAX];
        snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
        ssize_t n = readlink(link, base, sizeof base - 1);
        if (n <= 0) return 0;
        base[n] = 0;
        snprintf(joined, sizeof joined, "%s/%s", base, path);
    }
    char resolved[PATH_MAX];
    const char *slash = strrchr(joined, '/');
    const char *name = slash ? slash + 1 : joined;
    if (!*name || !strcmp(name, ".") || !strcmp(name, "..")) {
        if (!realpath(joined, resolved)) return 0;
    } else {
        char parent[PATH_MAX * 2];
        if (slash == joined) {
            snprintf(parent, sizeof parent, "/");
        } else if (slash) {
            snprintf(parent, sizeof parent, "%.*s", (int)(slash - joined), joined);
        } else {
            snprintf(parent, sizeof parent, ".");
        }
        char real_parent[PATH_MAX];
        if (!realpath(parent, real_parent)) return 0;
        snprintf(resolved, sizeof resolved, "%s/%s", strcmp(real_parent, "/") ? real_parent : "", name);
    }
    if (strncmp(resolved, data_dir, data_dir_len) != 0) return 0;
    if (resolved[data_dir_len] == 0) {
        strcpy(out, ".");
        return 1;
    }
    if (resolved[data_dir_len] != '/') return 0;
    snprintf(out, PATH_MAX, "%s", resolved + data_dir_len + 1);
    return 1;
}

/// The next operation's index; the process dies here if it is the one to stop before.
static long begin(void) {
    long index = op_count++;
    if (kill_at >= 0 && index == kill_at) kill(getpid(), SIGKILL);
    return index;
}

/// Counts an operation an I/O fault can hit (`mask`: the faults that apply), logs it in the
/// fault log, and returns the fault to inject now, or 0. Called with the mutex held.
static int fault_point(const char *name, int mask, const char *path) {
    long index = fault_count++;
    if (fault_log_fd >= 0) {
        char line[PATH_MAX + 64];
        int n = snprintf(line, sizeof line, "FP %ld %d %s %s\n", index, mask, name, path ? path : "-");
        if (n > 0) raw_write(fault_log_fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    }
    return index == fault_at && (mask & fault_kind) ? fault_kind : 0;
}

static int fault_errno(int fault) {
    switch (fault) {
    case FAULT_ENOSPC: return ENOSPC;
    case FAULT_EDQUOT: return EDQUOT;
    case FAULT_EINTR: return EINTR;
    default: return EIO;
    }
}

static void log_line(long index, const char *name, int fd, long long offset, long long length, int flags, const char *path,
                     const char *path2, const void *payload, size_t payload_length) {
    char line[PATH_MAX * 2 + 256];
    int n = snprintf(line, sizeof line, "OP %ld %d %s %d %lld %lld %d %s%s%s\n", index, (int)getpid(), name, fd, offset, length, flags,
                     path ? path : "-", path2 ? "\t" : "", path2 ? path2 : "");
    if (n < 0) return;
    if ((size_t)n >= sizeof line) n = sizeof line - 1;
    raw_write(log_fd, line, (size_t)n);
    if (payload && payload_length) raw_write(log_fd, payload, payload_length);
}

static const char *tracked(int fd) { return fd >= 0 && fd < MAX_FDS ? fd_paths[fd] : NULL; }

static void track(int fd, const char *path) {
    if (fd < 0 || fd >= MAX_FDS) return;
    free(fd_paths[fd]);
    fd_paths[fd] = strdup(path);
    fd_locked[fd] = 0;
}

static long long position(int fd) {
    REAL(fcntl);
    int flags = real_fcntl(fd, F_GETFL);
    if (flags >= 0 && (flags & O_APPEND)) {
        struct stat st;
        if (fstat(fd, &st) == 0) return (long long)st.st_size;
    }
    return (long long)lseek(fd, 0, SEEK_CUR);
}

// MARK: - Opening and closing

static int record_open(int dirfd, const char *path, int flags, mode_t mode, int (*perform)(int, const char *, int, mode_t)) {
    char rel[PATH_MAX];
    if (!active() || !data_path(dirfd, path, rel)) return perform(dirfd, path, flags, mode);
    pthread_mutex_lock(&mutex);
    busy = 1;
    int modifies = (flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)) != 0;
    long index = modifies ? begin() : op_count;
    // Creating a file takes an inode and a directory entry: the disk may be full.
    struct stat existing;
    if ((flags & O_CREAT) && fstatat(dirfd, path, &existing, 0) != 0 && fault_point("create", FAULTS_NAME, rel)) {
        busy = 0;
        pthread_mutex_unlock(&mutex);
        errno = ENOSPC;
        return -1;
    }
    busy = 0;
    int fd = perform(dirfd, path, flags, mode);
    int saved = errno;
    busy = 1;
    if (fd >= 0) {
        track(fd, rel);
        if (fd < MAX_FDS) fd_writable[fd] = (unsigned char)((flags & O_ACCMODE) != O_RDONLY);
        if (modifies) log_line(index, "open", fd, 0, 0, flags, rel, NULL, NULL, 0);
    }
    busy = 0;
    pthread_mutex_unlock(&mutex);
    errno = saved;
    return fd;
}

static int do_openat(int dirfd, const char *path, int flags, mode_t mode) {
    REAL(openat);
    return real_openat(dirfd, path, flags, mode);
}

static int do_openat64(int dirfd, const char *path, int flags, mode_t mode) {
    REAL(openat64);
    return real_openat64(dirfd, path, flags, mode);
}

static mode_t mode_argument(int flags, va_list args) {
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(args, int) : 0;
}

int open(const char *path, int flags, ...) {
    va_list args;
    va_start(args, flags);
    mode_t mode = mode_argument(flags, args);
    va_end(args);
    return record_open(AT_FDCWD, path, flags, mode, do_openat);
}

int open64(const char *path, int flags, ...) {
    va_list args;
    va_start(args, flags);
    mode_t mode = mode_argument(flags, args);
    va_end(args);
    return record_open(AT_FDCWD, path, flags, mode, do_openat64);
}

int openat(int dirfd, const char *path, int flags, ...) {
    va_list args;
    va_start(args, flags);
    mode_t mode = mode_argument(flags, args);
    va_end(args);
    return record_open(dirfd, path, flags, mode, do_openat);
}

int openat64(int dirfd, const char *path, int flags, ...) {
    va_list args;
    va_start(args, flags);
    mode_t mode = mode_argument(flags, args);
    va_end(args);
    return record_open(dirfd, path, flags, mode, do_openat64);
}

int creat(const char *path, mode_t mode) { return record_open(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode, do_openat); }

int creat64(const char *path, mode_t mode) { return record_open(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode, do_openat64); }

int close(int fd) {
    REAL(close);
    if (!active() || !tracked(fd)) return real_close(fd);
    pthread_mutex_lock(&mutex);
    busy = 1;
    if (fd_locked[fd]) log_line(op_count, "unlock-on-close", fd, 0, 0, 0, fd_paths[fd], NULL, NULL, 0);
    // A close that reports an error (NFS, a quota) has not written what the file held: its
    // unsynced writes are lost, as after a failed fsync. The descriptor is closed either way.
    int fault = fd_writable[fd] ? fault_point("close", FAULTS_SYNC, fd_paths[fd]) : 0;
    if (fault) log_line(op_count, "fsync-failed", fd, 0, 0, 0, fd_paths[fd], NULL, NULL, 0);
    free(fd_paths[fd]);
    fd_paths[fd] = NULL;
    fd_locked[fd] = 0;
    busy = 0;
    pthread_mutex_unlock(&mutex);
    int result = real_close(fd);
    if (fault) {
        errno = fault_errno(fault);
        return -1;
    }
    return result;
}

// MARK: - Reading

static ssize_t record_read(int fd, ssize_t (*perform)(void *), void *context) {
    pthread_mutex_lock(&mutex);
    busy = 1;
    int fault = fault_point("read", FAULTS_READ, fd_paths[fd]);
    busy = 0;
    pthread_mutex_unlock(&mutex);
    if (fault) {
        errno = fault_errno(fault);
        return -1;
    }
    return perform(context);
}

struct plain_read {
    int fd;
    void *buf;
    size_t n;
    off_t offset;
    int positioned;
    int wide;
};

static ssize_t perform_read(void *context) {
    struct plain_read *r = context;
    if (!r->positioned) {
        REAL(read);
        return real_read(r->fd, r->buf, r->n);
    }
    if (r->wide) {
        REAL(pread64);
        return real_pread64(r->fd, r->buf, r->n, r->offset);
    }
    REAL(pread);
    return real_pread(r->fd, r->buf, r->n, r->offset);
}

ssize_t read(int fd, void *buf, size_t n) {
    struct plain_read r = {fd, buf, n, 0, 0, 0};
    if (!active() || !tracked(fd) || (fault_log_fd < 0 && fault_at < 0)) return perform_read(&r);
    return record_read(fd, perform_read, &r);
}

ssize_t pread(int fd, void *buf, size_t n, off_t offset) {
    struct plain_read r = {fd, buf, n, offset, 1, 0};
    if (!active() || !tracked(fd) || (fault_log_fd < 0 && fault_at < 0)) return perform_read(&r);
    return record_read(fd, perform_read, &r);
}

ssize_t pread64(int fd, void *buf, size_t n, off64_t offset) {
    struct plain_read r = {fd, buf, n, (off_t)offset, 1, 1};
    if (!active() || !tracked(fd) || (fault_log_fd < 0 && fault_at < 0)) return perform_read(&r);
    return record_read(fd, perform_read, &r);
}

// MARK: - Writing

static ssize_t record_write(int fd, const char *name, long long offset, ssize_t (*perform)(void *), void *context,
                            const void *(*bytes)(void *, ssize_t, size_t *), size_t *count) {
    pthread_mutex_lock(&mutex);
    busy = 1;
    long index = begin();
    // A short write only of more than one byte, so that it still writes something.
    int fault = fault_point("write", *count > 1 ? FAULTS_WRITE : FAULTS_WRITE & ~FAULT_SHORT, fd_paths[fd]);
    busy = 0;
    if (fault && fault != FAULT_SHORT) {
        pthread_mutex_unlock(&mutex);
        errno = fault_errno(fault);
        return -1;
    }
    if (fault == FAULT_SHORT) *count /= 2;
    ssize_t written = perform(context);
    int saved = errno;
    busy = 1;
    size_t length = 0;
    const void *payload = written > 0 ? bytes(context, written, &length) : NULL;
    log_line(index, name, fd, offset, written > 0 ? (long long)written : 0, 0, fd_paths[fd], NULL, payload, length);
    busy = 0;
    pthread_mutex_unlock(&mutex);
    errno = saved;
    return written;
}

struct plain_write {
    int fd;
    const void *buf;
    size_t n;
    off_t offset;
    int positioned;
    int wide;
};

static ssize_t perform_plain(void *context) {
    struct plain_write *w = context;
    if (!w->positioned) {
        REAL(write);
        return real_write(w->fd, w->buf, w->n);
    }
    if (w->wide) {
        REAL(pwrite64);
        return real_pwrite64(w->fd, w->buf, w->n, w->offset);
    }
    REAL(pwrite);
    return real_pwrite(w->fd, w->buf, w->n, w->offset);
}

static const void *plain_bytes(void *context, ssize_t written, size_t *length) {
    *length = (size_t)written;
    return ((struct plain_write *)context)->buf;
}

ssize_t write(int fd, const void *buf, size_t n) {
    struct plain_write w = {fd, buf, n, 0, 0, 0};
    if (!active() || !tracked(fd)) return perform_plain(&w);
    return record_write(fd, "write", position(fd), perform_plain, &w, plain_bytes, &w.n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t offset) {
    struct plain_write w = {fd, buf, n, offset, 1, 0};
    if (!active() || !tracked(fd)) return perform_plain(&w);
    return record_write(fd, "write", (long long)offset, perform_plain, &w, plain_bytes, &w.n);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t offset) {
    struct plain_write w = {fd, buf, n, (off_t)offset, 1, 1};
    if (!active() || !tracked(fd)) return perform_plain(&w);
    return record_write(fd, "write", (long long)offset, perform_plain, &w, plain_bytes, &w.n);
}

struct vector_write {
    int fd;
    const struct iovec *iov;
    int count;
    char *joined;
    size_t total;
};

static ssize_t perform_vector(void *context) {
    struct vector_write *w = context;
    REAL(writev);
    size_t all = 0;
    for (int i = 0; i < w->count; i++) all += w->iov[i].iov_len;
    if (w->total >= all) return real_writev(w->fd, w->iov, w->count);
    // A short write: the first `total` bytes of the vectors.
    struct iovec cut[64];
    int parts = 0;
    size_t left = w->total;
    for (int i = 0; i < w->count && left > 0 && parts < 64; i++, parts++) {
        cut[parts] = w->iov[i];
        if (cut[parts].iov_len > left) cut[parts].iov_len = left;
        left -= cut[parts].iov_len;
    }
    return real_writev(w->fd, cut, parts);
}

static const void *vector_bytes(void *context, ssize_t written, size_t *length) {
    struct vector_write *w = context;
    w->joined = malloc((size_t)written);
    if (!w->joined) return NULL;
    size_t done = 0;
    for (int i = 0; i < w->count && done < (size_t)written; i++) {
        size_t part = w->iov[i].iov_len < (size_t)written - done ? w->iov[i].iov_len : (size_t)written - done;
        memcpy(w->joined + done, w->iov[i].iov_base, part);
        done += part;
    }
    *length = done;
    return w->joined;
}

ssize_t writev(int fd, const struct iovec *iov, int count) {
    size_t total = 0;
    for (int i = 0; i < count; i++) total += iov[i].iov_len;
    struct vector_write w = {fd, iov, count, NULL, total};
    if (!active() || !tracked(fd)) return perform_vector(&w);
    ssize_t result = record_write(fd, "write", position(fd), perform_vector, &w, vector_bytes, &w.total);
    free(w.joined);
    return result;
}

// MARK: - Sizes, syncs, names

/// Logs an operation on a tracked file descriptor around `perform`.
#define FD_OPERATION(name, fd, offset, call) \
    do { \
        if (!active() || !tracked(fd)) return call; \
        pthread_mutex_lock(&mutex); \
        busy = 1; \
        long index = begin(); \
        int fault = fault_point(name, FAULTS_SYNC, fd_paths[fd]); \
        if (fault) { \
            /* A failed fsync: what it was to make durable is lost (see DiskModel). */ \
            if (!strcmp(name, "fsync")) log_line(index, "fsync-failed", fd, 0, 0, 0, fd_paths[fd], NULL, NULL, 0); \
            busy = 0; \
            pthread_mutex_unlock(&mutex); \
            errno = fault_errno(fault); \
            return -1; \
        } \
        busy = 0; \
        int result = call; \
        int saved = errno; \
        busy = 1; \
        if (result == 0) log_line(index, name, fd, (long long)(offset), 0, 0, fd_paths[fd], NULL, NULL, 0); \
        busy = 0; \
        pthread_mutex_unlock(&mutex); \
        errno = saved; \
        return result; \
    } while (0)

int ftruncate(int fd, off_t length) {
    REAL(ftruncate);
    FD_OPERATION("truncate", fd, length, real_ftruncate(fd, length));
}

int ftruncate64(int fd, off64_t length) {
    REAL(ftruncate64);
    FD_OPERATION("truncate", fd, length, real_ftruncate64(fd, length));
}

int fsync(int fd) {
    REAL(fsync);
    FD_OPERATION("fsync", fd, 0, real_fsync(fd));
}

int fdatasync(int fd) {
    REAL(fdatasync);
    FD_OPERATION("fsync", fd, 0, real_fdatasync(fd));
}

/// Logs an operation on one or two names around `perform`.
static int record_names(const char *name, int dirfd, const char *path, int dirfd2, const char *path2, int (*perform)(void *),
                        void *context) {
    char rel[PATH_MAX], rel2[PATH_MAX];
    int inside = active() && data_path(dirfd, path, rel);
    int inside2 = path2 && active() && data_path(dirfd2, path2, rel2);
    if (!inside && !inside2) return perform(context);
    pthread_mutex_lock(&mutex);
    busy = 1;
    long index = begin();
    // A new name needs a directory entry: the disk may be full.
    if ((!strcmp(name, "rename") || !strcmp(name, "mkdir")) && fault_point(name, FAULTS_NAME, inside ? rel : rel2)) {
        busy = 0;
        pthread_mutex_unlock(&mutex);
        errno = ENOSPC;
        return -1;
    }
    busy = 0;
    int result = perform(context);
    int saved = errno;
    busy = 1;
    if (result == 0) {
        // A file moved in from outside the folder is a new file whose bytes are unknown; one
        // moved out is gone.
        if (path2 && inside && inside2) {
            log_line(index, name, -1, 0, 0, 0, rel, rel2, NULL, 0);
        } else if (path2 && inside) {
            log_line(index, "unlink", -1, 0, 0, 0, rel, NULL, NULL, 0);
        } else if (path2) {
            log_line(index, "appear", -1, 0, 0, 0, rel2, NULL, NULL, 0);
        } else {
            log_line(index, name, -1, 0, 0, 0, rel, NULL, NULL, 0);
        }
    }
    busy = 0;
    pthread_mutex_unlock(&mutex);
    errno = saved;
    return result;
}

struct names {
    int dirfd;
    const char *path;
    int dirfd2;
    const char *path2;
    unsigned flags;
    mode_t mode;
};

static int perform_rename(void *c) {
    struct names *n = c;
    REAL(renameat);
    return real_renameat(n->dirfd, n->path, n->dirfd2, n->path2);
}

static int perform_renameat2(void *c) {
    struct names *n = c;
    REAL(renameat2);
    return real_renameat2(n->dirfd, n->path, n->dirfd2, n->path2, n->flags);
}

static int perform_unlink(void *c) {
    struct names *n = c;
    REAL(unlinkat);
    return real_unlinkat(n->dirfd, n->path, (int)n->flags);
}

static int perform_mkdir(void *c) {
    struct names *n = c;
    REAL(mkdirat);
    return real_mkdirat(n->dirfd, n->path, n->mode);
}

int rename(const char *old, const char *new) {
    struct names n = {AT_FDCWD, old, AT_FDCWD, new, 0, 0};
    return record_names("rename", AT_FDCWD, old, AT_FDCWD, new, perform_rename, &n);
}

int renameat(int olddirfd, const char *old, int newdirfd, const char *new) {
    struct names n = {olddirfd, old, newdirfd, new, 0, 0};
    return record_names("rename", olddirfd, old, newdirfd, new, perform_rename, &n);
}

int renameat2(int olddirfd, const char *old, int newdirfd, const char *new, unsigned flags) {
    struct names n = {olddirfd, old, newdirfd, new, flags, 0};
    return record_names("rename", olddirfd, old, newdirfd, new, perform_renameat2, &n);
}

int unlink(const char *path) {
    struct names n = {AT_FDCWD, path, AT_FDCWD, NULL, 0, 0};
    return record_names("unlink", AT_FDCWD, path, AT_FDCWD, NULL, perform_unlink, &n);
}

int unlinkat(int dirfd, const char *path, int flags) {
    struct names n = {dirfd, path, AT_FDCWD, NULL, (unsigned)flags, 0};
    return record_names(flags & AT_REMOVEDIR ? "rmdir" : "unlink", dirfd, path, AT_FDCWD, NULL, perform_unlink, &n);
}

int rmdir(const char *path) {
    struct names n = {AT_FDCWD, path, AT_FDCWD, NULL, AT_REMOVEDIR, 0};
    return record_names("rmdir", AT_FDCWD, path, AT_FDCWD, NULL, perform_unlink, &n);
}

int mkdir(const char *path, mode_t mode) {
    struct names n = {AT_FDCWD, path, AT_FDCWD, NULL, 0, mode};
    return record_names("mkdir", AT_FDCWD, path, AT_FDCWD, NULL, perform_mkdir, &n);
}

int mkdirat(int dirfd, const char *path, mode_t mode) {
    struct names n = {dirfd, path, AT_FDCWD, NULL, 0, mode};
    return record_names("mkdir", dirfd, path, AT_FDCWD, NULL, perform_mkdir, &n);
}

// MARK: - Locks

static void note_lock(int fd, int locked, const char *how) {
    if (!active() || !tracked(fd)) return;
    pthread_mutex_lock(&mutex);
    busy = 1;
    fd_locked[fd] = (unsigned char)locked;
    log_line(op_count, locked ? "lock" : "unlock", fd, 0, 0, 0, fd_paths[fd], how, NULL, 0);
    busy = 0;
    pthread_mutex_unlock(&mutex);
}

int flock(int fd, int operation) {
    REAL(flock);
    int result = real_flock(fd, operation);
    if (result == 0) note_lock(fd, (operation & LOCK_UN) == 0, "flock");
    return result;
}

static int record_fcntl(int fd, int cmd, void *argument, int (*perform)(int, int, void *)) {
    int result = perform(fd, cmd, argument);
    if (result != -1 && argument && (cmd == F_SETLK || cmd == F_SETLKW || cmd == F_OFD_SETLK || cmd == F_OFD_SETLKW)) {
        const struct flock *lock = argument;
        note_lock(fd, lock->l_type != F_UNLCK, cmd == F_OFD_SETLK || cmd == F_OFD_SETLKW ? "ofd" : "fcntl");
    }
    return result;
}

static int perform_fcntl(int fd, int cmd, void *argument) {
    REAL(fcntl);
    return real_fcntl(fd, cmd, argument);
}

static int perform_fcntl64(int fd, int cmd, void *argument) {
    REAL(fcntl64);
    return real_fcntl64(fd, cmd, argument);
}

int fcntl(int fd, int cmd, ...) {
    va_list args;
    va_start(args, cmd);
    void *argument = va_arg(args, void *);
    va_end(args);
    return record_fcntl(fd, cmd, argument, perform_fcntl);
}

int fcntl64(int fd, int cmd, ...) {
    va_list args;
    va_start(args, cmd);
    void *argument = va_arg(args, void *);
    va_end(args);
    return record_fcntl(fd, cmd, argument, perform_fcntl64);
}

// MARK: - At exit

/// What the program still holds in the data folder when it exits normally: a lock held while
/// the app is suspended is what iOS kills it for (0xdead10cc).
__attribute__((destructor)) static void report_held(void) {
    if (log_fd < 0) return;
    pthread_mutex_lock(&mutex);
    busy = 1;
    for (int fd = 0; fd < MAX_FDS; fd++) {
        if (!fd_paths[fd] || fd == log_fd) continue;
        struct stat st;
        if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) continue;
        log_line(op_count, fd_locked[fd] ? "held-lock" : "held-fd", fd, 0, 0, 0, fd_paths[fd], NULL, NULL, 0);
    }
    busy = 0;
    pthread_mutex_unlock(&mutex);
}

#endif
