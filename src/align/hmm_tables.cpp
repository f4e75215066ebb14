#include "rnnsearch/align/hmm_tables.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <tuple>

#include "rnnsearch/error.h"
#include "rnnsearch/io/atomic_file.h"
#include "rnnsearch/io/npz.h"
#include "rnnsearch/text/line_reader.h"
#include "rnnsearch/text/pair_problem.h"

namespace rnnsearch::align {

namespace {

// Every pair as it is to be aligned: its words, or the warning that leaves it unaligned
// (text/pair_problem.h: the Scorer's rule and words).
std::vector<AlignedPair> checked_pairs(const std::vector<std::string>& src, const std::vector<std::string>& tgt,
                                       int max_length) {
  if (src.size() != tgt.size())
    throw Error("the sources and targets differ in length: " + std::to_string(src.size()) + " and " +
                std::to_string(tgt.size()));
  const auto split = [](const std::string& line) {
    std::vector<std::string> words;
    for (std::string_view word : white_space_tokens(line)) words.emplace_back(word);
    return words;
  };
  std::vector<AlignedPair> pairs(src.size());
  for (size_t k = 0; k < pairs.size(); ++k) {
    AlignedPair& pair = pairs[k];
    pair.line = k;
    const PairProblem problem =
        pair_problem(src[k], tgt[k], static_cast<size_t>(max_length), split, pair.source, pair.target);
    pair.warning = problem.warning;
    pair.target_side = problem.target_side;
    pair.aligned = pair.warning.empty();
  }
  return pairs;
}

// Each counted form's id: its place in the list.
std::unordered_map<std::string, int> numbers(const std::vector<std::string>& forms) {
  std::unordered_map<std::string, int> ids;
  for (size_t k = 0; k < forms.size(); ++k) ids.emplace(forms[k], static_cast<int>(k));
  return ids;
}

const char* const kArrays = "hmm.npz";
const char* const kSourceWords = "source.words";
const char* const kTargetWords = "target.words";

}  // namespace

HmmTables::HmmTables(const std::vector<std::string>& src_lines, const std::vector<std::string>& tgt_lines,
                     const HmmOptions& options, const std::function<void(const char*, int)>& iteration)
    : options_(options) {
  check_hmm_options(options);
  // the unusable pairs are left out of training (their lines emptied)
  const std::vector<AlignedPair> pairs = checked_pairs(src_lines, tgt_lines, options.max_length);
  std::vector<std::string> src = src_lines, tgt = tgt_lines;
  for (const AlignedPair& pair : pairs)
    if (!pair.aligned) src[pair.line].clear(), tgt[pair.line].clear();
  WordIdCorpus corpus = word_id_corpus(src, tgt, options.stem);
  const WordIdCorpus back = reversed(corpus);
  HmmAligner forward(corpus, options), reverse(back, options);
  train_hmm_aligners(forward, &reverse, options.agreement, iteration);
  forward_ = std::make_unique<HmmAligner>(forward.table(), options);
  reverse_ = std::make_unique<HmmAligner>(reverse.table(), options);
  corpus.source.clear();
  corpus.target.clear();
  words_ = std::move(corpus);
  source_ids_ = numbers(words_.source_forms);
  target_ids_ = numbers(words_.target_forms);
}

HmmTables::~HmmTables() = default;
HmmTables::HmmTables(HmmTables&&) noexcept = default;

std::vector<int> HmmTables::ids(const std::string& line, const std::unordered_map<std::string, int>& numbers,
                               int unseen) const {
  std::vector<int> out;
  for (const std::string& word : counted_words(line, options_.stem)) {
    const auto at = numbers.find(word);
    out.push_back(at == numbers.end() ? unseen : at->second);
  }
  return out;
}

std::vector<AlignedPair> HmmTables::align(const std::vector<std::string>& src_lines,
                                          const std::vector<std::string>& tgt_lines, const AlignMethod& method,
                                          std::optional<Symmetrization> symmetrize, int max_length, int threads,
                                          size_t first_line) const {
  symmetrize = resolved_symmetrization(true, method, symmetrize);
  std::vector<AlignedPair> pairs = checked_pairs(src_lines, tgt_lines, max_length);
  const auto count = static_cast<long>(pairs.size());
#pragma omp parallel for num_threads(std::max(1, threads)) schedule(dynamic, 64)
  for (long k = 0; k < count; ++k) {
    AlignedPair& pair = pairs[static_cast<size_t>(k)];
    pair.line += first_line;
    if (!pair.aligned) continue;
    // a word never seen gets the first id past its side's words, which no table row holds
    const std::vector<int> source = ids(src_lines[static_cast<size_t>(k)], source_ids_, words_.source_words),
                           target = ids(tgt_lines[static_cast<size_t>(k)], target_ids_, words_.target_words);
    // the reverse direction's words: the target's shifted past its ∅, the source's back from 1
    std::vector<int> back_source(target), back_target(source);
    for (int& w : back_source) ++w;
    for (int& w : back_target) --w;
    const Alignment f = forward_->posteriors(source, target), r = reverse_->posteriors(back_source, back_target);
    pair.links = pair_links(f, &r, method, symmetrize);
  }
  return pairs;
}

void HmmTables::save(const std::string& dir) const {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) throw Error(dir + ": cannot create the directory: " + error.message());
  // the arrays of both directions, converted to the npz's types; kept alive until written
  std::map<std::string, std::vector<std::int64_t>> integers;
  std::map<std::string, std::vector<float>> floats;
  for (const auto& [name, aligner] : {std::pair<std::string, const HmmAligner*>{"forward", forward_.get()},
                                      {"reverse", reverse_.get()}}) {
    const HmmAligner::Table& t = aligner->table();
    integers[name + ".row"].assign(t.row.begin(), t.row.end());
    integers[name + ".target"].assign(t.target.begin(), t.target.end());
    floats[name + ".prob"].assign(t.prob.begin(), t.prob.end());
    floats[name + ".jump"].assign(t.jump.begin(), t.jump.end());
  }
  integers["hmm"] = {forward_->table().hmm ? 1 : 0};
  integers["stem"] = {options_.stem};
  floats["null_probability"] = {static_cast<float>(options_.null_probability)};
  // the options and the hmm flag are scalars, the tables vectors (one of size 1 stays a vector)
  const auto shape = [](const std::string& name, size_t size) {
    return name.find('.') == std::string::npos ? std::vector<long>{} : std::vector<long>{static_cast<long>(size)};
  };
  std::vector<NpyArrayView> arrays;
  for (const auto& [name, values] : integers) arrays.push_back({name, shape(name, values.size()), nullptr, values.data()});
  for (const auto& [name, values] : floats) arrays.push_back({name, shape(name, values.size()), values.data()});
  save_npz((std::filesystem::path(dir) / kArrays).string(), arrays);
  for (const auto& [file, forms, first] : {std::tuple{kSourceWords, &words_.source_forms, 1},
                                           std::tuple{kTargetWords, &words_.target_forms, 0}}) {
    std::string text;
    for (size_t k = static_cast<size_t>(first); k < forms->size(); ++k) text += (*forms)[k] + "\n";
    write_file_atomically((std::filesystem::path(dir) / file).string(), text);
  }
}

