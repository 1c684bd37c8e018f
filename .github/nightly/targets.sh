# shellcheck shell=bash
# Reads .github/nightly/targets.txt: `nightly_targets` prints "NAME|EXECUTABLE|FORMAT|CORPUS"
# lines with the padding trimmed. Sourced by the other scripts.
nightly_targets() {
    grep -v '^[[:space:]]*#' "$(dirname "${BASH_SOURCE[0]}")/targets.txt" | grep -v '^[[:space:]]*$' \
        | awk -F'|' '{ for (i = 1; i <= NF; i++) { gsub(/^[ \t]+|[ \t]+$/, "", $i) } print $1 "|" $2 "|" $3 "|" $4 }'
}
