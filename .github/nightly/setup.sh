#!/usr/bin/env bash
# Installs the system packages the nightly jobs need: corrupt-fuzz's own Scripts/setup.sh (one
# list for CI, the workflows and ClusterFuzzLite), taken from this repository or, where the job
# was copied into a package that depends on corrupt-fuzz, from the checkout SwiftPM resolved,
# so it always matches the corrupt-fuzz version in use. (Resolving needs git, not these
# packages.) Add what your own loaders need after it. Standard output is Scripts/setup.sh's:
# on macOS an `export PKG_CONFIG_PATH=...` line, for `eval "$(bash .github/nightly/setup.sh)"`.
#   bash .github/nightly/setup.sh
set -euo pipefail
here="$(dirname "$0")"
package="$(bash "$here/cli.sh" --package)"
exec bash "$package/Scripts/setup.sh" "$@"
