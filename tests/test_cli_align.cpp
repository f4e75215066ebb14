// rnnsearch align and align-eval, run as the real binary on the tiny random model of
// support/cli.h and a reverse one: the links are score's hard alignment without </s>, the
// two inputs agree, two directions combine as the library's symmetrization of each alone,
// bad lines and options; align-eval's line, --tail and errors.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "rnnsearch/align/links.h"
#include "support/cli.h"

namespace rnnsearch {
namespace {

using namespace test;
using align::Link;
using align::Links;

// The tiny model's attention puts every target word of the last pair on the source </s>.
const std::string kSrc = "a b c\nd e\nf a b c d\nb\nf b\n", kTgt = "x y\nz w v\ny y x z\nv w\ny x v v\n";
const std::vector<size_t> kSourceWords = {3, 2, 5, 1, 2}, kTargetWords = {2, 3, 4, 2, 4};

class AlignCli : public Cli {
 protected:
  static void SetUpTestSuite() {
    Cli::SetUpTestSuite();
    write_model_dir(reverse_model(), {"x", "y", "z", "w", "v"}, {"a", "b", "c", "d", "e", "f"}, -30.0f);
  }
  static std::string reverse_model() { return dir_->path("reverse"); }
  static std::string src() { return write("align.src", kSrc); }
  static std::string tgt() { return write("align.tgt", kTgt); }

