#!/usr/bin/env bash
# Two MPI ranks against one process (docs/design.md §7), on corpora/tiny:
#   1. training: 2 ranks × 1 thread end with the weights of 1 process × 2 threads, and 3
#      ranks with those of 3 threads, exchanging in shared memory; again with the exchange
#      of several hosts (the ring, overlapped with the backward pass or not; exact for 2
#      ranks, to rounding for 3), also with a rank left without pairs in a batch;
#      also deep layer-normalized, with --accumulate, guided alignment, and with bf16 products;
#   2. resuming a 2-rank run gives the weights of an uninterrupted one;
#   3. translate, score and align: output byte-identical to 1 process (text, n-best, JSON, alignments);
#   4. a rank that fails alone (its corpus missing, or rank 0 unable to save mid-training)
#      ends the whole job, non-zero, in seconds;
#   5. ranks that disagree (command line, corpus, --threads) are refused at start;
#   6. only the module librnnsearch_mpi.so links the MPI library; without it, or beside a module of
#      another build, mpirun gets an error.
# Usage: tests/test_mpi.sh RNNSEARCH_BINARY MPIRUN
set -euo pipefail
bin=$(realpath "$1")
mpirun=$2
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Open MPI refuses root without these; --oversubscribe lets 2 ranks share fewer cores.
# (Open MPI 4, Debian 12, reads OMPI_MCA_rmaps_base_oversubscribe; Open MPI 5, Debian 13, whose
# launcher is PRRTE, PRTE_MCA_rmaps_default_mapping_policy.)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
  PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe
# Under AddressSanitizer (scripts/sanitize.sh) Open MPI's plugins leak at exit, unloaded
# before LeakSanitizer can name them, so no suppression by library works: leak checking is
# off for the ranks (the single-process tests check the same code for leaks); every other
# ASan and UBSan report still fails the test.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
mpi2() { "$mpirun" -np 2 "$@"; }
# Two ranks that run different commands, within 120 s: two_ranks "MPIRUN OPTIONS" CMD0 CMD1, each
# command a line for the shell (quoted with q). Not mpirun's "-np 1 A : -np 1 B", on which
# Debian 13's Open MPI 5.0.7 mpirun crashes (SIGSEGV, whatever A and B are): every rank runs
# a shell that picks its command by the rank the launcher gives it.
two_ranks() {
  # shellcheck disable=SC2086
  timeout 120 "$mpirun" -np 2 $1 bash -c \
    'if [ "${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-$PMIX_RANK}}" = 0 ]; then eval "$1"; else eval "$2"; fi' \
    two_ranks "$2" "$3"
}
q() { printf '%q ' "$@"; }
fail() { echo "test_mpi: FAIL: $*" >&2; exit 1; }

# A tiny model; each run adds --model, --threads and --max-updates. $train is in fp32: the
# default (auto) would train in bf16 on a CPU with AVX512_BF16 and leave fp32 untested there;
# a run that names its own precision (1f, the bf16 case) starts from $any_precision.
any_precision=(train --train-src "$root/corpora/tiny/train.en" --train-tgt "$root/corpora/tiny/train.de"
       --valid-src "$root/corpora/tiny/val.en" --valid-tgt "$root/corpora/tiny/val.de"
       --emb 8 --hidden 12 --maxout 6 --batch-size 16 --dropout 0.2 --seed 7
       --valid-freq 10 --valid-metrics cross-entropy,bleu --exponential-smoothing 0.05)
train=("${any_precision[@]}" --precision fp32)
# Largest absolute difference between the arrays of two model.npz files.
max_difference() {
  /usr/bin/python3 - "$1" "$2" <<'EOF'
import sys, numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
assert sorted(a.files) == sorted(b.files), (a.files, b.files)
print(max(float(np.max(np.abs(a[k].astype(np.float64) - b[k]))) for k in a.files))
EOF
}

