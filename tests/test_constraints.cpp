// Lexical constraints (decode/constraints.h) and their beam search (dynamic beam allocation,
// beam_search.h): the state of a hypothesis token by token, then on a tiny random model a
// generated set of sentences with phrases to include and to avoid.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

#include "rnnsearch/decode/beam_search.h"
#include "rnnsearch/decode/constraints.h"
#include "rnnsearch/error.h"
#include "rnnsearch/model/rnnsearch.h"
#include "rnnsearch/text/subwords.h"
#include "rnnsearch/text/vocab.h"
#include "support/fixtures.h"

namespace rnnsearch {
namespace {

ConstraintState after(const PhraseConstraints& c, const std::vector<int>& tokens, const std::vector<char>& continues = {}) {
  ConstraintState state;
  for (int w : tokens) state = advance_constraints(c, state, w, continues);
  return state;
}

TEST(Constraints, StateCountsTheTokensMetAndUnwindsABrokenPhrase) {
  PhraseConstraints c;
  c.include = {{4, 5, 6}, {7}};
  EXPECT_EQ(c.tokens(), 4);
  EXPECT_EQ(met_tokens(c, after(c, {})), 0);
  EXPECT_EQ(met_tokens(c, after(c, {4, 5})), 2);
  EXPECT_EQ(met_tokens(c, after(c, {4, 5, 8})), 0) << "the phrase broke: its tokens no longer count";
  EXPECT_EQ(met_tokens(c, after(c, {4, 5, 6})), 3);
  EXPECT_FALSE(all_complete(c, after(c, {4, 5, 6})));
  EXPECT_EQ(met_tokens(c, after(c, {7, 4, 5, 6})), 4);
  EXPECT_TRUE(all_complete(c, after(c, {7, 8, 4, 5, 6, 8})));
  EXPECT_TRUE(all_complete(c, after(c, {4, 5, 6, 7})));
  EXPECT_TRUE(all_complete(PhraseConstraints(), ConstraintState())) << "no phrases: nothing to hold";
  std::vector<int> next;
  advancing_tokens(c, after(c, {4}), next);
  EXPECT_EQ(next, std::vector<int>{5}) << "in a phrase: its next token";
  next.clear();
  advancing_tokens(c, after(c, {7}), next);
  EXPECT_EQ(next, std::vector<int>{4}) << "in none: the first token of each incomplete phrase";
}

// "4 4 5" within "4 4 4 5": after the third 4 the phrase is still two tokens in.
TEST(Constraints, APhraseRestartsWithinItself) {
  PhraseConstraints c;
  c.include = {{4, 4, 5}};
  EXPECT_TRUE(all_complete(c, after(c, {4, 4, 4, 5})));
  EXPECT_EQ(met_tokens(c, after(c, {4, 4, 4})), 2);
  c.include = {{4, 5, 4, 6}};
  EXPECT_TRUE(all_complete(c, after(c, {4, 5, 4, 5, 4, 6})));
  EXPECT_FALSE(all_complete(c, after(c, {4, 5, 4, 5, 6})));
}

// With subword pieces a phrase must stand as whole words: a piece that continues its last word
// with a letter or digit undoes it, also after punctuation; punctuation alone does not (word_join).
TEST(Constraints, APieceContinuingThePhrasesLastWordUndoesIt) {
  PhraseConstraints c;
  c.include = {{4}};
  const std::vector<std::string> pieces = {"<pad>", "<s>", "</s>", "<unk>", "\u2581Hund", "e", "\u2581rennt", ".", "3",
                                           "\u00e4", "-"};
  std::vector<char> joins;
  for (const std::string& piece : pieces) joins.push_back(word_join(piece, false));
  EXPECT_EQ(joins, (std::vector<char>{kStartsWord, kStartsWord, kStartsWord, kStartsWord, kStartsWord, kLetter,
                                      kStartsWord, kOther, kLetter, kLetter, kOther}));
  EXPECT_FALSE(all_complete(c, after(c, {4, 5}, joins))) << "Hunde";
  EXPECT_FALSE(all_complete(c, after(c, {4, 9}, joins))) << "Hundä";
  EXPECT_FALSE(all_complete(c, after(c, {4, 10, 5}, joins))) << "Hund-e";
  EXPECT_FALSE(all_complete(c, after(c, {4, 7, 10, 8}, joins))) << "Hund.-3";
  EXPECT_TRUE(all_complete(c, after(c, {4, 7}, joins))) << "Hund.";
  EXPECT_TRUE(all_complete(c, after(c, {4, 10, 7, 6}, joins))) << "Hund-. rennt";
  EXPECT_TRUE(all_complete(c, after(c, {4, 6}, joins))) << "Hund rennt";
  EXPECT_TRUE(all_complete(c, after(c, {4, 5, 4}, joins))) << "Hunde Hund";
  EXPECT_TRUE(all_complete(c, after(c, {4, 5}))) << "a word-level model: no pieces";
  EXPECT_EQ(word_join("e", true), kStartsWord) << "a word-level model's tokens are words";
}

bool contains(const std::vector<int>& tokens, const std::vector<int>& phrase) {
  return std::search(tokens.begin(), tokens.end(), phrase.begin(), phrase.end()) != tokens.end();
}

constexpr int kWords = 12;  // target vocabulary: <pad> <unk> <s> </s> and 4 .. 11

template <class T>
Parameters<T> model(uint64_t seed) {
  Parameters<T> params(test::tiny_config(/*src_vocab=*/9, kWords, OutputKind::maxout));
  test::init_for_check(params, 1.0, seed);
  return params;
}

// Sentences with 1–2 phrases of 1–2 tokens to include and 0–2 to avoid (of other tokens, so
// that every line can be satisfied).
struct Generated {
  std::vector<std::vector<int>> sources;
  BeamSearch<float>::Steerings steering;
};

Generated generate(int sentences, uint64_t seed) {
  std::mt19937 random(static_cast<unsigned>(seed));
  const auto draw = [&](int low, int high) { return std::uniform_int_distribution<int>(low, high)(random); };
  Generated g;
  for (int k = 0; k < sentences; ++k) {
    std::vector<int> source;
    for (int i = draw(1, 6); i > 0; --i) source.push_back(draw(4, 8));
    source.push_back(Vocab::kEos);
    g.sources.push_back(source);
    std::vector<int> words;
    for (int w = 4; w < kWords; ++w) words.push_back(w);
    std::shuffle(words.begin(), words.end(), random);
    size_t used = 0;
    BeamSearch<float>::Steering steering;
    for (int i = draw(1, 2); i > 0; --i) {
      std::vector<int> phrase;
      for (int j = draw(1, 2); j > 0; --j) phrase.push_back(words[used++]);
      steering.constraints.include.push_back(phrase);
    }
    for (int i = draw(0, 2); i > 0; --i) {
      std::vector<int> phrase;
      for (int j = draw(1, 2); j > 0; --j) phrase.push_back(words[used++]);
      steering.constraints.avoid.push_back(phrase);
    }
    if (k % 5 == 4) steering.prefix = {words.back()};
    g.steering.push_back(steering);
  }
  return g;
}

// Every hypothesis of the n-best list holds each phrase to include and none to avoid, at beam 1
// and 5, with and without a prefix; the constraints change the output.
TEST(ConstrainedSearch, EveryOutputHoldsItsPhrasesAndNoneToAvoid) {
  const auto params = model<float>(3);
  const Generated g = generate(60, 7);
  BeamSearch<float> search(params);
  int changed = 0, avoided = 0;
  for (int beam : {1, 5}) {
    BeamOptions options;
    options.beam_size = beam;
    options.n_best = beam;
    const auto free = search.search(g.sources, options);
    const auto found = search.search(g.sources, options, nullptr, &g.steering);
    for (size_t k = 0; k < g.sources.size(); ++k) {
      const auto& c = g.steering[k].constraints;
      ASSERT_FALSE(found[k].empty()) << "sentence " << k;
      for (const Hypothesis& h : found[k]) {
        for (const auto& phrase : c.include) EXPECT_TRUE(contains(h.tokens, phrase)) << "sentence " << k;
        for (const auto& phrase : c.avoid) EXPECT_FALSE(contains(h.tokens, phrase)) << "sentence " << k;
        const auto& prefix = g.steering[k].prefix;
        EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), h.tokens.begin())) << "sentence " << k;
      }
      changed += found[k].front().tokens != free[k].front().tokens;

