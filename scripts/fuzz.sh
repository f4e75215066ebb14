#!/usr/bin/env bash
# scripts/fuzz.sh TARGET SECONDS [libFuzzer options...]: fuzzes one target (text, vocab, npz,
# config_json, progress_json, corpus, corpus_cache, train_config, serve_request, pharaoh,
# align_gold, hmm_pairs, steering_line, json_input) under ASan+UBSan for SECONDS, starting from
# its seed corpus tests/fuzz/corpus/TARGET. New interesting inputs collect in
# build-sanitize/fuzz-corpus/TARGET; a crash is written to build-sanitize/crash-* and the script
# exits non-zero. Copy an input into the seed corpus to keep it as a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 2 ]; then
  echo "usage: scripts/fuzz.sh TARGET SECONDS [libFuzzer options]" >&2
  exit 2
fi
target=$1 seconds=$2
shift 2
[ -d "tests/fuzz/corpus/$target" ] || { echo "fuzz.sh: no target '$target' (see tests/fuzz/)" >&2; exit 2; }
[ -x build-sanitize/fuzz_"$target" ] || scripts/sanitize.sh build
mkdir -p build-sanitize/fuzz-corpus/"$target"
cd build-sanitize
exec ./fuzz_"$target" -max_total_time="$seconds" -max_len=16384 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
  -print_final_stats=1 "$@" fuzz-corpus/"$target" ../tests/fuzz/corpus/"$target"
