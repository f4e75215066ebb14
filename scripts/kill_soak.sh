#!/usr/bin/env bash
# kill -9 soak of the checkpoint set: trains a tiny model on corpora/tiny, killing the
# trainer at random instants (saving every SAVE_EVERY updates, so many kills land inside a
# save), resuming each time, until KILLS kills have happened; then checks that the run ends
# bit-identical (1 thread) to an uninterrupted one and that no temporary file is left.
#   scripts/kill_soak.sh [KILLS=200] [SAVE_EVERY=2]      (RNNSEARCH=path/to/binary to test another build)
set -euo pipefail
cd "$(dirname "$0")/.."
kills_wanted=${1:-200}
save_every=${2:-2}
bin=${RNNSEARCH:-build/rnnsearch}  # the binary under test
[ -x "$bin" ] || scripts/build.sh >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
train() {  # train DIR UPDATES (exec: a kill must reach rnnsearch itself, not a subshell)
  exec "$bin" train --train-src corpora/tiny/train.en --train-tgt corpora/tiny/train.de \
    --valid-src corpora/tiny/val.en --valid-tgt corpora/tiny/val.de --model "$1" \
    --emb 8 --hidden 12 --maxout 6 --batch-size 16 --threads 1 --dropout 0.2 \
    --valid-freq "$save_every" --max-updates "$2"
}
updates=$((kills_wanted * 3 + 50))
(train "$work/straight" "$updates") > /dev/null 2>&1
kills=0 refused=0 finishes=0
while [ "$kills" -lt "$kills_wanted" ]; do
  (train "$work/killed" "$updates") > /dev/null 2> "$work/err" &
  pid=$!
  sleep "0.$(printf '%03d' $((RANDOM % 400 + 20)))"
  if kill -9 "$pid" 2>/dev/null && ! wait "$pid" 2>/dev/null; then
    kills=$((kills + 1))
  elif grep -aq "error" "$work/err"; then
    refused=$((refused + 1)); echo "refused to resume: $(tr -d '\0' < "$work/err" | grep -a error)" >&2; break
  else
    finishes=$((finishes + 1))  # finished before the kill: start over for more kills
    rm -rf "$work/killed"
  fi
done
(train "$work/killed" "$updates") > /dev/null 2> "$work/err" || { refused=$((refused + 1)); grep -a error "$work/err" >&2; }
identical=no
cmp -s "$work/killed/model.npz" "$work/straight/model.npz" && cmp -s "$work/killed/optimizer.npz" "$work/straight/optimizer.npz" && identical=yes
leftovers=$(find "$work/killed" -name '*.tmp.*' | wc -l)
echo "kill_soak: $kills kills, $refused refused resumes, $finishes runs finished before their kill," \
     "final weights identical to the uninterrupted run: $identical, temporary files left: $leftovers"
[ "$refused" -eq 0 ] && [ "$identical" = yes ] && [ "$leftovers" -eq 0 ]
