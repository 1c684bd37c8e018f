#!/bin/sh
# with-bundle.sh FILE COMMAND [ARG...]: runs COMMAND with {} replaced by the path of the
# database FILE holds: FILE itself, or main.db unpacked (with main.db-wal beside it) from a
# corrupt-fuzz bundle (a tar), so tools that open a database path (the sqlite3 shell) see the
# WAL case's two files. Exits with COMMAND's status; a bundle tar cannot unpack is
# `reason: corrupt`.
file=$1
shift
database=$file
folder=""
if tar -tf "$file" >/dev/null 2>&1; then
    folder=$(mktemp -d) || exit 2
    trap 'rm -rf "$folder"' EXIT
    if ! tar -xf "$file" -C "$folder" 2>/dev/null || [ ! -f "$folder/main.db" ]; then
        echo "reason: corrupt" >&2
        exit 1
    fi
    database=$folder/main.db
fi
for argument do
    shift
    [ "$argument" = "{}" ] && argument=$database
    set -- "$@" "$argument"
done
"$@"
