#!/usr/bin/env python3
"""Python's plistlib as a corrupt-fuzz loader and writer (target protocol).

    plistlib-roundtrip.py digest PATH       exit 0 and the value as canonical text, or exit 1
                                            with `reason: corrupt`
    plistlib-roundtrip.py resave PATH OUT   load PATH, dump it to OUT in the format it was read
                                            from (binary stays binary, XML stays XML)

The digest is the same text `plist-harness digest` prints for Foundation's reading, so either
reads what the other wrote: one line per scalar, `path = type value`, keys sorted.
"""
import datetime
import math
import plistlib
import sys

REFERENCE = datetime.datetime(2001, 1, 1, tzinfo=datetime.timezone.utc)


def number(value):
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(float(value))


def text(value):
    """A string with backslash, control characters and DEL escaped, as plist-harness does."""
    out = []
    for char in value:
        code = ord(char)
        if char == "\\":
            out.append("\\\\")
        elif char == "\n":
            out.append("\\n")
        elif char == "\r":
            out.append("\\r")
        elif char == "\t":
            out.append("\\t")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{{{code:x}}}")
        else:
            out.append(char)
    return "".join(out)


def lines(value, path, out):
    if isinstance(value, dict):
        out.append(f"{path} = dict {len(value)}")
        for key in sorted(value):
            lines(value[key], f"{path}.{text(key)}", out)
    elif isinstance(value, list):
        out.append(f"{path} = array {len(value)}")
        for index, element in enumerate(value):
            lines(element, f"{path}[{index}]", out)
    elif isinstance(value, bool):
        out.append(f"{path} = bool {'true' if value else 'false'}")
    elif isinstance(value, int):
        out.append(f"{path} = integer {value}")
    elif isinstance(value, float):
        out.append(f"{path} = real {number(value)}")
    elif isinstance(value, str):
        out.append(f"{path} = string {text(value)}")
    elif isinstance(value, bytes):
        out.append(f"{path} = data {value.hex()}")
    elif isinstance(value, datetime.datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=datetime.timezone.utc)
        out.append(f"{path} = date {number((moment - REFERENCE).total_seconds())}")
    elif isinstance(value, plistlib.UID):
        out.append(f"{path} = uid {value.data}")
    else:
        out.append(f"{path} = {type(value).__name__} {value!r}")


def load(path):
    with open(path, "rb") as handle:
        data = handle.read()
    fmt = plistlib.FMT_BINARY if data.startswith(b"bplist") else plistlib.FMT_XML
    return plistlib.loads(data), fmt


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("digest", "resave"):
        sys.stderr.write("reason: usage\nusage: plistlib-roundtrip.py digest PATH | resave PATH OUT\n")
        return 2
    try:
        value, fmt = load(sys.argv[2])
    except FileNotFoundError:
        sys.stderr.write("reason: not-found\n")
        return 1
    except Exception as error:  # plistlib raises many kinds on corrupt input
        sys.stderr.write(f"reason: corrupt\n{type(error).__name__}: {error}\n")
        return 1
    if sys.argv[1] == "digest":
        out = []
        lines(value, "$", out)
        sys.stdout.write("\n".join(out) + "\n")
        return 0
    try:
        with open(sys.argv[3], "wb") as handle:
            plistlib.dump(value, handle, fmt=fmt, sort_keys=False)
    except Exception as error:
        sys.stderr.write(f"reason: unwritable\n{type(error).__name__}: {error}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