      for (const auto& phrase : c.avoid)
        for (const Hypothesis& h : free[k]) avoided += contains(h.tokens, phrase);
    }
  }
  EXPECT_GT(changed, 60) << "the constraints were the model's own choices: the test shows nothing";
  EXPECT_GT(avoided, 0) << "no free output held a phrase to avoid: the test shows nothing";
}

// With subword pieces a phrase to avoid is avoided as whole words of text, however the model
// pieces it ("ab" as "▁ab" or "▁a" + "b", also before "."), while the word may go on ("abc").
TEST(ConstrainedSearch, WithSubwordPiecesAPhraseToAvoidIsAvoidedHoweverPieced) {
  const std::vector<std::string> pieces = {"<pad>", "<unk>", "<s>", "</s>", "\u2581ab", "\u2581a", "b", "c", ".",
                                           "\u2581d", "\u2581e", "f"};
  ASSERT_EQ(pieces.size(), static_cast<size_t>(kWords));
  std::vector<char> joins;
  for (const std::string& piece : pieces) joins.push_back(word_join(piece, false));
  const auto words_of = [&](const std::vector<int>& tokens) {  // the text's words
    std::vector<std::string> words;
    for (int w : tokens) {
      if (joins[w] == kStartsWord || words.empty()) words.emplace_back();
      words.back() += joins[w] == kStartsWord ? pieces[w].substr(3) : pieces[w];
    }
    return words;
  };
  const auto holds = [](const std::vector<std::string>& words, const std::vector<std::string>& phrase) {
    for (size_t i = 0; i + phrase.size() <= words.size(); ++i) {  // "." may follow its last word
      std::string last = words[i + phrase.size() - 1];
      while (!last.empty() && last.back() == '.') last.pop_back();
      if (std::equal(phrase.begin(), phrase.end() - 1, words.begin() + static_cast<long>(i)) && last == phrase.back())
        return true;
    }
    return false;
  };
  const std::vector<std::vector<std::string>> avoided = {{"ab"}, {"d", "e"}};
  BeamSearch<float>::Steerings steering(1);
  steering[0].constraints.avoid = {{4}, {9, 10}};
  const auto params = model<float>(17);
  BeamSearch<float> search(params);
  search.set_word_pieces(joins, pieces);
  int held_free = 0, respelled_free = 0;
  for (int seed = 0; seed < 40; ++seed) {
    std::mt19937 random(static_cast<unsigned>(seed));
    std::vector<int> source;
    for (int i = 1 + seed % 6; i > 0; --i) source.push_back(4 + static_cast<int>(random() % 5));
    source.push_back(Vocab::kEos);
    const BeamSearch<float>::Steerings all(1, steering[0]);
    for (const bool sampling : {false, true}) {
      BeamOptions options;
      options.beam_size = 5;
      options.n_best = 5;
      if (sampling) options.sampling_topk = 0;
      options.sampling_seed = static_cast<uint64_t>(seed);
      const auto free = search.search({source}, options).at(0);
      const auto found = search.search({source}, options, nullptr, &all).at(0);
      ASSERT_FALSE(found.empty());
      for (const Hypothesis& h : free) {
        const auto words = words_of(h.tokens);
        for (const auto& phrase : avoided) held_free += holds(words, phrase);
        for (size_t i = 0; i + 1 < h.tokens.size(); ++i)
          respelled_free += h.tokens[i] == 5 && h.tokens[i + 1] == 6 &&
                            (i + 2 == h.tokens.size() || joins[h.tokens[i + 2]] != kLetter);
      }
      for (const Hypothesis& h : found) {
        const auto words = words_of(h.tokens);
        for (const auto& phrase : avoided)
          EXPECT_FALSE(holds(words, phrase))
              << "seed " << seed << (sampling ? ", sampling" : ", beam") << (h.finished ? "" : ", cut") << " "
              << ::testing::PrintToString(h.tokens);
      }
    }
  }
  EXPECT_GT(held_free, 0) << "no free output held a phrase to avoid: the test shows nothing";
  EXPECT_GT(respelled_free, 0) << "no free output spelt \"ab\" as \"a\" + \"b\": the test shows nothing";
}

