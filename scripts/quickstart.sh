#!/usr/bin/env bash
# The main job, from a fresh clone: install what is missing, build, train RNNsearch (preset
# small by default) on the shipped Multi30k en→de, translate test_2016_flickr with beam 5, print
# sacreBLEU, chrF and the Multi30k papers' BLEU, and write attention heatmaps of the first sentences.
#
#   TEXT=raw     raw: the model reads and writes raw, cased text (SentencePiece learnt on the
#                raw sentences, docs/design.md §3); lowercased: the tokenized lowercased recipe
#                of the releases before (word vocabularies), which writes lowercased tokens
#   SUBWORDS=8000  TEXT=raw: SentencePiece pieces of the joint en+de model (BPE)
#   MINUTES=25   training-time budget (docs/design.md §5 measures quality after 25 minutes)
#   DROPOUT=0.4  without dropout this small corpus overfits after a few epochs; 0.4 beat 0.3
#                on validation with tied embeddings; without recurrent dropout 0.5 beat 0.4
#                where the budget buys more than ~15,000 updates and trailed it before, with
#                it 0.4 beat 0.5 (docs/quality.md, What each lever is worth)
#   DROPOUT_SRC=0, DROPOUT_TRG=0  word dropout (--dropout-src, --dropout-trg): whole source
#                tokens / previous target words zeroed with this probability (docs/design.md §1.6)
#   DROPOUT_RNN=0.2  recurrent dropout (--dropout-rnn): each GRU's state where it enters its
#                recurrent products, one mask per sentence for all steps (docs/design.md §1.2);
#                on top of DROPOUT=0.4 it beat both 0.4 and 0.5 without it on validation
#                (docs/quality.md, What each lever is worth); it learns more slowly at first,
#                so short budgets (MINUTES=5: ~4,000 updates, -0.7 validation BLEU) do better
#                with 0, which turns it off
#   LABEL_SMOOTHING=0.1, SMOOTHING=0.001 (weight averaging): the recipe of docs/quality.md
#   PRESET=small sizes (small: e128 n256; base: e256 n512, the 2-hour recipe of docs/quality.md)
#   TIED=1       the output projection is the target embedding table (--tied-embeddings,
#                with --maxout = e): as good on validation, and more updates in the budget
#                (docs/quality.md, What each lever is worth); TIED=0 trains the preset as it is
#   LAYER_NORM=0 1: --layer-normalization (docs/design.md §1.2); in 25 minutes it did not
#                beat the plain model on validation (docs/quality.md, What each lever is worth)
#   DEC_CELL_BASE_DEPTH=2  --dec-cell-base-depth: 2 or more is the conditional GRU decoder of
#                Nematus and Marian (+2.3 validation and +1.2 to +2.4 test BLEU in 25 minutes,
#                docs/quality.md, What each lever is worth); 1 is the paper's decoder
#   ENC_CELL_DEPTH=1  --enc-cell-depth (deep-transition encoder), docs/design.md §1.3; 2 on
#                the conditional GRU was 0.5 below it on validation in 25 minutes (one seed)
#   DEC_DEPTH=1  --dec-depth: stacked decoder layers over the conditional GRU, §1.4; 2 was
#                1.5 below it on validation in 25 minutes (one seed)
#   DEC_CELL_HIGH_DEPTH=1  --dec-cell-high-depth: transitions of each decoder layer above
#                the conditional GRU (Marian's s2s; needs DEC_DEPTH=2 or more), §1.4
#   ENC_DEPTH=1, ENC_TYPE=bidirectional, SKIP=0  --enc-depth, --enc-type (bidirectional or
#                alternating) and, with SKIP=1, --skip: stacked encoder layers, §1.3
#   GUIDED=0     1: guided alignment with no second tool: `align --hmm` links the training
#                pairs' words (docs/aligning.md; seconds), and training pulls the attention
#                towards them (--guided-alignment, weight GUIDED_WEIGHT=0.1), so that the
#                heatmaps and --alignment hard show better links; TEXT=raw only. MODEL
#                defaults to models/en-de-small-raw-guided
#   VALID_FREQ=500 updates between validations (validation time is not training time)
#   NORMALIZE=1.0 (TEXT=raw), 2.0 (TEXT=lowercased)  length normalisation of beam search,
#                chosen on the validation set for each (as
#                was --replace-unk: each <unk> in the output becomes the source word it
#                attends to most)
#   THREADS=0    threads for training and translation (0 = OMP_NUM_THREADS when set, else all cores)
#   PRECISION=auto of the output layer's vocabulary projection: auto (bf16 training, int8
#                translation where the CPU runs them natively), fp32, bf16 (docs/design.md §5)
#   SEED=1       random seed (initialisation, data order, dropout): another shows the spread
#   MODEL=models/en-de-small-raw (TEXT=raw), models/en-de-small (TEXT=lowercased)
#   ENSEMBLE=1   models to train one after the other (seeds SEED, SEED+1, ...; the first in
#                MODEL, the others in MODEL-s<seed>) and translate with as an ensemble;
#                ENSEMBLE=4 DROPOUT=0.5 DROPOUT_RNN=0 is the 2-hour recipe of docs/quality.md
#                (4 × 25 min)
#
# Running it again resumes training where it stopped (or skips it when the budget is used);
# a MODEL directory trained with other model options is refused (give another MODEL).
set -euo pipefail
cd "$(dirname "$0")/.."
MINUTES=${MINUTES:-25}
THREADS=${THREADS:-0}
PRECISION=${PRECISION:-auto}
DROPOUT=${DROPOUT:-0.4}
DROPOUT_SRC=${DROPOUT_SRC:-0}
DROPOUT_TRG=${DROPOUT_TRG:-0}
DROPOUT_RNN=${DROPOUT_RNN:-0.2}
LABEL_SMOOTHING=${LABEL_SMOOTHING:-0.1}
SMOOTHING=${SMOOTHING:-0.001}
TIED=${TIED:-1}
LAYER_NORM=${LAYER_NORM:-0}
ENC_CELL_DEPTH=${ENC_CELL_DEPTH:-1}
DEC_DEPTH=${DEC_DEPTH:-1}
ENC_DEPTH=${ENC_DEPTH:-1}
ENC_TYPE=${ENC_TYPE:-bidirectional}
SKIP=${SKIP:-0}
DEC_CELL_BASE_DEPTH=${DEC_CELL_BASE_DEPTH:-2}
DEC_CELL_HIGH_DEPTH=${DEC_CELL_HIGH_DEPTH:-1}
PRESET=${PRESET:-small}
VALID_FREQ=${VALID_FREQ:-500}
TEXT=${TEXT:-raw}
SUBWORDS=${SUBWORDS:-8000}
SEED=${SEED:-1}
ENSEMBLE=${ENSEMBLE:-1}
GUIDED=${GUIDED:-0}
GUIDED_WEIGHT=${GUIDED_WEIGHT:-0.1}
data=corpora/multi30k
bin=build/rnnsearch
model_options=(--enc-cell-depth "$ENC_CELL_DEPTH" --dec-cell-base-depth "$DEC_CELL_BASE_DEPTH"
               --dec-cell-high-depth "$DEC_CELL_HIGH_DEPTH" --dec-depth "$DEC_DEPTH"
               --enc-depth "$ENC_DEPTH" --enc-type "$ENC_TYPE")
