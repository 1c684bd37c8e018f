#!/bin/bash -eu
# Builds the libFuzzer bridge's targets (Fuzz/, one executable per loader) with the flags of
# ClusterFuzzLite's and OSS-Fuzz's Swift image, and puts them in $OUT with what they need at
# run time: the habit tracker's schema, seed corpora (<fuzzer>_seed_corpus.zip) and options.
# Runs in the image (cwd $SRC/corrupt-fuzz) or here: .clusterfuzzlite/build-locally.sh sets
# the same environment.

# $SWIFTFLAGS: -parse-as-library, the static standard library, -sanitize=fuzzer,$SANITIZER,
# and $CFLAGS/$CXXFLAGS passed on (precompile_swift of base-builder-swift).
. precompile_swift

# The main package declares the demo library products the harnesses use (HabitLoaders,
# NotesLoaders, CorruptFuzzExamples) only when this is set while its manifest is evaluated.
export CORRUPT_FUZZ_FUZZERS=1

cd "$SRC/corrupt-fuzz/Fuzz"
# shellcheck disable=SC2086  # SWIFTFLAGS is a list of words
swift build -c release $SWIFTFLAGS
bin="$(swift build -c release $SWIFTFLAGS --show-bin-path)"

fuzzers="HabitLoaderNaiveFuzzer HabitLoaderHardenedFuzzer NotesLoaderNaiveFuzzer"
for fuzzer in $fuzzers; do
    cp "$bin/$fuzzer" "$OUT/"
done
# The schema the habit fuzzers read at start, beside them.
cp "$SRC/corrupt-fuzz/Corpus/schemas/habit-tracker.ksy" "$OUT/"
# Seed corpora: the repository's sample files, zipped as ClusterFuzzLite expects.
(cd "$SRC/corrupt-fuzz/Corpus/habits" && zip -q -j "$OUT/HabitLoaderNaiveFuzzer_seed_corpus.zip" ./*.habits)
cp "$OUT/HabitLoaderNaiveFuzzer_seed_corpus.zip" "$OUT/HabitLoaderHardenedFuzzer_seed_corpus.zip"
(cd "$SRC/corrupt-fuzz/Corpus/notes" && zip -q -j "$OUT/NotesLoaderNaiveFuzzer_seed_corpus.zip" ./*.xml)
# The naive loaders are broken on purpose: their known findings are not news.
cp "$SRC/corrupt-fuzz/.github/nightly/known-findings.txt" "$OUT/known-findings.txt"
# detect_leaks = 0: LeakSanitizer reports values the schema mutator builds (in
# CorruptFuzzSchema's encoder) as leaked after a clean run of the hardened fuzzer; Swift keeps
# enum payload pointers with spare bits set, which LeakSanitizer may not see as pointers. Not
# investigated further: until it is, leaks are not findings here.
for fuzzer in $fuzzers; do
    printf '[libfuzzer]\nmax_len = 65536\ntimeout = 5\ndetect_leaks = 0\n\n[asan]\ndetect_leaks = 0\n' >"$OUT/$fuzzer.options"
done
