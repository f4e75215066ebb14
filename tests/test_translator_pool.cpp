// TranslatorPool (decode/translator_pool.h) on its own: one Translator per set of options,
// kept while among the `capacity` most recently used; find() never makes one; invalid options
// are refused by both calls with the beam's one-line errors; callers racing for the same new
// options get the same Translator; a pooled Translator translates as one made directly.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "rnnsearch/decode/translator_pool.h"
#include "support/error_of.h"
#include "support/model_dir.h"
#include "support/temp_dir.h"

namespace rnnsearch {
namespace {

class Pool : public ::testing::Test {
 protected:
  void SetUp() override { models_ = test::load_six_word_model(dir_.path("m")); }
  // Options that differ from the defaults in one field each, keyed by k.
  static TranslatorOptions options(int k) {
    TranslatorOptions o;
    o.beam.beam_size = 1 + k;
    return o;
  }
  test::TempDir dir_;
  std::vector<Model> models_;
};

TEST_F(Pool, SameOptionsGiveTheSameTranslatorOthersAnother) {
  TranslatorPool pool(models_, 4);
  const auto first = pool.get(options(1));
  EXPECT_EQ(pool.get(options(1)), first);
  EXPECT_EQ(pool.find(options(1)), first);
  TranslatorOptions other = options(1);
  other.beam.coverage_penalty = 0.5;  // any field of the key tells options apart
  EXPECT_NE(pool.get(other), first);
  other = options(1);
  other.replace_unk = true;
  other.beam.alignment = true;
  EXPECT_NE(pool.get(other), first);
}

TEST_F(Pool, KeepsTheMostRecentlyUsedUpToItsCapacity) {
  TranslatorPool pool(models_, 2);
  const auto one = pool.get(options(1));
  const auto two = pool.get(options(2));
  EXPECT_EQ(pool.get(options(1)), one);  // 1 is now the most recently used: 2 goes next
  const auto three = pool.get(options(3));
  EXPECT_EQ(pool.find(options(2)), nullptr);
  EXPECT_EQ(pool.find(options(1)), one);
  EXPECT_EQ(pool.find(options(3)), three);
  const auto two_again = pool.get(options(2));  // made anew
  EXPECT_NE(two_again, two);
  EXPECT_EQ(pool.find(options(1)), nullptr) << "1 was the least recently used after the finds";
}

TEST_F(Pool, FindNeverMakesATranslator) {
  TranslatorPool pool(models_, 3);
  EXPECT_EQ(pool.find(options(1)), nullptr);
  EXPECT_EQ(pool.find(options(1)), nullptr);
  const auto made = pool.get(options(1));
  EXPECT_EQ(pool.find(options(1)), made);
}

TEST_F(Pool, InvalidOptionsAreRefusedByGetAndFindNamingTheOption) {
  TranslatorPool pool(models_, 2);
  TranslatorOptions bad;
  bad.beam.beam_size = 0;
  EXPECT_EQ(test::error_of([&] { pool.get(bad); }), "--beam-size must be at least 1, not 0");
  EXPECT_EQ(test::error_of([&] { pool.find(bad); }), "--beam-size must be at least 1, not 0");
  bad = TranslatorOptions();
  bad.beam.normalize = std::nan("");  // would match no key: refused before the lookup
  EXPECT_EQ(test::error_of([&] { pool.find(bad); }).rfind("--normalize must be a number >= 0", 0), 0u);
  bad = TranslatorOptions();
  bad.beam.n_best = 6;
  EXPECT_EQ(test::error_of([&] { pool.get(bad); }), "--n-best must be at most --beam-size (5), not 6");
  EXPECT_EQ(pool.find(TranslatorOptions()), nullptr) << "nothing was made for the refused options";
}

TEST_F(Pool, CallersRacingForNewOptionsGetTheSameTranslator) {
  for (int round = 0; round < 20; ++round) {
    TranslatorPool pool(models_, 2);
    std::shared_ptr<Translator> got[2];
    std::thread a([&] { got[0] = pool.get(options(2)); });
    std::thread b([&] { got[1] = pool.get(options(2)); });
    a.join();
    b.join();
    ASSERT_NE(got[0], nullptr);
    EXPECT_EQ(got[0], got[1]) << "round " << round;
    EXPECT_EQ(pool.find(options(2)), got[0]);
  }
}

TEST_F(Pool, APooledTranslatorTranslatesAsOneMadeDirectly) {
  TranslatorPool pool(models_, 2);
  TranslatorOptions o = options(3);
  o.beam.n_best = 2;
  o.beam.alignment = true;
  const std::vector<std::string> lines = {"the dog runs", "a cat sleeps", "", "dog dog the"};
  const std::vector<LineTranslation> pooled = pool.get(o)->translate(lines, 0);
  Translator direct(models_.front(), ensemble_weights(models_), o);
  const std::vector<LineTranslation> expected = direct.translate(lines, 0);
  ASSERT_EQ(pooled.size(), expected.size());
  for (size_t k = 0; k < pooled.size(); ++k) {
    ASSERT_EQ(pooled[k].hypotheses.size(), expected[k].hypotheses.size()) << k;
    for (size_t h = 0; h < pooled[k].hypotheses.size(); ++h) {
      EXPECT_EQ(pooled[k].hypotheses[h].words, expected[k].hypotheses[h].words);
      EXPECT_EQ(pooled[k].hypotheses[h].log_prob, expected[k].hypotheses[h].log_prob);
    }
  }
  EXPECT_FALSE(pooled[0].hypotheses.empty());
  EXPECT_TRUE(pooled[2].hypotheses.empty()) << "an empty line has no hypotheses";
}

}  // namespace
}  // namespace rnnsearch