  // align's output, each line parsed; fails the test unless it ran cleanly, a line per pair.
  static std::vector<Links> aligned(const std::string& arguments, const std::string& stdin_file = "") {
    const Result r = run("align " + arguments, stdin_file);
    EXPECT_EQ(r.status, 0) << r.err_text;
    EXPECT_EQ(r.out.size(), kSourceWords.size()) << r.out_text;
    std::vector<Links> links;
    for (size_t k = 0; k < r.out.size(); ++k) {
      links.push_back(align::parse_pharaoh(r.out[k], "out", k + 1));
      EXPECT_EQ(align::pharaoh_text(links.back()), r.out[k]) << "sorted, once each";
    }
    return links;
  }
};

// One model, argmax: score --alignment hard's pairs less those on the source </s> column, on
// --src/--tgt and on 'SOURCE ||| TARGET' lines from a file or stdin alike.
TEST_F(AlignCli, ArgmaxLinksAreScoresHardAlignmentWithoutEndOfSentence) {
  const Result scored = run("score -m " + model() + " --src " + src() + " --tgt " + tgt() + " --alignment hard");
  ASSERT_EQ(scored.status, 0) << scored.err_text;
  const std::vector<Links> links = aligned("-m " + model() + " --src " + src() + " --tgt " + tgt());
  ASSERT_EQ(links.size(), scored.out.size());
  size_t dropped = 0;
  for (size_t k = 0; k < links.size(); ++k) {
    Links expected;
    for (const std::string& pair : words(split(scored.out[k], " ||| ").at(1))) {
      const Link link = align::parse_pharaoh(pair, "score", k + 1).at(0);
      if (static_cast<size_t>(link.source) < kSourceWords[k]) expected.push_back(link);
      else ++dropped;
    }
    EXPECT_EQ(align::pharaoh_text(links[k]), align::pharaoh_text(align::sorted_links(expected))) << k;
  }
  EXPECT_EQ(dropped, 4u) << "the last pair's, which must not become links";
  EXPECT_TRUE(links.back().empty());

  std::string pairs;
  const std::vector<std::string> s = lines_of(kSrc), t = lines_of(kTgt);
  for (size_t k = 0; k < s.size(); ++k) pairs += s[k] + " ||| " + t[k] + "\n";
  const std::string bitext = write("align.bitext", pairs);
  EXPECT_EQ(aligned("-m " + model() + " -i " + bitext + " --batch-size 1 --threads 2"), links);
  EXPECT_EQ(aligned("-m " + model(), bitext), links) << "stdin";
}

// Two models: each --symmetrize method gives the library's symmetrization of the model's
// links and the reverse model's alone (run on the swapped files, then transposed).
TEST_F(AlignCli, TwoDirectionsAreSymmetrizedAsEachAlone) {
  const std::vector<Links> forward = aligned("-m " + model() + " --src " + src() + " --tgt " + tgt());
  const std::vector<Links> backward = aligned("-m " + reverse_model() + " --src " + tgt() + " --tgt " + src());
  bool differ = false;
  for (const char* name : {"intersect", "union", "grow-diag", "grow-diag-final", "grow-diag-final-and"}) {
    SCOPED_TRACE(name);
    const std::vector<Links> both = aligned("-m " + model() + " --reverse-model " + reverse_model() + " --src " +
                                            src() + " --tgt " + tgt() + " --symmetrize " + name);
    for (size_t k = 0; k < both.size(); ++k) {
      Links reverse;
      for (const Link& l : backward[k]) reverse.push_back({l.target, l.source});
      const Links expected = align::symmetrize(forward[k], align::sorted_links(reverse), static_cast<int>(kSourceWords[k]),
                                               static_cast<int>(kTargetWords[k]), align::parse_symmetrization(name));
      EXPECT_EQ(both[k], expected) << k;
      differ = differ || both[k] != forward[k];
    }
  }
  EXPECT_TRUE(differ) << "the reverse model changed nothing: the test would not see it ignored";
  // The default is grow-diag-final-and.
  EXPECT_EQ(aligned("-m " + model() + " --reverse-model " + reverse_model() + " --src " + src() + " --tgt " + tgt()),
            aligned("-m " + model() + " --reverse-model " + reverse_model() + " --src " + src() + " --tgt " + tgt() +
                    " --symmetrize grow-diag-final-and"));
}

// threshold:X links every word cell of weight ≥ X (a tiny X: all of them; 1: none of a random
// model's); average reads the mean of both matrices, one link at most per target word.
TEST_F(AlignCli, ThresholdAndAverageMethods) {
  const std::vector<Links> all = aligned("-m " + model() + " --src " + src() + " --tgt " + tgt() +
                                         " --method threshold:0.000001");
  for (size_t k = 0; k < all.size(); ++k) EXPECT_EQ(all[k].size(), kSourceWords[k] * kTargetWords[k]) << k;
  for (const Links& none : aligned("-m " + model() + " --src " + src() + " --tgt " + tgt() + " --method threshold:1"))
    EXPECT_TRUE(none.empty());
  const std::vector<Links> average = aligned("-m " + model() + " --reverse-model " + reverse_model() + " --src " +
                                             src() + " --tgt " + tgt() + " --method average");
  for (size_t k = 0; k < average.size(); ++k) {
    EXPECT_LE(average[k].size(), kTargetWords[k]);
    for (size_t a = 1; a < average[k].size(); ++a)
      for (size_t b = 0; b < a; ++b) EXPECT_NE(average[k][a].target, average[k][b].target) << k;
  }
  const std::vector<Links> low = aligned("-m " + model() + " --reverse-model " + reverse_model() + " --src " + src() +
                                         " --tgt " + tgt() + " --method average-threshold:0.000001");
  for (size_t k = 0; k < low.size(); ++k) EXPECT_EQ(low[k].size(), kSourceWords[k] * kTargetWords[k]) << k;
}

// A pair that cannot be scored: an empty line and a warning naming the file and line; a line
// without ' ||| ' and options that do not fit are one-line errors.
TEST_F(AlignCli, BadPairsAndOptions) {
  const std::string bitext = write("bad.bitext", "a b ||| x y\nc |||\nd \xff ||| z\n||| w\n");
  const Result r = run("align -m " + model() + " -i " + bitext);
  ASSERT_EQ(r.status, 0) << r.err_text;
  ASSERT_EQ(r.out.size(), 4u) << r.out_text;
  EXPECT_NE(r.out[0], "");
  EXPECT_EQ(r.out[1], "");
  EXPECT_EQ(r.out[2], "");
  EXPECT_NE(r.err_text.find(bitext + ":2: warning: empty target"), std::string::npos) << r.err_text;
  EXPECT_NE(r.err_text.find(bitext + ":3: warning: invalid UTF-8"), std::string::npos) << r.err_text;
  EXPECT_NE(r.err_text.find(bitext + ":4: warning: empty source"), std::string::npos) << r.err_text;

  const std::vector<std::pair<std::string, std::string>> refused = {
      {"-i " + write("nosep.bitext", "a ||| x\nb|||y\n"), "nosep.bitext:2: no ' ||| ' between source and target"},
      {"--src " + src() + " --tgt " + tgt() + " --method average", "give --reverse-model"},
      {"--src " + src() + " --tgt " + tgt() + " --method threshold:0.2 --symmetrize union", "reads its cells: give one"},
      {"--src " + src() + " --tgt " + tgt() + " --method threshold:0", "--method must be argmax, threshold:X"},
      {"--src " + src() + " --tgt " + tgt() + " --method argmax --symmetrize gdfa", "--symmetrize must be"},
      {"--src " + src() + " -i " + src(), "--src and --tgt go together"},
      {"--src " + src() + " --tgt " + write("short.tgt", "x\n"), "differ in length"},
  };
  for (const auto& [arguments, message] : refused) {
    SCOPED_TRACE(arguments);
    const Result e = run("align -m " + model() + " " + arguments);
    EXPECT_EQ(e.status, 1);
    ASSERT_EQ(e.errors.size(), 1u) << e.err_text;
    EXPECT_EQ(e.errors[0].rfind("rnnsearch align: error: ", 0), 0u) << e.errors[0];
    EXPECT_NE(e.errors[0].find(message), std::string::npos) << e.errors[0];
    EXPECT_TRUE(e.out.empty());
  }
}

// --hmm: no model; the links are the library's hmm_align of the same pairs, the bad pairs
// warned about as with a model; --hmm and a model are refused together, and neither.
TEST_F(AlignCli, HmmAlignsWithoutAModel) {
  const std::string bitext = write("hmm.bitext", "das Haus ||| the house\nein Buch ||| a book\ndas Buch ||| the book\n"
                                                 "ein Haus ||| a house\nd \xff ||| z\n||| w\n");
  const Result r = run("align --hmm -i " + bitext + " --symmetrize intersect --quiet");
  ASSERT_EQ(r.status, 0) << r.err_text;
  ASSERT_EQ(r.out.size(), 6u) << r.out_text;
  for (size_t k = 0; k < 4; ++k) EXPECT_EQ(r.out[k], "0-0 1-1") << k;
  EXPECT_EQ(r.out[4], "");
  EXPECT_EQ(r.out[5], "");
  EXPECT_NE(r.err_text.find(bitext + ":5: warning: invalid UTF-8 in the source"), std::string::npos) << r.err_text;
  EXPECT_NE(r.err_text.find(bitext + ":6: warning: empty source"), std::string::npos) << r.err_text;
  for (const auto& [arguments, message] : std::vector<std::pair<std::string, std::string>>{
           {"--hmm -m " + model(), "give --model (and --reverse-model), --hmm or --hmm-tables"},
           {"--src " + src() + " --tgt " + tgt(), "give --model (and --reverse-model), --hmm or --hmm-tables"},
           {"--hmm --reverse-model " + reverse_model(), "--hmm aligns without models"},
           {"--hmm --prior -1", "prior"},
           {"--hmm --null-probability 1", "null-probability"}}) {
    SCOPED_TRACE(arguments);
    const Result e = run("align " + arguments + " -i " + bitext);
    EXPECT_EQ(e.status, 1);
    ASSERT_EQ(e.errors.size(), 1u) << e.err_text;
    EXPECT_NE(e.errors[0].find(message), std::string::npos) << e.errors[0];
  }
}

// --hmm --save-hmm DIR keeps what it learnt; --hmm-tables DIR aligns with it without training:
// the training pairs as --hmm did, and new pairs (unseen words too) a chunk at a time.
TEST_F(AlignCli, HmmTablesSavedAlignAsTrainingDid) {
  const std::string bitext = write("tables.bitext", "das Haus ||| the house\nein Buch ||| a book\n"
                                                    "das Buch ||| the book\nein Haus ||| a house\n");
  const std::string tables = dir_->path("tables");
  const Result trained = run("align --hmm -i " + bitext + " --save-hmm " + tables + " --quiet");
  ASSERT_EQ(trained.status, 0) << trained.err_text;
  for (const char* file : {"hmm.npz", "source.words", "target.words"})
    EXPECT_TRUE(std::filesystem::exists(tables + "/" + file)) << file;
  EXPECT_EQ(file_text(tables + "/source.words"), "das\nhaus\nein\nbuch\n");
  const Result reused = run("align --hmm-tables " + tables + " -i " + bitext + " --quiet");
  ASSERT_EQ(reused.status, 0) << reused.err_text;
  EXPECT_EQ(reused.out, trained.out);
  const Result fresh = run("align --hmm-tables " + tables + " -i " +
                           write("new.bitext", "das Buch ||| the book\nein neues Haus ||| a new house\n||| x\n") +
                           " --symmetrize intersect --quiet");
  ASSERT_EQ(fresh.status, 0) << fresh.err_text;
  ASSERT_EQ(fresh.out.size(), 3u);
  EXPECT_EQ(fresh.out[0], "0-0 1-1");
  EXPECT_NE(fresh.out[1].find("0-0"), std::string::npos) << fresh.out[1];
  EXPECT_NE(fresh.out[1].find("2-2"), std::string::npos) << "Haus-house around the unseen pair: " << fresh.out[1];
  EXPECT_EQ(fresh.out[2], "");
  EXPECT_NE(fresh.err_text.find("new.bitext:3: warning: empty source"), std::string::npos) << fresh.err_text;
  for (const auto& [arguments, message] : std::vector<std::pair<std::string, std::string>>{
           {"--save-hmm " + tables + " -m " + model(), "--save-hmm writes what --hmm learns"},
           {"--hmm --hmm-tables " + tables, "give --model (and --reverse-model), --hmm or --hmm-tables"},
           {"--hmm-tables " + dir_->path("nothing"), "nothing/hmm.npz"},
           {"--hmm-tables " + model(), "hmm.npz"}}) {
    SCOPED_TRACE(arguments);
    const Result e = run("align " + arguments + " -i " + bitext);
    EXPECT_EQ(e.status, 1);
    ASSERT_EQ(e.errors.size(), 1u) << e.err_text;
    EXPECT_NE(e.errors[0].find(message), std::string::npos) << e.errors[0];
  }
}

// --hmm when no pair is usable (no lines, only empty lines, only invalid UTF-8): as with
// --prior 0, an empty line and a warning per pair. It used to abort (ψ(0), a pole, thrown
// inside an OpenMP loop), with an existing -o file already emptied (issue 81).
TEST_F(AlignCli, HmmWithoutAUsablePairWarnsAsWithPriorZero) {
  const std::string out = dir_->path("unusable.links");
  const std::string suffix = "; not scored, its output line is empty";
  for (const auto& [name, text, warning] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"none.txt", "", ""},
           {"blank.txt", "\n\n", "empty source" + suffix},
           {"spaces.txt", "  \n\t\n", "empty source" + suffix},
           {"bad.txt", "\xff\n\xfe x\n", "invalid UTF-8 in the source"}}) {
    const std::string file = write("unusable-" + name, text);
    const size_t lines = lines_of(text).size();
    for (const std::string prior : {"", " --prior 0", " --prior 0.5 --no-agreement"}) {
      SCOPED_TRACE(name + prior);
      write("unusable.links", "precious\n");
      const Result r = run("align --hmm --quiet --src " + file + " --tgt " + file + prior + " -o " + out);
      ASSERT_EQ(r.status, 0) << r.err_text;
      EXPECT_EQ(file_text(out), std::string(lines, '\n'));
      ASSERT_EQ(r.err.size(), lines) << r.err_text;
      for (size_t k = 0; k < lines; ++k)
        EXPECT_EQ(r.err[k], "rnnsearch align: " + file + ":" + std::to_string(k + 1) + ": warning: " + warning);
    }
  }
  write("unusable.links", "precious\n");
  const Result none = run("align --hmm --quiet --src /dev/null --tgt /dev/null -o " + out);
  ASSERT_EQ(none.status, 0) << none.err_text;
  EXPECT_EQ(file_text(out), "");
  EXPECT_EQ(none.err_text, "");
}

