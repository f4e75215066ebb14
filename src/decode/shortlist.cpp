#include "rnnsearch/decode/shortlist.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "rnnsearch/error.h"
#include "rnnsearch/io/atomic_file.h"
#include "rnnsearch/text/line_reader.h"

namespace rnnsearch {
namespace {

// Each source token's entries, most probable first (ties: lower target id first).
void sort_entries(LexicalTable& table) {
  for (auto& entries : table)
    std::sort(entries.begin(), entries.end(), [](const LexicalEntry& a, const LexicalEntry& b) {
      return a.prob != b.prob ? a.prob > b.prob : a.target < b.target;
    });
}

}  // namespace

LexicalTable learn_lexical_table(const ParallelCorpus& corpus, int src_vocab, int tgt_vocab, int iterations,
                                 int keep, float min_prob) {
  if (iterations < 1) throw Error("the lexical table needs at least one EM iteration");
  const auto check = [](int id, int size) {
    if (id < 0 || id >= size) throw Error("lexical table: token id " + std::to_string(id) + " outside the vocabulary");
  };
  // The support of p(· | s): the target tokens that share a sentence pair with s, sorted.
  std::vector<std::vector<int>> targets(src_vocab);
  for (size_t k = 0; k < corpus.size(); ++k) {
    const SentenceIds tgt = corpus.tgt[k];
    for (int s : corpus.src[k]) {
      check(s, src_vocab);
      for (int t : tgt) check(t, tgt_vocab);
      targets[s].insert(targets[s].end(), tgt.begin(), tgt.end());
    }
  }
  for (auto& t : targets) {
    std::sort(t.begin(), t.end());
    t.erase(std::unique(t.begin(), t.end()), t.end());
  }
  const auto slot = [&](int s, int t) {
    return static_cast<size_t>(std::lower_bound(targets[s].begin(), targets[s].end(), t) - targets[s].begin());
  };
  // p(t | s), uniform to start with (any constant: the E-step normalises over the source)
  std::vector<std::vector<double>> prob(src_vocab), count(src_vocab);
  for (int s = 0; s < src_vocab; ++s) prob[s].assign(targets[s].size(), 1.0);
  std::vector<size_t> slots;
  for (int iteration = 0; iteration < iterations; ++iteration) {
    for (int s = 0; s < src_vocab; ++s) count[s].assign(targets[s].size(), 0.0);
    for (size_t k = 0; k < corpus.size(); ++k) {
      const SentenceIds src = corpus.src[k];
      for (int t : corpus.tgt[k]) {
        // E-step: t is aligned to source position i with probability p(t | s_i) / Σ_j p(t | s_j)
        slots.clear();
        double total = 0;
        for (int s : src) {
          slots.push_back(slot(s, t));
          total += prob[s][slots.back()];
        }
        for (size_t i = 0; i < src.size(); ++i) count[src[i]][slots[i]] += prob[src[i]][slots[i]] / total;
      }
    }
    // M-step: p(t | s) = count(s, t) / Σ_t' count(s, t')
    for (int s = 0; s < src_vocab; ++s) {
      double sum = 0;
      for (double c : count[s]) sum += c;
      for (size_t j = 0; j < count[s].size(); ++j) prob[s][j] = count[s][j] / sum;
    }
  }
  LexicalTable table(src_vocab);
  for (int s = 0; s < src_vocab; ++s) {
    for (size_t j = 0; j < targets[s].size(); ++j)
      if (prob[s][j] >= min_prob) table[s].push_back({targets[s][j], static_cast<float>(prob[s][j])});
  }
  sort_entries(table);
  for (auto& entries : table)
    if (entries.size() > static_cast<size_t>(std::max(keep, 0))) entries.resize(static_cast<size_t>(keep));
  return table;
}

void write_lexical_table(const std::string& path, const LexicalTable& table, const Vocab& src_vocab,
                         const Vocab& tgt_vocab) {
  std::string content;
  char prob[32];
  for (size_t s = 0; s < table.size(); ++s)
    for (const LexicalEntry& entry : table[s]) {
      std::snprintf(prob, sizeof prob, "%.6g", static_cast<double>(entry.prob));
      content += tgt_vocab.token(entry.target) + ' ' + src_vocab.token(static_cast<int>(s)) + ' ' + prob + '\n';
    }
  write_file_atomically(path, content);
}

LexicalTable read_lexical_table(const std::string& path, const Vocab& src_vocab, const Vocab& tgt_vocab) {
  LexicalTable table(src_vocab.size());
  LineReader reader(path);
  // A token the vocabulary does not know maps to <unk>; only "<unk>" itself may do that.
  const auto known = [](const Vocab& vocab, const std::string& token) {
    const int id = vocab.id(token);
    return id != Vocab::kUnk || token == vocab.token(Vocab::kUnk) ? id : -1;
  };
  for (std::string line; next_valid_line(reader, line);) {
    std::istringstream fields(line);
    std::string target, source, prob_text, extra;
    if (!(fields >> target >> source >> prob_text) || (fields >> extra))
      throw Error(located(path, reader.line_number(), "expected 'target source probability', got '" + line + "'"));
    char* end = nullptr;
    const double prob = std::strtod(prob_text.c_str(), &end);
    if (*end != '\0' || !(prob >= 0 && prob <= 1))
      throw Error(located(path, reader.line_number(), "the probability '" + prob_text + "' is not a number in [0, 1]"));
    const int s = known(src_vocab, source), t = known(tgt_vocab, target);
    if (s >= 0 && t >= 0) table[static_cast<size_t>(s)].push_back({t, static_cast<float>(prob)});
  }
  sort_entries(table);
  return table;
}

Shortlist::Shortlist(LexicalTable table, int tgt_vocab, int first, int best)
    : table_(std::move(table)), tgt_vocab_(tgt_vocab), first_(first), best_(best) {
  if (first < 0 || best < 0) throw Error("--shortlist: the sizes FIRST and BEST must not be negative");
  for (const auto& entries : table_)
    for (const LexicalEntry& entry : entries)
      if (entry.target < 0 || entry.target >= tgt_vocab) throw Error("shortlist: a target id outside the vocabulary");
}

std::vector<int> Shortlist::words(const std::vector<std::vector<int>>& sources) const {
  std::vector<char> chosen(static_cast<size_t>(tgt_vocab_), 0);
  // the specials (ids 0..3) too: with them, a shortlist of every word normalises as the
  // full output layer does
  std::fill(chosen.begin(), chosen.begin() + std::min(std::max(first_, Vocab::kEos + 1), tgt_vocab_), 1);
  for (const auto& source : sources)
    for (int s : source) {
      if (s < 0 || static_cast<size_t>(s) >= table_.size()) continue;
      const auto& entries = table_[static_cast<size_t>(s)];
      const size_t n = std::min(entries.size(), static_cast<size_t>(best_));
      for (size_t k = 0; k < n; ++k) chosen[static_cast<size_t>(entries[k].target)] = 1;
    }
  std::vector<int> words;
  for (int w = 0; w < tgt_vocab_; ++w)
    if (chosen[static_cast<size_t>(w)]) words.push_back(w);
  return words;
}

}  // namespace rnnsearch
