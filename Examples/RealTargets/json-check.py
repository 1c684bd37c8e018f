#!/usr/bin/env python3
"""The check of a notes.json folder: a line per note, or `reason: corrupt` (`io-error` when the
file could not be read: it may be fine)."""
import json, os, sys
try:
    with open(os.path.join(sys.argv[1], "notes.json")) as f:
        notes = json.load(f)
except OSError as error:
    sys.stderr.write(f"reason: io-error\n{type(error).__name__}: {error}\n")
    sys.exit(1)
except Exception as error:
    sys.stderr.write(f"reason: corrupt\n{type(error).__name__}: {error}\n")
    sys.exit(1)
print("\n".join(notes))
