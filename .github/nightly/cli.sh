#!/usr/bin/env bash
# Prints the path of a corrupt-fuzz binary the nightly scripts can run, building it if needed:
#   - $CORRUPT_FUZZ_CLI, when set (a binary built or installed by other means);
#   - in the corrupt-fuzz repository itself, the release build's (`swift build -c release
#     --product corrupt-fuzz`);
#   - in a package that depends on corrupt-fuzz (the nightly job copied into your repository),
#     the corrupt-fuzz checkout SwiftPM resolved (.build/checkouts/corrupt-fuzz, or wherever a
#     path dependency points) is built on its own, `swift build -c release --package-path
#     CHECKOUT --product corrupt-fuzz`, and that binary is printed. Your package's own release
#     build never has a corrupt-fuzz binary: a dependency's executables are not built into it.
# CORRUPT_FUZZ_CLI_FLAGS adds words to that build, e.g. `--disable-default-traits` where
# libxml2's and SQLite's headers are missing (the XML and SQLite formats are then left out).
# The build's output goes to standard error; standard output is the path alone:
#   cli="$(bash .github/nightly/cli.sh)"
# `--package` prints the corrupt-fuzz package's folder instead (this repository, or the
# checkout), without building: .github/nightly/setup.sh runs its Scripts/setup.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."

fail() {
    echo "cli.sh: $*" >&2
    exit 2
}

# Is FOLDER the corrupt-fuzz package (its manifest and its command-line tool's sources)?
is_corrupt_fuzz() {
    [ -f "$1/Package.swift" ] && [ -d "$1/Sources/corrupt-fuzz" ] && grep -q 'name: "corrupt-fuzz"' "$1/Package.swift"
}

# The corrupt-fuzz package's folder: this repository, or the dependency's checkout.
package_folder() {
    if is_corrupt_fuzz .; then
        pwd
        return
    fi
    swift package resolve >&2 || fail "swift package resolve failed"
    # A URL dependency: its checkout is named after the URL's last component, normally
    # corrupt-fuzz; a fork renamed otherwise is found by its manifest.
    local folder
    for folder in .build/checkouts/corrupt-fuzz .build/checkouts/*; do
        if [ -d "$folder" ] && is_corrupt_fuzz "$folder"; then
            (cd "$folder" && pwd)
            return
        fi
    done
    # A path dependency (.package(path: "../corrupt-fuzz")): the dependency graph names its folder.
    local path
    while IFS= read -r path; do
        if [ -d "$path" ] && is_corrupt_fuzz "$path"; then
            (cd "$path" && pwd)
            return
        fi
    done < <(swift package show-dependencies --format json 2>/dev/null | sed -n 's/^ *"path" *: *"\(.*\)",\{0,1\}$/\1/p')
    fail "no corrupt-fuzz among this package's dependencies (.build/checkouts/corrupt-fuzz); set CORRUPT_FUZZ_CLI to a corrupt-fuzz binary"
}

if [ "${1:-}" = --package ]; then
    package_folder
    exit 0
fi

if [ -n "${CORRUPT_FUZZ_CLI:-}" ]; then
    [ -x "$CORRUPT_FUZZ_CLI" ] || fail "CORRUPT_FUZZ_CLI=$CORRUPT_FUZZ_CLI is not an executable file"
    echo "$CORRUPT_FUZZ_CLI"
    exit 0
fi

package="$(package_folder)"
read -r -a flags <<<"${CORRUPT_FUZZ_CLI_FLAGS:-}"
# Incremental: after the workflow's `swift build -c release` (in this repository) or the first
# call of a job (in a dependency's checkout), this only checks that nothing changed.
swift build -c release --package-path "$package" "${flags[@]}" --product corrupt-fuzz >&2 || fail "building corrupt-fuzz in $package failed"
binary="$(swift build -c release --package-path "$package" "${flags[@]}" --show-bin-path)/corrupt-fuzz"
[ -x "$binary" ] || fail "no corrupt-fuzz binary at $binary"
echo "$binary"
