#ifndef C_SQLITE_SHIM_H
#define C_SQLITE_SHIM_H
// The system's SQLite (libsqlite3-dev on Debian, Homebrew's or the SDK's on macOS), for the
// sqlite format of CorruptFuzzSQLite and the bundled app-store loaders.
#include <sqlite3.h>

// SQLITE_TRANSIENT is a cast of -1 to a function pointer, which Swift cannot import.
static inline void (*cf_sqlite_transient(void))(void *) { return SQLITE_TRANSIENT; }
#endif
