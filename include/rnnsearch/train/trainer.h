#pragma once
// `rnnsearch train` (docs/design.md §4): the training loop.
//
// Each update: a length-bucketed batch is split into one shard per thread; every thread
// runs forward and backward on its shard with its own workspace and gradient buffer
// (data parallelism: each GEMM stays single-threaded and large enough to be efficient);
// the gradients are summed, clipped by global norm, and the optimizer takes a step. With
// --accumulate N an update runs N batches before its step; under mpirun the shards are
// those of all ranks' threads and the gradients are summed over the ranks too (§7).
//
// The model directory holds everything needed to resume (docs/design.md §2); each file is
// written atomically, in the order model.npz, optimizer.npz, progress.json, and
// progress.json is the commit point: it records the CRC-32 of the other two, so a set left
// by a crash between two writes is refused instead of resumed. Running the same command
// again resumes.
#include <cstdint>
#include <string>

#include "rnnsearch/kernels/precision.h"
#include "rnnsearch/model/config.h"
#include "rnnsearch/model/rnnsearch.h"
#include "rnnsearch/text/subwords.h"
#include "rnnsearch/text/tokenizer.h"
#include "rnnsearch/train/lr_schedule.h"
#include "rnnsearch/train/optimizer.h"
#include "rnnsearch/train/validation.h"
#include "rnnsearch/util/progress_meter.h"

namespace rnnsearch {

struct TrainOptions {
  std::string train_src, train_tgt, valid_src, valid_tgt, model_dir;
  ModelConfig model;  // sizes and output kind; vocabulary sizes are filled in by train()
  // The options the command line gave (e.g. "dec-cell-base-depth"; --preset counts as the
  // sizes): a resumed run keeps its config.json, and is refused if a model option among these
  // differs from it.
  std::vector<std::string> options_given;
  TokenizerOptions tokenizer;
  int batch_size = 64;
  int accumulate = 1;          // batches per update (their gradients averaged over their tokens)
  OptimizerOptions optimizer;
  LrSchedule lr_schedule;      // warm-up and decay of optimizer.lr (lr_schedule.h)
  double clip_norm = 1.0;      // 0 = off
  Regularization regularization;  // its seed is set per update
  double max_minutes = 0;      // training time (validation and saving excluded); 0 = no limit
  int max_epochs = 0;          // 0 = no limit
  long max_updates = 0;        // 0 = no limit
  long valid_freq = 0;         // validate every N updates (and at the end); 0 = at each epoch end
  long save_freq = 0;          // also save a checkpoint every N updates, without validating; 0 = off
  std::vector<ValidMetric> valid_metrics = {ValidMetric::cross_entropy};  // the first selects
  int valid_beam_size = 5;     // beam of the translations validation BLEU scores
  int patience = 0;            // stop after N validations without improvement; 0 = off
  uint64_t seed = 1;
  bool shuffle = true;
  int threads = 1;             // 0 = all cores (resolved by the command line)
  Precision precision = Precision::fp32;  // of the matrix products (model/bf16_products.h)
  bool profile = false;        // report the time of each phase (--profile)
  std::string vocab_src, vocab_tgt;  // given vocabularies, else built with min_count
  int min_count = 2;
  int subwords = 0;            // SentencePiece pieces per model; 0 = word-level vocabularies
  SubwordType subword_type = SubwordType::bpe;
  bool subwords_joint = true;  // one subword model for both languages (else one each)
  size_t subwords_sample = 2000000;  // sentences SentencePiece learns on, sampled (0 = all)
  std::string init_from;       // start from these weights (fine-tuning)
  size_t max_length = 100;     // training pairs longer than this are skipped
  std::string guided_alignment;  // word links of the training pairs (--guided-alignment), line by line;
                                 // their weight and cost are in regularization
  bool corpus_cache = true;    // binarize the training corpus into corpus.bin and map it (training_corpus.h)
  long log_freq = 100;         // plain log line every N updates (when stderr is not a terminal)
  ProgressOptions progress;    // of the preparation (--log-every); quiet: nothing on stderr, train.log only
  bool require_resume = false; // --resume: fail unless there is a run to resume
  // Throughput benchmark (docs/design.md §5): after bench_warmup updates, train for bench_seconds
  // of wall-clock time, print one BENCH line, and exit without validating or saving.
  double bench_seconds = 0;    // 0 = a normal run
  long bench_warmup = 20;
};

// Runs (or resumes) training; returns the process exit status. Throws rnnsearch::Error on
// bad input.
int train(const TrainOptions& options);

}  // namespace rnnsearch