// --max-length: --hmm skips a pair with a side longer than it as a model does, with the same
// warning (naming the file of the long side) and an empty line; by default (200) a pair of
// 2,000 words, minutes of EM (the time is cubic in the length), is skipped the same way.
TEST_F(AlignCli, HmmHonoursMaxLengthAsAModelDoes) {
  const std::string s = src(), t = tgt();
  const std::string suffix = "; not scored, its output line is empty";
  const std::vector<std::string> expected = {
      "rnnsearch align: " + s + ":3: warning: longer than 3 tokens (--max-length)" + suffix,
      "rnnsearch align: " + t + ":5: warning: longer than 3 tokens (--max-length)" + suffix};
  for (const std::string& aligner : {"-m " + model(), std::string("--hmm")}) {
    SCOPED_TRACE(aligner);
    const Result r = run("align --quiet " + aligner + " --src " + s + " --tgt " + t + " --max-length 3");
    ASSERT_EQ(r.status, 0) << r.err_text;
    EXPECT_EQ(r.err, expected);
    ASSERT_EQ(r.out.size(), 5u) << r.out_text;
    EXPECT_EQ(r.out[2], "");
    EXPECT_EQ(r.out[4], "");
  }
  std::string long_source, long_target;
  for (int k = 0; k < 2000; ++k) long_source += k % 2 ? "Buch " : "Haus ", long_target += k % 2 ? "book " : "house ";
  const std::string bitext = write("long.bitext", "das Haus ||| the house\nein Buch ||| a book\n" + long_source +
                                                      "||| " + long_target + "\ndas Buch ||| the book\nein Haus ||| a house\n");
  const Result r = run("align --quiet --hmm --symmetrize intersect -i " + bitext);
  ASSERT_EQ(r.status, 0) << r.err_text;
  ASSERT_EQ(r.out.size(), 5u) << r.out_text;
  for (size_t k : {0, 1, 3, 4}) EXPECT_EQ(r.out[k], "0-0 1-1") << k;
  EXPECT_EQ(r.out[2], "");
  EXPECT_EQ(r.err, std::vector<std::string>{"rnnsearch align: " + bitext + ":3: warning: longer than 200 tokens "
                                            "(--max-length)" + suffix});
}

