#!/usr/bin/env bash
# Installs the system packages corrupt-fuzz needs to build and test: the one list for every
# place that installs them (.ci/run, the workflows through .github/nightly/setup.sh, the
# ClusterFuzzLite Dockerfile), so none can drift from another.
#
#   bash Scripts/setup.sh            install what is missing (idempotent)
#   bash Scripts/setup.sh --check    only say what is missing: exit 1 if anything is
#   bash Scripts/setup.sh --list     print this platform's package list, one a line
#
# Linux (Debian, Ubuntu: the swift:6.3 image, a GitHub runner, OSS-Fuzz's base-builder-swift):
# apt-get as root, or through sudo; `apt-get update` once, and only when something is missing.
# macOS: Homebrew. libxml2 and sqlite are keg-only there, so pkg-config finds them only through
# PKG_CONFIG_PATH: the script prints `export PKG_CONFIG_PATH=...` on standard output (everything
# else goes to standard error), so `eval "$(bash Scripts/setup.sh)"` sets it in the calling
# shell, and in a GitHub Actions job ($GITHUB_ENV set) it is appended there for later steps.
# CORRUPT_FUZZ_SKIP_SETUP=1 skips it all (a machine set up by other means).
set -euo pipefail

mode=install
case "${1:-}" in
    "") ;;
    --check) mode=check ;;
    --list) mode=list ;;
    -h | --help)
        sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "usage: bash Scripts/setup.sh [--check | --list]" >&2
        exit 2
        ;;
esac

say() { echo "setup: $*" >&2; }

if [ "${CORRUPT_FUZZ_SKIP_SETUP:-}" = 1 ] && [ "$mode" != list ]; then
    say "CORRUPT_FUZZ_SKIP_SETUP=1: nothing checked or installed"
    exit 0
fi

# Debian and Ubuntu package names, and why each is here.
debian_packages=(
    pkg-config      # SwiftPM finds the system libraries below through it
    libxml2-dev     # the XML trait: CorruptFuzzXML, the notes loaders (CCorruptFuzzLibXML2)
    libsqlite3-dev  # the SQLite trait: CorruptFuzzSQLite, the note-store loaders (CCorruptFuzzSQLite)
    libxml2-utils   # xmllint: the tests and the nightly merge check junit.xml against its schema
    sqlite3         # the sqlite3 shell, to look into a database a finding saved
    python3         # a test's foreign loader (plistlib), the nightly summary, run-workflow.py
    python3-jsonschema # a test checks results.sarif against the SARIF 2.1.0 schema
    libc6-dev       # C headers: the crash-point recorder is compiled with clang on first use
    git             # SwiftPM fetches dependencies with it
    ca-certificates # ... over https
    zip             # .clusterfuzzlite/build.sh zips the seed corpora
    unzip           # .clusterfuzzlite/build-locally.sh unzips them
)
# Homebrew formulae; pkg-config is only installed when no pkg-config is on PATH (Xcode's
# command-line tools bring xmllint, sqlite3 and python3).
brew_formulae=(libxml2 sqlite)

os="$(uname -s)"

if [ "$os" = Darwin ]; then
    if [ "$mode" = list ]; then
        printf '%s\n' "${brew_formulae[@]}" pkg-config
        exit 0
    fi
    if ! command -v brew >/dev/null 2>&1; then
        say "Homebrew is needed on macOS (https://brew.sh), for: ${brew_formulae[*]} pkg-config"
        exit 1
    fi
    missing=()
    for formula in "${brew_formulae[@]}"; do
        brew list --versions "$formula" >/dev/null 2>&1 || missing+=("$formula")
    done
    command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
    if [ "$mode" = check ]; then
        [ ${#missing[@]} -eq 0 ] || { say "missing: ${missing[*]}"; exit 1; }
        say "nothing missing"
        exit 0
    fi
    if [ ${#missing[@]} -gt 0 ]; then
        say "installing with Homebrew: ${missing[*]}"
        HOMEBREW_NO_ENV_HINTS=1 brew install --quiet "${missing[@]}" >&2
    else
        say "nothing to install"
    fi
    for tool in xmllint sqlite3 python3; do
        command -v "$tool" >/dev/null 2>&1 || say "warning: no $tool on PATH (Xcode's command-line tools have it)"
    done
    # A test checks results.sarif against the SARIF schema with Python's jsonschema, which no
    # Homebrew formula brings.
    if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import jsonschema' >/dev/null 2>&1; then
        say "installing Python's jsonschema for the SARIF test (python3 -m pip install --user jsonschema)"
        python3 -m pip install --user --quiet jsonschema >&2 || say "warning: could not install jsonschema; the SARIF test will say so"
    fi
    path="$(brew --prefix libxml2)/lib/pkgconfig:$(brew --prefix sqlite)/lib/pkgconfig"
    case ":${PKG_CONFIG_PATH:-}:" in
        *":$path:"*) ;;
        *) path="$path${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" ;;
    esac
    if [ -n "${GITHUB_ENV:-}" ]; then
        echo "PKG_CONFIG_PATH=$path" >>"$GITHUB_ENV"
        say "PKG_CONFIG_PATH set for the job's later steps"
    fi
    printf 'export PKG_CONFIG_PATH=%q\n' "$path"
    exit 0
fi

if [ "$mode" = list ]; then
    printf '%s\n' "${debian_packages[@]}"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-query >/dev/null 2>&1; then
    say "no apt-get here ($os): install the equivalents of these Debian packages by hand, then set CORRUPT_FUZZ_SKIP_SETUP=1:"
    say "  ${debian_packages[*]}"
    exit 1
fi

missing=()
for package in "${debian_packages[@]}"; do
    status="$(dpkg-query -W -f='${db:Status-Abbrev}' "$package" 2>/dev/null || true)"
    [ "${status:0:2}" = ii ] || missing+=("$package")
done

if [ "$mode" = check ]; then
    [ ${#missing[@]} -eq 0 ] || { say "missing: ${missing[*]}"; exit 1; }
    say "nothing missing"
    exit 0
fi
if [ ${#missing[@]} -eq 0 ]; then
    say "nothing to install"
    exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
        say "not root and no sudo: run as root, or install these: ${missing[*]}"
        exit 1
    fi
    sudo=(sudo)
fi
say "installing with apt-get: ${missing[*]}"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
run_apt() { "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q -y -o Dpkg::Use-Pty=0 "$@" >>"$log" 2>&1; }
if ! run_apt update || ! run_apt install --no-install-recommends "${missing[@]}"; then
    cat "$log" >&2
    say "apt-get failed (its output is above)"
    exit 1
fi
say "installed: ${missing[*]}"
