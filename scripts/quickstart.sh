#!/usr/bin/env bash
# The main job, from a fresh clone: install what is missing, build, train RNNsearch (preset
# small by default) on the shipped Multi30k en→de, translate test_2016_flickr with beam 5, print BLEU,
# and write attention heatmaps of the first sentences.
#
#   MINUTES=25   training-time budget (docs/design.md §5 measures quality after 25 minutes)
#   DROPOUT=0.4  without dropout this small corpus overfits after ~4 epochs (~5 minutes); 0.4
#                beat 0.3 on validation with tied embeddings (docs/quality.md)
#   LABEL_SMOOTHING=0.1, SMOOTHING=0.001 (weight averaging): the recipe of docs/quality.md
#   PRESET=small sizes (small: e128 n256; base: e256 n512, the 2-hour recipe of docs/quality.md)
#   TIED=1       the output projection is the target embedding table (--tied-embeddings,
#                with --maxout = e): as good on validation, and 1.35x the updates in the
#                budget (docs/quality.md); TIED=0 trains the preset as it is
#   VALID_FREQ=500 updates between validations (validation time is not training time)
#   NORMALIZE=2.0  length normalisation of beam search, chosen on the validation set (as
#                was --replace-unk: each <unk> in the output becomes the source word it
#                attends to most)
#   THREADS=0    threads for training and translation (0 = all cores)
#   SEED=1       random seed (initialisation, data order, dropout): another shows the spread
#   MODEL=models/en-de-small
#
# Running it again resumes training where it stopped (or skips it when the budget is used).
set -euo pipefail
cd "$(dirname "$0")/.."
MINUTES=${MINUTES:-25}
THREADS=${THREADS:-0}
DROPOUT=${DROPOUT:-0.4}
LABEL_SMOOTHING=${LABEL_SMOOTHING:-0.1}
SMOOTHING=${SMOOTHING:-0.001}
TIED=${TIED:-1}
PRESET=${PRESET:-small}
VALID_FREQ=${VALID_FREQ:-500}
NORMALIZE=${NORMALIZE:-2.0}
MODEL=${MODEL:-models/en-de-small}
SEED=${SEED:-1}
data=corpora/multi30k
bin=build/rnnsearch
tied=()
case "$PRESET" in
  small) emb=128 ;;
  base) emb=256 ;;
  *) echo "quickstart.sh: PRESET must be small or base, not '$PRESET'" >&2; exit 2 ;;
esac
[ "$TIED" = 1 ] && tied=(--tied-embeddings --maxout "$emb")

scripts/setup.sh
scripts/build.sh

echo "== training preset ${PRESET} on Multi30k en→de for ${MINUTES} minutes into ${MODEL}"
$bin train --train-src $data/train.en.gz --train-tgt $data/train.de.gz \
  --valid-src $data/val.en.gz --valid-tgt $data/val.de.gz \
  --model "$MODEL" --preset "$PRESET" "${tied[@]}" --dropout "$DROPOUT" --label-smoothing "$LABEL_SMOOTHING" \
  --exponential-smoothing "$SMOOTHING" --valid-metrics bleu,cross-entropy --valid-freq "$VALID_FREQ" \
  --max-minutes "$MINUTES" --threads "$THREADS" --seed "$SEED"

echo "== translating test_2016_flickr (1000 sentences, beam 5)"
$bin translate --model "$MODEL" --input $data/test_2016_flickr.en.gz --output "$MODEL/test.hyp.de" \
  --beam-size 5 --normalize "$NORMALIZE" --replace-unk --threads "$THREADS" --heatmaps "$MODEL/heatmaps" --heatmaps-limit 20

echo "== BLEU (tokenized, lowercased, as multi-bleu.perl)"
$bin tokenize --input $data/test_2016_flickr.de.gz --output "$MODEL/test.ref.de"
$bin bleu --ref "$MODEL/test.ref.de" --hyp "$MODEL/test.hyp.de"

echo "== attention heatmaps: $(pwd)/$MODEL/heatmaps/index.html"
