#pragma once
// What training tells its user: log lines on stderr and in DIR/train.log, a live progress
// line on a terminal, and the throughput window of --bench-seconds.
#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "rnnsearch/kernels/precision.h"
#include "rnnsearch/model/config.h"
#include "rnnsearch/text/corpus.h"
#include "rnnsearch/train/checkpoint.h"
#include "rnnsearch/train/validation.h"
#include "rnnsearch/util/progress_meter.h"  // clock_text

namespace rnnsearch {

// Training cost and time since the last progress line.
struct CostWindow {
  double cost = 0, seconds = 0;  // Σ −log p, training seconds
  double guided = 0;             // Σ guided-alignment cost (0 without --guided-alignment)
  long tokens = 0;               // target tokens
};

// "update U epoch E cost C ppl P[ align-cost A] tgt_tok/s T elapsed H:MM:SS[ eta H:MM:SS]",
// the ETA against the tighter of the two budgets (0 = none); A: the guided-alignment cost per
// target token, with --guided-alignment.
std::string progress_line(const Progress& progress, const CostWindow& window, double max_seconds, long max_updates);

// "valid [(end of epoch E) ]update U cost C ppl P[ bleu B][ chrf F] (new best, saved ...|best ...)
// train_time ..."; the best is that of the selecting metric.
std::string validation_line(const Progress& progress, const ValidationScores& scores, ValidMetric metric,
                            bool improved, bool epoch_end);

// "train: N pairs (E empty and L longer than M tokens skipped); valid: V pairs; vocabularies S / T"
std::string data_line(const ParallelCorpus& train, const ParallelCorpus& valid, size_t max_length,
                      const ModelConfig& config);
// "model: e=.. n=.. l=.. output=.., P parameters; batch B, T thread(s)"; in an MPI job
// "N MPI ranks (EXCHANGE) × T thread(s)": how the ranks add their gradients
// (WeightPartition::exchange_name).
std::string model_line(const ModelConfig& config, size_t parameters, int batch_size, int threads,
                       Precision precision, const std::string& exchange);

// "perplexity 5.12", "BLEU 35.10" or "chrF2 61.20": a selection cost (ValidationScores::cost) as users read it.
std::string selection_text(double cost, ValidMetric metric);

// Log lines go to stderr and the log file; on a terminal the progress is one live line.
class TrainLog {
 public:
  // An empty path: a log that says nothing (the ranks of an MPI job other than rank 0).
  // quiet: the file only, nothing on stderr (--quiet).
  explicit TrainLog(const std::string& path, bool quiet = false);
  void line(const std::string& text);
  // Every update on a terminal; a plain line every `every` updates otherwise.
  void progress(const std::string& text, long update, long every);

 private:
  bool silent_, quiet_;
  std::ofstream file_;
  bool tty_;
  bool live_ = false;
};

// --bench-seconds: after `warmup` updates, a throughput window of `seconds` of wall-clock
// time, counted like the PyTorch reference's train.py (and the --profile phases of just
// that window).
class Benchmark {
 public:
  Benchmark(double seconds, long warmup) : seconds_(seconds), warmup_(warmup) {}
  // Call after each update (batches: the update's); returns the BENCH report once the
  // window is full, else "".
  std::string after_update(long update, const std::vector<std::vector<uint32_t>>& batches,
                           const ParallelCorpus& corpus);

 private:
  double seconds_;
  long warmup_;
  bool started_ = false;
  std::chrono::steady_clock::time_point start_;
  long updates_ = 0, sentences_ = 0, src_tokens_ = 0, tgt_tokens_ = 0;
};

}  // namespace rnnsearch