# The same training as 1 process × 2 threads (into $work/one_NAME) and as 2 ranks × 1 thread
# (into $work/two_NAME): train_both NAME UPDATES OPTION... (a --precision among the options
# replaces the fp32 of $train).
train_both() {
  local name=$1 updates=$2 base=("${train[@]}")
  shift 2
  [[ " $* " != *" --precision "* ]] || base=("${any_precision[@]}")
  "$bin" "${base[@]}" "$@" --model "$work/one_$name" --threads 2 --max-updates "$updates" > /dev/null \
    2> "$work/one_$name.log" || fail "1-process training ($*) failed: $(cat "$work/one_$name.log")"
  mpi2 "$bin" "${base[@]}" "$@" --model "$work/two_$name" --threads 1 --max-updates "$updates" > /dev/null \
    2> "$work/two_$name.log" || fail "2-rank training ($*) failed: $(cat "$work/two_$name.log")"
}

# 1. Same global batch, same shards (global shard g = rank × threads + thread), same dropout
# masks. On one host the ranks keep the weights and their gradients in shared memory, and
# rank r adds the ranks' gradients of its part in rank order, as 1 process adds its
# threads' (train/weight_partition.h); the clipping norm is summed in blocks in an order
# that depends neither on threads nor ranks; each rank steps its part (Adam, and the weight
# average that validates). So the weights agree exactly: tolerance 0.
"$bin" "${train[@]}" --model "$work/one" --threads 2 --max-updates 20 > /dev/null 2> "$work/one.log" ||
  fail "1-process training failed: $(cat "$work/one.log")"
mpi2 "$bin" "${train[@]}" --model "$work/two" --threads 1 --max-updates 20 > /dev/null 2> "$work/two.log" ||
  fail "2-rank training failed: $(cat "$work/two.log")"
# Open MPI keeps the window in /dev/shm: where there is none (a bare chroot), the ranks fall
# back to the ring (1a), exact for 2 ranks as well, and the 3-rank check below to rounding.
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
  grep -q "2 MPI ranks (shared memory)" "$work/two.log" || fail "the 2-rank log does not say it ran on 2 ranks sharing memory"
  shared=1
else
  grep -q "2 MPI ranks (ring)" "$work/two.log" || fail "the 2-rank log does not say it ran on 2 ranks"
  echo "test_mpi: no writable /dev/shm here: the ranks used the ring, not shared memory"
  shared=0
fi
[ "$(grep -c '^model:' "$work/two.log")" = 1 ] || fail "the 2-rank log is not written by rank 0 alone"
diff=$(max_difference "$work/one/model.npz" "$work/two/model.npz")
[ "$diff" = 0.0 ] || fail "2 ranks differ from 1 process by $diff"
# Adam's moments and the average, stepped by parts, gathered into the checkpoint by rank 0.
state=$(max_difference "$work/one/optimizer.npz" "$work/two/optimizer.npz")
[ "$state" = 0.0 ] || fail "the 2-rank optimizer state differs from 1 process's by $state"
# Validation is split across the ranks and reduced: the same perplexity and BLEU (exactly,
# as the weights are).
[ "$(grep '^valid' "$work/one.log" | sed 's/train_time.*//')" = "$(grep '^valid' "$work/two.log" | sed 's/train_time.*//')" ] ||
  fail "validation lines differ: $(grep '^valid' "$work/one.log" "$work/two.log")"
echo "test_mpi: training, 2 ranks vs 1 process: max |difference| $diff"

