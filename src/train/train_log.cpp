#include "rnnsearch/train/train_log.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "rnnsearch/model/model_io.h"
#include "rnnsearch/util/cpu.h"
#include "rnnsearch/util/mpi.h"
#include "rnnsearch/util/profile.h"

namespace rnnsearch {

std::string progress_line(const Progress& progress, const CostWindow& window, double max_seconds, long max_updates) {
  const double cost = window.cost / std::max(1L, window.tokens);
  double eta = -1;
  if (max_seconds > 0) eta = max_seconds - progress.train_seconds;
  if (max_updates > 0 && progress.update > 0) {
    const double by_updates = (max_updates - progress.update) * progress.train_seconds / progress.update;
    eta = eta < 0 ? by_updates : std::min(eta, by_updates);
  }
  char guided[48] = "";
  if (window.guided > 0) std::snprintf(guided, sizeof guided, " align-cost %.3f", window.guided / std::max(1L, window.tokens));
  char buffer[320];
  std::snprintf(buffer, sizeof buffer, "update %ld epoch %d cost %.3f ppl %.2f%s tgt_tok/s %.0f elapsed %s%s%s",
                progress.update, progress.epoch, cost, std::exp(cost), guided,
                window.tokens / std::max(1e-9, window.seconds),
                clock_text(progress.train_seconds).c_str(), eta >= 0 ? " eta " : "",
                eta >= 0 ? clock_text(eta).c_str() : "");
  return buffer;
}

std::string data_line(const ParallelCorpus& train, const ParallelCorpus& valid, size_t max_length,
                      const ModelConfig& config) {
  return "train: " + std::to_string(train.size()) + " pairs (" + std::to_string(train.skipped_empty) + " empty and " +
         std::to_string(train.skipped_too_long) + " longer than " + std::to_string(max_length) +
         " tokens skipped); valid: " + std::to_string(valid.size()) + " pairs; vocabularies " +
         std::to_string(config.src_vocab) + " / " + std::to_string(config.tgt_vocab);
}

std::string model_line(const ModelConfig& config, size_t parameters, int batch_size, int threads,
                       Precision precision, const std::string& exchange) {
  return "model: e=" + std::to_string(config.emb) + " n=" + std::to_string(config.hidden) +
         " l=" + std::to_string(config.maxout) + " output=" + output_kind_name(config.output) +
         (config.tied_embeddings ? " tied" : "") + (config.layer_norm ? " layer-normalized" : "") +
         (config.enc_cell_depth > 1 ? " enc-cell-depth=" + std::to_string(config.enc_cell_depth) : "") +
         (config.dec_cell_base_depth > 1 ? " dec-cell-base-depth=" + std::to_string(config.dec_cell_base_depth) : "") +
         (config.enc_depth > 1 ? " enc-depth=" + std::to_string(config.enc_depth) : "") +
         (config.enc_type != EncoderType::bidirectional ? " enc-type=" + encoder_type_name(config.enc_type) : "") +
         (config.dec_depth > 1 ? " dec-depth=" + std::to_string(config.dec_depth) : "") +
         (config.dec_cell_high_depth > 1 ? " dec-cell-high-depth=" + std::to_string(config.dec_cell_high_depth) : "") +
         (config.skip ? " skip" : "") +
         (config.alignment_output > 0 ? " alignment-output=" + std::to_string(config.alignment_output) : "") +
         ", " +
         std::to_string(parameters) + " parameters; batch " + std::to_string(batch_size) + ", " +
         (mpi::size() > 1 ? std::to_string(mpi::size()) + " MPI ranks (" + exchange + ") × " : "") +
         std::to_string(threads) +
         " thread(s), GEMM " + kGemmBackend + (precision == Precision::bf16 ? ", matrix products in bf16" : "") +
         ", CPU " + describe(cpu_features());
}

std::string selection_text(double cost, ValidMetric metric) {
  char text[64];
  if (metric == ValidMetric::bleu)
    std::snprintf(text, sizeof text, "BLEU %.2f", -cost);
  else if (metric == ValidMetric::chrf)
    std::snprintf(text, sizeof text, "chrF2 %.2f", -cost);
  else
    std::snprintf(text, sizeof text, "perplexity %f", std::exp(cost));
  return text;
}

std::string validation_line(const Progress& progress, const ValidationScores& scores, ValidMetric metric,
                            bool improved, bool epoch_end) {
  std::ostringstream line;
  line.precision(4);
  line << "valid " << (epoch_end ? "(end of epoch " + std::to_string(progress.epoch - 1) + ") " : "") << "update "
       << progress.update << " cost " << scores.cross_entropy << " ppl " << std::exp(scores.cross_entropy);
  if (!std::isnan(scores.bleu)) line << " bleu " << std::fixed << std::setprecision(2) << scores.bleu;
  if (!std::isnan(scores.chrf)) line << " chrf " << std::fixed << std::setprecision(2) << scores.chrf;
  line << (improved ? " (new best, saved " + std::string(model_files::kBestWeights) + ")"
                    : " (best " + selection_text(progress.best_valid_cost, metric) + " at update " +
                          std::to_string(progress.best_update) + ")")
       << " train_time " << clock_text(progress.train_seconds);
  return line.str();
}

TrainLog::TrainLog(const std::string& path, bool quiet) : silent_(path.empty()), quiet_(quiet), tty_(::isatty(2)) {
  if (!silent_) file_.open(path, std::ios::app);
}

void TrainLog::line(const std::string& text) {
  if (silent_) return;
  if (!quiet_) {
    if (live_) std::cerr << "\r\033[K";
    live_ = false;
    std::cerr << text + "\n" << std::flush;  // one write: another rank's error line cannot split it
  }
  file_ << text << std::endl;
}

void TrainLog::progress(const std::string& text, long update, long every) {
  if (silent_) return;
  if (tty_ && !quiet_) {
    std::cerr << "\r\033[K" << text << std::flush;
    live_ = true;
    if (update % every == 0) file_ << text << std::endl;
  } else if (update % every == 0) {
    line(text);
  }
}

std::string Benchmark::after_update(long update, const std::vector<std::vector<uint32_t>>& batches,
                                    const ParallelCorpus& corpus) {
  if (!started_) {
    if (update >= warmup_) {
      started_ = true;
      start_ = std::chrono::steady_clock::now();
      profile::reset();
    }
    return "";
  }
  ++updates_;
  for (const auto& batch : batches) {
    sentences_ += static_cast<long>(batch.size());
    for (uint32_t id : batch) {
      src_tokens_ += static_cast<long>(corpus.src.length(id));
      tgt_tokens_ += static_cast<long>(corpus.tgt.length(id));
    }
  }
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  mpi::max(&elapsed, 1);  // every rank of a job ends the window at the same update
  if (elapsed < seconds_) return "";
  char line[256];
  std::snprintf(line, sizeof line,
                "BENCH updates=%ld sents=%ld src_tok=%ld tgt_tok=%ld seconds=%.2f tgt_tok/s=%.1f "
                "src+tgt_tok/s=%.1f sents/s=%.1f updates/s=%.3f",
                updates_, sentences_, src_tokens_, tgt_tokens_, elapsed, tgt_tokens_ / elapsed,
                (src_tokens_ + tgt_tokens_) / elapsed, sentences_ / elapsed, updates_ / elapsed);
  std::string report = line;
  if (profile::enabled()) report += "\n" + profile::report(updates_);
  return report;
}

}  // namespace rnnsearch
