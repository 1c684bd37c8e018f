#!/usr/bin/env python3
"""Adds a note to DIR/notes.json the careful-looking way: json.dump to a temporary file, then
os.replace over the old one (no fsync)."""
import json, os, sys
path = os.path.join(sys.argv[1], "notes.json")
with open(path) as f:
    notes = json.load(f)
notes.append(f"note {len(notes) + 1}")
with open(path + ".tmp", "w") as f:
    json.dump(notes, f)
os.replace(path + ".tmp", path)