# 1a. The exchange of ranks on several hosts, forced on this one: a ring reduce-scatter of
# the gradients and an all-gather of the weights. With two shards the ring adds a + b or
# b + a, equal in IEEE arithmetic: exact as well. The ring overlaps the backward pass (the
# output layer's gradient exchanged on a thread of its own while the decoder's and encoder's
# backward passes run, train/weight_partition.h; by default only across hosts, forced here with
# RNNSEARCH_MPI_OVERLAP=1): exact with it and without it (=0, and the default on one host).
for overlap in 1 ""; do
  RNNSEARCH_MPI_RING=1 RNNSEARCH_MPI_OVERLAP=$overlap mpi2 "$bin" "${train[@]}" --model "$work/two_ring$overlap" \
    --threads 1 --max-updates 20 > /dev/null 2> "$work/two_ring$overlap.log" ||
    fail "2-rank ring training failed: $(cat "$work/two_ring$overlap.log")"
  exchange="ring, overlapped"
  [ "$overlap" = 1 ] || exchange=ring
  grep -q "2 MPI ranks ($exchange)" "$work/two_ring$overlap.log" ||
    fail "RNNSEARCH_MPI_RING=1 RNNSEARCH_MPI_OVERLAP=$overlap did not choose the $exchange: $(grep model: "$work/two_ring$overlap.log")"
  diff=$(max_difference "$work/one/model.npz" "$work/two_ring$overlap/model.npz")
  [ "$diff" = 0.0 ] || fail "2 ranks ($exchange) differ from 1 process by $diff"
  state=$(max_difference "$work/one/optimizer.npz" "$work/two_ring$overlap/optimizer.npz")
  [ "$state" = 0.0 ] || fail "the 2-rank ($exchange) optimizer state differs from 1 process's by $state"
  echo "test_mpi: training, 2 ranks ($exchange) vs 1 process: max |difference| $diff"
done
# Ranks that see other values (mpirun passes a variable to another host's ranks only with
# -x) agree on the ring they cut: not overlapped, as one of them asks; exact as well. (The
# switches read on/off, yes/no and true/false as 1/0, in any case.)
cmd=$(q "$bin" "${train[@]}" --model "$work/two_ring_mixed" --threads 1 --max-updates 20)
two_ranks "" "RNNSEARCH_MPI_RING=on RNNSEARCH_MPI_OVERLAP=Yes $cmd" "RNNSEARCH_MPI_RING=true RNNSEARCH_MPI_OVERLAP=false $cmd" \
  > /dev/null 2> "$work/two_ring_mixed.log" || fail "ranks asking for and against the overlap failed: $(cat "$work/two_ring_mixed.log")"
grep -q "2 MPI ranks (ring) " "$work/two_ring_mixed.log" || fail "ranks disagreeing on the overlap did not agree on no overlap"
diff=$(max_difference "$work/one/model.npz" "$work/two_ring_mixed/model.npz")
[ "$diff" = 0.0 ] || fail "2 ranks (one asking for the overlap, one not) differ from 1 process by $diff"
# Any other value is a one-line error naming the variable, not a guess, on one host too
# (where shared memory leaves the overlap unused).
for variable in RNNSEARCH_MPI_RING RNNSEARCH_MPI_OVERLAP; do
  env "$variable=maybe" "$mpirun" -np 2 "$bin" "${train[@]}" --model "$work/maybe" --threads 1 --max-updates 2 \
    > /dev/null 2> "$work/maybe.log" && fail "$variable=maybe was accepted"
  grep -q "$variable must be 1 or 0 (or true/false, yes/no, on/off), not 'maybe'" "$work/maybe.log" ||
    fail "$variable=maybe did not say why: $(cat "$work/maybe.log")"
done

# 1b. Three ranks: parts of unequal size (21, 21 and 22 of the norm's 64 blocks). In shared
# memory the three gradients are added in rank order, (a + b) + c as by 3 threads: exact.
# The ring adds them in another order for some parts ((c + a) + b): a rounding of the
# gradient (6e-8 relative) per update, which Adam passes on about as large to the weights
# (in its step lr · m / sqrt(v) the same relative change of m and sqrt(v) cancels). 20
# updates left 1e-7 on this machine; tolerance 1e-5: far below the 1e-3 step that a part
# left unstepped or a gradient lost would leave.
"$bin" "${train[@]}" --model "$work/one3" --threads 3 --max-updates 20 > /dev/null 2> "$work/one3.log" ||
  fail "1-process 3-thread training failed: $(cat "$work/one3.log")"
"$mpirun" -np 3 "$bin" "${train[@]}" --model "$work/three" --threads 1 --max-updates 20 > /dev/null \
  2> "$work/three.log" || fail "3-rank training failed: $(cat "$work/three.log")"
diff=$(max_difference "$work/one3/model.npz" "$work/three/model.npz")
if [ "$shared" = 1 ]; then
  [ "$diff" = 0.0 ] || fail "3 ranks (shared memory) differ from 1 process by $diff"
