#!/bin/sh
# The check of a folder holding notes.db: integrity_check must say ok; then a line per row. An
# I/O error is io-error, not corrupt (the file may be fine).
out=$(sqlite3 "$1/notes.db" 'PRAGMA integrity_check;' 2>&1)
if [ "$out" != "ok" ]; then
    case "$out" in
        *"disk I/O error"*) echo "reason: io-error" >&2 ;;
        *) echo "reason: corrupt" >&2 ;;
    esac
    echo "$out" | head -3 >&2
    exit 1
fi
exec sqlite3 -separator '	' "$1/notes.db" 'SELECT id, text FROM notes ORDER BY id;'
