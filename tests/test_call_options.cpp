// The rules between what a call asks for and the options it runs with, held once in the library
// for every shell: the decoding table's values given by name (decode_options.h,
// given_decode_options: Python's keywords, the server's JSON fields, the command line's flags)
// and the Translator's and Scorer's options of a call (decode/call_options.h), the attention
// kept when an output shows it or --replace-unk reads it.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rnnsearch/decode/call_options.h"
#include "rnnsearch/decode/decode_options.h"
#include "support/error_of.h"

namespace rnnsearch {
namespace {

// A shell's values by keyword (Python's spelling), as given_decode_options asks for them.
std::function<std::optional<double>(const DecodeOptionSpec&)> values(std::map<std::string, double> given,
                                                                     std::vector<std::string>* asked = nullptr) {
  return [given, asked](const DecodeOptionSpec& spec) -> std::optional<double> {
    if (asked) asked->push_back(spec.keyword());
    const auto found = given.find(spec.keyword());
    if (found == given.end()) return std::nullopt;
    return found->second;
  };
}

TEST(GivenDecodeOptions, AsksForEachOptionOfTheCommandInTheTablesOrderAndMarksWhatWasGiven) {
  std::vector<std::string> asked;
  const DecodeOptions options = given_decode_options(DecodeUse::score, values({{"word_penalty", 0.5}}, &asked));
  std::vector<std::string> expected;
  for (const DecodeOptionSpec& spec : decode_option_specs())
    if (spec.takes(DecodeUse::score)) expected.push_back(spec.keyword());
  EXPECT_EQ(asked, expected);  // never beam_size, which score does not take
  EXPECT_EQ(options.beam.word_penalty, 0.5);
  EXPECT_EQ(options.beam.normalize, 0.0);  // score's default: log-probability
  EXPECT_TRUE(options.given("word-penalty"));
  EXPECT_FALSE(options.given("normalize"));
}

TEST(GivenDecodeOptions, RefusesAsTheTableAndItsRulesDoTheFirstInTheTablesOrder) {
  // both out of range: beam-size comes first in the table, whatever order the shell holds them in
  EXPECT_EQ(test::error_of([] { given_decode_options(DecodeUse::translate, values({{"n_best", -1}, {"beam_size", 0}})); }),
            "--beam-size must be at least 1, not 0");
  EXPECT_EQ(test::error_of([] {
              given_decode_options(DecodeUse::translate, values({{"normalize", 1}, {"length_penalty_alpha", 0.6}}));
            }),
            "--length-penalty-alpha and --normalize both rank by length: give one");
  // a server's --max-beam-size
  EXPECT_EQ(test::error_of([] { given_decode_options(DecodeUse::translate, values({{"beam_size", 9}}), 8); }),
            "--beam-size must be at most 8 (the server's --max-beam-size), not 9");
  EXPECT_EQ(given_decode_options(DecodeUse::translate, values({{"beam_size", 8}}), 8).beam.beam_size, 8);
}

TEST(GivenDecodeOptions, TheShellsOwnErrorForAValueThatIsNoNumberPassesThrough) {
  struct NotANumber {};
  EXPECT_THROW(given_decode_options(DecodeUse::translate,
                                    [](const DecodeOptionSpec&) -> std::optional<double> { throw NotANumber{}; }),
               NotANumber);
}

TEST(CallOptions, TheAttentionIsKeptWhenAnOutputShowsItOrReplaceUnkReadsIt) {
  for (const bool shows : {false, true})
    for (const bool replace_unk : {false, true}) {
      CallOptions call;
      call.shows_attention = shows;
      call.replace_unk = replace_unk;
      EXPECT_EQ(needs_attention(call), shows || replace_unk);
      EXPECT_EQ(translator_options(BeamOptions{}, call).beam.alignment, shows || replace_unk);
      EXPECT_EQ(scorer_options(log_prob_ranking(), call).alignment, shows || replace_unk);
    }
}

TEST(CallOptions, TranslatorOptionsCarryTheBeamAndTheCall) {
  BeamOptions beam;
  beam.beam_size = 7;
  beam.coverage_penalty = 0.2;
  beam.alignment = true;  // replaced by the call's: not shown, not read
  CallOptions call;
  call.batch_size = 5;
  call.max_length = 60;
  call.threads = 3;
  call.precision = Precision::int8;
  call.piece_alignments = true;
  const TranslatorOptions options = translator_options(beam, call);
  EXPECT_EQ(options.beam.beam_size, 7);
  EXPECT_EQ(options.beam.coverage_penalty, 0.2);
  EXPECT_FALSE(options.beam.alignment);
  EXPECT_EQ(options.batch_size, 5);
  EXPECT_EQ(options.max_length, 60);
  EXPECT_EQ(options.threads, 3);
  EXPECT_EQ(options.precision, Precision::int8);
  EXPECT_TRUE(options.piece_alignments);
  EXPECT_FALSE(options.replace_unk);
}

TEST(CallOptions, ScorerOptionsRankAsTheCallAsks) {
  BeamOptions ranking = log_prob_ranking();
  ranking.length_penalty_alpha = 0.6;
  ranking.raw_attention = 1;
  CallOptions call;
  call.batch_size = 4;
  call.max_length = 50;
  call.threads = 2;
  call.piece_alignments = true;
  const ScorerOptions options = scorer_options(ranking, call);
  EXPECT_EQ(options.ranking.length_penalty_alpha, 0.6);
  EXPECT_EQ(options.ranking.raw_attention, 1);
  EXPECT_EQ(options.batch_size, 4);
  EXPECT_EQ(options.max_length, 50);
  EXPECT_EQ(options.threads, 2);
  EXPECT_TRUE(options.piece_alignments);
  EXPECT_FALSE(options.alignment);
}

}  // namespace
}  // namespace rnnsearch
