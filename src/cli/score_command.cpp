// rnnsearch score: forced decoding of given sentence pairs (teacher forcing, dropout off).
// Per pair: "logprob perplexity", logprob = Σ_i log p(y_i | y_<i, x) over the target tokens
// and </s>, perplexity = exp(−logprob / (target tokens + 1)); optionally the attention.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <iostream>
#include <limits>
#include <sstream>

#include "commands.h"
#include "rnnsearch/decode/translator.h"
#include "rnnsearch/error.h"
#include "rnnsearch/model/rnnsearch.h"
#include "rnnsearch/text/line_reader.h"
#include "rnnsearch/text/tokenizer.h"

namespace po = boost::program_options;

namespace rnnsearch::cli {
namespace {

struct ScoredPair {
  std::vector<std::string> source, target;
  std::vector<int> src_ids, tgt_ids;  // empty: not scored
  std::string warning;
  double log_prob = std::numeric_limits<double>::quiet_NaN();
  Alignment alignment;
};

std::vector<std::string> all_lines(const std::string& path) {
  LineReader reader(path);
  std::vector<std::string> lines;
  for (std::string line; reader.next(line);) lines.push_back(line);
  return lines;
}

// Tokens and ids of one pair, or the reason it is not scored. A pair that is too long is
// skipped rather than cut: the score of a cut pair would belong to a different sentence.
ScoredPair prepare_pair(const std::string& src_line, const std::string& tgt_line, const Model& model,
                        size_t max_length) {
  ScoredPair pair;
  if (!is_valid_utf8(src_line) || !is_valid_utf8(tgt_line)) {
    pair.warning = std::string("invalid UTF-8 in the ") + (is_valid_utf8(src_line) ? "target" : "source");
    return pair;
  }
  pair.source = tokenize(src_line, model.tokenizer);
  pair.target = tokenize(tgt_line, model.tokenizer);
  if (pair.source.empty() || pair.target.empty()) {
    pair.warning = std::string("empty ") + (pair.source.empty() ? "source" : "target");
  } else if (std::max(pair.source.size(), pair.target.size()) > max_length) {
    pair.warning = "longer than " + std::to_string(max_length) + " tokens (--max-length)";
  } else {
    pair.src_ids = model.src_vocab.encode(pair.source);
    pair.tgt_ids = model.tgt_vocab.encode(pair.target);
    return pair;
  }
  pair.warning += "; not scored, its output line is empty";
  return pair;
}

// rnnsearch_forward leaves −log p of every non-padding target position in token_nll
// (time-major row i*B + b in out_rows) and the attention of step i of sentence b in alpha
// row i*B + b.
void score_batch(const Model& model, const std::vector<size_t>& members, std::vector<ScoredPair>& pairs,
                 bool alignment, ModelWorkspace<float>& ws) {
  std::vector<std::vector<int>> src, tgt;
  std::vector<uint32_t> ids;
  for (size_t k : members) {
    src.push_back(pairs[k].src_ids);
    tgt.push_back(pairs[k].tgt_ids);
    ids.push_back(static_cast<uint32_t>(k));
  }
  const Batch batch = pad_batch(src, tgt, ids);
  rnnsearch_forward<float>(model.params, batch, DropoutOptions{}, ws);
  const int B = batch.size;
  std::vector<double> log_probs(B, 0.0);
  for (size_t k = 0; k < ws.out_rows.size(); ++k)
    log_probs[ws.out_rows[k] % B] -= ws.token_nll[k];
  for (int b = 0; b < B; ++b) {
    ScoredPair& pair = pairs[members[b]];
    pair.log_prob = log_probs[b];
    if (!alignment) continue;
    pair.alignment.rows = batch.tgt_lengths[b];
    pair.alignment.cols = batch.src_lengths[b];
    for (int i = 0; i < batch.tgt_lengths[b]; ++i) {
      const auto row = ws.alpha.row(static_cast<Index>(i) * B + b).head(batch.src_lengths[b]);
      pair.alignment.weights.insert(pair.alignment.weights.end(), row.data(), row.data() + row.size());
    }
  }
}

// Pairs sorted by length into batches; batches in parallel, a workspace per thread.
void score_pairs(const Model& model, std::vector<ScoredPair>& pairs, size_t batch_size, int threads,
                 bool alignment) {
  std::vector<size_t> order;
  for (size_t k = 0; k < pairs.size(); ++k)
    if (!pairs[k].src_ids.empty()) order.push_back(k);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::make_pair(pairs[a].src_ids.size(), pairs[a].tgt_ids.size()) >
           std::make_pair(pairs[b].src_ids.size(), pairs[b].tgt_ids.size());
  });
  const long batches = static_cast<long>((order.size() + batch_size - 1) / batch_size);
  std::vector<ModelWorkspace<float>> workspaces(threads);
  std::exception_ptr error;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (batches > 1)
  for (long k = 0; k < batches; ++k) {
    try {
      const auto begin = order.begin() + k * batch_size;
      const std::vector<size_t> members(begin, std::min(order.end(), begin + batch_size));
      score_batch(model, members, pairs, alignment, workspaces[omp_get_thread_num()]);
    } catch (...) {  // an exception must not leave the parallel region
#pragma omp critical(rnnsearch_score_error)
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

TranslationRecord record_of(const ScoredPair& pair, size_t line) {
  return {line, pair.source, pair.target, pair.log_prob, pair.alignment};
}

// text: "logprob perplexity[ ||| alignment]", empty when not scored; json: record_json
// (score = logprob, null when not scored).
std::string pair_line(const ScoredPair& pair, size_t line, bool json, AlignmentFormat alignment) {
  if (json) return record_json(record_of(pair, line));
  if (pair.src_ids.empty()) return "";
  std::ostringstream text;
  text << pair.log_prob << ' ' << std::exp(-pair.log_prob / static_cast<double>(pair.tgt_ids.size()));
  if (alignment != AlignmentFormat::none) text << " ||| " << alignment_text(pair.alignment, alignment);
  return text.str();
}

}  // namespace

int score_command(const Args& args) {
  po::options_description options("score options");
  std::string model_dir, src_path, tgt_path, alignment, format, heatmaps;
  int batch_size = 32, threads = 1;
  size_t max_length = 200, heatmaps_limit = 100;
  options.add_options()
      ("model,m", po::value(&model_dir)->required(), "model directory (uses model.best.npz when present)")
      ("src", po::value(&src_path)->required(), "source sentences, one per line (.gz ok)")
      ("tgt", po::value(&tgt_path)->required(), "their translations, line by line")
      ("alignment", po::value(&alignment)->default_value("none"),
       "append ' ||| ' and the attention: none, soft or hard (as translate)")
      ("format", po::value(&format)->default_value("text"),
       "text ('logprob perplexity' per line) or json (one object per line, score = logprob)")
      ("heatmaps", po::value(&heatmaps), "write attention heatmaps (SVG) and index.html into DIR")
      ("heatmaps-limit", po::value(&heatmaps_limit)->default_value(100), "heatmaps for at most this many pairs")
      ("batch-size", po::value(&batch_size)->default_value(32), "sentence pairs per batch")
      ("max-length", po::value(&max_length)->default_value(200),
       "pairs with a side longer than this many tokens are skipped with a warning")
      ("threads", po::value(&threads)->default_value(1), "batches scored in parallel (0 = all cores)");
  po::variables_map vm;
  if (parse_options("score", "--model DIR --src FILE --tgt FILE [options]", options, args, vm)) return 0;
  if (format != "text" && format != "json") throw Error("--format must be text or json, not '" + format + "'");
  if (batch_size < 1) throw Error("--batch-size must be at least 1");
  const AlignmentFormat alignment_format = parse_alignment_format(alignment);
  const bool json = format == "json";
  const bool want_alignment = alignment_format != AlignmentFormat::none || json || vm.count("heatmaps");
  threads = set_threads(threads);

  const std::vector<std::string> src_lines = all_lines(src_path), tgt_lines = all_lines(tgt_path);
  if (src_lines.size() != tgt_lines.size())
    throw Error(src_path + " and " + tgt_path + " differ in length: " + std::to_string(src_lines.size()) +
                " and " + std::to_string(tgt_lines.size()) + " lines");
  const Model model = load_model(model_dir);
  std::vector<ScoredPair> pairs;
  for (size_t k = 0; k < src_lines.size(); ++k)
    pairs.push_back(prepare_pair(src_lines[k], tgt_lines[k], model, max_length));
  score_pairs(model, pairs, static_cast<size_t>(batch_size), threads, want_alignment);

  HeatmapCollector heatmap_records(vm.count("heatmaps") ? heatmaps_limit : 0);
  for (size_t k = 0; k < pairs.size(); ++k) {
    if (!pairs[k].warning.empty())
      std::cerr << "rnnsearch score: " << located(src_path, k + 1, "warning: " + pairs[k].warning) << "\n";
    if (!pairs[k].src_ids.empty() && !heatmap_records.full()) heatmap_records.offer(record_of(pairs[k], k));
    std::cout << pair_line(pairs[k], k, json, alignment_format) << '\n';
  }
  std::cout.flush();
  if (vm.count("heatmaps")) std::cerr << "rnnsearch score: heatmaps: " << heatmap_records.write(heatmaps) << "\n";
  return 0;
}

}  // namespace rnnsearch::cli
