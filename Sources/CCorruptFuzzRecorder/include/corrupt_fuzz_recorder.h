// The file-operation recorder of `corrupt-fuzz crashpoints`: a shared library loaded into the
// program under test with LD_PRELOAD (Linux; DYLD_INSERT_LIBRARIES is not supported). It has no
// API: it interposes libc's file functions, and is configured by the environment:
//
//   CORRUPT_FUZZ_DATA_DIR   only operations on files below this folder are recorded
//   CORRUPT_FUZZ_RECORD     the log file: one line per operation, a write's bytes after its line
//   CORRUPT_FUZZ_KILL_AT    the process kills itself (SIGKILL) just before operation N (0-based)
//
// A line: `OP INDEX PID NAME FD OFFSET LENGTH FLAGS PATH[\tPATH2]`, then LENGTH bytes for the
// writes (write, pwrite, writev). At exit the files still open and the locks still held are
// logged as `held-fd` and `held-lock`.
#ifndef CORRUPT_FUZZ_RECORDER_H
#define CORRUPT_FUZZ_RECORDER_H
#endif