[ "$SKIP" = 1 ] && model_options+=(--skip)
case "$TEXT" in
  raw) text=(--tokenizer raw --subwords "$SUBWORDS")
       if [ "$GUIDED" = 1 ]; then MODEL=${MODEL:-models/en-de-small-raw-guided}; else MODEL=${MODEL:-models/en-de-small-raw}; fi
       NORMALIZE=${NORMALIZE:-1.0} ;;
  lowercased) text=(--tokenizer words); MODEL=${MODEL:-models/en-de-small}; NORMALIZE=${NORMALIZE:-2.0} ;;
  *) echo "quickstart.sh: TEXT must be raw or lowercased, not '$TEXT'" >&2; exit 2 ;;
esac
case "$PRESET" in
  small) emb=128 ;;
  base) emb=256 ;;
  *) echo "quickstart.sh: PRESET must be small or base, not '$PRESET'" >&2; exit 2 ;;
esac
[[ "$ENSEMBLE" =~ ^[1-9][0-9]*$ ]] || { echo "quickstart.sh: ENSEMBLE must be a number >= 1, not '$ENSEMBLE'" >&2; exit 2; }
[ "$TIED" = 1 ] && model_options+=(--tied-embeddings --maxout "$emb")
[ "$LAYER_NORM" = 1 ] && model_options+=(--layer-normalization)
case "$GUIDED" in
  0) ;;
  1) [ "$TEXT" = raw ] || { echo "quickstart.sh: GUIDED=1 needs TEXT=raw (the links are on white-space words)" >&2; exit 2; } ;;
  *) echo "quickstart.sh: GUIDED must be 0 or 1, not '$GUIDED'" >&2; exit 2 ;;
