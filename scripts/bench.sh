#!/usr/bin/env bash
# Speed as docs/design.md §5 measures it, rnnsearch and the PyTorch reference side by side in one
# run on this machine (2 threads), then the ratios.
#
#   training:  target tokens/s, presets small and base, 20 warm-up updates, BENCH_SECONDS (60)
#              of batch construction + forward + backward + clipping + optimizer step;
#              small also with 1 thread (scaling) and its peak memory
#   decoding:  test_2016_flickr (1000 sentences), beam 5, greedy, top-10 sampling and 5
#              alternatives (each completed greedily) with batches of 64, beam 5 with one and two
#              oracle constraints per line (batches of 32, as beam 5), and their peak memory;
#              beam 5 with the lexical shortlist, and its BLEU change; beam 5 with
#              --batch-invariant 0 against the default 1; beam 5 writing alignments (the alignment
#              output when the model has one, and its attention)
#   precision: training small and base, and decoding, in fp32 against the default precision
#              (auto: bf16 training, int8 decoding where the CPU runs them natively), and
#              the BLEU change of decoding
#   scaling:   with mpirun, training small and beam-5 decoding on 2 MPI ranks × 1 thread
#              against 1 process × 1 and × 2 threads (docs/scaling.md); training also with
#              the ring exchange of ranks on several hosts forced on this one
#              (RNNSEARCH_MPI_RING=1), overlapped with the backward pass and not
#              (RNNSEARCH_MPI_OVERLAP=0)
#   serving:   rnnsearch serve with 1, 8, 32 and 128 one-sentence clients against translate
#              (scripts/serve_load.py, docs/serve.md; SERVE=0 skips it)
#   models:    training small as the paper's GRU, the conditional GRU (the quickstart's), and
#              Marian's deep s2s (2 transitions, 2 layers, --skip), each without and with
#              --layer-normalization, and the share of its time that layer normalization adds;
#              decoding (beam 5, batches of 32) with each model in MODELS beside MODEL
#              (ARCHITECTURES=0 skips the training part)
#
#   MODEL=models/en-de-small   trained word-level model to decode with (TEXT=lowercased scripts/quickstart.sh
#                              makes it: the reference decodes lowercased tokens too)
#   MODELS=""                  other trained models to decode test_2016_flickr with, e.g. the quickstart's
#                              and a deep one (ENC_CELL_DEPTH=2 ... LAYER_NORM=1 scripts/quickstart.sh)
#   SHORTLIST="1000 100"         FIRST BEST of translate --shortlist (MODEL/lex.s2t, or learned here)
#   REPEAT=1                   runs of each main-table measure; the table gives their median
#   REF=<directory of the PyTorch reference implementation>, REF_CKPT=<reference checkpoint to decode with>; without
#   one the reference is trained for REF_MINUTES (6) first. The reference runs only if
#   /usr/bin/python3 can import torch (apt-get install python3-torch libopenblas0-pthread).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
BENCH_SECONDS=${BENCH_SECONDS:-60}
MODEL=${MODEL:-models/en-de-small}
SHORTLIST=${SHORTLIST:-1000 100}
REF=${REF:-}  # the PyTorch reference is not part of this repository
REF_MINUTES=${REF_MINUTES:-6}
REPEAT=${REPEAT:-1}
MODELS=${MODELS:-}
ARCHITECTURES=${ARCHITECTURES:-1}
data=$root/corpora/multi30k
bin=$root/build/rnnsearch
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

scripts/build.sh >/dev/null
[ -f "$MODEL/model.npz" ] || { echo "bench.sh: no trained model in $MODEL (run TEXT=lowercased scripts/quickstart.sh, or set MODEL)" >&2; exit 1; }

