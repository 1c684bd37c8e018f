#!/usr/bin/env python3
"""A small app-style reader of the note-store database with Python's sqlite3, as a
corrupt-fuzz target: `python3 query.py FILE`.

FILE is a database, or a corrupt-fuzz bundle (a tar of main.db and main.db-wal, the WAL
case), unpacked into a temporary folder first. It opens the database read-only, reads every
folder and note as an app would, prints a digest and exits 0; a sqlite3.DatabaseError
(SQLITE_CORRUPT, SQLITE_NOTADB...) exits 1 with `reason: corrupt`. It runs no integrity check:
what SQLite reads without an error, it accepts.
"""
import os
import sqlite3
import sys
import tarfile
import tempfile


def load(path):
    db = sqlite3.connect("file:" + path + "?mode=ro", uri=True)
    try:
        folders = db.execute("SELECT id, name FROM folders").fetchall()
        notes = db.execute("SELECT id, folder_id, title, length(body), created, updated FROM notes").fetchall()
        attachments = db.execute("SELECT count(*), sum(length(data)) FROM attachments").fetchone()
    finally:
        db.close()
    print(f"{len(folders)} folders, {len(notes)} notes, attachments {attachments}")
    for note in notes:
        print(note)


def main():
    if len(sys.argv) != 2:
        print("reason: usage\nusage: query.py FILE", file=sys.stderr)
        return 2
    path = sys.argv[1]
    if not os.path.exists(path):
        print("reason: not-found", file=sys.stderr)
        return 1
    if os.path.getsize(path) == 0:
        print("reason: empty", file=sys.stderr)
        return 1
    try:
        with tempfile.TemporaryDirectory() as folder:
            database = path
            if tarfile.is_tarfile(path):
                # Only the two members, written by name (no paths from the archive).
                with tarfile.open(path) as bundle:
                    for name in ("main.db", "main.db-wal"):
                        try:
                            member = bundle.extractfile(name)
                        except KeyError:
                            continue
                        if member is not None:
                            with open(os.path.join(folder, name), "wb") as out:
                                out.write(member.read())
                database = os.path.join(folder, "main.db")
                if not os.path.exists(database):
                    raise OSError("the bundle has no main.db")
            load(database)
    except (sqlite3.DatabaseError, tarfile.TarError, OSError) as error:
        print(f"reason: corrupt\n{type(error).__name__}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