esac

scripts/setup.sh
scripts/build.sh

if [ "$GUIDED" = 1 ]; then
  links=models/multi30k.train.en-de.align
  if [ ! -s "$links" ]; then
    echo "== word links of the training pairs: align --hmm into $links"
    mkdir -p models
    $bin align --hmm --src $data/train.en.gz --tgt $data/train.de.gz --threads "$THREADS" -o "$links"
  fi
  model_options+=(--guided-alignment "$links" --guided-alignment-weight "$GUIDED_WEIGHT")
fi

models=()
for ((k = 0; k < ENSEMBLE; k++)); do
  seed=$((SEED + k))
  dir=$MODEL
  [ "$k" -gt 0 ] && dir=$MODEL-s$seed
  models+=(--model "$dir")
  echo "== training preset ${PRESET} on Multi30k en→de for ${MINUTES} minutes into ${dir} (seed ${seed})"
  $bin train --train-src $data/train.en.gz --train-tgt $data/train.de.gz \
    --valid-src $data/val.en.gz --valid-tgt $data/val.de.gz \
    --model "$dir" --preset "$PRESET" "${text[@]}" "${model_options[@]}" \
    --dropout "$DROPOUT" --dropout-src "$DROPOUT_SRC" --dropout-trg "$DROPOUT_TRG" --dropout-rnn "$DROPOUT_RNN" \
    --label-smoothing "$LABEL_SMOOTHING" \
    --exponential-smoothing "$SMOOTHING" --valid-metrics bleu,cross-entropy --valid-freq "$VALID_FREQ" \
    --max-minutes "$MINUTES" --threads "$THREADS" --seed "$seed" --precision "$PRECISION"
done

hyp=$MODEL/test.hyp.de
[ "$ENSEMBLE" -gt 1 ] && hyp=$MODEL/test.ensemble$ENSEMBLE.hyp.de
echo "== translating test_2016_flickr (1000 sentences, beam 5) with ${ENSEMBLE} model(s)"
$bin translate "${models[@]}" --input $data/test_2016_flickr.en.gz --output "$hyp" \
  --beam-size 5 --normalize "$NORMALIZE" --replace-unk --threads "$THREADS" --precision "$PRECISION" --heatmaps "$MODEL/heatmaps" --heatmaps-limit 20

ref=$data/test_2016_flickr.de.gz
if [ "$TEXT" = raw ]; then
  echo "== sacreBLEU and chrF2 against the raw references (as sacrebleu REF -m bleu chrf)"
  $bin bleu --ref $ref --hyp "$hyp" --metrics bleu,chrf
  $bin bleu --ref $ref --hyp "$hyp" --lowercase
fi
echo "== BLEU as Multi30k papers report it (tokenized, lowercased, as multi-bleu.perl)"
$bin bleu --tokenize multi30k --ref $ref --hyp "$hyp"

echo "== attention heatmaps: $(realpath "$MODEL")/heatmaps/index.html"
