#!/bin/sh
# The check of a folder holding notes.db: integrity_check must say ok; then a line per row.
out=$(sqlite3 "$1/notes.db" 'PRAGMA integrity_check;' 2>&1)
if [ "$out" != "ok" ]; then
    echo "reason: corrupt" >&2
    echo "$out" | head -3 >&2
    exit 1
fi
exec sqlite3 -separator '	' "$1/notes.db" 'SELECT id, text FROM notes ORDER BY id;'
