// BLEU, chrF, TER and their tokenizers against sacreBLEU 2.x's own published test cases: the
// sentence pairs and expected figures of its repository's test/test_bleu.py,
// test_sentence_bleu.py, test_chrf.py, test_ter.py and test_tokenizer_ter.py (mjpost/sacrebleu,
// as of 2.6.0), one test each, checked to the tolerance sacreBLEU's tests use (or to the digits
// printed). The cases marked "sacreBLEU 2.6.0 gives" below are not in those files: they are
// figures sacreBLEU 2.6.0 computed on the inputs shown (chrF++ and the tokenizers, which its
// Python tests do not cover except through test.sh's downloaded WMT data).
#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <functional>
#include <ostream>

#include "rnnsearch/error.h"
#include "rnnsearch/metrics/bleu.h"
#include "rnnsearch/metrics/chrf.h"
#include "rnnsearch/metrics/sacre_tokenizers.h"
#include "rnnsearch/metrics/ter.h"

namespace rnnsearch {
namespace {

using Lines = std::vector<std::string>;
using References = std::vector<Lines>;  // one Lines per reference stream

// A failing case prints as its label (GoogleTest finds this by argument-dependent lookup).
template <class Case>
auto operator<<(std::ostream& os, const Case& c) -> decltype(c.label, os) {
  return os << c.label;
}

// Test names from a case's label: letters and digits only.
std::string test_name(const std::string& label) {
  std::string name;
  for (char c : label) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

// ---------------------------------------------------------------- BLEU, test_bleu.py

// The README example of test_bleu.py: three hypotheses, two reference streams.
const Lines kHyps = {"The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."};
const References kRefs = {
    {"The dog bit the man.", "It was not unexpected.", "The man bit him first."},
    {"The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."},
};

// sacreBLEU's raw_corpus_bleu: no tokenization, floor smoothing (0.1 unless given), effective order.
BleuOptions raw_options(std::optional<double> floor = 0.01) {
  BleuOptions options;
  options.tokenizer = BleuTokenizer::none;
  options.smoothing = BleuSmoothing::floor;
  options.smooth_value = floor;
  options.effective_order = true;
  return options;
}

struct BleuCase {
  std::string label;
  Lines hypotheses;
  References references;
  BleuOptions options;
  double expected;    // x100
  double tolerance;   // on the x100 score
};

class SacreBleu : public ::testing::TestWithParam<BleuCase> {};

TEST_P(SacreBleu, ScoresAsPublished) {
  const BleuCase& c = GetParam();
  EXPECT_NEAR(corpus_bleu(c.hypotheses, c.references, c.options).bleu, c.expected, c.tolerance);
}

BleuOptions with_tokenizer(BleuTokenizer tokenizer) {
  BleuOptions options;
  options.tokenizer = tokenizer;
  return options;
}

BleuOptions unsmoothed() {
  BleuOptions options;
  options.smoothing = BleuSmoothing::none;
  return options;
}

// test_raw_bleu (|score/100 − expected| < 1e-8), test_corpus_bleu (|score − expected| < 1e-8)
// and test_effective_order (raw, 1e-8 on score/100).
INSTANTIATE_TEST_SUITE_P(
    Published, SacreBleu,
    ::testing::Values(
        BleuCase{"raw_bleu_no_match", {"this is a test", "another test"}, {{"ref1", "ref2"}}, raw_options(), 0.0, 1e-6},
        BleuCase{"raw_bleu_identical", {"this is a test"}, {{"this is a test"}}, raw_options(), 100.0, 1e-6},
        BleuCase{"raw_bleu_one_word_off", {"this is a fest"}, {{"this is a test"}}, raw_options(),
                 22.3606797749979, 1e-6},
        BleuCase{"corpus_bleu_default", kHyps, kRefs, {}, 48.530827, 1e-8},
        BleuCase{"corpus_bleu_empty_hypotheses_kept", {"", "", ""}, kRefs, {}, 0.0, 1e-8},
        BleuCase{"corpus_bleu_tokenize_none", kHyps, kRefs, with_tokenizer(BleuTokenizer::none), 49.1919566, 1e-8},
        BleuCase{"corpus_bleu_tokenize_13a", kHyps, kRefs, with_tokenizer(BleuTokenizer::mteval_13a), 48.530827, 1e-8},
        BleuCase{"corpus_bleu_tokenize_intl", kHyps, kRefs, with_tokenizer(BleuTokenizer::intl), 43.91623493, 1e-8},
        BleuCase{"corpus_bleu_smooth_none", kHyps, kRefs, unsmoothed(), 48.530827, 1e-8},
        BleuCase{"effective_order_one_word", {"test"}, {{"a test"}}, raw_options(), 36.78794411714425, 1e-6},
        BleuCase{"effective_order_identical", {"a test"}, {{"a test"}}, raw_options(), 100.0, 1e-6},
        BleuCase{"effective_order_three_words", {"a little test"}, {{"a test"}}, raw_options(),
                 3.218297948685433, 1e-6}),
    [](const auto& info) { return test_name(info.param.label); });

// test_statistics: the matched and total n-grams of each order.
TEST(SacreBleuPublished, Statistics) {
  const BleuResult r =
      corpus_bleu({"am I am a character sequence"}, {{"I am a symbol string sequence a a"}}, raw_options());
  EXPECT_EQ(r.correct, (std::vector<double>{4, 2, 1, 0}));
  EXPECT_EQ(r.total, (std::vector<double>{6, 5, 4, 3}));
}

// test_scoring: BLEU of given statistics, no smoothing.
TEST(SacreBleuPublished, ScoringOfStatistics) {
  BleuStats stats;
  stats.correct = {9, 7, 5, 3};
  stats.total = {10, 8, 6, 4};
  stats.hyp_len = stats.ref_len = 11;
  EXPECT_NEAR(compute_bleu(stats, BleuSmoothing::none).bleu / 100, 0.8375922397, 1e-8);
}

// test_offset: floor smoothing 0 gives 0, the default floor (0.1) 0.1555722182.
TEST(SacreBleuPublished, FloorOffset) {
  const Lines hyp = {"am I am a character sequence"};
  const References ref = {{"I am a symbol string sequence a a"}};
  EXPECT_NEAR(corpus_bleu(hyp, ref, raw_options(0.0)).bleu / 100, 0.0, 1e-8);
  EXPECT_NEAR(corpus_bleu(hyp, ref, raw_options(std::nullopt)).bleu / 100, 0.1555722182, 1e-8);
  EXPECT_NEAR(corpus_bleu(hyp, ref, raw_options(0.1)).bleu / 100, 0.1555722182, 1e-8);
}

// test_degenerate_statistics: exactly 0 (floor smoothing with the given value).
struct DegenerateCase {
  std::string label;
  std::vector<double> correct, total;
  long hyp_len, ref_len;
  double floor;
};

class SacreBleuDegenerate : public ::testing::TestWithParam<DegenerateCase> {};

TEST_P(SacreBleuDegenerate, IsExactlyZero) {
  const DegenerateCase& c = GetParam();
  BleuStats stats;
  stats.correct = c.correct;
  stats.total = c.total;
  stats.hyp_len = c.hyp_len;
  stats.ref_len = c.ref_len;
  EXPECT_EQ(compute_bleu(stats, BleuSmoothing::floor, c.floor).bleu, 0.0);
}

INSTANTIATE_TEST_SUITE_P(Published, SacreBleuDegenerate,
                         ::testing::Values(DegenerateCase{"no_match", {0, 0, 0, 0}, {4, 4, 2, 1}, 0, 1, 0.0},
                                           DegenerateCase{"no_match_no_4grams", {0, 0, 0, 0}, {10, 11, 12, 0}, 14, 10,
                                                          0.0},
                                           DegenerateCase{"all_empty", {0, 0, 0, 0}, {0, 0, 0, 0}, 0, 0, 0.0},
                                           DegenerateCase{"no_4gram_match_floor_0", {6, 5, 4, 0}, {6, 5, 4, 3}, 6, 6, 0.0},
                                           DegenerateCase{"all_empty_floor_0_1", {0, 0, 0, 0}, {0, 0, 0, 0}, 0, 0, 0.1},
                                           DegenerateCase{"empty_hyp_floor_0_01", {0, 0, 0, 0}, {0, 0, 0, 0}, 1, 5, 0.01}),
                         [](const auto& info) { return test_name(info.param.label); });

// test_max_ngram_order: the README example with orders 1 to 6, as printed with 2 decimals.
class SacreBleuMaxOrder : public ::testing::TestWithParam<std::pair<int, std::string>> {};

TEST_P(SacreBleuMaxOrder, PrintsAsPublished) {
  BleuOptions options;
  options.max_order = GetParam().first;
  char printed[32];
  std::snprintf(printed, sizeof printed, "%.2f", corpus_bleu(kHyps, kRefs, options).bleu);
  EXPECT_EQ(printed, GetParam().second);
}

INSTANTIATE_TEST_SUITE_P(Published, SacreBleuMaxOrder,
                         ::testing::Values(std::pair<int, std::string>{1, "77.65"}, std::pair<int, std::string>{2, "60.50"},
                                           std::pair<int, std::string>{3, "53.93"}, std::pair<int, std::string>{4, "48.53"},
                                           std::pair<int, std::string>{5, "46.14"},
                                           std::pair<int, std::string>{6, "43.28"}),
                         [](const auto& info) { return "order_" + std::to_string(info.param.first); });

// ---------------------------------------------------------------- sentence BLEU, test_sentence_bleu.py
// sentence_bleu: one hypothesis, effective order, |score − expected| < 1e-3.

struct SentenceBleuCase {
  std::string label;
  BleuSmoothing smoothing;
  std::optional<double> value;
  bool lowercase;
  BleuTokenizer tokenizer;
  double expected;
};

// Issue #98's Romanian pair, and #141's, which has no matching word at all.
const std::string kRomanianRef = "producţia de zahăr brut se exprimă în zahăr alb;";
const std::string kRomanianSys = "Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;";

double sentence_bleu(const std::string& hypothesis, const std::string& reference, const SentenceBleuCase& c) {
  BleuOptions options;
  options.smoothing = c.smoothing;
  options.smooth_value = c.value;
  options.lowercase = c.lowercase;
  options.tokenizer = c.tokenizer;
  options.effective_order = true;
  return corpus_bleu({hypothesis}, {{reference}}, options).bleu;
}

class SacreSentenceBleu : public ::testing::TestWithParam<SentenceBleuCase> {};

TEST_P(SacreSentenceBleu, RomanianPair) {
  EXPECT_NEAR(sentence_bleu(kRomanianSys, kRomanianRef, GetParam()), GetParam().expected, 1e-3);
}

using BT = BleuTokenizer;
using BS = BleuSmoothing;
INSTANTIATE_TEST_SUITE_P(
    Published, SacreSentenceBleu,
    ::testing::Values(SentenceBleuCase{"exp", BS::exp, {}, false, BT::mteval_13a, 8.493},
                      SentenceBleuCase{"none", BS::none, {}, false, BT::mteval_13a, 0.0},
                      SentenceBleuCase{"floor_default", BS::floor, {}, false, BT::mteval_13a, 4.51688},
                      SentenceBleuCase{"floor_0_1", BS::floor, 0.1, false, BT::mteval_13a, 4.51688},
                      SentenceBleuCase{"floor_0_5", BS::floor, 0.5, false, BT::mteval_13a, 10.10},
                      SentenceBleuCase{"add_k_default", BS::add_k, {}, false, BT::mteval_13a, 14.882},
                      SentenceBleuCase{"add_k_1", BS::add_k, 1.0, false, BT::mteval_13a, 14.882},
                      SentenceBleuCase{"add_k_2", BS::add_k, 2.0, false, BT::mteval_13a, 21.389},
                      SentenceBleuCase{"tokenize_none", BS::exp, {}, false, BT::none, 7.347},
                      SentenceBleuCase{"tokenize_intl", BS::exp, {}, false, BT::intl, 8.493},
                      SentenceBleuCase{"tokenize_char", BS::exp, {}, false, BT::character, 40.8759},
                      SentenceBleuCase{"tokenize_char_lowercase", BS::exp, {}, true, BT::character, 42.0267}),
    [](const auto& info) { return test_name(info.param.label); });

class SacreSentenceBleuZero : public ::testing::TestWithParam<SentenceBleuCase> {};

TEST_P(SacreSentenceBleuZero, NoMatchingWord) {
  EXPECT_NEAR(sentence_bleu("this is a cat", "okay thanks", GetParam()), 0.0, 1e-3);
}

INSTANTIATE_TEST_SUITE_P(Published, SacreSentenceBleuZero,
                         ::testing::Values(SentenceBleuCase{"exp", BS::exp, {}, false, BT::mteval_13a, 0},
                                           SentenceBleuCase{"none", BS::none, {}, false, BT::mteval_13a, 0},
                                           SentenceBleuCase{"floor_default", BS::floor, {}, false, BT::mteval_13a, 0},
                                           SentenceBleuCase{"floor_0_1", BS::floor, 0.1, false, BT::mteval_13a, 0},
                                           SentenceBleuCase{"add_k_default", BS::add_k, {}, false, BT::mteval_13a, 0},
                                           SentenceBleuCase{"add_k_1", BS::add_k, 1.0, false, BT::mteval_13a, 0}),
                         [](const auto& info) { return test_name(info.param.label); });

// ---------------------------------------------------------------- chrF, test_chrf.py

struct ChrfCase {
  std::string label;
  Lines hypotheses;
  Lines references;  // one stream
  ChrfOptions options;
  double expected;
};

class SacreChrf : public ::testing::TestWithParam<ChrfCase> {};

// |score − expected| < 1e-4, as test_chrf.py.
TEST_P(SacreChrf, ScoresAsPublished) {
  const ChrfCase& c = GetParam();
  EXPECT_NEAR(corpus_chrf(c.hypotheses, {c.references}, c.options).score, c.expected, 1e-4);
}

// test_chrf's settings: chrF with β = 3, epsilon smoothing or sacreBLEU's effective order.
ChrfOptions chrf3(bool eps_smoothing, bool whitespace = false) {
  ChrfOptions options;
  options.beta = 3;
  options.eps_smoothing = eps_smoothing;
  options.whitespace = whitespace;
  return options;
}

const std::string kRiskHyp =
    "risk assessment must be made of those who are qualified and expertise in the sector - these are the scientists .";
const std::string kRiskRef =
    "risk assessment has to be undertaken by those who are qualified and expert in that area - that is the scientists .";
const std::string kObamaRef = "Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich.";

INSTANTIATE_TEST_SUITE_P(
    EpsSmoothing, SacreChrf,
    ::testing::Values(
        ChrfCase{"disjoint", {"abcdefg"}, {"hijklmnop"}, chrf3(true), 0.0},
        ChrfCase{"one_char_wrong", {"a"}, {"b"}, chrf3(true), 0.0},
        ChrfCase{"empty_vs_b", {""}, {"b"}, chrf3(true), 0.0},
        ChrfCase{"empty_vs_ref", {""}, {"ref"}, chrf3(true), 0.0},
        ChrfCase{"empty_vs_reference", {""}, {"reference"}, chrf3(true), 0.0},
        ChrfCase{"aa_vs_ab", {"aa"}, {"ab"}, chrf3(true), 8.3333},
        ChrfCase{"two_lines", {"a", "b"}, {"a", "c"}, chrf3(true), 8.3333},
        ChrfCase{"a_vs_a", {"a"}, {"a"}, chrf3(true), 16.6667},
        ChrfCase{"abc_spaced", {"a b c"}, {"a b c"}, chrf3(true), 50.0},
        ChrfCase{"abc_spaced_vs_joined", {"a b c"}, {"abc"}, chrf3(true), 50.0},
        ChrfCase{"risk_assessment", {" " + kRiskHyp}, {kRiskRef}, chrf3(true), 63.361730},
        ChrfCase{"obama_netanyahu",
                 {" Die    Beziehung zwischen  Obama und Netanjahu ist nicht gerade  freundlich. "},
                 {kObamaRef},
                 chrf3(true),
                 64.1302698},
        ChrfCase{"identical",
                 {"Niemand hat die Absicht, eine Mauer zu errichten"},
                 {"Niemand hat die Absicht, eine Mauer zu errichten"},
                 chrf3(true),
                 100.0}),
    [](const auto& info) { return test_name(info.param.label); });

// test_chrf_eff_order: sacreBLEU < 2.0's effective-order smoothing.
INSTANTIATE_TEST_SUITE_P(EffectiveOrder, SacreChrf,
                         ::testing::Values(ChrfCase{"a_vs_a", {"a"}, {"a"}, chrf3(false), 100.0},
                                           ChrfCase{"empty_vs_reference", {""}, {"reference"}, chrf3(false), 0.0},
                                           ChrfCase{"abc_spaced", {"a b c"}, {"a b c"}, chrf3(false), 100.0},
                                           ChrfCase{"abc_spaced_vs_joined", {"a b c"}, {"abc"}, chrf3(false), 100.0},
                                           ChrfCase{"empty_vs_c", {""}, {"c"}, chrf3(false), 0.0},
                                           ChrfCase{"two_lines", {"a", "b"}, {"a", "c"}, chrf3(false), 50.0},
                                           ChrfCase{"aa_vs_ab", {"aa"}, {"ab"}, chrf3(false), 25.0}),
                         [](const auto& info) { return test_name(info.param.label); });

// test_chrf_keep_whitespace: whitespace counts in the character n-grams.
INSTANTIATE_TEST_SUITE_P(
    KeepWhitespace, SacreChrf,
    ::testing::Values(
        ChrfCase{"obama_netanyahu",
                 {"Die Beziehung zwischen Obama und Netanjahu ist nicht gerade freundlich."},
                 {kObamaRef},
                 chrf3(false, true),
                 67.3481606},
        ChrfCase{"risk_assessment", {kRiskHyp}, {kRiskRef}, chrf3(false, true), 65.2414427}),
    [](const auto& info) { return test_name(info.param.label); });

// test_chrf_sentence_level: sentence_chrf's defaults (chrF2) with epsilon smoothing.
ChrfOptions chrf2_eps() {
  ChrfOptions options;
  options.eps_smoothing = true;
  return options;
}

INSTANTIATE_TEST_SUITE_P(
    SentenceLevel, SacreChrf,
    ::testing::Values(
        ChrfCase{"czech_1",
                 {"Co nás nejvíc trápí, protože lékaři si vybírají, kdo bude žít a kdo zemře."},
                 {"Nejvíce smutní jsme z toho, že musíme rozhodovat o tom, kdo bude žít a kdo zemře."},
                 chrf2_eps(),
                 39.14078509},
        ChrfCase{"czech_2",
                 {"Nebo prostě nemají vybavení, které by jim pomohlo, uvedli lékaři."},
                 {"A někdy nemáme ani potřebný materiál, abychom jim pomohli, popsali lékaři."},
                 chrf2_eps(),
                 31.22557079},
        ChrfCase{"czech_3",
                 {"Lapali po dechu, jejich životy skončily dřív, než skutečně začaly."},
                 {"Lapali po dechu a pak jejich život skončil - dřív, než skutečně mohl začít, připomněli."},
                 chrf2_eps(),
                 57.15704367}),
    [](const auto& info) { return test_name(info.param.label); });

// ---------------------------------------------------------------- TER, test_ter.py

struct TerCase {
  std::string label;
  Lines hypotheses;
  Lines references;
  double expected;  // a rate: TER / 100
};

class SacreTer : public ::testing::TestWithParam<TerCase> {};

// |score − 100 · expected| < 1e-3, as test_ter.py.
TEST_P(SacreTer, ScoresAsPublished) {
  const TerCase& c = GetParam();
  EXPECT_NEAR(corpus_ter(c.hypotheses, {c.references}).score, 100 * c.expected, 1e-3);
}

INSTANTIATE_TEST_SUITE_P(
    Published, SacreTer,
    ::testing::Values(
        TerCase{"perfect_match", {"aaaa bbbb cccc dddd"}, {"aaaa bbbb cccc dddd"}, 0},
        TerCase{"no_overlap", {"dddd eeee ffff"}, {"aaaa bbbb cccc"}, 1},
        TerCase{"empty_hypothesis", {""}, {"a"}, 1},
        TerCase{"empty_reference", {"a"}, {""}, 1},
        TerCase{"both_empty", {""}, {""}, 0},
        TerCase{"one_shift", {"d e f g h a b c"}, {"a b c d e f g h"}, 1.0 / 8},
        TerCase{"wmt_dev_2019",
                {"wählen Sie \" Bild neu berechnen , \" um beim Ändern der Bildgröße Pixel hinzuzufügen oder zu "
                 "entfernen , damit das Bild ungefähr dieselbe Größe aufweist wie die andere Größe .",
                 "wenn Sie alle Aufgaben im aktuellen Dokument aktualisieren möchten , wählen Sie im Menü des "
                 "Aufgabenbedienfelds die Option \" Alle Aufgaben aktualisieren . \"",
                 "klicken Sie auf der Registerkarte \" Optionen \" auf die Schaltfläche \" Benutzerdefiniert \" und "
                 "geben Sie Werte für \" Fehlerkorrektur-Level \" und \" Y / X-Verhältnis \" ein .",
                 "Sie können beispielsweise ein Dokument erstellen , das ein Auto über die Bühne enthält .",
                 "wählen Sie im Dialogfeld \" Neu aus Vorlage \" eine Vorlage aus und klicken Sie auf \" Neu . \""},
                {"wählen Sie \" Bild neu berechnen , \" um beim Ändern der Bildgröße Pixel hinzuzufügen oder zu "
                 "entfernen , damit die Darstellung des Bildes in einer anderen Größe beibehalten wird .",
                 "wenn Sie alle Aufgaben im aktuellen Dokument aktualisieren möchten , wählen Sie im Menü des "
                 "Aufgabenbedienfelds die Option \" Alle Aufgaben aktualisieren . \"",
                 "klicken Sie auf der Registerkarte \" Optionen \" auf die Schaltfläche \" Benutzerdefiniert \" und "
                 "geben Sie für \" Fehlerkorrektur-Level \" und \" Y / X-Verhältnis \" niedrigere Werte ein .",
                 "Sie können beispielsweise ein Dokument erstellen , das ein Auto enthalt , das sich über die Bühne "
                 "bewegt .",
                 "wählen Sie im Dialogfeld \" Neu aus Vorlage \" eine Vorlage aus und klicken Sie auf \" Neu . \""},
                0.136}),
    [](const auto& info) { return test_name(info.param.label); });

// ---------------------------------------------------------------- TER's tokenizer, test_tokenizer_ter.py

struct TercomCase {
  std::string label;
  std::string input;
  TercomOptions options;
  std::string expected;
};

class SacreTercomTokenizer : public ::testing::TestWithParam<TercomCase> {};

TEST_P(SacreTercomTokenizer, TokenizesAsPublished) {
  EXPECT_EQ(tokenize_tercom(GetParam().input, GetParam().options), GetParam().expected);
}

const TercomOptions kTercomDefault{};
const TercomOptions kTercomNoPunct{false, true, false, false};
const TercomOptions kTercomNormalized{true, false, false, false};
const TercomOptions kTercomAsian{true, false, true, false};

INSTANTIATE_TEST_SUITE_P(
    Published, SacreTercomTokenizer,
    ::testing::Values(TercomCase{"default_plain", "a b c d", kTercomDefault, "a b c d"},
                      TercomCase{"default_empty", "", kTercomDefault, ""},
                      TercomCase{"default_period", "a b c d.", kTercomDefault, "a b c d."},
                      TercomCase{"default_lowercases", "A B C D.", kTercomDefault, "a b c d."},
                      TercomCase{"no_punct_period", "a b c d.", kTercomNoPunct, "a b c d"},
                      TercomCase{"no_punct_mixed", "A ; B ) C : D.", kTercomNoPunct, "a b c d"},
                      TercomCase{"normalized_brackets", "a b (c) d.", kTercomNormalized, "a b ( c ) d ."},
                      TercomCase{"normalized_possessive", "Jim's car.", kTercomNormalized, "jim 's car ."},
                      TercomCase{"normalized_decimal", "4.2", kTercomNormalized, "4.2"},
                      TercomCase{"asian_chinese", "美众院公布对特", kTercomAsian, "美 众 院 公 布 对 特"},
                      TercomCase{"asian_japanese", "りの拳銃を持", kTercomAsian, "りの 拳 銃 を 持"}),
    [](const auto& info) { return test_name(info.param.label); });

// ---------------------------------------------------------------- beyond the Python tests

// chrF++ (word n-grams up to 2) on the README example: sacreBLEU 2.6.0 gives 59.15 (and
// chrF2 59.73) with its defaults, as `sacrebleu -m chrf --chrf-word-order 2` prints them.
TEST(SacreChrfPlusPlus, ReadmeExample) {
  ChrfOptions options;
  char printed[32];
  std::snprintf(printed, sizeof printed, "%.2f", corpus_chrf(kHyps, kRefs, options).score);
  EXPECT_STREQ(printed, "59.73");
  options.word_order = 2;
  const ChrfResult plus = corpus_chrf(kHyps, kRefs, options);
  std::snprintf(printed, sizeof printed, "%.2f", plus.score);
  EXPECT_STREQ(printed, "59.15");
  EXPECT_EQ(plus.name, "chrF2++");
}

// A synthetic corpus (seeded random sentences over a small vocabulary, blocks moved, words
// replaced, dropped or added, then a few hand-made lines: a shift to the front, a reference
// too short for long n-grams, empty lines, non-ASCII case) that reaches the paths the
// published cases leave out. The figures are sacreBLEU 2.6.0's, to every printed digit.
const Lines kMixedHyps = {
    "", "a a", "in a", "a red the park in ball red . cat dog Mr. cat Mr. big in sees",
    "ball red 3.5 , . isn't the sees x-ray a x-ray red", "in 3.5 a the 3.5 . . cat red sees ball isn't",
    "cat a red big 3.5 , x-ray isn't isn't sees cat , ball ,",
    "a cat 3.5 isn't a ball dog the park x-ray red the a", "isn't . red dog . red the ,", ".", "isn't",
    "ball ball DOG", "a Mr. , ball , dog , isn't", "the dog , sees x-ray in in Mr. in sees isn't cat the",
    "big x-ray", "red Mr. sees sees 3.5", "ball Mr. ball", "ball cat park . Mr. the in isn't",
    "in ball dog big dog ball park x-ray ball the a a", "ball", "dog , Mr.", "", ". x-ray a in cat", ".",
    "x y a b", "c a b", "abcdef ghi", "b a b a b a", "Über Straße ÄÖ"};
const Lines kMixedRefs = {
    "", "a big ball a", "", "a red the park in cat in sees Mr. big red . cat dog Mr.",
    "the ball red dog , . isn't sees x-ray a x-ray red", "in 3.5 a the 3.5 . . cat ball isn't red sees",
    "cat a red big cat 3.5 , x-ray isn't isn't isn't cat , ball ,",
    "3.5 a cat isn't ball dog a park x-ray red the a", "isn't . red dog . red the ,", ".", "red", "ball .",
    "a Mr. , dog , ball , isn't", "the isn't the dog , sees x-ray park in in Mr. in sees isn't cat", "3.5 big 3.5",
    "red sees sees Mr. 3.5", "ball dog", "ball cat park . Mr. the in isn't",
    "in big dog ball park x-ray ball dog ball the a a", "ball", "dog , Mr.", "", ". x-ray a in cat", "", "a b x y",
    "a b c", "ab", "a b a b a b", "über strasse äö"};

struct MixedCase {
  std::string label;
  std::function<double()> score;
  double expected;
};

class SacreMixedCorpus : public ::testing::TestWithParam<MixedCase> {};

TEST_P(SacreMixedCorpus, ScoresAsSacreBleu260) { EXPECT_NEAR(GetParam().score(), GetParam().expected, 1e-9); }

BleuOptions bleu_options(BleuTokenizer tokenizer, bool lowercase, BleuSmoothing smoothing) {
  BleuOptions options;
  options.tokenizer = tokenizer;
  options.lowercase = lowercase;
  options.smoothing = smoothing;
  return options;
}

ChrfOptions chrf_options(int word_order, bool eps_smoothing, bool lowercase, bool whitespace) {
  ChrfOptions options;
  options.word_order = word_order;
  options.eps_smoothing = eps_smoothing;
  options.lowercase = lowercase;
  options.whitespace = whitespace;
  return options;
}

double mixed_bleu(const BleuOptions& options) { return corpus_bleu(kMixedHyps, {kMixedRefs}, options).bleu; }
double mixed_chrf(const ChrfOptions& options) { return corpus_chrf(kMixedHyps, {kMixedRefs}, options).score; }
double mixed_ter(const TercomOptions& options) { return corpus_ter(kMixedHyps, {kMixedRefs}, options).score; }

INSTANTIATE_TEST_SUITE_P(
    SacreBleu260, SacreMixedCorpus,
    ::testing::Values(
        MixedCase{"bleu", [] { return mixed_bleu({}); }, 63.5895713736488},
        MixedCase{"bleu_lowercase_intl",
                  [] { return mixed_bleu(bleu_options(BleuTokenizer::intl, true, BleuSmoothing::exp)); },
                  69.75804547513007},
        MixedCase{"bleu_char_floor",
                  [] { return mixed_bleu(bleu_options(BleuTokenizer::character, false, BleuSmoothing::floor)); },
                  78.10096770869696},
        MixedCase{"chrf2", [] { return mixed_chrf({}); }, 73.16943660987668},
        MixedCase{"chrf2_plus_plus", [] { return mixed_chrf(chrf_options(2, false, false, false)); }, 75.20274838188807},
        MixedCase{"chrf2_eps_lowercase", [] { return mixed_chrf(chrf_options(0, true, true, false)); },
                  74.28776095728601},
        MixedCase{"chrf2_whitespace", [] { return mixed_chrf(chrf_options(0, false, false, true)); }, 80.60795647874835},
        MixedCase{"ter", [] { return mixed_ter({}); }, 21.73913043478261},
        MixedCase{"ter_normalized_case_sensitive", [] { return mixed_ter({true, false, false, true}); },
                  22.61904761904762},
        MixedCase{"ter_no_punct", [] { return mixed_ter({false, true, false, false}); }, 24.113475177304963}),
    [](const auto& info) { return info.param.label; });

// The edits of each line (lowercased, split on spaces), as sacreBLEU's translation_edit_rate
// counts them: every shift, the front and zero-gain ones included, must agree.
TEST(SacreMixedCorpusTer, EditsOfEveryLine) {
  const std::vector<long> expected = {0, 2, 2, 3, 2, 1, 2, 3, 0, 0, 1, 2, 1, 3, 2, 1, 2, 0, 1, 0, 0, 0, 0, 1, 1, 1, 2, 1, 1};
  ASSERT_EQ(expected.size(), kMixedHyps.size());
  for (size_t s = 0; s < kMixedHyps.size(); ++s)
    EXPECT_EQ(translation_edit_rate(split_python_whitespace(lowercase_full(kMixedHyps[s])),
                                    split_python_whitespace(lowercase_full(kMixedRefs[s])))
                  .first,
              expected[s])
        << kMixedHyps[s] << " | " << kMixedRefs[s];
}

// Pairs where a shift to the front of the hypothesis is the best one, and pairs where the best
// shift left at the end gains nothing (and so is not made): sacreBLEU 2.6.0 counts 2 edits
// for each.
TEST(SacreTerShifts, FrontShiftsAndShiftsThatGainNothing) {
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"f d e a a b", "d e a f a"}, {"a f d d a f", "a f f d c a"}, {"a a e b a", "a a a b e"}, {"a b c", "c b f"}};
  for (const auto& [hypothesis, reference] : pairs)
    EXPECT_EQ(translation_edit_rate(split_python_whitespace(hypothesis), split_python_whitespace(reference)),
              (std::pair<long, long>{2, static_cast<long>(split_python_whitespace(reference).size())}))
        << hypothesis << " | " << reference;
}

// The signatures are sacreBLEU's, field for field, with rnnsearch's version.
TEST(SacreSignatures, AreSacreBleusFields) {
  const std::string version = "|version:" + metric_version();
  EXPECT_EQ(bleu_signature({}, 2), "BLEU|nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp" + version);
  BleuOptions floor;
  floor.smoothing = BleuSmoothing::floor;
  floor.lowercase = true;
  floor.tokenizer = BleuTokenizer::intl;
  EXPECT_EQ(bleu_signature(floor, 1), "BLEU|nrefs:1|case:lc|eff:no|tok:intl|smooth:floor[0.10]" + version);
  BleuOptions add_k;
  add_k.smoothing = BleuSmoothing::add_k;
  add_k.smooth_value = 2;
  add_k.effective_order = true;
  EXPECT_EQ(bleu_signature(add_k, 1), "BLEU|nrefs:1|case:mixed|eff:yes|tok:13a|smooth:add-k[2.00]" + version);
  EXPECT_EQ(chrf_signature({}, 1), "chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no" + version);
  ChrfOptions plus;
  plus.word_order = 2;
  plus.eps_smoothing = true;
  EXPECT_EQ(chrf_signature(plus, 1), "chrF2++|nrefs:1|case:mixed|eff:no|nc:6|nw:2|space:no" + version);
  EXPECT_EQ(ter_signature({}, 1), "TER|nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no" + version);
  EXPECT_EQ(ter_signature({true, true, true, true}, 1),
            "TER|nrefs:1|case:mixed|tok:tercom|norm:yes|punct:no|asian:yes" + version);
  EXPECT_EQ(metric_version().rfind("rnnsearch-", 0), 0u);
}

// The BLEU tokenizers, as sacreBLEU 2.6.0's Tokenizer13a, TokenizerV14International and
// TokenizerChar return these lines.
struct TokenizerCase {
  std::string label, input, v13a, intl;
};

class SacreBleuTokenizers : public ::testing::TestWithParam<TokenizerCase> {};

TEST_P(SacreBleuTokenizers, TokenizeAsSacreBleu) {
  EXPECT_EQ(tokenize_13a(GetParam().input), GetParam().v13a);
  EXPECT_EQ(tokenize_intl(GetParam().input), GetParam().intl);
}

INSTANTIATE_TEST_SUITE_P(
    SacreBleu260, SacreBleuTokenizers,
    ::testing::Values(
        TokenizerCase{"prices", "Hello, world! It costs $3.50 (or 1,000 yen).",
                      "Hello , world ! It costs $ 3.50 ( or 1,000 yen ) .",
                      "Hello , world ! It costs $ 3.50 ( or 1,000 yen ) ."},
        TokenizerCase{"entities_and_dashes", "Jim's e-mail: jim@x.org; 1990-2000 &amp; &quot;more&quot;",
                      "Jim's e-mail : jim @ x . org ; 1990 - 2000 & \" more \"",
                      "Jim ' s e - mail : jim @ x . org ; 1990-2000 & amp ; & quot ; more & quot ;"},
        TokenizerCase{"adjacent_periods", "a.,b x..y 5.", "a . , b x . . y 5 .", "a . , b x . . y 5."},
        TokenizerCase{"skipped_and_unicode", "<skipped>Über 3-4 Äpfel…", "Über 3 - 4 Äpfel…",
                      "< skipped > Über 3-4 Äpfel …"},
        TokenizerCase{"guillemets_and_dash", "Das ist «gut»—oder?", "Das ist «gut»—oder ?",
                      "Das ist « gut » — oder ?"},
        TokenizerCase{"numbers", "1,000.5 und 2.", "1,000.5 und 2 .", "1,000.5 und 2."},
        TokenizerCase{"ellipsis", "wait...", "wait . . .", "wait . . ."},
        TokenizerCase{"unicode_spaces", "A\u00a0B\u3000C", "A B C", "A B C"}),
    [](const auto& info) { return test_name(info.param.label); });

TEST(SacreBleuTokenizersChar, EveryCharacterSpacesIncluded) {
  EXPECT_EQ(tokenize_char("A\u00a0B\u3000C"), "A \u00a0 B \u3000 C");
  EXPECT_EQ(tokenize_char("ab c"), "a b   c");
  EXPECT_EQ(bleu_tokens("ab c", BleuTokenizer::character), (std::vector<std::string>{"a", "b", "c"}));
}

// Python's str.split and str.lower, which every metric runs.
TEST(SacrePython, WhitespaceAndLowercase) {
  EXPECT_EQ(split_python_whitespace("\x1c" "a\u2028b\u00a0\u200bc\u3000"),
            (std::vector<std::string>{"a", "b", "\u200b" "c"}));  // U+200B is not whitespace
  EXPECT_EQ(rstrip_python("a b \u3000\t"), "a b");
  EXPECT_EQ(lowercase_full("ÄÖÜ ΟΔΟΣ İ"), "äöü οδος i\u0307");  // final sigma: ς
}

TEST(SacreErrors, ReferenceStreamOfAnotherLength) {
  EXPECT_THROW(corpus_bleu({"a", "b"}, {{"a"}}, {}), Error);
  EXPECT_THROW(corpus_chrf({"a", "b"}, {{"a", "b"}, {"a"}}), Error);
  EXPECT_THROW(corpus_ter({"a"}, {{}}), Error);
  EXPECT_THROW(parse_bleu_tokenizer("moses"), Error);
  EXPECT_THROW(parse_bleu_smoothing("add-one"), Error);
}

}  // namespace
}  // namespace rnnsearch
