#!/usr/bin/env bash
# Word alignments of a tokenized parallel corpus with no tool but rnnsearch (docs/aligning.md):
#
#   scripts/align.sh SRC TGT OUT
#
# OUT gets a line of Pharaoh links (0-based source-target word positions, as fast_align and
# eflomal write them) for each line pair of SRC and TGT (plain or .gz, words separated by
# white space), from `rnnsearch align --hmm`: IBM model 1, then an HMM alignment model each
# way (words counted by their first 6 characters), the two directions trained together by
# agreement, their links combined by grow-diag-final-and — of everything rnnsearch can do,
# what aligned best on the RWTH German–English development set (docs/aligning.md has the
# table, beside fast_align and eflomal, and its time and memory for 23,780 pairs on 2 cores).
#
#   MODELS=DIR   also train an rnnsearch model each way, guided by those links
#                (--guided-alignment), into DIR/forward and DIR/reverse: their attention,
#                what `translate --alignment` and the heatmaps show, then follows the links
#                (docs/aligning.md measures how closely). Preset small, raw text with
#                SUBWORDS=8000 pieces, UPDATES=4000 updates each (their training time:
#                docs/aligning.md's table), GUIDED_WEIGHT=0.1; the first VALID=200 pairs
#                validate.
#   THREADS=0    threads (0 = OMP_NUM_THREADS when set, else all cores)
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: scripts/align.sh SRC TGT OUT   (MODELS=DIR to train guided models too)" >&2
  exit 2
fi
for f in "$1" "$2"; do [ -r "$f" ] || { echo "scripts/align.sh: cannot read $f" >&2; exit 2; }; done
# The paths as given from here, before the script moves to the repository.
src=$(realpath "$1") tgt=$(realpath "$2") out=$(realpath -m "$3")
[ -z "${MODELS:-}" ] || MODELS=$(realpath -m "$MODELS")
cd "$(dirname "$0")/.."
THREADS=${THREADS:-0}
bin=build/rnnsearch
[ -x "$bin" ] || { scripts/setup.sh && scripts/build.sh; }

start=$(date +%s)
"$bin" align --hmm --src "$src" --tgt "$tgt" --symmetrize grow-diag-final-and --threads "$THREADS" -o "$out"
echo "scripts/align.sh: links in $out ($(($(date +%s) - start)) s)" >&2

[ -n "${MODELS:-}" ] || exit 0
SUBWORDS=${SUBWORDS:-8000} UPDATES=${UPDATES:-4000} GUIDED_WEIGHT=${GUIDED_WEIGHT:-0.1} VALID=${VALID:-200}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The training sides as plain text, and the links of the reverse direction (target-source).
for side in src tgt; do
  file=${!side}
  case "$file" in *.gz) gzip -dc "$file" ;; *) cat "$file" ;; esac | tr -d '\r' > "$work/$side"
  head -n "$VALID" "$work/$side" > "$work/valid.$side"
done
awk '{ for (k = 1; k <= NF; ++k) { split($k, p, "-"); printf "%s%s-%s", (k > 1 ? " " : ""), p[2], p[1] } print "" }' \
  "$out" > "$work/reverse.links"
train() {  # train DIR SOURCE TARGET LINKS
  "$bin" train --train-src "$work/$2" --train-tgt "$work/$3" --valid-src "$work/valid.$2" --valid-tgt "$work/valid.$3" \
    --model "$1" --tokenizer raw --subwords "$SUBWORDS" --preset small --max-updates "$UPDATES" \
    --guided-alignment "$4" --guided-alignment-weight "$GUIDED_WEIGHT" --threads "$THREADS"
}
mkdir -p "$MODELS"
train "$MODELS/forward" src tgt "$out"
train "$MODELS/reverse" tgt src "$work/reverse.links"
echo "scripts/align.sh: guided models in $MODELS/forward and $MODELS/reverse ($(($(date +%s) - start)) s in all)" >&2
