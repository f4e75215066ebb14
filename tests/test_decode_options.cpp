// The decoding options' table and rules (decode/decode_options.h), tested once here for every
// shell: each shell's own tests only show that it reads the table (tests/test_python.py,
// test_option_errors_are_the_same_in_every_shell, drives the CLI, Python and the server).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "rnnsearch/decode/decode_options.h"
#include "rnnsearch/decode/scorer.h"
#include "support/error_of.h"

namespace rnnsearch {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(DecodeOptions, TheTableNamesEachOptionOnceInBothSpellings) {
  std::set<std::string> names, keywords;
  std::set<char> short_names;
  for (const DecodeOptionSpec& spec : decode_option_specs()) {
    EXPECT_TRUE(names.insert(spec.name).second) << spec.name;
    EXPECT_TRUE(keywords.insert(spec.keyword()).second) << spec.name;
    if (spec.short_name) {
      EXPECT_TRUE(short_names.insert(spec.short_name).second) << spec.name;
    }
    EXPECT_EQ(spec.keyword().find('-'), std::string::npos) << spec.name;
    EXPECT_EQ(find_decode_option(spec.name), &spec);
    EXPECT_EQ(find_decode_option(spec.keyword()), &spec);
    EXPECT_NE(spec.uses, 0u) << spec.name << " is taken by no command";
    EXPECT_GT(std::string(spec.help).size(), 10u) << spec.name;
    EXPECT_LE(spec.minimum, spec.maximum) << spec.name;
  }
  EXPECT_EQ(find_decode_option("beam_size")->keyword(), "beam_size");
  EXPECT_EQ(find_decode_option("beam-size")->name, std::string("beam-size"));
  EXPECT_EQ(find_decode_option("beam"), nullptr);
}

TEST(DecodeOptions, DefaultsAreBeamOptionsAndScoresLogProbRanking) {
  const BeamOptions translate, score = log_prob_ranking();
  for (const DecodeOptionSpec& spec : decode_option_specs()) {
    EXPECT_EQ(spec.default_value(DecodeUse::translate), spec.value(translate)) << spec.name;
    EXPECT_EQ(spec.default_value(DecodeUse::score), spec.value(score)) << spec.name;
    if (!spec.optional) {
      EXPECT_NO_THROW(spec.check(spec.default_value(DecodeUse::translate))) << spec.name;
    }
  }
  EXPECT_EQ(find_decode_option("normalize")->default_value(DecodeUse::translate), 1.0);
  EXPECT_EQ(find_decode_option("normalize")->default_value(DecodeUse::score), 0.0);
  const DecodeOptions made(DecodeUse::score);
  EXPECT_EQ(made.beam.normalize, 0.0);
  EXPECT_FALSE(made.any_given());
  EXPECT_NO_THROW(made.validate());
  EXPECT_NO_THROW(DecodeOptions().validate());
}

// Every option refuses what is outside its range, NaN and ±∞, and a fraction when it is a
// whole number, with the one text every shell shows; its bounds themselves pass.
TEST(DecodeOptions, EveryRangeIsCheckedWithOneText) {
  for (const DecodeOptionSpec& spec : decode_option_specs()) {
    const std::string option = std::string("--") + spec.name + " must be ";
    const std::string nan = test::error_of([&] { spec.check(std::nan("")); });
    EXPECT_EQ(nan.rfind(option + (spec.integer ? "a whole number" : "a "), 0), 0u) << nan;
    EXPECT_EQ(nan.substr(nan.size() - 9), ", not nan") << nan;
    EXPECT_EQ(test::error_of([&] { spec.check(kInf); }).rfind(option, 0), 0u) << spec.name;
    EXPECT_EQ(test::error_of([&] { spec.check(-kInf); }).rfind(option, 0), 0u) << spec.name;
    if (std::isfinite(spec.minimum)) {
      EXPECT_NO_THROW(spec.check(spec.minimum)) << spec.name;
      const std::string below = test::error_of([&] { spec.check(spec.minimum - (spec.integer ? 1 : 0.005)); });
      EXPECT_EQ(below.rfind(option + (spec.integer ? "at least " : "a number >= "), 0), 0u) << below;
    }
    if (std::isfinite(spec.maximum)) {
      EXPECT_NO_THROW(spec.check(spec.maximum)) << spec.name;
      const std::string above = test::error_of([&] { spec.check(spec.maximum + 1); });
      EXPECT_EQ(above.rfind(option + "at most ", 0), 0u) << above;
    }
    if (spec.integer) {
      EXPECT_EQ(test::error_of([&] { spec.check(2.5); }), option + "a whole number, not 2.5");
    }
  }
  const auto error = [](const char* name, double value) {
    return test::error_of([&] { find_decode_option(name)->check(value); });
  };
  EXPECT_EQ(error("beam-size", 0), "--beam-size must be at least 1, not 0");
  EXPECT_EQ(error("beam-size", 2147483648.0), "--beam-size must be at most 2147483647, not 2147483648");
  EXPECT_EQ(error("n-best", -1), "--n-best must be at least 0, not -1");
  EXPECT_EQ(error("normalize", -0.5), "--normalize must be a number >= 0, not -0.5");
  EXPECT_EQ(error("word-penalty", kInf), "--word-penalty must be a finite number, not inf");
  EXPECT_EQ(error("normalize", std::nan("")), "--normalize must be a number >= 0, not nan");
  EXPECT_EQ(error("sampling-topp", 1.5), "--sampling-topp must be at most 1, not 1.5");
  EXPECT_EQ(error("sampling-topp", 0), "--sampling-topp must be a number >= 0.01, not 0");  // (was: off)
  EXPECT_EQ(error("sampling-topk", -1), "--sampling-topk must be at least 0, not -1");
  EXPECT_EQ(error("sampling-temperature", 0), "--sampling-temperature must be a number >= 0.01, not 0");
}

TEST(DecodeOptions, SetTakesEitherSpellingAndMarksTheOptionGiven) {
  DecodeOptions options;
  options.set("beam_size", 3);
  options.set("coverage-penalty", 0.25);
  EXPECT_EQ(options.beam.beam_size, 3);
  EXPECT_EQ(options.beam.coverage_penalty, 0.25);
  EXPECT_TRUE(options.given("beam-size"));
  EXPECT_TRUE(options.given("coverage_penalty"));
  EXPECT_FALSE(options.given("normalize"));
  EXPECT_TRUE(options.any_given());
  // a value refused leaves the option as it was, not given
  EXPECT_EQ(test::error_of([&] { options.set("normalize", -1); }), "--normalize must be a number >= 0, not -1");
  EXPECT_EQ(options.beam.normalize, 1.0);
  EXPECT_FALSE(options.given("normalize"));
  // a name the table lacks, or one the command does not take
  EXPECT_EQ(test::error_of([&] { options.set("beam", 3); }), "unknown option 'beam'");
  DecodeOptions scoring(DecodeUse::score);
  EXPECT_EQ(test::error_of([&] { scoring.set("beam_size", 3); }), "unknown option 'beam_size'");
  scoring.set("word-penalty", -0.5);  // any finite number
  EXPECT_EQ(scoring.beam.word_penalty, -0.5);
}

TEST(DecodeOptions, ValidateHoldsTheRulesBetweenOptions) {
  DecodeOptions both;
  both.set("normalize", 1.0);  // given, even at its default
  both.set("length-penalty-alpha", 0.6);
  EXPECT_EQ(test::error_of([&] { both.validate(); }), "--length-penalty-alpha and --normalize both rank by length: give one");
  DecodeOptions alpha;
  alpha.set("length-penalty-alpha", 0);  // α = 0 is on (lp = 1), not "off"
  EXPECT_NO_THROW(alpha.validate());
  EXPECT_EQ(alpha.beam.length_penalty_alpha, 0.0);
  EXPECT_EQ(test::error_of([&] { alpha.set("length-penalty-alpha", -1); }),
            "--length-penalty-alpha must be a number >= 0, not -1");

  DecodeOptions n_best;
  n_best.set("beam-size", 3);
  n_best.set("n-best", 3);
  EXPECT_NO_THROW(n_best.validate());
  n_best.set("n-best", 4);
  EXPECT_EQ(test::error_of([&] { n_best.validate(); }), "--n-best must be at most --beam-size (3), not 4");

  DecodeOptions wide;
  wide.set("beam-size", 9);
  EXPECT_NO_THROW(wide.validate());
  EXPECT_NO_THROW(wide.validate(9));
  EXPECT_EQ(test::error_of([&] { wide.validate(8); }),
            "--beam-size must be at most 8 (the server's --max-beam-size), not 9");

  // Sampling: n-best samples, not bound by the beam (but by a server's limit); its other
  // options only with it.
  DecodeOptions sampling;
  sampling.set("sampling-topk", 10);
  sampling.set("n-best", 12);
  EXPECT_NO_THROW(sampling.validate());
  EXPECT_EQ(test::error_of([&] { sampling.validate(8); }),
            "--n-best must be at most 8 (the server's --max-beam-size), not 12");
  for (const char* name : {"sampling-temperature", "sampling-seed"}) {
    DecodeOptions alone;
    alone.set(name, 1);
    EXPECT_EQ(test::error_of([&] { alone.validate(); }),
              std::string("--") + name + " goes with sampling: --sampling-topk 0 (the whole distribution) or K > 1");
    alone.set("sampling-topk", 1);  // CTranslate2's "no sampling"
    EXPECT_THROW(alone.validate(), Error);
    alone.set("sampling-topk", 0);
    EXPECT_NO_THROW(alone.validate());
  }

  // Alternatives: K outputs of their own, neither sampled nor an n-best list; K within a
  // server's limit.
  DecodeOptions alternatives;
  alternatives.set("alternatives", 6);
  EXPECT_NO_THROW(alternatives.validate());
  EXPECT_EQ(test::error_of([&] { alternatives.validate(5); }),
            "--alternatives must be at most 5 (the server's --max-beam-size), not 6");
  DecodeOptions with_n_best = alternatives;
  with_n_best.set("n-best", 2);
  EXPECT_EQ(test::error_of([&] { with_n_best.validate(); }),
            "--alternatives K gives K translations of each sentence: drop --n-best");
  DecodeOptions with_sampling = alternatives;
  with_sampling.set("sampling-topk", 0);
  EXPECT_EQ(test::error_of([&] { with_sampling.validate(); }),
            "--alternatives and sampling (--sampling-topk other than 1) do not combine: give one");
}

// The sampling options take CTranslate2's values (its translate_batch's sampling_topk and
// sampling_topp): topk 1, the default, searches; 0 samples the whole distribution; K > 1 the K
// most probable; topp 1, the default, is no filter. Until 2026-12-07 topk 0 and topp 0 were
// "off" and topp 1 sampled the whole distribution: such a command line is refused, saying so.
TEST(DecodeOptions, SamplingTakesCTranslate2sValues) {
  const BeamOptions defaults;
  EXPECT_EQ(defaults.sampling_topk, 1);
  EXPECT_EQ(defaults.sampling_topp, 1.0);
  EXPECT_FALSE(defaults.samples());
  EXPECT_EQ(find_decode_option("sampling_topk")->default_value(DecodeUse::translate), 1.0);
  EXPECT_EQ(find_decode_option("sampling_topp")->default_value(DecodeUse::translate), 1.0);
  for (const int k : {0, 2, 10}) {
    BeamOptions sampled;
    sampled.sampling_topk = k;
    EXPECT_TRUE(sampled.samples()) << k;
    EXPECT_NO_THROW(check_beam_options(sampled)) << k;
    sampled.sampling_topp = 0.5;  // a nucleus of those
    EXPECT_NO_THROW(check_beam_options(sampled)) << k;
  }
  DecodeOptions searched;
  searched.set("sampling-topk", 1);
  EXPECT_NO_THROW(searched.validate());
  EXPECT_FALSE(searched.beam.samples());

  const std::string topp_alone =
      "--sampling-topp goes with sampling: --sampling-topk 0 (the whole distribution) or K > 1 "
      "(--sampling-topp alone no longer samples)";
  for (const double p : {1.0, 0.9}) {  // the old "whole distribution" and "nucleus" command lines
    DecodeOptions old;
    old.set("sampling-topp", p);
    old.set("sampling-seed", 3);
    EXPECT_EQ(test::error_of([&] { old.validate(); }), topp_alone) << p;
    old.set("sampling-topk", 0);  // what they meant
    EXPECT_NO_THROW(old.validate()) << p;
  }
  BeamOptions nucleus_without_sampling;  // a library caller: CTranslate2 would ignore it
  nucleus_without_sampling.sampling_topp = 0.9;
  EXPECT_EQ(test::error_of([&] { check_beam_options(nucleus_without_sampling); }), topp_alone);
}

// A library caller's BeamOptions are checked by the same table (what BeamSearch, Translator,
// TranslatorPool and Scorer call).
TEST(DecodeOptions, CheckBeamOptionsReadsTheTable) {
  BeamOptions options;
  EXPECT_NO_THROW(check_beam_options(options));
  options.beam_size = 3;
  options.n_best = 4;
  EXPECT_EQ(test::error_of([&] { check_beam_options(options); }), "--n-best must be at most --beam-size (3), not 4");
  options.n_best = 0;  // the 1-best alone
  EXPECT_NO_THROW(check_beam_options(options));
  options.length_penalty_alpha = -1;  // off
  EXPECT_NO_THROW(check_beam_options(options));
  options.length_penalty_alpha = std::nan("");  // not "off": refused
  EXPECT_EQ(test::error_of([&] { check_beam_options(options); }),
            "--length-penalty-alpha must be a number >= 0, not nan");
  for (const DecodeOptionSpec& spec : decode_option_specs()) {
    if (!std::isfinite(spec.minimum)) continue;
    BeamOptions o;
    std::visit([&](auto member) { o.*member = static_cast<std::remove_reference_t<decltype(o.*member)>>(spec.minimum - 1); },
               spec.field);
    if (spec.optional) continue;  // below its minimum is "off"
    EXPECT_THROW(check_beam_options(o), Error) << spec.name;
  }
  options = BeamOptions();
  options.max_output_length = -1;
  EXPECT_EQ(test::error_of([&] { check_beam_options(options); }), "the maximum output length must not be negative");
}

}  // namespace
}  // namespace rnnsearch
