#!/usr/bin/env bash
# Inputs per second of a CorruptFuzzTesting check on the hardened habit loader: in-process, and
# with crash isolation (worker processes that are the test binary itself), side by side.
#   bash Benchmarks/testing-speed/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
CORRUPT_FUZZ_BENCH=1 swift test -c release --filter TestingSpeedBenchmark 2>&1 | grep BENCH