else
  /usr/bin/python3 -c "import sys; sys.exit(0 if $diff <= 1e-5 else 1)" || fail "3 ranks differ from 1 process by $diff"
fi
echo "test_mpi: training, 3 ranks vs 1 process: max |difference| $diff"
# The overlapped ring adds each element in the same order as the ring over the whole
# gradient (its part, hence its ring steps, is the same): equal to the bit.
for overlap in 1 0; do
  RNNSEARCH_MPI_RING=1 RNNSEARCH_MPI_OVERLAP=$overlap "$mpirun" -np 3 "$bin" "${train[@]}" \
    --model "$work/three_ring$overlap" --threads 1 --max-updates 20 > /dev/null 2> "$work/three_ring$overlap.log" ||
    fail "3-rank ring training failed: $(cat "$work/three_ring$overlap.log")"
done
diff=$(max_difference "$work/one3/model.npz" "$work/three_ring1/model.npz")
/usr/bin/python3 -c "import sys; sys.exit(0 if $diff <= 1e-5 else 1)" || fail "3 ranks (ring) differ from 1 process by $diff"
echo "test_mpi: training, 3 ranks (ring, overlapped) vs 1 process: max |difference| $diff"
diff=$(max_difference "$work/three_ring0/model.npz" "$work/three_ring1/model.npz")
[ "$diff" = 0.0 ] || fail "3 ranks: the overlapped ring differs from the ring by $diff"
echo "test_mpi: training, 3 ranks, ring overlapped vs not: max |difference| $diff"
# A rank without pairs: batches of 149, 149 and 2 of the 300 pairs leave rank 2 none in the
# last batch of each epoch (its gradient is zero, and the overlapped ring still takes it):
# again equal to the bit with and without the overlap, and to 3 threads to rounding.
uneven=("${train[@]}" --max-updates 6)
for k in "${!uneven[@]}"; do [ "${uneven[k]}" != --batch-size ] || uneven[k + 1]=149; done
for overlap in 1 0; do
  RNNSEARCH_MPI_RING=1 RNNSEARCH_MPI_OVERLAP=$overlap "$mpirun" -np 3 "$bin" "${uneven[@]}" \
    --threads 1 --model "$work/three_uneven$overlap" > /dev/null 2> "$work/three_uneven$overlap.log" ||
    fail "3-rank ring training, a rank without pairs, failed: $(cat "$work/three_uneven$overlap.log")"
done
grep -q "valid (end of epoch 2) update 6 " "$work/three_uneven1.log" ||
  fail "batches of 149 did not make 3 updates an epoch: $(cat "$work/three_uneven1.log")"
diff=$(max_difference "$work/three_uneven0/model.npz" "$work/three_uneven1/model.npz")
[ "$diff" = 0.0 ] || fail "3 ranks, one without pairs: the overlapped ring differs from the ring by $diff"
"$bin" "${uneven[@]}" --threads 3 --model "$work/one_uneven" > /dev/null 2> "$work/one_uneven.log" ||
  fail "1-process training, batches of 149, failed: $(cat "$work/one_uneven.log")"
diff=$(max_difference "$work/one_uneven/model.npz" "$work/three_uneven1/model.npz")
/usr/bin/python3 -c "import sys; sys.exit(0 if $diff <= 1e-5 else 1)" ||
  fail "3 ranks, one without pairs (ring, overlapped), differ from 1 process by $diff"
echo "test_mpi: training, 3 ranks, one without pairs in a batch (ring, overlapped) vs 1 process: max |difference| $diff"
# In shared memory (where there is room for it), exactly 3 threads' weights.
if [ "$shared" = 1 ]; then
  "$mpirun" -np 3 "$bin" "${uneven[@]}" --threads 1 --model "$work/three_uneven_shared" > /dev/null \
    2> "$work/three_uneven_shared.log" || fail "3-rank training, a rank without pairs, failed: $(cat "$work/three_uneven_shared.log")"
  diff=$(max_difference "$work/one_uneven/model.npz" "$work/three_uneven_shared/model.npz")
  [ "$diff" = 0.0 ] || fail "3 ranks (shared memory), one without pairs, differ from 1 process by $diff"
  echo "test_mpi: training, 3 ranks, one without pairs in a batch (shared memory) vs 1 process: max |difference| $diff"
