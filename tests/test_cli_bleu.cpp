// rnnsearch bleu, run as the real binary: sacreBLEU's metrics and signatures, the Multi30k
// convention, errors that name the file and line.
#include <gtest/gtest.h>

#include <string>

#include "support/cli.h"

namespace rnnsearch {
namespace {

using namespace test;

// --tokenize multi30k: the old `rnnsearch bleu` (multi-bleu.perl on tokenized, lowercased
// text), named in the signature.
TEST_F(Cli, BleuOfAFileAgainstItselfIs100) {
  const std::string ref = write("ref.txt", "ein mann fährt fahrrad .\nzwei hunde spielen im schnee .\n");
  const Result r = run("bleu --tokenize multi30k --ref " + ref + " --hyp " + ref);
  ASSERT_EQ(r.status, 0) << r.err_text;
  ASSERT_EQ(r.out.size(), 1u);
  EXPECT_EQ(r.out[0].substr(0, 67), "BLEU|nrefs:1|case:lc|eff:no|tok:multi30k|smooth:none|version:rnnsea") << r.out[0];
  EXPECT_NE(r.out[0].find(" = 100.00 100.0/100.0/100.0/100.0 (BP = 1.000 ratio = 1.000 hyp_len = 11 ref_len = 11)"),
            std::string::npos)
      << r.out[0];
  // From stdin, against a different hypothesis: lower.
  const Result worse = run("bleu --tokenize multi30k --score-only --ref " + ref,
                           write("hyp.txt", "ein mann fährt auto .\nzwei katzen spielen im schnee .\n"));
  ASSERT_EQ(worse.status, 0) << worse.err_text;
  ASSERT_EQ(worse.out.size(), 1u);
  EXPECT_LT(std::stod(worse.out[0]), 100.0);
  // Raw, cased text: multi30k tokenizes and lowercases it first.
  const Result raw = run("bleu --tokenize multi30k -b --ref " + write("raw.txt", "Ein Mann fährt Fahrrad.\nZwei Hunde "
                         "spielen im Schnee.\n") + " --hyp " + ref);
  EXPECT_EQ(raw.out_text, "100.00\n") << raw.err_text;
  // 100 tokenized lines: the default (13a) notes that it expects detokenized text, multi30k not.
  std::string tokens;
  for (int k = 0; k < 100; ++k) tokens += "ein mann .\n";
  const std::string many = write("many.txt", tokens);
  const Result noted = run("bleu -r " + many + " --hyp " + many);
  ASSERT_EQ(noted.status, 0) << noted.err_text;
  EXPECT_NE(noted.err_text.find("100 hypotheses end in a tokenized period"), std::string::npos) << noted.err_text;
  EXPECT_EQ(run("bleu --tokenize multi30k -r " + many + " --hyp " + many).err_text, "");
}

// The default is sacreBLEU's: 13a tokenization, mixed case, exp smoothing, one line per metric
// with its signature, several references.
TEST_F(Cli, BleuChrfTerAsSacreBleuWithSignatures) {
  const std::string hyp = write("readme.hyp", "The dog bit the man.\nIt wasn't surprising.\nThe man had just bitten him.\n");
  const std::string ref1 = write("readme.ref1", "The dog bit the man.\nIt was not unexpected.\nThe man bit him first.\n");
  const std::string ref2 =
      write("readme.ref2", "The dog had bit the man.\nNo one was surprised.\nThe man had bitten the dog.\n");
  const Result r = run("bleu --ref " + ref1 + " --ref " + ref2 + " --hyp " + hyp + " --metrics bleu,chrf,ter");
  ASSERT_EQ(r.status, 0) << r.err_text;
  ASSERT_EQ(r.out.size(), 3u) << r.out_text;
  // sacreBLEU 2.6.0 prints these figures (test_bleu.py's 48.530827 for BLEU).
  const std::string version = "|version:rnnsearch-";
  EXPECT_EQ(r.out[0].substr(0, r.out[0].find(version)), "BLEU|nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp");
  EXPECT_NE(r.out[0].find(" = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)"),
            std::string::npos)
      << r.out[0];
  EXPECT_EQ(r.out[1].substr(0, r.out[1].find(version)), "chrF2|nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no");
  EXPECT_EQ(r.out[1].substr(r.out[1].find(" = ")), " = 59.73");
  EXPECT_EQ(r.out[2].substr(0, r.out[2].find(version)), "TER|nrefs:2|case:lc|tok:tercom|norm:no|punct:yes|asian:no");
  EXPECT_EQ(r.out[2].substr(r.out[2].find(" = ")), " = 40.00");
  // The same from stdin, with one --ref holding both files; chrF++ and intl named as such.
  const Result plus =
      run("bleu -r " + ref1 + " " + ref2 + " -m chrf,bleu --chrf-word-order 2 --tokenize intl -w 1", hyp);
  ASSERT_EQ(plus.status, 0) << plus.err_text;
  ASSERT_EQ(plus.out.size(), 2u) << plus.out_text;
  EXPECT_EQ(plus.out[0].substr(0, 32), "chrF2++|nrefs:2|case:mixed|eff:y") << plus.out[0];
  EXPECT_EQ(plus.out[0].substr(plus.out[0].find(" = ")), " = 59.2");  // 59.153...
  EXPECT_NE(plus.out[1].find("|tok:intl|"), std::string::npos) << plus.out[1];
  EXPECT_NE(plus.out[1].find(" = 43.9 "), std::string::npos) << plus.out[1];
}

// Bad input is one line naming the file (and line); nothing on stdout.
TEST_F(Cli, BleuErrorsNameTheFileAndLine) {
  const std::string ref = write("two.ref", "a b\nc d\n");
  const std::string three = write("three.hyp", "a b\nc d\ne f\n");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"bleu --ref " + ref + " --hyp " + three, three + ":3: no such line in " + ref + ", which has 2"},
      {"bleu --ref " + three + " --ref " + ref + " --hyp " + three, ref + ", which has 2"},
      {"bleu --ref " + three + " --hyp " + ref, three + ":3: no such line in " + ref},
      {"bleu --ref " + dir_->path("missing.ref") + " --hyp " + ref, dir_->path("missing.ref")},
      {"bleu --ref " + write("bad.ref", "a\n\xff\n") + " --hyp " + ref, "bad.ref:2: invalid UTF-8"},
      {"bleu --ref " + ref + " --hyp " + ref + " --metrics bleu,rouge", "rouge"},
      {"bleu --ref " + ref + " --hyp " + ref + " --tokenize moses", "moses"},
      {"bleu --ref " + ref + " --hyp " + ref + " --smooth-value 2", "--smooth-value"},
  };
  for (const auto& [command, message] : cases) {
    const Result r = run(command);
    EXPECT_EQ(r.status, 1) << command;
    EXPECT_TRUE(r.out.empty()) << command << ": " << r.out_text;
    ASSERT_EQ(r.errors.size(), 1u) << command << ": " << r.err_text;
    EXPECT_NE(r.errors[0].find(message), std::string::npos) << r.errors[0];
  }
}

}  // namespace
}  // namespace rnnsearch
