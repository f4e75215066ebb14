// The decoding shortlist: the IBM Model 1 lexical table, its lex.s2t file, the words of a
// batch, the output layer restricted to them, and beam search over them (against the full
// output layer renormalised over the same words by hand).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "rnnsearch/decode/beam_search.h"
#include "rnnsearch/decode/shortlist.h"
#include "rnnsearch/error.h"
#include "rnnsearch/model/decoder_step.h"
#include "rnnsearch/model/rnnsearch.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"

namespace rnnsearch {
namespace {

constexpr int kEos = Vocab::kEos;

// Source words a b c (ids 4 5 6) translate word for word into x y z (ids 4 5 6); each pair
// of sentences shares a word, so only EM (not co-occurrence counts alone) separates them.
ParallelCorpus toy_corpus() {
  ParallelCorpus corpus;
  for (const std::vector<int>& sentence : {std::vector<int>{4, 5, kEos}, {4, 6, kEos}, {5, 6, kEos}, {4, kEos},
                                           {6, 5, 4, kEos}}) {
    corpus.src.push_back(sentence);
    corpus.tgt.push_back(sentence);
  }
  return corpus;
}

TEST(LexicalTable, ModelOneFindsTheWordForWordTranslations) {
  const LexicalTable table = learn_lexical_table(toy_corpus(), 7, 7, 10, 100, 0.0f);
  ASSERT_EQ(table.size(), 7u);
  for (int s : {4, 5, 6}) {
    ASSERT_FALSE(table[s].empty());
    EXPECT_EQ(table[s][0].target, s) << "source " << s;
    EXPECT_GT(table[s][0].prob, 0.5f) << "source " << s;
    float sum = 0;
    for (size_t k = 0; k < table[s].size(); ++k) {
      sum += table[s][k].prob;
      if (k > 0) {
        EXPECT_GE(table[s][k - 1].prob, table[s][k].prob) << "most probable first";
      }
    }
    EXPECT_NEAR(sum, 1.0f, 1e-5f) << "p(· | s) is a distribution when nothing is cut";
  }
  // </s> is in every sentence: it explains mostly </s>.
  EXPECT_EQ(table[kEos][0].target, kEos);
  // One EM iteration is plain co-occurrence: a, b and c are not separated yet.
  const LexicalTable first = learn_lexical_table(toy_corpus(), 7, 7, 1, 100, 0.0f);
  EXPECT_LT(first[4][0].prob, table[4][0].prob);
}

TEST(LexicalTable, KeepAndMinProbCutEachSourceTokensList) {
  const LexicalTable table = learn_lexical_table(toy_corpus(), 7, 7, 5, 2, 0.0f);
  for (const auto& entries : table) EXPECT_LE(entries.size(), 2u);
  const LexicalTable pruned = learn_lexical_table(toy_corpus(), 7, 7, 5, 100, 0.3f);
  for (const auto& entries : pruned)
    for (const LexicalEntry& e : entries) EXPECT_GE(e.prob, 0.3f);
  EXPECT_THROW(learn_lexical_table(toy_corpus(), 7, 7, 0, 100, 0.0f), Error);
  EXPECT_THROW(learn_lexical_table(toy_corpus(), 6, 7, 1, 100, 0.0f), Error) << "id 6 outside a vocabulary of 6";
}

class LexicalFile : public ::testing::Test {
 protected:
  const Vocab src_ = Vocab::build({{"a", "b", "c"}}, 1);
  const Vocab tgt_ = Vocab::build({{"x", "y", "z"}}, 1);
  test::TempDir dir_;
};

TEST_F(LexicalFile, RoundTripsInMariansFormat) {
  const LexicalTable table = learn_lexical_table(toy_corpus(), 7, 7, 5, 100, 0.0f);
  const std::string path = dir_.path("lex.s2t");
  write_lexical_table(path, table, src_, tgt_);
  const std::string text = dir_.read("lex.s2t");
  const std::string first_line = text.substr(0, text.find('\n'));
  EXPECT_EQ(std::count(first_line.begin(), first_line.end(), ' '), 2) << "target source prob: " << first_line;
  const LexicalTable back = read_lexical_table(path, src_, tgt_);
  ASSERT_EQ(back.size(), table.size());
  for (size_t s = 0; s < table.size(); ++s) {
    ASSERT_EQ(back[s].size(), table[s].size()) << "source " << s;
    for (size_t k = 0; k < table[s].size(); ++k) {
      EXPECT_EQ(back[s][k].target, table[s][k].target);
      EXPECT_NEAR(back[s][k].prob, table[s][k].prob, 1e-5f * table[s][k].prob);
    }
  }
}

TEST_F(LexicalFile, UnknownTokensAreSkippedAndBadLinesNamed) {
  const LexicalTable table = read_lexical_table(dir_.write("ok.s2t", "y a 0.5\nx NULL 0.2\nnew b 0.9\nz b 0.25\n"),
                                                src_, tgt_);
  ASSERT_EQ(table[src_.id("a")].size(), 1u);
  EXPECT_EQ(table[src_.id("a")][0].target, tgt_.id("y"));
  ASSERT_EQ(table[src_.id("b")].size(), 1u) << "'new' is not a target word";
  EXPECT_EQ(table[src_.id("b")][0].target, tgt_.id("z"));
  EXPECT_TRUE(table[Vocab::kUnk].empty()) << "NULL is not <unk>";
  for (const auto& [text, problem] : std::vector<std::pair<std::string, std::string>>{
           {"x a 0.5\ny b\n", ":2: expected 'target source probability'"},
           {"x a 0.5 extra\n", ":1: expected"},
           {"x a 1.5\n", ":1: the probability '1.5'"},
           {"x a nan\n", ":1: the probability 'nan'"},
           {"x a 0.5z\n", ":1: the probability '0.5z'"}}) {
    const std::string path = dir_.write("bad.s2t", text);
    try {
      read_lexical_table(path, src_, tgt_);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(path + problem), std::string::npos) << e.what();
    }
  }
}

TEST(Shortlist, FrequentWordsSpecialsAndEachSourceTokensBest) {
  LexicalTable table(8);
  table[5] = {{9, 0.6f}, {7, 0.3f}, {12, 0.1f}};
  table[6] = {{11, 0.9f}};
  const Shortlist shortlist(table, 14, 6, 2);
  EXPECT_EQ(shortlist.words({{5, kEos}}), (std::vector<int>{0, 1, 2, 3, 4, 5, 7, 9}));
  EXPECT_EQ(shortlist.words({{6, kEos}, {5, 5, kEos}}), (std::vector<int>{0, 1, 2, 3, 4, 5, 7, 9, 11}));
  const Shortlist none(table, 14, 0, 0);
  EXPECT_EQ(none.words({{5, 6, kEos}}), (std::vector<int>{0, 1, 2, 3})) << "the specials always";
  const Shortlist all(table, 14, 100, 100);
  EXPECT_EQ(all.words({{kEos}}).size(), 14u);
  EXPECT_THROW(Shortlist(table, 14, -1, 2), Error);
  EXPECT_THROW(Shortlist(table, 10, 6, 2), Error) << "target 12 outside a vocabulary of 10";
}

// The restricted output layer gives the full layer's logits of the chosen words, for every
// kind of output layer.
TEST(OutputShortlist, LogitsAreTheFullLayersColumns) {
  for (const auto& [output, tied] : std::vector<std::pair<OutputKind, bool>>{
           {OutputKind::maxout, false}, {OutputKind::maxout, true}, {OutputKind::linear, false}}) {
    ModelConfig config = test::tiny_config(7, 9, output, /*emb=*/4, /*hidden=*/5, /*maxout=*/tied ? 4 : 3);
    config.tied_embeddings = tied;
    Parameters<double> params(config);
    params.init_uniform(0.5, 3);
    Mat<double> X = Mat<double>::Random(4, config.output_input());
    OutputCache<double> cache;
    Mat<double> full(4, 9);
    output_forward<double>(params, X, cache, full);
    OutputShortlist<double> shortlist;
    const std::vector<int> words = {0, 3, 4, 8};
    select_output_words<double>(params, words, shortlist);
    Mat<double> some(4, 4);
    output_forward<double>(params, X, cache, some, &shortlist);
    for (Index k = 0; k < 4; ++k)
      for (Index i = 0; i < 4; ++i) EXPECT_NEAR(some(i, k), full(i, words[k]), 1e-12) << "column " << k;
  }
}

Parameters<double> peaked_model(uint64_t seed) {
  Parameters<double> params(test::tiny_config(/*src_vocab=*/7, /*tgt_vocab=*/8));
  params.init_uniform(1.0, seed);
  return params;
}

const std::vector<std::vector<int>> kSources = {{4, 5, kEos}, {6, kEos}, {5, 4, 6, 4, kEos}};

// A shortlist of every word is the full output layer: the same hypotheses and scores.
TEST(BeamSearchShortlist, EveryWordGivesTheFullSearch) {
  const auto params = peaked_model(5);
  BeamOptions options;
  options.beam_size = 3;
  options.n_best = 3;
  std::vector<int> all(8);
  for (int w = 0; w < 8; ++w) all[w] = w;
  BeamSearch<double> search(params);
  const auto full = search.search(kSources, options);
  const auto listed = search.search(kSources, options, &all);
  for (size_t b = 0; b < kSources.size(); ++b) {
    ASSERT_EQ(listed[b].size(), full[b].size());
    for (size_t k = 0; k < full[b].size(); ++k) {
      EXPECT_EQ(listed[b][k].tokens, full[b][k].tokens);
      EXPECT_NEAR(listed[b][k].log_prob, full[b][k].log_prob, 1e-12);
    }
  }
}

// With a shortlist, hypotheses hold only its words, and their log-probability is the full
// model's renormalised over the shortlist at every step: log p(w) − log Σ_{v ∈ list} p(v).
TEST(BeamSearchShortlist, ScoresAreTheFullModelRenormalisedOverTheList) {
  const auto params = peaked_model(8);
  const std::vector<int> list = {0, 1, 2, 3, 5, 7};
  BeamOptions options;
  options.beam_size = 4;
  options.n_best = 4;
  options.max_output_length = 6;
  BeamSearch<double> search(params);
  const auto found = search.search(kSources, options, &list);
  int checked = 0;
  for (size_t b = 0; b < kSources.size(); ++b) {
    const int length = static_cast<int>(kSources[b].size());
    EncoderWorkspace<double> encoder;
    encoder_forward<double>(params, kSources[b].data(), &length, 1, length, 0.0, 0.0, 0.0, 0, encoder);
    for (const Hypothesis& h : found[b]) {
      std::vector<int> outputs = h.tokens;
      if (h.finished) outputs.push_back(kEos);
      Mat<double> s = encoder.s0.topRows(1);
      int y = Vocab::kBos, row = 0;
      double log_prob = 0;
      DecoderStepWorkspace<double> ws;
      for (int w : outputs) {
        EXPECT_TRUE(std::binary_search(list.begin(), list.end(), w)) << "word " << w << " is not in the list";
        decoder_step<double>(params, attention_memory(encoder), &row, s, &y, ws);
        double listed_mass = 0;
        for (int v : list) listed_mass += std::exp(ws.log_probs(0, v));
        log_prob += ws.log_probs(0, w) - std::log(listed_mass);
        s = ws.states.topRows(1);
        y = w;
      }
      EXPECT_NEAR(h.log_prob, log_prob, 1e-10) << "sentence " << b;
      ++checked;
    }
  }
  EXPECT_GE(checked, 6);
}

}  // namespace
}  // namespace rnnsearch
