// Nothing is lost (issue 81): every command that writes -o FILE, run as the real binary on the
// tiny model of support/cli.h, fails midway (a bad line after good ones, a bad model or file
// after the inputs were read) over an existing FILE, which must stay byte for byte as it was,
// with no temporary file left beside it; and a run that succeeds replaces it, a symlink's
// target included.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "support/cli.h"

namespace rnnsearch {
namespace {

using namespace test;
namespace fs = std::filesystem;

const std::string kPrecious = "precious\nbytes \xff\n";

class FileSafety : public Cli {
 protected:
  // `lines` lines of `text`, with `bad` in place of line `bad_line` (1-based).
  static std::string lines_with(const std::string& text, size_t lines, size_t bad_line, const std::string& bad) {
    std::string out;
    for (size_t k = 1; k <= lines; ++k) out += (k == bad_line ? bad : text) + "\n";
    return out;
  }

  // Runs `command -o NAME` (or with `-o` spelled by `option`) over an existing NAME: it must fail
  // with one error line holding `message`, and leave NAME and its directory as they were.
  static void expect_kept(const std::string& name, const std::string& command, const std::string& message,
                          const std::string& option = "-o") {
    SCOPED_TRACE(command);
    const std::string path = write(name, kPrecious);
    const std::vector<fs::path> before = listing();
    const Result r = run(command + " " + option + " " + path);
    EXPECT_EQ(r.status, 1) << r.err_text;
    ASSERT_EQ(r.errors.size(), 1u) << r.err_text;
    EXPECT_NE(r.errors[0].find(message), std::string::npos) << r.errors[0];
    EXPECT_EQ(file_text(path), kPrecious);
    EXPECT_EQ(listing(), before) << "a temporary file was left behind";
  }