# Runs a command under the reference's cpuwatch.py when available: it reports the command's
# peak RSS and how busy the machine was with other processes meanwhile.
watch() {
  if [ -f "$REF/cpuwatch.py" ]; then /usr/bin/python3 "$REF/cpuwatch.py" "$@"; else "$@"; fi
}
# The value of " NAME=value" (the leading space keeps tgt_tok/s from matching src+tgt_tok/s).
field() { grep -o " $1=[0-9.]*" | tail -1 | cut -d= -f2; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "n/a" }'; }
# The median of the arguments (the lower middle one of an even count).
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "# rnnsearch benchmark, $(date -u +%Y-%m-%d), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p')"
declare -A r
for run in "small 2" "base 2" "small 1"; do
  set -- $run
  speeds=() rss=()
  for ((k = 0; k < REPEAT; ++k)); do
    out=$(watch "$bin" train --train-src $data/train.en.gz --train-tgt $data/train.de.gz \
      --valid-src $data/val.en.gz --valid-tgt $data/val.de.gz --model "$work/$1-$2-$k" --preset "$1" \
      --threads "$2" --bench-seconds "$BENCH_SECONDS" --bench-warmup 20 2>/dev/null)
    echo "rnnsearch train $1 threads=$2: $(echo "$out" | grep -E 'BENCH|CPUWATCH' | tr '\n' ' ')"
    speeds+=("$(echo "$out" | field "tgt_tok/s")")
    rss+=("$(echo "$out" | field peak_rss_mb)")
  done
  r[train_$1_$2]=$(median "${speeds[@]}")
  r[rss_$1_$2]=$(median "${rss[@]}")
done

# Scaling over MPI (docs/scaling.md): 2 ranks × 1 thread against 1 process × 1 and × 2 threads.
# (Open MPI 4, Debian 12, reads OMPI_MCA_rmaps_base_oversubscribe; Open MPI 5, Debian 13, whose
# launcher is PRRTE, PRTE_MCA_rmaps_default_mapping_policy.)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
  PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe
mpi=$(command -v mpirun || true)
# On one host the ranks add their gradients in shared memory; RNNSEARCH_MPI_RING=1 forces the
# ring exchange that ranks on several hosts use, overlapped with the backward pass unless
# RNNSEARCH_MPI_OVERLAP=0 (train/weight_partition.h).
if [ -n "$mpi" ]; then
  for exchange in "0 1" "1 1" "1 0"; do  # RNNSEARCH_MPI_RING, RNNSEARCH_MPI_OVERLAP
    set -- $exchange
    out=$(RNNSEARCH_MPI_RING=$1 RNNSEARCH_MPI_OVERLAP=$2 "$mpi" -np 2 "$bin" train --train-src $data/train.en.gz \
      --train-tgt $data/train.de.gz --valid-src $data/val.en.gz --valid-tgt $data/val.de.gz \
      --model "$work/small-mpi-$1$2" --preset small --threads 1 --bench-seconds "$BENCH_SECONDS" \
      --bench-warmup 20 2>/dev/null || true)
    echo "rnnsearch train small 2 MPI ranks x 1 thread, RNNSEARCH_MPI_RING=$1 RNNSEARCH_MPI_OVERLAP=$2:" \
      "$(echo "$out" | grep -E 'BENCH' | tr '\n' ' ')"
    r[train_small_mpi_$1$2]=$(echo "$out" | field "tgt_tok/s" || true)
  done
  r[train_small_mpi]=${r[train_small_mpi_01]}
fi

zcat $data/test_2016_flickr.en.gz > "$work/test.en"
"$bin" tokenize -i $data/test_2016_flickr.de.gz -o "$work/test.ref.de"
for n in 1 2; do  # oracle constraints: n phrases of 1-3 words of each line's reference (docs/quality.md)
  /usr/bin/python3 scripts/oracle_constraints.py pick "$work/test.ref.de" --phrases $n --seed 1 > "$work/constraints$n"
done
# beam: one sentence at a time, as the reference decodes; beam_batched: our default batch 32;
# sampling: top-10 sampling (docs/translating.md), batched as greedy decoding is; alternatives:
# the 5 most probable first words, each completed greedily (5 outputs per line); constrained1/2:
# beam 5 with one / two oracle constraints per line (dynamic beam allocation)
for mode in "beam 5 1" "beam_batched 5 32" "greedy 1 64" "sampling 1 64 --sampling-topk 10" \
    "alternatives 1 64 --alternatives 5" "constrained1 5 32 --constraints $work/constraints1" \
    "constrained2 5 32 --constraints $work/constraints2"; do
  set -- $mode
  speeds=() rss=()
  for ((k = 0; k < REPEAT; ++k)); do
    out=$(watch "$bin" translate -m "$MODEL" -i "$work/test.en" -o "$work/hyp.$1" --beam-size "$2" \
      --batch-size "$3" --threads 2 "${@:4}" 2>&1)  # (the translation goes to -o, cpuwatch's report to stdout)
    echo "rnnsearch translate $1 (beam $2, batch $3): $(echo "$out" | grep -E 'lines/s|CPUWATCH' | tr '\n' ' ')"
    speeds+=("$(echo "$out" | grep -o '([0-9.]* lines/s)' | tr -d '(' | cut -d' ' -f1)")
    rss+=("$(echo "$out" | field peak_rss_mb)")
  done
  r[decode_$1]=$(median "${speeds[@]}")
  r[rss_decode_$1]=$(median "${rss[@]}")