// A sentence's constrained hypotheses do not depend on what shares its batch.
TEST(ConstrainedSearch, BatchedEqualsOneAtATime) {
  const auto params = model<double>(5);
  const Generated g = generate(12, 11);
  BeamOptions options;
  options.beam_size = 4;
  options.n_best = 4;
  BeamSearch<double> batched(params), single(params);
  const auto together = batched.search(g.sources, options, nullptr, &g.steering);
  for (size_t k = 0; k < g.sources.size(); ++k) {
    const BeamSearch<double>::Steerings one = {g.steering[k]};
    const auto alone = single.search({g.sources[k]}, options, nullptr, &one).at(0);
    ASSERT_EQ(together[k].size(), alone.size());
    for (size_t i = 0; i < alone.size(); ++i) {
      EXPECT_EQ(together[k][i].tokens, alone[i].tokens) << "sentence " << k;
      EXPECT_NEAR(together[k][i].score, alone[i].score, 1e-9);
    }
  }
}

// Phrases that cannot all be held (one to include is also to avoid): the output is cut at the
// length limit and ranks as best what it could do; phrases to avoid are avoided in sampling and
// alternatives too; constraints to include want beam search.
TEST(ConstrainedSearch, ConflictsSamplingAndAlternatives) {
  const auto params = model<float>(9);
  BeamSearch<float> search(params);
  BeamOptions options;
  options.max_output_length = 6;
  BeamSearch<float>::Steerings impossible(1);
  impossible[0].constraints.include = {{4}};
  impossible[0].constraints.avoid = {{4}};
  const auto cut = search.search({{5, 6, Vocab::kEos}}, options, nullptr, &impossible).at(0);
  ASSERT_FALSE(cut.empty());
  EXPECT_FALSE(cut.front().finished);
  EXPECT_FALSE(contains(cut.front().tokens, {4}));

  const Generated g = generate(20, 13);
  BeamSearch<float>::Steerings avoid_only = g.steering;
  for (auto& one : avoid_only) one.constraints.include.clear();
  for (const bool sampling : {true, false}) {
    BeamOptions lanes;
    if (sampling) {
      lanes.sampling_topk = 0;
      lanes.n_best = 8;
    } else {
      lanes.alternatives = 3;
    }
    const auto found = search.search(g.sources, lanes, nullptr, &avoid_only);
    for (size_t k = 0; k < g.sources.size(); ++k)
      for (const Hypothesis& h : found[k])
        for (const auto& phrase : avoid_only[k].constraints.avoid) EXPECT_FALSE(contains(h.tokens, phrase));
    EXPECT_THROW(search.search(g.sources, lanes, nullptr, &g.steering), Error);
  }
}

}  // namespace
}  // namespace rnnsearch