fi

# 1c. A layer-normalized model with a deep-transition, two-layer encoder and a conditional
# decoder under a second, deep-transition decoder layer (the Marian-style deep s2s model:
# their gains, biases, layers, transitions and cells are parameters like the others, in the
# parts of the norm blocks), with recurrent dropout (each shard draws the masks of each of
# its transitions): 2 ranks = 1 process × 2 threads, exactly.
deep=(--layer-normalization --enc-cell-depth 2 --dec-cell-base-depth 2 --enc-depth 2 --dec-depth 2
  --dec-cell-high-depth 2 --skip --dropout-rnn 0.3)
train_both ln 20 "${deep[@]}"
grep -q "layer-normalized enc-cell-depth=2 dec-cell-base-depth=2 enc-depth=2 dec-depth=2 dec-cell-high-depth=2 skip" "$work/two_ln.log" || fail "the deep layer-normalized log does not say so"
diff=$(max_difference "$work/one_ln/model.npz" "$work/two_ln/model.npz")
[ "$diff" = 0.0 ] || fail "layer-normalized, deep transition: 2 ranks differ from 1 process by $diff"
echo "test_mpi: layer-normalized deep-transition training, 2 ranks vs 1 process: max |difference| $diff"

# 1d. Gradient accumulation (two batches per update): every shard, a thread's or a rank's, adds
# its batches into its own buffer, and the shards are added once per update, in shard order,
# by the threads as by the ranks (train/sharded_model.h): exact as well. The shared window
# still serves it.
train_both acc 10 --accumulate 2
[ "$shared" = 0 ] || grep -q "2 MPI ranks (shared memory)" "$work/two_acc.log" ||
  fail "the --accumulate 2 run did not share memory: $(cat "$work/two_acc.log")"
diff=$(max_difference "$work/one_acc/model.npz" "$work/two_acc/model.npz")
[ "$diff" = 0.0 ] || fail "--accumulate 2: 2 ranks differ from 1 process by $diff"
echo "test_mpi: --accumulate 2, 2 ranks vs 1 process: max |difference| $diff"
# 1e. Guided alignment (links binarized into each rank's corpus cache, the cost's dα in
# every shard's backward): exact as well, and the cost logged by rank 0.
for _ in $(seq 300); do echo "0-0 1-1 2-1"; done > "$work/tiny.links"
train_both guided 10 --guided-alignment "$work/tiny.links" --guided-alignment-weight 0.5 --log-freq 5
grep -q "align-cost" "$work/two_guided.log" || fail "the guided 2-rank log shows no align-cost: $(cat "$work/two_guided.log")"
diff=$(max_difference "$work/one_guided/model.npz" "$work/two_guided/model.npz")
[ "$diff" = 0.0 ] || fail "--guided-alignment: 2 ranks differ from 1 process by $diff"
echo "test_mpi: --guided-alignment, 2 ranks vs 1 process: max |difference| $diff"
# Over the overlapped ring, whose early exchange waits for the last batch: exact as well.
RNNSEARCH_MPI_RING=1 RNNSEARCH_MPI_OVERLAP=1 mpi2 "$bin" "${train[@]}" --accumulate 2 --model "$work/two_acc_ring" \
  --threads 1 --max-updates 10 > /dev/null 2> "$work/two_acc_ring.log" ||
  fail "2-rank ring training (--accumulate 2) failed: $(cat "$work/two_acc_ring.log")"
grep -q "2 MPI ranks (ring, overlapped)" "$work/two_acc_ring.log" || fail "the --accumulate 2 ring run did not overlap"
diff=$(max_difference "$work/one_acc/model.npz" "$work/two_acc_ring/model.npz")
[ "$diff" = 0.0 ] || fail "--accumulate 2: 2 ranks (ring, overlapped) differ from 1 process by $diff"
echo "test_mpi: --accumulate 2, 2 ranks (ring, overlapped) vs 1 process: max |difference| $diff"

