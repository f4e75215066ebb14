// --alternatives K (BeamOptions::alternatives): after a target prefix, the K most probable next
// words, best first, each with its probability and its greedy completion.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "rnnsearch/decode/alternatives.h"
#include "rnnsearch/decode/translator.h"
#include "support/model_dir.h"
#include "support/temp_dir.h"

namespace rnnsearch {
namespace {

class Alternatives : public ::testing::Test {
 protected:
  void SetUp() override { models_ = test::load_six_word_model(dir_.path("m")); }

  std::vector<LineTranslation> translate(const std::vector<std::string>& lines, const std::vector<std::string>& prefixes,
                                         const BeamOptions& beam, int threads = 1, int batch_size = 32) {
    TranslatorOptions options;
    options.beam = beam;
    options.threads = threads;
    options.batch_size = batch_size;
    Translator translator(models_.front(), ensemble_weights(models_), options);
    std::vector<LineSteering> steering;
    for (const std::string& prefix : prefixes) steering.push_back({prefix, {}, {}});
    return translator.translate(lines, 0, steering);
  }
  int proposable() const { return static_cast<int>(models_.front().tgt_vocab.size()) - 2; }  // all but <pad>, <s>

  test::TempDir dir_;
  std::vector<Model> models_;
};

// The word a hypothesis has at `position`, "</s>" where it ends.
std::string word_at(const Hypothesis& h, size_t position) {
  return position < h.words.size() ? h.words[position] : "</s>";
}

const std::vector<std::string> kLines = {"the dog runs", "a cat sleeps", "the cat", "dog"};
const std::vector<std::string> kPrefixes = {"", "a", "the cat", "dog dog"};

// A beam as wide as the vocabulary, cut one token after the prefix and ranked by
// log-probability, lists every next word w by log p(prefix) + log p(w | prefix): the first K
// of that list are the K alternatives, in order, and their probabilities differ as it does
// (without a prefix they are its log-probabilities).
TEST_F(Alternatives, AreTheMostProbableNextWordsInOrder) {
  for (size_t k = 0; k < kLines.size(); ++k) {
    const std::vector<std::string> line = {kLines[k]}, prefix = {kPrefixes[k]};
    const size_t position = kPrefixes[k].empty() ? 0 : (kPrefixes[k] == "a" ? 1 : 2);
    BeamOptions wide;
    wide.beam_size = wide.n_best = proposable();
    wide.max_output_length = static_cast<int>(position) + 1;
    wide.normalize = 0;
    const LineTranslation all = translate(line, prefix, wide).front();
    ASSERT_EQ(all.hypotheses.size(), static_cast<size_t>(proposable()));

    BeamOptions beam;
    beam.alternatives = proposable();
    const LineTranslation alternatives = translate(line, prefix, beam).front();
    ASSERT_EQ(alternatives.hypotheses.size(), all.hypotheses.size()) << kLines[k];
    for (size_t i = 0; i < all.hypotheses.size(); ++i) {
      const Hypothesis& h = alternatives.hypotheses[i];
      ASSERT_EQ(h.alternative, static_cast<int>(position));
      EXPECT_EQ(word_at(h, position), word_at(all.hypotheses[i], position)) << kLines[k] << ", alternative " << i;
      EXPECT_EQ(alternative_word(h).word, word_at(h, position));
      EXPECT_NEAR(h.alternative_log_prob - alternatives.hypotheses[0].alternative_log_prob,
                  all.hypotheses[i].log_prob - all.hypotheses[0].log_prob, 1e-4);
      if (i > 0) {
        EXPECT_LE(h.alternative_log_prob, alternatives.hypotheses[i - 1].alternative_log_prob);
      }
      for (size_t w = 0; w < position; ++w) {
        EXPECT_EQ(h.words[w], all.hypotheses[i].words[w]) << "the prefix stays";
      }
      if (position == 0) {
        EXPECT_NEAR(h.alternative_log_prob, all.hypotheses[i].log_prob, 1e-4);
      }
    }

    beam.alternatives = 3;  // the first three of the same list
    const LineTranslation three = translate(line, prefix, beam).front();
    ASSERT_EQ(three.hypotheses.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(three.hypotheses[i].words, alternatives.hypotheses[i].words);
      EXPECT_EQ(three.hypotheses[i].alternative_log_prob, alternatives.hypotheses[i].alternative_log_prob);
    }
  }
}

// Each alternative goes on as greedy decoding would from the prefix and its word.
TEST_F(Alternatives, EachIsCompletedGreedily) {
  BeamOptions beam;
  beam.alternatives = 4;
  const std::vector<LineTranslation> results = translate(kLines, kPrefixes, beam);
  BeamOptions greedy;
  greedy.beam_size = 1;
  for (size_t k = 0; k < kLines.size(); ++k)
    for (const Hypothesis& h : results[k].hypotheses) {
      const AlternativeWord alternative = alternative_word(h);
      if (alternative.word == "</s>") {
        EXPECT_EQ(h.words.size(), static_cast<size_t>(alternative.position));
        EXPECT_TRUE(h.finished);
        continue;
      }
      const std::string prefix = (kPrefixes[k].empty() ? "" : kPrefixes[k] + " ") + alternative.word;
      const Hypothesis best = translate({kLines[k]}, {prefix}, greedy).front().hypotheses.front();
      EXPECT_EQ(h.words, best.words) << kLines[k] << " | " << prefix;
      EXPECT_NEAR(h.log_prob, best.log_prob, 1e-4);
      EXPECT_EQ(h.finished, best.finished);
    }
}

// A line's alternatives do not depend on what shares its batch or thread, and a line without
// a prefix gets the alternatives of its first word.
TEST_F(Alternatives, SameAtAnyThreadCountAndBatchSize) {
  BeamOptions beam;
  beam.alternatives = 3;
  const auto words = [](const std::vector<LineTranslation>& results) {
    std::vector<std::vector<std::string>> all;
    for (const LineTranslation& t : results)
      for (const Hypothesis& h : t.hypotheses) all.push_back(h.words);
    return all;
  };
  const std::vector<LineTranslation> reference = translate(kLines, kPrefixes, beam, 1, 1);
  EXPECT_EQ(words(translate(kLines, kPrefixes, beam, 1, 32)), words(reference));
  EXPECT_EQ(words(translate(kLines, kPrefixes, beam, 2, 1)), words(reference));
  EXPECT_EQ(words(translate(kLines, kPrefixes, beam, 2, 32)), words(reference));
  for (const Hypothesis& h : reference.front().hypotheses) EXPECT_EQ(h.alternative, 0);
}

}  // namespace
}  // namespace rnnsearch
