// rnnsearch translate's steering from files (issue 81): a line of --constraints / --avoid that
// the search cannot take is a one-line error naming the file and line, before anything is
// decoded.
#include <gtest/gtest.h>

#include "support/cli.h"

namespace rnnsearch::test {
namespace {

class CliSteering : public Cli {
 protected:
  static std::string input() { return write("steered.txt", "a b c\nd e\nf\n"); }
  static std::string command() { return "translate -m " + model() + " -i " + input() + " --beam-size 3 "; }
  // One error line, exit 1, no output: the line's text after "rnnsearch translate: error: ".
  static std::string error_of(const Result& result) {
    EXPECT_EQ(result.status, 1) << result.err_text;
    EXPECT_TRUE(result.out.empty()) << result.out_text;
    EXPECT_EQ(result.errors.size(), 1u) << result.err_text;
    const std::string prefix = "rnnsearch translate: error: ";
    if (result.errors.empty() || result.errors[0].rfind(prefix, 0) != 0) return result.err_text;
    return result.errors[0].substr(prefix.size());
  }
};

// Was: no error, and line 2's output the phrase repeated up to the length cap with a warning.
TEST_F(CliSteering, AConstraintThatIsAlsoAPhraseToAvoidIsAnErrorNamingFileAndLine) {
  const std::string constraints = write("both-c.txt", "[]\n[\"z\"]\n[]\n");
  const std::string avoid = write("both-a.txt", "[\"z\"]\n[\"x\", \"z\"]\n[]\n");
  EXPECT_EQ(error_of(run(command() + "--constraints " + constraints + " --avoid " + avoid)),
            avoid + ":2: \"z\" is both a constraint and a phrase to avoid");
  const std::string holding = write("holds-c.txt", "[\"w  z\"]\n[]\n[]\n");
  EXPECT_EQ(error_of(run(command() + "--constraints " + holding + " --avoid " + avoid)),
            avoid + ":1: the constraint \"w  z\" holds the phrase to avoid \"z\"");
  // apart, each steers as before
  const Result fine = run(command() + "--constraints " + holding + " --avoid " + write("x.txt", "[\"x\"]\n\n[\"z\"]\n"));
  EXPECT_EQ(fine.status, 0) << fine.err_text;
  EXPECT_EQ(fine.out.size(), 3u);
}

// Was: "--constraints wants a JSON list of strings per line ... not: " and the raw bytes.
TEST_F(CliSteering, InvalidUtf8InAPhraseFileIsAnErrorNamingFileAndLine) {
  const std::string constraints = write("bad-utf8-c.txt", "[]\n[]\n[\"z \xff\xfe\"]\n");
  EXPECT_EQ(error_of(run(command() + "--constraints " + constraints)), constraints + ":3: invalid UTF-8");
  const std::string avoid = write("bad-utf8-a.txt", "[\"\xc0\xaf\"]\n[]\n[]\n");
  EXPECT_EQ(error_of(run(command() + "--avoid " + avoid)), avoid + ":1: invalid UTF-8");
}

// Was: "beam search: more than 64 constraints for one sentence", naming no file.
TEST_F(CliSteering, MoreThan64ConstraintsAreAnErrorNamingFileAndLine) {
  std::string many = "[";
  for (int k = 0; k < 65; ++k) many += std::string(k ? ", " : "") + "\"z\"";
  const std::string constraints = write("many.txt", "[]\n" + many + "]\n[]\n");
  EXPECT_EQ(error_of(run(command() + "--constraints " + constraints)),
            constraints + ":2: 65 constraints; the limit is 64 per sentence");
}

// Was: the search's error after the model was loaded (here: a missing model's error instead).
TEST_F(CliSteering, ConstraintsWithSamplingOrAlternativesAreRefusedBeforeTheModelLoads) {
  const std::string constraints = write("one.txt", "[\"z\"]\n[]\n[]\n");
  const std::string missing = "translate -m " + model() + "-missing -i " + input() + " --constraints " + constraints;
  for (const char* mode : {" --sampling-topk 5", " --sampling-topp 0.9", " --alternatives 2"})
    EXPECT_EQ(error_of(run(missing + mode)),
              "constraints need beam search: not with sampling (--sampling-topk, --sampling-topp) or --alternatives")
        << mode;
  const Result avoid_sampled = run(command() + "--avoid " + constraints + " --sampling-topk 3");
  EXPECT_EQ(avoid_sampled.status, 0) << "phrases to avoid work with sampling: " << avoid_sampled.err_text;
}

}  // namespace
}  // namespace rnnsearch::test
