#include "rnnsearch/align/aligner.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "rnnsearch/error.h"
#include "rnnsearch/output/alignment.h"

namespace rnnsearch::align {

namespace {

const char* kMethods = "argmax, threshold:X, average or average-threshold:X (0 < X <= 1)";

// The mean of two matrices of one shape.
Alignment mean(const Alignment& a, const Alignment& b) {
  Alignment m = a;
  for (size_t k = 0; k < m.weights.size(); ++k) m.weights[k] = 0.5f * (a.weights[k] + b.weights[k]);
  return m;
}

bool same_shape(const Alignment& a, const Alignment& b) { return a.rows == b.rows && a.cols == b.cols; }

ScorerOptions scorer_options(const AlignerOptions& options) {
  ScorerOptions sopts;
  sopts.batch_size = options.batch_size;
  sopts.max_length = options.max_length;
  sopts.threads = options.threads;
  sopts.alignment = true;  // of words: pieces are merged into the words they make
  sopts.ranking.raw_attention = options.raw_attention ? 1 : 0;
  return sopts;
}

}  // namespace

AlignMethod parse_align_method(const std::string& name) {
  AlignMethod method;
  std::string rest = name;
  if (rest == "average") {
    method.average = true;
    return method;
  }
  if (rest.rfind("average-", 0) == 0) {
    method.average = true;
    rest = rest.substr(8);
  }
  if (rest == "argmax" && !method.average) return method;
  if (rest.rfind("threshold:", 0) == 0) {
    const std::string number = rest.substr(10);
    char* end = nullptr;
    method.threshold = true;
    method.weight = std::strtod(number.c_str(), &end);
    if (!number.empty() && end == number.c_str() + number.size() && method.weight > 0 && method.weight <= 1)
      return method;
  }
  throw Error("--method must be " + std::string(kMethods) + ", not '" + name + "'");
}

std::string align_method_name(const AlignMethod& method) {
  if (!method.threshold) return method.average ? "average" : "argmax";
  char weight[32];
  std::snprintf(weight, sizeof weight, "%g", method.weight);
  return std::string(method.average ? "average-" : "") + "threshold:" + weight;
}

// argmax is the hard alignment `score --alignment hard` prints (output/alignment.h), less its
// pairs on the source </s> column.
Links read_links(const Alignment& attention, const AlignMethod& method) {
  Links links;
  const int source_words = attention.cols - 1, target_words = attention.rows - 1;
  if (!method.threshold) {
    for (const auto& [source, target] : hard_alignment(attention))
      if (source < source_words) links.push_back({source, target});
    return sorted_links(std::move(links));
  }
  for (int j = 0; j < source_words; ++j)
    for (int i = 0; i < target_words; ++i)
      if (attention.at(i, j) >= method.weight) links.push_back({j, i});
  return links;
}

Alignment transposed(const Alignment& attention) {
  Alignment t{attention.cols, attention.rows, std::vector<float>(attention.weights.size())};
  for (int i = 0; i < attention.rows; ++i)
    for (int j = 0; j < attention.cols; ++j) t.weights[static_cast<size_t>(j) * t.cols + i] = attention.at(i, j);
  return t;
}

Links swapped(const Links& links) {
  Links other;
  for (const Link& l : links) other.push_back({l.target, l.source});
  return sorted_links(std::move(other));
}

Links pair_links(const Alignment& forward, const Alignment* reverse, const AlignMethod& method,
                 std::optional<Symmetrization> symmetrize) {
  if (!reverse) return read_links(forward, method);
  if (method.average) return read_links(mean(forward, transposed(*reverse)), method);
  return align::symmetrize(read_links(forward, method), swapped(read_links(*reverse, method)), forward.cols - 1,
                           forward.rows - 1, *symmetrize);
}

void split_parallel_line(const std::string& line, std::string& source, std::string& target, const std::string& file,
                         size_t line_number) {
  const auto space = [&](size_t at) { return line[at] == ' ' || line[at] == '\t'; };
  for (size_t at = line.find("|||"); at != std::string::npos; at = line.find("|||", at + 1)) {
    if ((at > 0 && !space(at - 1)) || (at + 3 < line.size() && !space(at + 3))) continue;
    source = line.substr(0, at);
    target = line.substr(at + 3);
    return;
  }
  throw Error(located(file, line_number, "no ' ||| ' between source and target (expected SOURCE ||| TARGET)"));
}

std::optional<Symmetrization> resolved_symmetrization(bool two_models, const AlignMethod& method,
                                                      std::optional<Symmetrization> symmetrize) {
  if (!two_models && method.average)
    throw Error("--method " + align_method_name(method) + " averages two models' attention: give --reverse-model");
  if (!two_models && symmetrize) throw Error("--symmetrize combines the links of two models: give --reverse-model");
  if (method.average && symmetrize)
    throw Error("--method " + align_method_name(method) +
                " reads one matrix of both models, --symmetrize combines their links: give one");
  if (two_models && !method.average && !symmetrize) return Symmetrization::grow_diag_final_and;
  return symmetrize;
}

Aligner::Aligner(const std::vector<Model>& forward, const std::vector<Model>& reverse, const AlignerOptions& options)
    : options_(options) {
  if (forward.empty()) throw Error("aligning needs a model");
  options_.symmetrize = resolved_symmetrization(!reverse.empty(), options.method, options.symmetrize);
  if (!reverse.empty() && reverse.front().tokenizer.kind != forward.front().tokenizer.kind)
    throw Error(std::string("the reverse model reads ") + tokenizer_kind_name(reverse.front().tokenizer.kind) +
                " text and the model " + tokenizer_kind_name(forward.front().tokenizer.kind) +
                " text: their words would differ");
  const ScorerOptions sopts = scorer_options(options);
  forward_ = std::make_unique<Scorer>(forward.front(), ensemble_weights(forward), sopts);
  if (!reverse.empty()) reverse_ = std::make_unique<Scorer>(reverse.front(), ensemble_weights(reverse), sopts);
}

Aligner::~Aligner() = default;

void Aligner::set_reading(const AlignMethod& method, std::optional<Symmetrization> symmetrize) {
  options_.symmetrize = resolved_symmetrization(reverse_ != nullptr, method, symmetrize);
  options_.method = method;
}

std::vector<AlignedPair> Aligner::align(const std::vector<std::string>& src_lines,
                                        const std::vector<std::string>& tgt_lines, size_t first_line,
                                        const std::function<void(size_t pairs)>& finished) {
  if (src_lines.size() != tgt_lines.size())
    throw Error("the sources and targets differ in length: " + std::to_string(src_lines.size()) + " and " +
                std::to_string(tgt_lines.size()));
  std::vector<AlignedPair> pairs;
  pairs.reserve(src_lines.size());
  for (size_t start = 0; start < src_lines.size(); start += kChunk) {
    const auto from = static_cast<long>(start), to = static_cast<long>(std::min(src_lines.size(), start + kChunk));
    const std::vector<std::string> src(src_lines.begin() + from, src_lines.begin() + to),
        tgt(tgt_lines.begin() + from, tgt_lines.begin() + to);
    // Progress counts the pairs of the last direction: a pair is done when both are.
    std::vector<ScoredPair> forward = forward_->score(src, tgt, first_line + start, reverse_ ? nullptr : finished);
    std::vector<ScoredPair> reverse;
    if (reverse_) reverse = reverse_->score(tgt, src, first_line + start, finished);
    for (size_t k = 0; k < forward.size(); ++k) pairs.push_back(links_of(forward[k], reverse_ ? &reverse[k] : nullptr));
  }
  return pairs;
}

// A reverse matrix is (source words + 1) × (target words + 1) of the same words, both
// models reading the same kind of text; a pair whose words differ anyway (a words model
// that lowercases and one that does not) is left unaligned with a warning.
AlignedPair Aligner::links_of(ScoredPair& forward, ScoredPair* reverse) const {
  AlignedPair pair{forward.line, std::move(forward.source), std::move(forward.target), {}, forward.warning, false,
                   forward.target_side};
  if (!forward.scored()) return pair;
  const Alignment& f = forward.alignment;
  if (reverse && !reverse->scored()) {
    pair.warning = "the reverse model: " + reverse->warning;
    pair.target_side = !reverse->target_side;  // its source is the pair's target
    return pair;
  }
  if (reverse && !same_shape(transposed(reverse->alignment), f)) {
    pair.warning = "the reverse model reads " + std::to_string(reverse->alignment.cols - 1) + " target and " +
                   std::to_string(reverse->alignment.rows - 1) + " source words, the model " +
                   std::to_string(f.rows - 1) + " and " + std::to_string(f.cols - 1) +
                   "; not aligned, its output line is empty";
    return pair;
  }
  pair.links = pair_links(f, reverse ? &reverse->alignment : nullptr, options_.method, options_.symmetrize);
  pair.aligned = true;
  return pair;
}

}  // namespace rnnsearch::align