// A warning about a target line names the target file, one about a source line the source
// file (the source file was named for both: "ae.en:3: warning: empty target"), with a model,
// with --hmm, and in score.
TEST_F(AlignCli, WarningsNameTheFileOfTheBadLine) {
  const std::string s = write("sides.src", "a b\nc d\ne f\n\nb \xff\na c\n");
  const std::string t = write("sides.tgt", "x y\nz w\n\nv\nx\n\xfe y\n");
  const std::string suffix = "; not scored, its output line is empty";
  const std::vector<std::string> expected = {t + ":3: warning: empty target" + suffix,
                                             s + ":4: warning: empty source" + suffix,
                                             s + ":5: warning: invalid UTF-8 in the source",
                                             t + ":6: warning: invalid UTF-8 in the target"};
  for (const std::string& command : {"align -m " + model(), std::string("align --hmm"), "score -m " + model()}) {
    SCOPED_TRACE(command);
    const Result r = run(command + " --quiet --src " + s + " --tgt " + t);
    ASSERT_EQ(r.status, 0) << r.err_text;
    std::vector<std::string> prefixed;
    for (const std::string& line : expected) prefixed.push_back("rnnsearch " + command.substr(0, 5) + ": " + line);
    EXPECT_EQ(r.err, prefixed);
    EXPECT_EQ(r.out.size(), 6u) << r.out_text;
  }
}

