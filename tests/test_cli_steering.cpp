// rnnsearch translate's steering from files (issue 81): a line of --constraints / --avoid that
// the search cannot take is a one-line error naming the file and line, before anything is
// decoded; --json-input reads Sockeye's JSON input lines, which steer as those files do.
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
  for (const char* mode : {" --sampling-topk 5", " --sampling-topk 0", " --sampling-topk 0 --sampling-topp 0.9",
                           " --alternatives 2"})
    EXPECT_EQ(error_of(run(missing + mode)),
              "constraints need beam search: not with sampling (--sampling-topk other than 1) or --alternatives")
        << mode;
  const Result avoid_sampled = run(command() + "--avoid " + constraints + " --sampling-topk 3");
  EXPECT_EQ(avoid_sampled.status, 0) << "phrases to avoid work with sampling: " << avoid_sampled.err_text;
}

// Sockeye's --json-input lines give what the same sentences with --constraints, --avoid and
// --target-prefix files give; a blank line is an empty sentence.
TEST_F(CliSteering, JsonInputTranslatesSockeyeLinesAsTheSteeringFilesDo) {
  const std::string lines = write(
      "sockeye.jsonl",
      "{\"text\": \"a b c\", \"constraints\": [\"z w\"], \"avoid\": [\"v\"]}\n"
      "{\"text\": \"d e\"}\n"
      "\n"
      "{\"avoid\": [\"x\", \"y\"], \"text\": \"f a\", \"target_prefix\": \"w\"}\n"
      "{\"text\": \"b\", \"constraints\": [], \"avoid\": []}\n");
  const std::string plain = write("plain.txt", "a b c\nd e\n\nf a\nb\n");
  const std::string options = " --beam-size 3 --n-best 2 --format json";
  const Result files = run("translate -m " + model() + " -i " + plain + options + " --constraints " +
                           write("j-c.txt", "[\"z w\"]\n\n\n\n[]\n") + " --avoid " +
                           write("j-a.txt", "[\"v\"]\n\n\n[\"x\", \"y\"]\n\n") + " --target-prefix " +
                           write("j-p.txt", "\n\n\nw\n\n"));
  ASSERT_EQ(files.status, 0) << files.err_text;
  const Result json = run("translate -m " + model() + " -i " + lines + options + " --json-input");
  ASSERT_EQ(json.status, 0) << json.err_text;
  EXPECT_EQ(json.out, files.out);
  EXPECT_GE(json.out.size(), 5u) << "a record at least per line";
  EXPECT_NE(json.out_text.find("\"source\":[\"f\",\"a\"]"), std::string::npos) << json.out_text;
  const Result stdin_json = run("translate -m " + model() + options + " --json-input", lines);
  EXPECT_EQ(stdin_json.out, files.out) << stdin_json.err_text;
}

TEST_F(CliSteering, JsonInputErrorsNameFileAndLine) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"text\": \"a\", \"constraint\": [\"z\"]}",
       "--json-input: unknown key \"constraint\" (known: text, constraints, avoid, target_prefix)"},
      {"{\"constraints\": [\"z\"]}", "--json-input: the line has no \"text\""},
      {"a b c", "--json-input wants a JSON object per line, e.g. {\"text\": \"a dog\", \"constraints\": [\"Hund\"]}"},
      {"{\"text\": 5}", "--json-input: \"text\" must be a string"},
      {"{\"text\": \"a\", \"avoid\": \"z\"}", "--json-input: \"avoid\" must be a list of strings"},
      {"{\"text\": \"a \xff\"}", "invalid UTF-8"},
      {"{\"text\": \"a\", \"constraints\": [\"z\"], \"avoid\": [\"z\"]}", "\"z\" is both a constraint and a phrase to avoid"},
  };
  for (size_t k = 0; k < cases.size(); ++k) {
    const std::string file = write("bad-" + std::to_string(k) + ".jsonl", "{\"text\": \"a b\"}\n" + cases[k].first + "\n");
    EXPECT_EQ(error_of(run("translate -m " + model() + " --json-input -i " + file)), file + ":2: " + cases[k].second);
  }
  const Result from_stdin = run("translate -m " + model() + " --json-input", write("bad-stdin.jsonl", "{}\n"));
  EXPECT_EQ(error_of(from_stdin), "stdin:1: --json-input: the line has no \"text\"");
  const std::string good = write("good.jsonl", "{\"text\": \"a\"}\n");
  EXPECT_EQ(error_of(run("translate -m " + model() + " --json-input -i " + good + " --avoid " + good)),
            "--json-input lines hold their own steering: not with --target-prefix, --constraints or --avoid");
  const Result sampled = run("translate -m " + model() + " --json-input --sampling-topk 2 -i " +
                             write("sampled.jsonl", "{\"text\": \"a\"}\n{\"text\": \"b\", \"constraints\": [\"z\"]}\n"));
  EXPECT_NE(error_of(sampled).find(":2: constraints need beam search"), std::string::npos) << sampled.err_text;
}

}  // namespace
}  // namespace rnnsearch::test
