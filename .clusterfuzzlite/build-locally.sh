#!/usr/bin/env bash
# Runs .clusterfuzzlite/build.sh here, without Docker, in the environment ClusterFuzzLite's
# Swift image gives it ($SRC, $OUT, $WORK, $SANITIZER, the base builder's $CFLAGS and
# $CXXFLAGS for the address sanitizer, and precompile_swift on PATH), then runs each fuzzer it
# built for a few seconds on its seed corpus, as `run_fuzzers` would. Needs zip and unzip
# (bash Scripts/setup.sh installs them).
#   bash .clusterfuzzlite/build-locally.sh [seconds per fuzzer, default 10]
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${1:-10}"
root="${CFLITE_LOCAL:-/tmp/cflite-local}"
export SRC="$root/src" OUT="$root/out" WORK="$root/work"
export SANITIZER=address FUZZING_ENGINE=libfuzzer FUZZING_LANGUAGE=swift ARCHITECTURE=x86_64
export LIB_FUZZING_ENGINE="-fsanitize=fuzzer"
# The demo library products the harnesses use (build.sh sets it too).
export CORRUPT_FUZZ_FUZZERS=1
# base-builder: CFLAGS plus the sanitizer's and coverage flags, as its `compile` sets them.
base="-O1 -fno-omit-frame-pointer -gline-tables-only -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION"
export CFLAGS="$base -fsanitize=address -fsanitize-address-use-after-scope -fsanitize=fuzzer-no-link"
export CXXFLAGS="$CFLAGS -stdlib=libc++"
export PATH="$repo/.clusterfuzzlite:$PATH"
rm -rf "$OUT" && mkdir -p "$SRC" "$OUT" "$WORK"
# The Dockerfile's COPY . $SRC/corrupt-fuzz (build folders left out; kept between runs).
mkdir -p "$SRC/corrupt-fuzz"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) | tar -xf - -C "$SRC/corrupt-fuzz"
cd "$SRC/corrupt-fuzz"
bash "$SRC/corrupt-fuzz/.clusterfuzzlite/build.sh"
echo "built: $(cd "$OUT" && ls)"
status=0
for fuzzer in "$OUT"/*Fuzzer; do
    name="$(basename "$fuzzer")"
    run="$WORK/run-$name"
    rm -rf "$run" && mkdir -p "$run/corpus"
    [ -f "$OUT/${name}_seed_corpus.zip" ] && unzip -q -o "$OUT/${name}_seed_corpus.zip" -d "$run/corpus"
    echo "== $name, ${seconds}s"
    # The fuzzer's .options file, as run_fuzzers passes it: [libfuzzer] lines as -key=value
    # flags, [asan] lines as ASAN_OPTIONS.
    options=()
    asan=""
    if [ -f "$fuzzer.options" ]; then
        section=""
        while IFS= read -r line; do
            line="${line// /}"
            case "$line" in
                \[*\]) section="$line" ;;
                *=*) if [ "$section" = "[libfuzzer]" ]; then options+=("-$line"); elif [ "$section" = "[asan]" ]; then asan="${asan:+$asan:}$line"; fi ;;
            esac
        done <"$fuzzer.options"
    fi
    code=0
    (cd "$run" && ASAN_OPTIONS="$asan" SWIFT_BACKTRACE=enable=no "$fuzzer" "${options[@]}" -max_total_time="$seconds" -rss_limit_mb=2560 corpus >log 2>&1) || code=$?
    grep -E '==corrupt-fuzz== (finding|signature)|ERROR: (libFuzzer|AddressSanitizer)|Done [0-9]+ runs' "$run/log" | head -5 || true
    artifacts="$(cd "$run" && ls crash-* leak-* timeout-* oom-* 2>/dev/null || true)"
    echo "   exit $code; saved: ${artifacts:-nothing}"
    case "$name" in
        *Hardened*) [ "$code" -eq 0 ] || status=1 ;;  # the hardened loader must survive
    esac
done
exit "$status"