# 1f. bf16 products (mixed precision, docs/training.md), where the CPU has AVX512_BF16: each
# rank converts the shared weights for its own shards as each thread of 1 process does, and
# every product is computed per shard, so the ranks and the threads compute the same numbers:
# tolerance 0 in shared memory. (Over the ring, 2 shards add a + b or b + a: exact as well.)
"$bin" "${any_precision[@]}" --precision bf16 --model "$work/probe_bf16" --threads 1 --max-updates 1 \
  > /dev/null 2> "$work/probe_bf16.log" || fail "bf16 training failed: $(cat "$work/probe_bf16.log")"
if grep -q "needs a CPU with AVX512_BF16" "$work/probe_bf16.log"; then
  echo "test_mpi: bf16 training, 2 ranks vs 1 process: skipped (this CPU or build computes it in fp32)"
else
  train_both bf16 10 --precision bf16
  diff=$(max_difference "$work/one_bf16/model.npz" "$work/two_bf16/model.npz")
  [ "$diff" = 0.0 ] || fail "bf16: 2 ranks differ from 1 process by $diff"
  echo "test_mpi: bf16 training, 2 ranks vs 1 process: max |difference| $diff"
fi

# 2. Resume: 10 updates, stop, 10 more, all on 2 ranks.
mpi2 "$bin" "${train[@]}" --model "$work/resumed" --threads 1 --max-updates 10 > /dev/null 2> "$work/resumed.log" ||
  fail "2-rank training failed: $(cat "$work/resumed.log")"
mpi2 "$bin" "${train[@]}" --model "$work/resumed" --threads 1 --max-updates 20 > /dev/null 2> "$work/resumed.log" ||
  fail "resuming on 2 ranks failed: $(cat "$work/resumed.log")"
grep -q "resuming at update 10" "$work/resumed.log" || fail "the second 2-rank run did not resume: $(cat "$work/resumed.log")"
diff=$(max_difference "$work/two/model.npz" "$work/resumed/model.npz")
[ "$diff" = 0.0 ] || fail "a resumed 2-rank run differs from an uninterrupted one by $diff"
echo "test_mpi: resumed 2-rank run equals the uninterrupted one"

# 3. Decoding: rank 0 writes everything, in input order, as one process does.
# (--batch-size 3: small batches give both ranks work.)
input="$root/corpora/tiny/val.en"
# Through -o: Debian 13's Open MPI 5 mpirun may put some of rank 0's stderr into its stdout
# (docs/scaling.md); standard output is compared once, on Open MPI 4, below.
# target prefixes (the references' first words, none on every third line) reach every rank
awk '{ print (NR % 3 ? $1 : "") }' "$root/corpora/tiny/val.de" > "$work/prefix.de"
for options in "" "--n-best 3 --alignment hard" "--format json --alignment soft" "--beam-size 1" \
  "--target-prefix $work/prefix.de --n-best 2"; do
  # shellcheck disable=SC2086
  "$bin" translate --model "$work/one" --input "$input" --batch-size 3 $options -o "$work/one.txt" 2> "$work/err" ||
    fail "translate $options failed: $(cat "$work/err")"
  # shellcheck disable=SC2086
  mpi2 "$bin" translate --model "$work/one" --input "$input" --batch-size 3 $options -o "$work/two.txt" 2> "$work/err" ||
    fail "translate $options on 2 ranks failed: $(cat "$work/err")"
  [ -s "$work/two.txt" ] || fail "translate $options on 2 ranks wrote nothing"
  cmp -s "$work/one.txt" "$work/two.txt" || fail "translate $options: 2 ranks differ from 1 process"
done
mpi2 "$bin" translate --model "$work/one" --batch-size 3 -o "$work/two.txt" < "$input" 2> "$work/err" ||
  fail "translate from stdin on 2 ranks failed: $(cat "$work/err")"
"$bin" translate --model "$work/one" --batch-size 3 < "$input" > "$work/one.txt" 2> "$work/err" ||
  fail "translate from stdin failed: $(cat "$work/err")"
