// A call's steering as every shell receives it (decode/steering.h): the per-sentence lists of
// Python's target_prefix / constraints / avoid and of a server request's fields of those names
// made into checked steering by one function, sentence_steering, whose refusals name the
// sentence as the shell calls it; and check_steering with the beam's options, what translate
// checks of each line of its files.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rnnsearch/decode/beam_search.h"
#include "rnnsearch/decode/steering.h"
#include "support/error_of.h"

namespace rnnsearch {
namespace {

BeamOptions sampling() {
  BeamOptions beam;
  beam.sampling_topk = 5;
  return beam;
}

TEST(SentenceSteering, NoListGivenIsNoSteering) {
  EXPECT_TRUE(sentence_steering(3, {}, BeamOptions{}, "sentences").empty());
}

TEST(SentenceSteering, EachSentenceTakesItsItemOfEachList) {
  SteeringLists lists;
  lists.target_prefix = std::vector<std::string>{"ein", ""};
  lists.avoid = std::vector<std::vector<std::string>>{{}, {"katze", "rot"}};
  const std::vector<LineSteering> steering = sentence_steering(2, lists, BeamOptions{}, "sentences");
  ASSERT_EQ(steering.size(), 2u);
  EXPECT_EQ(steering[0].prefix, "ein");
  EXPECT_TRUE(steering[0].avoid.empty());
  EXPECT_TRUE(steering[0].constraints.empty());
  EXPECT_TRUE(steering[1].prefix.empty());
  EXPECT_EQ(steering[1].avoid, (std::vector<std::string>{"katze", "rot"}));
  EXPECT_TRUE(steering[1].constraints.empty());
}

TEST(SentenceSteering, AListOfAnotherLengthIsAnErrorNamingBoth) {
  SteeringLists lists;
  lists.avoid = std::vector<std::vector<std::string>>{{}};
  EXPECT_EQ(test::error_of([&] { sentence_steering(2, lists, BeamOptions{}, "sentences"); }),
            "sentences and avoid differ in length: 2 and 1 sentences");
  lists = {};
  lists.target_prefix = std::vector<std::string>{"a", "b", "c"};
  EXPECT_EQ(test::error_of([&] { sentence_steering(2, lists, BeamOptions{}, "q"); }),
            "q and target_prefix differ in length: 2 and 3 sentences");
  try {  // not a sentence's refusal: Python raises it as rnnsearch.Error, not ValueError
    sentence_steering(2, lists, BeamOptions{}, "q");
  } catch (const SteeringRefused&) {
    ADD_FAILURE() << "a length is no sentence's refusal";
  } catch (const Error&) {
  }
}

TEST(SentenceSteering, ARefusalNamesTheSentenceAsTheShellCallsIt) {
  SteeringLists lists;
  lists.constraints = std::vector<std::vector<std::string>>{{}, {"hund"}};
  lists.avoid = std::vector<std::vector<std::string>>{{"hund"}, {"mann", "hund"}};
  EXPECT_EQ(test::error_of([&] { sentence_steering(2, lists, BeamOptions{}, "q"); }),
            "q[1]: \"hund\" is both a constraint and a phrase to avoid");
  EXPECT_THROW(sentence_steering(2, lists, BeamOptions{}, "sentences"), SteeringRefused);
  // one sentence given alone (a server's string "q"): the bare problem
  SteeringLists one;
  one.constraints = std::vector<std::vector<std::string>>{{"ein hund"}};
  one.avoid = std::vector<std::vector<std::string>>{{"hund"}};
  EXPECT_EQ(test::error_of([&] { sentence_steering(1, one, BeamOptions{}, ""); }),
            "the constraint \"ein hund\" holds the phrase to avoid \"hund\"");
}

TEST(SentenceSteering, ConstraintsAreRefusedWithSamplingOrAlternativesPhrasesToAvoidAreNot) {
  SteeringLists lists;
  lists.constraints = std::vector<std::vector<std::string>>{{}, {"hund"}};
  EXPECT_EQ(test::error_of([&] { sentence_steering(2, lists, sampling(), "sentences"); }),
            "sentences[1]: constraints need beam search: not with sampling (--sampling-topk other than 1) or "
            "--alternatives");
  BeamOptions alternatives;
  alternatives.alternatives = 2;
  EXPECT_THROW(sentence_steering(2, lists, alternatives, "sentences"), SteeringRefused);
  // a sentence without constraints is not refused, nor are phrases to avoid
  lists.constraints = std::vector<std::vector<std::string>>{{}, {}};
  lists.avoid = std::vector<std::vector<std::string>>{{"hund"}, {}};
  EXPECT_EQ(sentence_steering(2, lists, sampling(), "sentences").size(), 2u);
}

TEST(SentenceSteering, TheChecksOfALineHoldForEachSentence) {
  SteeringLists lists;
  lists.constraints = std::vector<std::vector<std::string>>{std::vector<std::string>(65, "hund")};
  EXPECT_EQ(test::error_of([&] { sentence_steering(1, lists, BeamOptions{}, "sentences"); }),
            "sentences[0]: 65 constraints; the limit is 64 per sentence");
  lists.constraints = std::vector<std::vector<std::string>>{{"hund \xff"}};
  EXPECT_EQ(test::error_of([&] { sentence_steering(1, lists, BeamOptions{}, "sentences"); }),
            "sentences[0]: a constraint is not valid UTF-8");
}

TEST(CheckSteering, WithTheBeamAlsoRefusesConstraintsThatNeedBeamSearch) {
  LineSteering steering;
  steering.constraints = {"hund"};
  check_steering(steering);  // the text alone is fine
  check_steering(steering, BeamOptions{});
  EXPECT_EQ(test::error_of([&] { check_steering(steering, sampling()); }),
            "constraints need beam search: not with sampling (--sampling-topk other than 1) or --alternatives");
  steering.constraints.clear();
  steering.avoid = {"hund"};
  check_steering(steering, sampling());
}

}  // namespace
}  // namespace rnnsearch