// align-eval prints the corpus line (the hand-computed case of test_align); --tail scores the
// last lines of a longer links file; links scored against themselves as gold give AER 0.
TEST_F(AlignCli, AlignEvalPrintsTheCorpusLine) {
  const std::string gold = write("eval.gold", "1-1 2-2 3p3\n1-2 2p1\n");
  const Result r = run("align-eval --gold " + gold + " --links " + write("eval.links", "0-0 2-2 2-1\n0-1\n"));
  ASSERT_EQ(r.status, 0) << r.err_text;
  ASSERT_EQ(r.out.size(), 1u);
  EXPECT_EQ(r.out[0], "AER 28.57  precision 75.00  recall 66.67  (2 sentences, 4 links, 3 sure, 5 possible)");
  const std::string longer = write("eval.longer", "9-9\n0-0 2-2 2-1\n0-1\n");
  EXPECT_EQ(run("align-eval --gold " + gold + " --links " + longer + " --tail").out, r.out);
  const Result stdin_links = run("align-eval --gold " + gold + " --tail", longer);
  EXPECT_EQ(stdin_links.out, r.out) << stdin_links.err_text;
  EXPECT_EQ(run("align-eval --gold " + write("zero.gold", "0-0 1-1 2p2\n0-1 1p0\n") + " --gold-zero-based --links " +
                write("eval.links2", "0-0 2-2 2-1\n0-1\n")).out,
            r.out);

  const Result self = run("align -m " + model() + " --src " + src() + " --tgt " + tgt() + " -o " + dir_->path("self.links"));
  ASSERT_EQ(self.status, 0) << self.err_text;
  const Result perfect = run("align-eval --gold " + dir_->path("self.links") + " --gold-zero-based --links " +
                             dir_->path("self.links"));
  ASSERT_EQ(perfect.out.size(), 1u) << perfect.err_text;
  EXPECT_EQ(perfect.out[0].rfind("AER 0.00  precision 100.00  recall 100.00  (5 sentences, ", 0), 0u) << perfect.out[0];

  const std::vector<std::pair<std::string, std::string>> refused = {
      {"--gold " + gold + " --links " + longer, "has 3 lines and " + gold + " 2 (--tail scores its last 2)"},
      {"--gold " + gold + " --links " + write("bad.links", "0-0\n0:1\n"), "bad.links:2: bad link '0:1'"},
      {"--gold " + write("bad.gold", "1-1\n0-1\n") + " --links " + write("two.links", "0-0\n0-0\n"),
       "bad.gold:2: link '0-1' has position 0 in a 1-based gold file"},
  };
  for (const auto& [arguments, message] : refused) {
    SCOPED_TRACE(arguments);
    const Result e = run("align-eval " + arguments);
    EXPECT_EQ(e.status, 1);
    ASSERT_EQ(e.errors.size(), 1u) << e.err_text;
    EXPECT_EQ(e.errors[0].rfind("rnnsearch align-eval: error: ", 0), 0u) << e.errors[0];
    EXPECT_NE(e.errors[0].find(message), std::string::npos) << e.errors[0];
  }
}

