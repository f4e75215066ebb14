// Word alignment as links (align/links.h, align/aer.h): Pharaoh and gold parsing and their
// errors, the five symmetrizations on hand-worked pairs, and AER, precision and recall on
// hand-computed corpora.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "rnnsearch/align/aer.h"
#include "rnnsearch/align/aligner.h"
#include "rnnsearch/align/links.h"
#include "support/error_of.h"

namespace rnnsearch {
namespace {

using align::GoldLinks;
using align::Links;
using align::Symmetrization;
using test::error_of;

// Links from Pharaoh text, for writing the expectations.
Links links(const std::string& text) { return align::parse_pharaoh(text, "test", 1); }

TEST(AlignLinks, PharaohIsParsedSortedOnceAndWrittenBack) {
  const Links parsed = align::parse_pharaoh("  3-2 0-0\t1-4 0-0 \r", "f", 1);
  ASSERT_EQ(parsed.size(), 3u);
  EXPECT_EQ(align::pharaoh_text(parsed), "0-0 1-4 3-2");
  EXPECT_TRUE(align::parse_pharaoh("", "f", 1).empty());
  EXPECT_TRUE(align::parse_pharaoh("   ", "f", 1).empty());
  EXPECT_EQ(align::pharaoh_text({}), "");
}

TEST(AlignLinks, BadPharaohTokensAreOneLineErrorsNamingFileLineAndToken) {
  for (const std::string bad : {"1x2", "1-", "-1", "1-2-3", "a-b", "1p2", "+1-2", "1--2", "99999999999-1"}) {
    SCOPED_TRACE(bad);
    const std::string message = error_of([&] { align::parse_pharaoh("0-0 " + bad + " 2-2", "out.align", 7); });
    EXPECT_EQ(message.rfind("out.align:7: bad link '" + bad + "'", 0), 0u) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos);
  }
}

TEST(AlignLinks, GoldHasSureAndPossibleLinksOneBasedOrZeroBased) {
  // 1-based: "1-1" sure → 0-0; "3p2" possible → 2-1; every sure link is also possible
  const GoldLinks gold = align::parse_gold("1-1 3p2 2-3 ", false, "gold", 1);
  EXPECT_EQ(align::pharaoh_text(gold.sure), "0-0 1-2");
  EXPECT_EQ(align::pharaoh_text(gold.possible), "0-0 1-2 2-1");
  const GoldLinks zero = align::parse_gold("0-0 2p1", true, "gold", 1);
  EXPECT_EQ(align::pharaoh_text(zero.sure), "0-0");
  EXPECT_EQ(align::pharaoh_text(zero.possible), "0-0 2-1");
}

TEST(AlignLinks, BadGoldLinksNameFileAndLine) {
  const std::string position_zero = error_of([] { align::parse_gold("1-1 0p2", false, "rwth.talp", 12); });
  EXPECT_EQ(position_zero.rfind("rwth.talp:12: link '0p2' has position 0 in a 1-based gold file", 0), 0u)
      << position_zero;
  const std::string bad = error_of([] { align::parse_gold("1-1 2s3", false, "rwth.talp", 3); });
  EXPECT_EQ(bad.rfind("rwth.talp:3: bad link '2s3' (expected i-j for a sure link or ipj for a possible one", 0), 0u)
      << bad;
}

// Forward (source→target) and reverse links of a 6 × 6 pair on which the five methods give
// five different results. By hand, as atools:
//   intersection {0-0 1-1 3-3}; union adds 0-3 1-2 2-2 3-4 4-1 5-5.
//   grow-diag, one pass over 0-3 1-2 2-2 3-4 4-1 5-5: 0-3 both words aligned, no; 1-2 target
//     2 unaligned, next to 1-1: in; 2-2 next to 1-2 (just added): in; 3-4 next to 3-3: in;
//     4-1 no neighbour in (3-0 3-1 3-2 4-0 4-2 5-x); 5-5 no neighbour in. A second pass adds
//     nothing.
//   -final: forward 4-1 (source 4 unaligned) and 5-5 in; reverse 0-3 both aligned: out.
//   -final-and: 4-1's target 1 is aligned: out; 5-5 both unaligned: in.
const Links kForward = links("0-0 1-1 1-2 3-3 4-1 5-5");
const Links kReverse = links("0-0 0-3 1-1 2-2 3-3 3-4");

TEST(AlignSymmetrize, FiveMethodsOnAHandWorkedPair) {
  const auto run = [](Symmetrization method) {
    return align::pharaoh_text(align::symmetrize(kForward, kReverse, 6, 6, method));
  };
  EXPECT_EQ(run(Symmetrization::intersect), "0-0 1-1 3-3");
  EXPECT_EQ(run(Symmetrization::union_), "0-0 0-3 1-1 1-2 2-2 3-3 3-4 4-1 5-5");
  EXPECT_EQ(run(Symmetrization::grow_diag), "0-0 1-1 1-2 2-2 3-3 3-4");
  EXPECT_EQ(run(Symmetrization::grow_diag_final), "0-0 1-1 1-2 2-2 3-3 3-4 4-1 5-5");
  EXPECT_EQ(run(Symmetrization::grow_diag_final_and), "0-0 1-1 1-2 2-2 3-3 3-4 5-5");
}

// grow-diag takes the candidates in (source, target) order, each added at once: 0-1 aligns
// target 1, 1-0 aligns source 1, so 1-1 (both words then aligned) stays out, although it too
// neighbours 0-0.
TEST(AlignSymmetrize, GrowDiagTakesCandidatesInOrder) {
  EXPECT_EQ(align::pharaoh_text(align::symmetrize(links("0-0 0-1 1-1"), links("0-0 1-0"), 2, 2,
                                                  Symmetrization::grow_diag)),
            "0-0 0-1 1-0");
}

// The final steps take the forward links before the reverse ones: with nothing in common,
// -final-and keeps the forward 0-0 and then refuses the reverse 0-1 (source 0 now aligned);
// -final keeps both (target 1 is still unaligned).
TEST(AlignSymmetrize, FinalStepsTakeForwardLinksFirst) {
  const auto run = [](const Links& f, const Links& r, Symmetrization method) {
    return align::pharaoh_text(align::symmetrize(f, r, 1, 2, method));
  };
  EXPECT_EQ(run(links("0-0"), links("0-1"), Symmetrization::grow_diag_final_and), "0-0");
  EXPECT_EQ(run(links("0-1"), links("0-0"), Symmetrization::grow_diag_final_and), "0-1");
  EXPECT_EQ(run(links("0-0"), links("0-1"), Symmetrization::grow_diag_final), "0-0 0-1");
  EXPECT_EQ(run(links("0-0"), links("0-1"), Symmetrization::grow_diag), "");
}

TEST(AlignSymmetrize, NamesAndLinksOutsideThePair) {
  for (const char* name : {"intersect", "union", "grow-diag", "grow-diag-final", "grow-diag-final-and"})
    EXPECT_STREQ(align::symmetrization_name(align::parse_symmetrization(name)), name);
  EXPECT_EQ(error_of([] { align::parse_symmetrization("gdfa"); }),
            "--symmetrize must be intersect, union, grow-diag, grow-diag-final or grow-diag-final-and, not 'gdfa'");
  EXPECT_EQ(error_of([] { align::symmetrize(links("0-0 2-1"), links("0-0"), 2, 2, Symmetrization::union_); }),
            "link 2-1 is outside a pair of 2 source and 2 target words");
}

// Two sentences, counted by hand:
//   1: A = {0-0 2-2 2-1}, S = {0-0 1-1}, P = S + {2-2}: |A| 3, |S| 2, |P| 3, |A∩S| 1, |A∩P| 2
//   2: A = {0-1},         S = {0-1},     P = S + {1-0}: |A| 1, |S| 1, |P| 2, |A∩S| 1, |A∩P| 1
// Summed: |A| 4, |S| 3, |P| 5, |A∩S| 2, |A∩P| 3, so AER = 1 − (2 + 3) / (4 + 3) = 2/7,
// precision 3/4, recall 2/3. (The mean of the sentences' AERs, 0.4 and 0, would be 0.2.)
TEST(AlignAer, CorpusCountsAreSummedNotAveraged) {
  const align::AlignmentCounts counts =
      align::evaluate_alignments({"1-1 2-2 3p3", "1-2 2p1"}, {"0-0 2-2 2-1", "0-1"}, false, false, "gold", "links");
  EXPECT_EQ(counts.sentences, 2u);
  EXPECT_EQ(counts.links, 4u);
  EXPECT_EQ(counts.sure, 3u);
  EXPECT_EQ(counts.possible, 5u);
  EXPECT_EQ(counts.links_sure, 2u);
  EXPECT_EQ(counts.links_possible, 3u);
  EXPECT_DOUBLE_EQ(counts.aer(), 2.0 / 7.0);
  EXPECT_DOUBLE_EQ(counts.precision(), 0.75);
  EXPECT_DOUBLE_EQ(counts.recall(), 2.0 / 3.0);
  EXPECT_EQ(counts.summary(), "AER 28.57  precision 75.00  recall 66.67  (2 sentences, 4 links, 3 sure, 5 possible)");
}

// A sure link the gold's possible list lacks still counts as possible; perfect links give
// AER 0; no links at all: precision is undefined.
TEST(AlignAer, SureLinksArePossibleAndEdgeCases) {
  align::AlignmentCounts counts;
  counts.add(links("0-0 1-1"), GoldLinks{links("0-0 1-1"), {}});
  EXPECT_EQ(counts.possible, 2u);
  EXPECT_DOUBLE_EQ(counts.aer(), 0.0);
  align::AlignmentCounts empty;
  empty.add({}, GoldLinks{links("0-0"), links("0-0")});
  EXPECT_TRUE(std::isnan(empty.precision()));
  EXPECT_DOUBLE_EQ(empty.recall(), 0.0);
  EXPECT_DOUBLE_EQ(empty.aer(), 1.0);
  EXPECT_EQ(empty.summary(), "AER 100.00  precision n/a  recall 0.00  (1 sentences, 0 links, 1 sure, 1 possible)");
}

// Links of more lines than the gold: an error unless tail, which scores the last lines (and
// names them by their own line numbers in errors).
TEST(AlignAer, TailScoresTheLastLines) {
  const std::vector<std::string> gold = {"1-1"}, longer = {"5-5", "0-0"};
  EXPECT_EQ(error_of([&] { align::evaluate_alignments(gold, longer, false, false, "g", "l"); }),
            "l has 2 lines and g 1 (--tail scores its last 1)");
  EXPECT_EQ(error_of([&] { align::evaluate_alignments({"1-1", "1-1"}, {"0-0"}, false, true, "g", "l"); }),
            "l has 1 lines and g 2");
  EXPECT_DOUBLE_EQ(align::evaluate_alignments(gold, longer, false, true, "g", "l").aer(), 0.0);
  EXPECT_EQ(error_of([&] { align::evaluate_alignments(gold, {"0-0", "x"}, false, true, "g", "l"); })
                .rfind("l:2: bad link 'x'", 0),
            0u);
}

// Source "a b" (+ </s>: 3 columns), target "x y z" (+ </s>: 4 rows):
//   x: 0.6 0.3 0.1   argmax a;  ≥ 0.3: a, b
//   y: 0.2 0.3 0.5   argmax </s>: no link;  ≥ 0.3: b
//   z: 0.4 0.4 0.2   a tie: the leftmost, a;  ≥ 0.3: a, b
//   </s> row: 0.9 0.05 0.05, never linked
Alignment attention() { return {4, 3, {0.6f, 0.3f, 0.1f, 0.2f, 0.3f, 0.5f, 0.4f, 0.4f, 0.2f, 0.9f, 0.05f, 0.05f}}; }

TEST(AlignReading, ArgmaxAndThresholdNeverLinkEndOfSentence) {
  EXPECT_EQ(align::pharaoh_text(align::read_links(attention(), align::parse_align_method("argmax"))), "0-0 0-2");
  EXPECT_EQ(align::pharaoh_text(align::read_links(attention(), align::parse_align_method("threshold:0.3"))),
            "0-0 0-2 1-0 1-1 1-2");
  EXPECT_EQ(align::pharaoh_text(align::read_links(attention(), align::parse_align_method("threshold:0.45"))), "0-0");
  // A reverse model's matrix (rows source words + </s>) is read the same way: each source word
  // to its most attended target word, here a → </s> (no link) and b → z; swapped, 1-2.
  const Alignment t = align::transposed(attention());
  ASSERT_EQ(t.rows, 3);
  ASSERT_EQ(t.cols, 4);
  EXPECT_FLOAT_EQ(t.at(2, 1), 0.5f);
  EXPECT_EQ(align::pharaoh_text(align::swapped(align::read_links(t, align::parse_align_method("argmax")))), "1-2");
}

// Its columns: a → </s> (0.9: no link), b → z (0.4); a column whose best weight is below
// kColumnFloor links nothing. One matrix with --symmetrize: its rows' argmax (0-0 0-2) and
// its columns' (1-2) are the two directions.
TEST(AlignReading, OneMatrixReadBothWaysIsSymmetrized) {
  EXPECT_EQ(align::pharaoh_text(align::column_links(attention())), "1-2");
  const Alignment faint{2, 3, {0.05f, 0.5f, 0.45f, 0.05f, 0.5f, 0.45f}};  // a's best weight 0.05, b's 0.5 (the topmost)
  EXPECT_EQ(align::pharaoh_text(align::column_links(faint)), "1-0");
  const align::AlignMethod argmax = align::parse_align_method("argmax");
  const auto links = [&](std::optional<Symmetrization> how) {
    return align::pharaoh_text(align::pair_links(attention(), nullptr, argmax, how));
  };
  EXPECT_EQ(links(std::nullopt), "0-0 0-2");  // rows only, as before
  EXPECT_EQ(links(Symmetrization::intersect), "");
  EXPECT_EQ(links(Symmetrization::union_), "0-0 0-2 1-2");
  // grow-diag-final-and: nothing to grow from an empty intersection; then each link whose two
  // words are both unaligned, rows first: 0-0, not 0-2 (a is taken), 1-2
  EXPECT_EQ(links(Symmetrization::grow_diag_final_and), "0-0 1-2");
  // two models averaged, then read both ways: the mean of the matrix and itself is the matrix
  const Alignment reverse = align::transposed(attention());
  EXPECT_EQ(align::pharaoh_text(align::pair_links(attention(), &reverse, align::parse_align_method("average"),
                                                  Symmetrization::union_)),
            "0-0 0-2 1-2");
}

TEST(AlignReading, MethodNames) {
  for (const char* name : {"argmax", "threshold:0.3", "average", "average-threshold:0.25", "threshold:1"})
    EXPECT_EQ(align::align_method_name(align::parse_align_method(name)), name);
  EXPECT_TRUE(align::parse_align_method("average").average);
  EXPECT_FALSE(align::parse_align_method("average").threshold);
  for (const char* bad : {"", "max", "threshold", "threshold:", "threshold:0", "threshold:1.5", "threshold:0.3x",
                          "average-argmax", "averagethreshold:0.3", "average-"}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(error_of([&] { align::parse_align_method(bad); }),
              std::string("--method must be argmax, threshold:X, average or average-threshold:X (0 < X <= 1), not '") +
                  bad + "'");
  }
}

TEST(AlignReading, ParallelLinesSplitAtTheSeparatorToken) {
  std::string source, target;
  align::split_parallel_line("a b ||| x y", source, target, "f", 1);
  EXPECT_EQ(source, "a b ");
  EXPECT_EQ(target, " x y");
  align::split_parallel_line("a|||b ||| c", source, target, "f", 1);  // "a|||b" is a word
  EXPECT_EQ(source, "a|||b ");
  EXPECT_EQ(target, " c");
  align::split_parallel_line("a |||", source, target, "f", 1);
  EXPECT_EQ(target, "");
  EXPECT_EQ(error_of([&] { align::split_parallel_line("a||| b", source, target, "in.txt", 4); }),
            "in.txt:4: no ' ||| ' between source and target (expected SOURCE ||| TARGET)");
}

TEST(AlignReading, SymmetrizationIsResolvedForOneModelOrTwo) {
  const align::AlignMethod argmax = align::parse_align_method("argmax"), average = align::parse_align_method("average");
  EXPECT_EQ(align::resolved_symmetrization(true, argmax, std::nullopt), Symmetrization::grow_diag_final_and);
  EXPECT_EQ(align::resolved_symmetrization(true, argmax, Symmetrization::union_), Symmetrization::union_);
  EXPECT_FALSE(align::resolved_symmetrization(true, average, std::nullopt));
  EXPECT_FALSE(align::resolved_symmetrization(false, argmax, std::nullopt));
  EXPECT_EQ(error_of([&] { align::resolved_symmetrization(false, average, std::nullopt); }),
            "--method average averages two models' attention: give --reverse-model");
  // one matrix (one model's, or the average of two) read both ways by argmax
  EXPECT_EQ(align::resolved_symmetrization(false, argmax, Symmetrization::intersect), Symmetrization::intersect);
  EXPECT_EQ(align::resolved_symmetrization(true, average, Symmetrization::union_), Symmetrization::union_);
  const align::AlignMethod threshold = align::parse_align_method("threshold:0.3");
  EXPECT_EQ(align::resolved_symmetrization(true, threshold, std::nullopt), Symmetrization::grow_diag_final_and);
  EXPECT_EQ(error_of([&] { align::resolved_symmetrization(false, threshold, Symmetrization::intersect); }),
            "--symmetrize on one matrix (one model) reads its rows and its columns by argmax, --method threshold:0.3 "
            "reads its cells: give one");
  EXPECT_EQ(error_of([&] {
              align::resolved_symmetrization(true, align::parse_align_method("average-threshold:0.3"),
                                             Symmetrization::intersect);
            }),
            "--symmetrize on one matrix (the two models' average) reads its rows and its columns by argmax, --method "
            "average-threshold:0.3 reads its cells: give one");
}

}  // namespace
}  // namespace rnnsearch