cmp -s "$work/one.txt" "$work/two.txt" || fail "translate from stdin: 2 ranks differ from 1 process"
if ! "$mpirun" --version | grep -q "Open MPI) 5"; then
  mpi2 "$bin" translate --model "$work/one" --batch-size 3 < "$input" > "$work/two.txt" 2> "$work/err" ||
    fail "translate to stdout on 2 ranks failed: $(cat "$work/err")"
  cmp -s "$work/one.txt" "$work/two.txt" || fail "translate to stdout: 2 ranks differ from 1 process"
fi
"$bin" score --model "$work/one" --src "$input" --tgt "$root/corpora/tiny/val.de" --batch-size 3 \
  --alignment soft -o "$work/one.txt" 2> "$work/err" || fail "score failed: $(cat "$work/err")"
mpi2 "$bin" score --model "$work/one" --src "$input" --tgt "$root/corpora/tiny/val.de" --batch-size 3 \
  --alignment soft -o "$work/two.txt" 2> "$work/err" || fail "score on 2 ranks failed: $(cat "$work/err")"
cmp -s "$work/one.txt" "$work/two.txt" || fail "score: 2 ranks differ from 1 process"
# align with two directions (the model serves as its own reverse: the plumbing is what is
# tested), links read by a threshold so that a 20-update model gives some.
align=(align --model "$work/one" --reverse-model "$work/one" --src "$input" --tgt "$root/corpora/tiny/val.de"
       --batch-size 3 --method threshold:0.05 --symmetrize union)
"$bin" "${align[@]}" -o "$work/one.txt" 2> "$work/err" || fail "align failed: $(cat "$work/err")"
mpi2 "$bin" "${align[@]}" -o "$work/two.txt" 2> "$work/err" || fail "align on 2 ranks failed: $(cat "$work/err")"
cmp -s "$work/one.txt" "$work/two.txt" || fail "align: 2 ranks differ from 1 process"
echo "test_mpi: translate (target prefixes too), score and align on 2 ranks are byte-identical to 1 process"