HmmTables::HmmTables(const std::string& dir) {
  const std::string npz = (std::filesystem::path(dir) / kArrays).string();
  const std::map<std::string, NpyArray> arrays = load_npz(npz);
  const auto array = [&](const std::string& name, bool integer) -> const NpyArray& {
    const auto at = arrays.find(name);
    if (at == arrays.end()) throw Error(npz + ": no array '" + name + "'");
    if (at->second.is_integer != integer)
      throw Error(npz + ": array '" + name + "' is not " + (integer ? "int64" : "float32"));
    return at->second;
  };
  const auto scalar = [&](const std::string& name, bool integer) {
    const NpyArray& a = array(name, integer);
    if (a.size() != 1) throw Error(npz + ": array '" + name + "' is not a scalar");
    return integer ? static_cast<double>(a.integers[0]) : static_cast<double>(a.data[0]);
  };
  options_.null_probability = scalar("null_probability", false);
  options_.stem = static_cast<int>(scalar("stem", true));
  try {
    check_hmm_options(options_);
  } catch (const Error& e) {
    throw Error(npz + ": " + e.what());
  }
  const bool hmm = scalar("hmm", true) != 0;
  words_.source_forms = {""};
  for (const std::string& word : read_lines((std::filesystem::path(dir) / kSourceWords).string()))
    words_.source_forms.push_back(word);
  words_.target_forms = read_lines((std::filesystem::path(dir) / kTargetWords).string());
  words_.source_words = static_cast<int>(words_.source_forms.size());
  words_.target_words = static_cast<int>(words_.target_forms.size());
  source_ids_ = numbers(words_.source_forms);
  target_ids_ = numbers(words_.target_forms);
  // each direction's table, checked to fit the word lists: rows = its source words + 1 (∅),
  // targets sorted within a row and below its target words, probabilities in [0, 1]
  const auto table = [&](const std::string& name, int source_words, int target_words) {
    HmmAligner::Table t;
    const NpyArray &row = array(name + ".row", true), &target = array(name + ".target", true),
                   &prob = array(name + ".prob", false), &jump = array(name + ".jump", false);
    const auto bad = [&](const std::string& what) { return Error(npz + ": " + name + " " + what); };
    if (row.size() != static_cast<size_t>(source_words) + 1)
      throw bad("has " + std::to_string(row.size()) + " rows for " + std::to_string(source_words) + " source words");
    if (target.size() != prob.size()) throw bad("has as many targets as probabilities");
    if (jump.size() != 2 * HmmAligner::kMaxJump + 1) throw bad("jump weights are not 2 × 16 + 1");
    for (size_t e = 0; e < row.size(); ++e)
      if (row.integers[e] < (e ? row.integers[e - 1] : 0) || static_cast<size_t>(row.integers[e]) > target.size() ||
          (e + 1 == row.size() && static_cast<size_t>(row.integers[e]) != target.size()))
        throw bad("rows are not offsets into its " + std::to_string(target.size()) + " targets");
    for (size_t e = 0; e + 1 < row.size(); ++e)
      for (auto k = row.integers[e]; k < row.integers[e + 1]; ++k)
        if (target.integers[static_cast<size_t>(k)] < 0 || target.integers[static_cast<size_t>(k)] >= target_words ||
            (k > row.integers[e] && target.integers[static_cast<size_t>(k)] <= target.integers[static_cast<size_t>(k) - 1]))
          throw bad("targets are not sorted ids of its " + std::to_string(target_words) + " target words");
    for (float p : prob.data)
      if (!(p >= 0 && p <= 1)) throw bad("has a probability outside [0, 1]");
    for (float c : jump.data)
      if (!(c > 0 && std::isfinite(c))) throw bad("has a jump weight that is not positive and finite");
    t.row.assign(row.integers.begin(), row.integers.end());
    t.target.assign(target.integers.begin(), target.integers.end());
    t.prob.assign(prob.data.begin(), prob.data.end());
    t.jump.assign(jump.data.begin(), jump.data.end());
    t.hmm = hmm;
    return std::make_unique<HmmAligner>(std::move(t), options_);
  };
  forward_ = table("forward", words_.source_words, words_.target_words);
  reverse_ = table("reverse", words_.target_words + 1, words_.source_words - 1);
}

std::vector<AlignedPair> hmm_align(const std::vector<std::string>& src_lines, const std::vector<std::string>& tgt_lines,
                                   const HmmOptions& options, const AlignMethod& method,
                                   std::optional<Symmetrization> symmetrize,
                                   const std::function<void(const char*, int)>& iteration) {
  check_hmm_options(options);
  resolved_symmetrization(true, method, symmetrize);  // refused before training
  const HmmTables tables(src_lines, tgt_lines, options, iteration);
  return tables.align(src_lines, tgt_lines, method, symmetrize, options.max_length, options.threads);
}

}  // namespace rnnsearch::align