// align and score write as they go: with the first chunk of pairs read and the input still
// open, its lines are out; they used to wait for the end of the input. The input is a pipe
// that stays open until the test lets it end (a file named `release` appears).
TEST_F(AlignCli, AlignAndScoreWriteEachChunkBeforeTheInputEnds) {
  namespace fs = std::filesystem;
  for (const auto& [command, chunk] : {std::pair<std::string, size_t>{"align -m " + model() + " -i -", 1024},
                                       {"score -m " + model() + " --src - --tgt ", size_t{1} << 14}}) {
    SCOPED_TRACE(command);
    const bool score = command.rfind("score", 0) == 0;
    std::string pairs, targets;
    for (size_t k = 0; k < chunk + 3; ++k) {
      pairs += score ? "a b c\n" : "a b c ||| x y\n";
      targets += "x y\n";
    }
    const std::string input = write("stream.in", pairs), release = dir_->path("release"),
                      out = dir_->path("stream.out"), finished = dir_->path("finished");
    fs::remove(release);
    fs::remove(finished);
    const std::string program = std::string(RNNSEARCH_BINARY) + " " + command +
                                (score ? write("stream.tgt", targets) : "") + " > " + out + " 2> /dev/null";
    const std::string pipeline = "(cat " + input + "; while [ ! -e " + release + " ]; do sleep 0.05; done) | " +
                                 program + "; touch " + finished;
    ASSERT_EQ(std::system(("sh -c '" + pipeline + "' &").c_str()), 0);
    const auto lines = [&] { return lines_of(file_text(out)).size(); };
    for (int k = 0; k < 600 && lines() < chunk; ++k) usleep(50000);
    EXPECT_EQ(lines(), chunk) << "the first chunk, written while the input is open";
    EXPECT_FALSE(fs::exists(finished));
    write("release", "");
    for (int k = 0; k < 600 && !fs::exists(finished); ++k) usleep(50000);
    ASSERT_TRUE(fs::exists(finished));
    EXPECT_EQ(lines(), chunk + 3);
  }
}

}  // namespace
}  // namespace rnnsearch