done

# The tokenized, lowercased BLEU (multi-bleu.perl's) of docs/design.md §5, the score alone.
bleu() { "$bin" bleu --tokenize multi30k --score-only --ref "$work/test.ref.de" --hyp "$1"; }
echo "rnnsearch translate --sampling-topk 10, batch 64: ${r[decode_sampling]} lines/s," \
  "$(ratio "${r[decode_sampling]}" "${r[decode_greedy]}") of greedy decoding's; BLEU $(bleu "$work/hyp.sampling")"
echo "rnnsearch translate --alternatives 5, batch 64: ${r[decode_alternatives]} lines/s (5 translations each)," \
  "$(ratio "${r[decode_alternatives]}" "${r[decode_greedy]}") of greedy decoding's"
for n in 1 2; do
  echo "rnnsearch translate --constraints ($n per line), beam 5, batch 32: ${r[decode_constrained$n]} lines/s," \
    "$(ratio "${r[decode_constrained$n]}" "${r[decode_beam_batched]}") of beam 5's; BLEU $(bleu "$work/hyp.constrained$n")" \
    "($(bleu "$work/hyp.beam_batched") without); $(/usr/bin/python3 scripts/oracle_constraints.py count \
    "$work/constraints$n" "$work/hyp.constrained$n")"
done

# The default precision (auto, docs/design.md §5: bf16 training, int8 or bf16 decoding where
# the CPU runs them natively) against fp32: speed and the BLEU change of decoding.
for preset in small base; do
  out=$("$bin" train --train-src $data/train.en.gz --train-tgt $data/train.de.gz \
    --valid-src $data/val.en.gz --valid-tgt $data/val.de.gz --model "$work/$preset-fp32" --preset "$preset" \
    --threads 2 --precision fp32 --bench-seconds "$BENCH_SECONDS" --bench-warmup 20 2>&1)
  r[train_${preset}_fp32]=$(echo "$out" | field "tgt_tok/s")
done
for mode in "beam_batched 5 32" "greedy 1 64"; do
  set -- $mode
  out=$("$bin" translate -m "$MODEL" -i "$work/test.en" -o "$work/hyp.$1.fp32" --beam-size "$2" --batch-size "$3" \
    --threads 2 --precision fp32 2>&1 >/dev/null)
  r[decode_$1_fp32]=$(echo "$out" | grep -o '([0-9.]* lines/s)' | tr -d '(' | cut -d' ' -f1)
done
log=$("$bin" train --train-src $data/train.en.gz --train-tgt $data/train.de.gz --valid-src $data/val.en.gz \
  --valid-tgt $data/val.de.gz --model "$work/small-default" --preset small --bench-seconds 1 --bench-warmup 1 2>&1)
train_default=fp32
if grep -q "products in bf16" <<<"$log"; then train_default=bf16; fi
decode_line=$(echo "a" | "$bin" translate -m "$MODEL" 2>&1 >/dev/null)
decode_default=$(echo "$decode_line" | grep -o "projection in [a-z0-9]*" | cut -d' ' -f3)
# Which kernels ran: the GEMM backend, the products' precision and the CPU features used.
echo "rnnsearch kernels: training: $(grep -o 'GEMM .*' <<<"$log"); decoding: $(grep -o 'projection in [^)]*)' <<<"$decode_line")"
echo "rnnsearch default precision (training $train_default, decoding $decode_default) against --precision fp32:" \
  "training small ${r[train_small_2]} / ${r[train_small_fp32]} tgt tok/s ($(ratio "${r[train_small_2]}" "${r[train_small_fp32]}"))," \
  "base ${r[train_base_2]} / ${r[train_base_fp32]} ($(ratio "${r[train_base_2]}" "${r[train_base_fp32]}"));" \
  "beam 5, batch 32: ${r[decode_beam_batched]} / ${r[decode_beam_batched_fp32]} lines/s" \
  "($(ratio "${r[decode_beam_batched]}" "${r[decode_beam_batched_fp32]}")), BLEU $(bleu "$work/hyp.beam_batched") /" \
  "$(bleu "$work/hyp.beam_batched.fp32"); greedy, batch 64: ${r[decode_greedy]} / ${r[decode_greedy_fp32]} lines/s" \
  "($(ratio "${r[decode_greedy]}" "${r[decode_greedy_fp32]}")), BLEU $(bleu "$work/hyp.greedy") / $(bleu "$work/hyp.greedy.fp32")"