# 4. One rank's corpus is missing (as on a machine without the file): the job ends, non-zero,
# within seconds, and rank 1 says which file.
mkdir -p "$work/a/corpus" "$work/b"
cp "$root"/corpora/tiny/* "$work/a/corpus/"
# (corpus paths relative to each rank's working directory)
relative=(train --train-src corpus/train.en --train-tgt corpus/train.de --valid-src corpus/val.en
          --valid-tgt corpus/val.de --emb 8 --hidden 12 --maxout 6 --max-updates 5)
start=$(date +%s)
if two_ranks "" "cd $(q "$work/a") && $(q "$bin" "${relative[@]}" --model "$work/failed")" \
     "cd $(q "$work/b") && $(q "$bin" "${relative[@]}" --model "$work/failed")" > /dev/null 2> "$work/failed.log"; then
  fail "a job with a rank missing its corpus exited 0"
fi
seconds=$(($(date +%s) - start))
[ "$seconds" -lt 60 ] || fail "the failing job took $seconds s to end"
grep -q "rank 1 of 2): error: corpus/train.en" "$work/failed.log" ||
  fail "no error line from rank 1 naming the file: $(cat "$work/failed.log")"
echo "test_mpi: a rank without its corpus ends the job in $seconds s"

# 4b. Rank 0 fails alone during training, with the weights already in shared memory: it
# cannot write model.best.npz (a directory is in the way). Freeing the windows is collective,
# so a rank that freed them while unwinding would wait for ranks waiting for it: the job must
# end, non-zero, in seconds, with rank 0's error line.
mkdir -p "$work/blocked/model.best.npz/in-the-way"
start=$(date +%s)
if timeout 120 "$mpirun" -np 2 "$bin" "${train[@]}" --model "$work/blocked" --threads 1 --max-updates 20 \
     > /dev/null 2> "$work/blocked.log"; then
  fail "a job whose rank 0 could not save exited 0"
fi
seconds=$(($(date +%s) - start))
[ "$seconds" -lt 60 ] || fail "the job whose rank 0 failed took $seconds s to end"
grep -q "model.best.npz" "$work/blocked.log" || fail "no error line naming model.best.npz: $(cat "$work/blocked.log")"
echo "test_mpi: rank 0 failing alone mid-training ends the job in $seconds s"

# 5. Ranks that would train different things are refused at start, naming the difference.
refused() {  # refused PATTERN "MPIRUN OPTIONS" CMD0 CMD1: the job fails and its errors match PATTERN
  local pattern=$1
  shift
  if two_ranks "$@" > /dev/null 2> "$work/refused.log"; then fail "a job of disagreeing ranks exited 0"; fi
  grep -q "$pattern" "$work/refused.log" || fail "no error matching '$pattern': $(cat "$work/refused.log")"
}
refused "command line differs from rank 0's" "" \
  "$(q "$bin" "${train[@]}" --model "$work/r1" --max-updates 2)" "$(q "$bin" "${train[@]}" --model "$work/r1" --max-updates 3)"
mkdir -p "$work/c/corpus"
cp "$work"/a/corpus/* "$work/c/corpus/"
for side in en de; do tac "$work/a/corpus/train.$side" > "$work/c/corpus/train.$side"; done  # same pairs, other order
refused "rank 1 of 2): error: corpus/train.en: differs from rank 0's" "" \
  "cd $(q "$work/a") && $(q "$bin" "${relative[@]}" --model "$work/r2")" \
  "cd $(q "$work/c") && $(q "$bin" "${relative[@]}" --model "$work/r2")"
if [ "$(nproc)" -ge 2 ]; then  # --threads 0 = this rank's cores: 2 unbound, 1 under taskset
  refused "rank 1 of 2): error: --threads is 1 here" "--bind-to none" \
    "$(q "$bin" "${train[@]}" --model "$work/r3" --threads 0 --max-updates 2)" \
    "$(q taskset -c 0 "$bin" "${train[@]}" --model "$work/r3" --threads 0 --max-updates 2)"
fi
echo "test_mpi: ranks with another command line, corpus or thread count are refused"

# 6. The MPI library is the module's alone (src/util/mpi_runtime.cpp): a plain run loads none,
#    and a binary copied away from its module, or beside a module of another build, says so
#    under mpirun.
# (ldd's output kept first: grep -q stops at the first match, and under pipefail ldd's SIGPIPE
# would count as a failure.)
libraries=$(ldd "$bin")
if grep -q 'libmpi' <<<"$libraries"; then fail "rnnsearch links the MPI library: every plain run would load it"; fi
libraries=$(ldd "$(dirname "$bin")/librnnsearch_mpi.so")
grep -q 'libmpi' <<<"$libraries" || fail "librnnsearch_mpi.so does not link the MPI library"
mkdir -p "$work/alone"
cp "$bin" "$work/alone/rnnsearch"
if "$mpirun" -np 1 "$work/alone/rnnsearch" bleu --help > /dev/null 2> "$work/alone.log"; then
  fail "a binary without its MPI module ran under mpirun"
fi
grep -q "the MPI module cannot be loaded: .*librnnsearch_mpi.so" "$work/alone.log" ||
  fail "no error naming the missing module: $(cat "$work/alone.log")"
# ... and beside a module of another build (its table of another layout), it says so too,
# without calling into it.
printf '%s\n' '#include <cstddef>' 'struct Old { int abi; std::size_t size; };' \
  'static const Old old{0, sizeof(Old)};' 'extern "C" const Old* rnnsearch_mpi_runtime() { return &old; }' \
  > "$work/old_module.cpp"
c++ -shared -fPIC -o "$work/alone/librnnsearch_mpi.so" "$work/old_module.cpp"
if "$mpirun" -np 1 "$work/alone/rnnsearch" bleu --help > /dev/null 2> "$work/old.log"; then
  fail "a binary beside a module of another build ran under mpirun"
fi
grep -q "librnnsearch_mpi.so is of another rnnsearch build" "$work/old.log" ||
  fail "no error naming the module of another build: $(cat "$work/old.log")"
echo "test_mpi: a plain run loads no MPI; a binary without its module, or beside another build's, says so under mpirun"
