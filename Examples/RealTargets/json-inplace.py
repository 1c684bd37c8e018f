#!/usr/bin/env python3
"""Adds a note to DIR/notes.json the usual way: json.dump into the file opened for writing."""
import json, os, sys
path = os.path.join(sys.argv[1], "notes.json")
with open(path) as f:
    notes = json.load(f)
notes.append(f"note {len(notes) + 1}")
with open(path, "w") as f:
    json.dump(notes, f)