# Batch invariance (docs/design.md § Decoding numerics): beam 5 in batches of 32 as above, at the
# default precision, with --batch-invariant 0 (the BLAS products) against the default 1.
out=$("$bin" translate -m "$MODEL" -i "$work/test.en" -o "$work/hyp.variant" --beam-size 5 --batch-size 32 \
  --threads 2 --batch-invariant 0 2>&1 >/dev/null)
r[decode_variant]=$(echo "$out" | grep -o '([0-9.]* lines/s)' | tr -d '(' | cut -d' ' -f1)
echo "rnnsearch translate beam 5, batch 32, --batch-invariant 1 (default) / 0: ${r[decode_beam_batched]} /" \
  "${r[decode_variant]} lines/s ($(ratio "${r[decode_beam_batched]}" "${r[decode_variant]}")); BLEU" \
  "$(bleu "$work/hyp.beam_batched") / $(bleu "$work/hyp.variant")"

# Alignments (docs/aligning.md): beam 5 in batches of 32 as above, each line's alignment written
# (--alignment hard): the model's alignment output when it has one (computed once for the
# translations the search returns), else its attention; with an alignment output, also the
# attention (--raw-attention). Against beam 5 without alignments.
alignments() {  # alignments MODEL_DIR SPEED_WITHOUT: prints the line
  local kinds=("attention|") k name flags speed line
  grep -q '"alignment_output": *[1-9]' "$1/config.json" && kinds=("alignment output|" "attention|--raw-attention")
  line="rnnsearch translate beam 5, batch 32, --alignment hard, $1:"
  for k in "${kinds[@]}"; do
    name=${k%%|*} flags=${k#*|}
    # shellcheck disable=SC2086  # (the flags are words)
    speed=$("$bin" translate -m "$1" -i "$work/test.en" -o "$work/hyp.alignment" --beam-size 5 --batch-size 32 \
      --threads 2 --alignment hard $flags 2>&1 >/dev/null | grep -o '([0-9.]* lines/s)' | tr -d '(' | cut -d' ' -f1)
    line+=" $name $speed lines/s ($(ratio "$speed" "$2") of $2 without alignments);"
  done
  echo "${line%;}"
}
alignments "$MODEL" "${r[decode_beam_batched]}"

# Lexical shortlist (docs/design.md §1.7): beam 5 in batches of 32 as above, with
# --shortlist LEX $SHORTLIST (which decodes in fp32) against fp32 without; BLEU of both.
lex=$MODEL/lex.s2t
if [ ! -f "$lex" ]; then
  lex=$work/lex.s2t
  "$bin" shortlist -m "$MODEL" --train-src $data/train.en.gz --train-tgt $data/train.de.gz -o "$lex" 2>/dev/null
fi
out=$("$bin" translate -m "$MODEL" -i "$work/test.en" -o "$work/hyp.shortlist" --beam-size 5 --batch-size 32 \
  --threads 2 --shortlist "$lex" $SHORTLIST 2>&1 >/dev/null)
r[decode_shortlist]=$(echo "$out" | grep -o '([0-9.]* lines/s)' | tr -d '(' | cut -d' ' -f1)
echo "rnnsearch translate beam 5, batch 32, --shortlist $SHORTLIST: ${r[decode_shortlist]} lines/s," \
  "$(ratio "${r[decode_shortlist]}" "${r[decode_beam_batched_fp32]}") of the full output layer (both fp32);" \
  "BLEU $(bleu "$work/hyp.shortlist") with, $(bleu "$work/hyp.beam_batched.fp32") without"

if [ -n "$mpi" ]; then
  for mode in "1 1" "1 2" "2 1"; do  # ranks threads: beam 5, batches of 32 (1 rank: no mpirun)
    set -- $mode
    launch=()
    [ "$1" = 1 ] || launch=("$mpi" -np "$1")
    out=$("${launch[@]}" "$bin" translate -m "$MODEL" -i "$work/test.en" -o "$work/hyp.mpi" --beam-size 5 \
      --batch-size 32 --threads "$2" 2>&1 >/dev/null || true)
    r[decode_mpi_$1_$2]=$(echo "$out" | grep -o '([0-9.]* lines/s)' | tr -d '(' | cut -d' ' -f1 || true)
  done
  echo
  echo "| scaling (docs/scaling.md) | 1 process × 1 thread | 1 process × 2 threads | 2 MPI ranks × 1 thread | 2 ranks / 1 |"
  echo "| --- | --- | --- | --- | --- |"
  echo "| training small, tgt tok/s | ${r[train_small_1]} | ${r[train_small_2]} | ${r[train_small_mpi]} | $(ratio "${r[train_small_mpi]}" "${r[train_small_1]}") |"
  echo "| training small, ring exchange (RNNSEARCH_MPI_RING=1), overlapped, tgt tok/s | | | ${r[train_small_mpi_11]} | $(ratio "${r[train_small_mpi_11]}" "${r[train_small_1]}") |"
  echo "| training small, ring exchange, not overlapped (RNNSEARCH_MPI_OVERLAP=0), tgt tok/s | | | ${r[train_small_mpi_10]} | $(ratio "${r[train_small_mpi_10]}" "${r[train_small_1]}") |"
  echo "| translation beam 5 batch 32, sents/s | ${r[decode_mpi_1_1]} | ${r[decode_mpi_1_2]} | ${r[decode_mpi_2_1]} | $(ratio "${r[decode_mpi_2_1]}" "${r[decode_mpi_1_1]}") |"
  echo
fi

if [ -n "$REF" ] && [ -f "$REF/train.py" ] && /usr/bin/python3 -c "import torch" 2>/dev/null; then
  cd "$REF"
  for run in "small" "base"; do
    speeds=() rss=()
    for ((k = 0; k < REPEAT; ++k)); do
      out=$(watch /usr/bin/python3 train.py --config "$run" --bench-seconds "$BENCH_SECONDS" --threads 2 2>/dev/null)
      echo "reference train $run threads=2: $(echo "$out" | grep -E 'BENCH|CPUWATCH' | tr '\n' ' ')"
      speeds+=("$(echo "$out" | field "tgt_tok/s")")
      rss+=("$(echo "$out" | field peak_rss_mb)")
    done
    r[ref_train_$run]=$(median "${speeds[@]}")
    r[ref_rss_$run]=$(median "${rss[@]}")
  done
  ckpt=${REF_CKPT:-$work/ref.pt}
  if [ ! -f "$ckpt" ]; then
    /usr/bin/python3 train.py --config small --minutes "$REF_MINUTES" --threads 2 --save "$ckpt" >/dev/null 2>&1
    echo "reference: trained ${REF_MINUTES} minutes for its decoding checkpoint"
  fi
  for mode in "beam --mode beam --beam 5" "greedy --mode greedy --batch 64"; do
    set -- $mode
    name=$1; shift
    speeds=() rss=()
    for ((k = 0; k < REPEAT; ++k)); do
      out=$(watch /usr/bin/python3 translate.py --ckpt "$ckpt" --threads 2 "$@" 2>/dev/null)
      echo "reference translate $name: $(echo "$out" | grep -E "DECODE|BLEU|CPUWATCH" | tr "\n" " ")"
      speeds+=("$(echo "$out" | field "sents/s")")
      rss+=("$(echo "$out" | field peak_rss_mb)")
    done
    r[ref_decode_$name]=$(median "${speeds[@]}")
    r[ref_rss_decode_$name]=$(median "${rss[@]}")
  done
  cd "$root"
  echo
  echo "| measure (2 threads; median of $REPEAT) | rnnsearch | reference | ratio |"
  echo "| --- | --- | --- | --- |"
  echo "| training small, tgt tok/s | ${r[train_small_2]} | ${r[ref_train_small]} | $(ratio "${r[train_small_2]}" "${r[ref_train_small]}") |"
  echo "| training base, tgt tok/s | ${r[train_base_2]} | ${r[ref_train_base]} | $(ratio "${r[train_base_2]}" "${r[ref_train_base]}") |"
  echo "| decoding beam 5, one sentence at a time, sents/s | ${r[decode_beam]} | ${r[ref_decode_beam]} | $(ratio "${r[decode_beam]}" "${r[ref_decode_beam]}") |"
  echo "| decoding beam 5, batches of 32 sentences, sents/s | ${r[decode_beam_batched]} | ${r[ref_decode_beam]} | $(ratio "${r[decode_beam_batched]}" "${r[ref_decode_beam]}") |"
  echo "| decoding greedy batch 64, sents/s | ${r[decode_greedy]} | ${r[ref_decode_greedy]} | $(ratio "${r[decode_greedy]}" "${r[ref_decode_greedy]}") |"
  echo "| peak memory training small, MB | ${r[rss_small_2]} | ${r[ref_rss_small]} | $(ratio "${r[rss_small_2]}" "${r[ref_rss_small]}") |"
  echo "| peak memory decoding beam 5 (rnnsearch: batches of 32), MB | ${r[rss_decode_beam_batched]} | ${r[ref_rss_decode_beam]} | $(ratio "${r[rss_decode_beam_batched]}" "${r[ref_rss_decode_beam]}") |"
  echo "| peak memory decoding greedy batch 64, MB | ${r[rss_decode_greedy]} | ${r[ref_rss_decode_greedy]} | $(ratio "${r[rss_decode_greedy]}" "${r[ref_rss_decode_greedy]}") |"
  echo "| training small 2 threads / 1 thread | $(ratio "${r[train_small_2]}" "${r[train_small_1]}") | | |"
else
  echo "reference: skipped; set REF to the PyTorch reference's directory and install python3-torch libopenblas0-pthread for the side-by-side run"
fi

# Model architectures (docs/design.md §1.2–§1.4): training speed of the preset small's sizes
# as the paper's GRU, the conditional GRU and Marian's deep s2s, each without and with layer
# normalization. What normalization costs is its share of the normalized model's time:
# 1 - (tok/s with) / (tok/s without).
if [ "$ARCHITECTURES" != 0 ]; then
  echo
  echo "| model, preset small sizes (2 threads, median of $REPEAT) | tgt tok/s | with --layer-normalization | of its time in layer normalization |"
  echo "| --- | --- | --- | --- |"
  for arch in "paper GRU|" "conditional GRU|--dec-cell-base-depth 2" \
    "deep s2s|--enc-cell-depth 2 --dec-cell-base-depth 2 --dec-cell-high-depth 2 --enc-depth 2 --dec-depth 2 --skip"; do
    name=${arch%%|*} flags=${arch#*|}
    for ln in "" "--layer-normalization"; do
      speeds=()
      for ((k = 0; k < REPEAT; ++k)); do
        # shellcheck disable=SC2086  # (the flags are words)
        out=$("$bin" train --train-src $data/train.en.gz --train-tgt $data/train.de.gz --valid-src $data/val.en.gz \
          --valid-tgt $data/val.de.gz --model "$work/arch-$k" --preset small $flags $ln --threads 2 \
          --bench-seconds "$BENCH_SECONDS" --bench-warmup 20 2>/dev/null)
        rm -rf "$work/arch-$k"
        speeds+=("$(echo "$out" | field "tgt_tok/s")")
      done
      r[arch_$ln]=$(median "${speeds[@]}")
    done
    plain=${r[arch_]} normed=${r[arch_--layer-normalization]}
    echo "| $name | $plain | $normed | $(awk -v a="$normed" -v b="$plain" 'BEGIN { if (b > 0) printf "%.1f%%", 100 * (1 - a / b); else print "n/a" }') |"
  done
fi
for m in $MODELS; do
  out=$("$bin" translate -m "$m" -i "$work/test.en" -o "$work/hyp.models" --beam-size 5 --batch-size 32 --threads 2 \
    2>&1 >/dev/null) || { echo "bench.sh: translate with $m failed: $out" >&2; continue; }
  shape=$(/usr/bin/python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))["model"]
print(" ".join(f"{k}={v}" for k, v in m.items() if k not in ("src_vocab", "tgt_vocab", "emb", "maxout", "output_layer")))' \
    "$m/config.json")
  echo "rnnsearch translate beam 5, batch 32, $m ($shape):" \
    "$(echo "$out" | grep -o '([0-9.]* lines/s)' | tr -d '(' | cut -d' ' -f1) lines/s, beside ${r[decode_beam_batched]} with $MODEL"
  alignments "$m" "$(echo "$out" | grep -o '([0-9.]* lines/s)' | tr -d '(' | cut -d' ' -f1)"
done

# The server under load (docs/serve.md): 1 to 128 one-sentence clients against translate.
if [ "${SERVE:-1}" != 0 ]; then
  echo
  /usr/bin/python3 scripts/serve_load.py --model "$MODEL" --repeat "$REPEAT"
fi