  static std::vector<fs::path> listing() {
    std::vector<fs::path> names;
    for (const auto& entry : fs::directory_iterator(fs::path(model()).parent_path()))
      if (entry.path().filename() != "stdout.txt" && entry.path().filename() != "stderr.txt")  // run()'s own
        names.push_back(entry.path());
    std::sort(names.begin(), names.end());
    return names;
  }
};

// translate streams its output batch by batch: line 45 of 50 of --constraints is bad after
// 44 lines were translated and written (it used to leave FILE holding those 44 lines).
// --heatmaps DIR is written only at the end: an existing index.html stays too.
TEST_F(FileSafety, TranslateConstraintsBadAtLine45) {
  const std::string input = write("t50.txt", lines_with("a b c", 50, 0, ""));
  const std::string constraints = write("t50.constraints", lines_with("[\"z\"]", 50, 45, "{\"z\": 1}"));
  const std::string heatmaps = dir_->path("t50.heatmaps");
  fs::create_directory(heatmaps);
  write("t50.heatmaps/index.html", kPrecious);
  expect_kept("translated.txt",
              "translate -m " + model() + " -i " + input + " --batch-size 1 --maxi-batch 1 --beam-size 2 --quiet "
              "--constraints " + constraints + " --heatmaps " + heatmaps,
              constraints + ":45: --constraints wants a JSON list of strings");
  EXPECT_EQ(file_text(heatmaps + "/index.html"), kPrecious);
  const std::string fine = write("t50.fine", lines_with("[\"z\"]", 50, 0, ""));
  const std::string out = write("translated.txt", kPrecious);
  const Result r = run("translate -m " + model() + " -i " + input + " --quiet --constraints " + fine + " -o " + out);
  ASSERT_EQ(r.status, 0) << r.err_text;
  EXPECT_EQ(lines_of(file_text(out)).size(), 50u);
}

// score reads its pairs, then loads the model: a model that is not one fails after FILE used
// to be opened (and emptied).
TEST_F(FileSafety, ScoreWithABadModel) {
  const std::string src = write("s50.src", lines_with("a b", 50, 0, "")), tgt = write("s50.tgt", lines_with("x y", 50, 0, ""));
  expect_kept("scores.txt", "score -m " + dir_->path("no-model") + " --src " + src + " --tgt " + tgt, "no-model");
  expect_kept("scores.txt", "score -m " + model() + " --src " + src + " --tgt " + write("s49.tgt", lines_with("x", 49, 0, "")),
              "differ in length");
}

// align with a model: a bad pair (no ' ||| ' on line 45 of 50), and options the model cannot
// serve (averaging needs two directions), refused after FILE used to be opened.
TEST_F(FileSafety, AlignWithAModel) {
  const std::string bitext = write("a50.bitext", lines_with("a b ||| x y", 50, 45, "a b | x y"));
  expect_kept("links.txt", "align -m " + model() + " -i " + bitext, bitext + ":45: no ' ||| '");
  const std::string good = write("a50.good", lines_with("a b ||| x y", 50, 0, ""));
  expect_kept("links.txt", "align -m " + model() + " -i " + good + " --method average", "give --reverse-model");
}

// align --hmm: a bad pair (line 45 of 50), and unequal files.
TEST_F(FileSafety, AlignHmm) {
  const std::string bitext = write("h50.bitext", lines_with("das Haus ||| the house", 50, 45, "das Haus the house"));
  expect_kept("hmm.links", "align --hmm --quiet -i " + bitext, bitext + ":45: no ' ||| '");
  const std::string src = write("h50.src", lines_with("das Haus", 50, 0, ""));
  expect_kept("hmm.links", "align --hmm --quiet --src " + src + " --tgt " + write("h49.tgt", lines_with("the house", 49, 0, "")),
              "differ in length");
}

// tokenize streams too: invalid UTF-8 on line 45 of 50.
TEST_F(FileSafety, TokenizeInvalidUtf8AtLine45) {
  const std::string input = write("k50.txt", lines_with("Hello, World!", 50, 45, "bad \xfe byte"));
  expect_kept("tokens.txt", "tokenize -i " + input, input + ":45: invalid UTF-8");
}

// vocab: the second of two inputs cannot be read.
TEST_F(FileSafety, VocabWithAMissingInput) {
  const std::string input = write("v50.txt", lines_with("a b c", 50, 0, ""));
  expect_kept("vocab.txt", "vocab --min-count 1 -i " + input + " " + dir_->path("no-such-file.txt"), "no-such-file.txt");
}

// average: the second weight file is not one of the same model.
TEST_F(FileSafety, AverageOfDifferentModels) {
  const std::string other = dir_->path("other-model");
  write_model_dir(other, {"a", "b"}, {"x", "y", "z"}, -30.0f);
  expect_kept("average.npz", "average -i " + model() + "/model.npz " + other + "/model.npz", "model.npz");
}

// shortlist: training files of different lengths.
TEST_F(FileSafety, ShortlistOnUnequalFiles) {
  const std::string src = write("l50.src", lines_with("a b c", 50, 0, "")), tgt = write("l49.tgt", lines_with("x y", 49, 0, ""));
  expect_kept("lex.s2t", "shortlist -m " + model() + " --train-src " + src + " --train-tgt " + tgt, "l49.tgt");
}

// A run that succeeds replaces FILE: through a symlink its target (the link stays), and a
// FILE that did not exist is created, in every streaming command.
TEST_F(FileSafety, SuccessReplacesTheFileOrTheLinksTarget) {
  const std::string input = write("r.txt", "Hello, World!\n");
  const std::string target = write("r.target", kPrecious), link = dir_->path("r.link");
  fs::create_symlink(target, link);
  const Result r = run("tokenize -i " + input + " -o " + link);
  ASSERT_EQ(r.status, 0) << r.err_text;
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(file_text(target), "hello , world !\n");
  const std::string fresh = dir_->path("r.fresh");
  ASSERT_EQ(run("align --hmm --quiet -i " + write("r.bitext", "das Haus ||| the house\n") + " -o " + fresh).status, 0);
  EXPECT_EQ(lines_of(file_text(fresh)).size(), 1u);
  fs::create_directory(dir_->path("r.directory"));
  const Result directory = run("tokenize -i " + input + " -o " + dir_->path("r.directory"));
  EXPECT_EQ(directory.status, 1);
  ASSERT_EQ(directory.errors.size(), 1u) << directory.err_text;
  EXPECT_NE(directory.errors[0].find("is a directory"), std::string::npos) << directory.errors[0];
}

}  // namespace
}  // namespace rnnsearch
