// Raw-text models end to end: trained with the binary on corpora/tiny (cased, punctuated text,
// SentencePiece on the raw sentences), then translated, aligned and drawn by it, as users do;
// and a word-level model of before raw text translates as it did.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "rnnsearch/io/atomic_file.h"
#include "rnnsearch/model/model_io.h"
#include "rnnsearch/text/tokenizer.h"
#include "support/fixtures.h"
#include "support/model_dir.h"
#include "support/requires.h"
#include "support/run_binary.h"
#include "support/temp_dir.h"

namespace rnnsearch {
namespace {

using Words = std::vector<std::string>;
using test::words;
const std::string kTiny = std::string(RNNSEARCH_SOURCE_DIR) + "/corpora/tiny/";
using test::lines_of;
using test::run_binary;

// A model of the old kind translates exactly as it did: a config.json without "kind"
// (written before raw text) gives the output the current one does.
TEST(ModelKind, WordModelWithoutKindTranslatesAsBefore) {
  test::TempDir dir;
  const std::string model = dir.path("m");
  test::write_model_dir(model, {"a", "b", "c", "d"}, {"x", "y", "z"}, 0.0f);
  const std::string input = dir.write("in.txt", "a b c\nD, a.\n\nb b b d\n");
  const test::BinaryRun current = run_binary("translate -m " + model + " -i " + input + " --n-best 2 --alignment hard", dir);
  ASSERT_EQ(current.status, 0) << current.err;
  test::set_tokenizer_json(model, {{"lowercase", true}});
  const test::BinaryRun old = run_binary("translate -m " + model + " -i " + input + " --n-best 2 --alignment hard", dir);
  ASSERT_EQ(old.status, 0) << old.err;
  EXPECT_EQ(old.out, current.out);
  EXPECT_EQ(lines_of(old.out).size(), 7u);  // two per line, one for the empty line
}

// One raw-text model trained on corpora/tiny (cased, punctuated text) for every test below.
class RawModel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    if (!build_info().sentencepiece) return;  // SetUp skips every test, saying why
    const test::BinaryRun trained = run_binary(train_command(model()) + " --max-updates 30", *dir_);
    ASSERT_EQ(trained.status, 0) << trained.err;
  }
  void SetUp() override { RNNSEARCH_REQUIRE(sentencepiece, "SentencePiece (libsentencepiece-dev): raw text needs subwords"); }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string train_command(const std::string& model) {
    return "train --train-src " + kTiny + "train.en --train-tgt " + kTiny + "train.de --valid-src " + kTiny +
           "val.en --valid-tgt " + kTiny + "val.de --model " + model +
           " --tokenizer raw --subwords 300 --emb 8 --hidden 12 --maxout 8 --tied-embeddings --batch-size 16"
           " --threads 1 --valid-metrics bleu,chrf";
  }
  static std::string model() { return dir_->path("raw"); }
  static test::TempDir* dir_;
};

test::TempDir* RawModel::dir_ = nullptr;

TEST_F(RawModel, LearnsCasedPiecesOfTheRawSentences) {
  const nlohmann::json config = read_json_file(model_file(model(), model_files::kConfig));
  EXPECT_EQ(config["tokenizer"], nlohmann::json({{"kind", "raw"}}));
  EXPECT_TRUE(std::filesystem::exists(model_file(model(), model_files::kSrcSubwords)));
  const std::string vocab = read_file(model_file(model(), model_files::kTgtVocab));
  // Pieces keep the case and the punctuation of the raw text: "▁Ein" (sentence-initial) and
  // a full stop are pieces, and nothing was lowercased away.
  EXPECT_NE(vocab.find("\n\u2581Ein\n"), std::string::npos);
  EXPECT_NE(vocab.find("\n.\n"), std::string::npos);
  // Validation scored raw text with sacreBLEU's BLEU and chrF.
  const std::string log = read_file(model_file(model(), "train.log"));
  EXPECT_NE(log.find(" bleu "), std::string::npos) << log;
  EXPECT_NE(log.find(" chrf "), std::string::npos) << log;
}

TEST_F(RawModel, TranslatesRawTextWithAlignmentsOnItsWords) {
  const std::string input = dir_->write("in.en", "A man, in a T-shirt, is (smiling).\n\nTwo dogs play.\n");
  const std::vector<Words> source_words = {words("A man, in a T-shirt, is (smiling)."), {},
                                           words("Two dogs play.")};
  const test::BinaryRun text = run_binary("translate -m " + model() + " -i " + input, *dir_);
  ASSERT_EQ(text.status, 0) << text.err;
  const std::vector<std::string> lines = lines_of(text.out);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(run_binary("translate -m " + model() + " -i " + input + " --detokenize", *dir_).out, text.out)
      << "raw text is detokenized already";

  const test::BinaryRun json = run_binary("translate -m " + model() + " -i " + input + " --format json", *dir_);
  ASSERT_EQ(json.status, 0) << json.err;
  const std::vector<std::string> records = lines_of(json.out);
  ASSERT_EQ(records.size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    const auto record = nlohmann::json::parse(records[k]);
    const Words source = record["source"].get<Words>(), target = record["target"].get<Words>();
    EXPECT_EQ(source, source_words[k]) << "the alignment's columns are the input's own words";
    EXPECT_EQ(join_tokens(target), lines[k]) << "its rows are the words of the printed translation";
    for (const std::string& word : target) EXPECT_EQ(word.find("\u2581"), std::string::npos) << records[k];
    if (source.empty()) continue;
    const auto alignment = record["alignment"].get<std::vector<std::vector<double>>>();
    ASSERT_EQ(alignment.size(), target.size() + 1);
    for (const auto& row : alignment) {
      ASSERT_EQ(row.size(), source.size() + 1);
      double sum = 0;
      for (double w : row) sum += w;
      EXPECT_NEAR(sum, 1.0, 1e-3);
    }
  }

  const test::BinaryRun hard = run_binary("translate -m " + model() + " -i " + input + " --alignment hard", *dir_);
  ASSERT_EQ(hard.status, 0) << hard.err;
  const std::vector<std::string> hard_lines = lines_of(hard.out);
  ASSERT_EQ(hard_lines.size(), 3u);
  const size_t bar = hard_lines[0].find(" ||| ");
  ASSERT_NE(bar, std::string::npos);
  EXPECT_EQ(hard_lines[0].substr(0, bar), lines[0]);
  const size_t target_words = words(lines[0]).size();
  for (const std::string& pair : words(hard_lines[0].substr(bar + 5))) {
    const size_t dash = pair.find('-');
    ASSERT_NE(dash, std::string::npos) << pair;
    EXPECT_LT(std::stoul(pair.substr(0, dash)), source_words[0].size()) << pair;
    EXPECT_LT(std::stoul(pair.substr(dash + 1)), target_words) << pair;
  }
}

TEST_F(RawModel, NBestListsAndHeatmapsShowTheWords) {
  const std::string input = dir_->write("nbest.en", "A girl, (smiling).\nThe Dog.\n");
  const test::BinaryRun nbest = run_binary("translate -m " + model() + " -i " + input + " --beam-size 3 --n-best 3", *dir_);
  ASSERT_EQ(nbest.status, 0) << nbest.err;
  const std::vector<std::string> lines = lines_of(nbest.out);
  ASSERT_EQ(lines.size(), 6u);
  for (size_t k = 0; k < lines.size(); ++k) {
    EXPECT_EQ(lines[k].rfind(std::to_string(k / 3) + " ||| ", 0), 0u) << lines[k];
    EXPECT_EQ(lines[k].find("\u2581"), std::string::npos) << lines[k];
  }
  const std::string heatmaps = dir_->path("heatmaps");
  const test::BinaryRun drawn = run_binary("translate -m " + model() + " -i " + input + " --heatmaps " + heatmaps, *dir_);
  ASSERT_EQ(drawn.status, 0) << drawn.err;
  std::string svgs;
  for (const auto& entry : std::filesystem::directory_iterator(heatmaps))
    if (entry.path().extension() == ".svg") svgs += read_file(entry.path().string());
  for (const char* word : {">girl,<", ">(smiling).<", ">Dog.<"})
    EXPECT_NE(svgs.find(word), std::string::npos) << word << " labels a column";
}

// A target prefix in raw text goes through the subword model: the translation starts with
// its words as typed (cased, punctuation attached; the next piece begins a new word, where
// this barely trained model would rather go on with "Männer" + "ch..."), one alignment row
// per word.
TEST_F(RawModel, TargetPrefixGoesThroughTheSubwords) {
  const std::string input = dir_->write("prefix.en", "A man sleeps on a sofa.\nTwo dogs play.\n");
  const std::string prefixes = dir_->write("prefix.de", "Ein Hund,\nZwei Männer\n");
  const test::BinaryRun json = run_binary("translate -m " + model() + " -i " + input + " --target-prefix " + prefixes +
                                              " --beam-size 3 --n-best 2 --format json",
                                          *dir_);
  ASSERT_EQ(json.status, 0) << json.err;
  const std::vector<std::string> records = lines_of(json.out);
  ASSERT_EQ(records.size(), 4u);
  const std::vector<Words> expected = {{"Ein", "Hund,"}, {"Zwei", "Männer"}};
  for (size_t k = 0; k < records.size(); ++k) {
    const auto record = nlohmann::json::parse(records[k]);
    const Words target = record["target"].get<Words>();
    const Words& prefix = expected[k / 2];
    ASSERT_GE(target.size(), prefix.size()) << records[k];
    EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), target.begin())) << records[k];
    EXPECT_EQ(record["alignment"].size(), target.size() + 1) << records[k];
  }
}

// Constraints in raw text go through the subword model too: each appears as a whole word
// (punctuation may follow it, a letter may not), with no warning, and an avoided word never.
TEST_F(RawModel, ConstraintsGoThroughTheSubwordsAsWholeWords) {
  const std::string input = dir_->write("constrained.en", "A man sleeps on a sofa.\nTwo dogs play.\n");
  const std::string constraints = dir_->write("constraints.de", "[\"Hund\", \"rote Ball\"]\n[\"Sofa\"]\n");
  const std::string avoid = dir_->write("avoid.de", "[\"Mann\"]\n[\"Männer\", \"ein\"]\n");
  const test::BinaryRun json = run_binary("translate -m " + model() + " -i " + input + " --constraints " + constraints +
                                              " --avoid " + avoid + " --beam-size 5 --n-best 2 --format json",
                                          *dir_);
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_EQ(json.err.find("warning"), std::string::npos) << json.err;
  const std::vector<std::vector<Words>> include = {{{"Hund"}, {"rote", "Ball"}}, {{"Sofa"}}};
  const std::vector<Words> excluded = {{"Mann"}, {"Männer", "ein"}};
  const auto bare = [](std::string word) {  // without the punctuation after it
    while (!word.empty() && std::string(".,;:!?").find(word.back()) != std::string::npos) word.pop_back();
    return word;
  };
  const std::vector<std::string> records = lines_of(json.out);  // 1 or 2 per line: those that hold them all
  std::vector<int> per_line(2, 0);
  for (const std::string& text : records) {
    const auto record = nlohmann::json::parse(text);
    Words target = record["target"].get<Words>();
    for (std::string& word : target) word = bare(word);
    const size_t line = record["line"].get<size_t>();
    ASSERT_LT(line, 2u) << text;
    ++per_line[line];
    for (const Words& phrase : include[line])
      EXPECT_NE(std::search(target.begin(), target.end(), phrase.begin(), phrase.end()), target.end()) << text;
    for (const std::string& word : excluded[line])
      EXPECT_EQ(std::find(target.begin(), target.end(), word), target.end()) << text;
    EXPECT_EQ(record["alignment"].size(), record["target"].size() + 1) << text;
  }
  for (int n : per_line) EXPECT_TRUE(n == 1 || n == 2) << json.out;
}

// An <unk> the model writes is a word of its own, and --replace-unk puts a source word, as
// the input has it (cased, punctuation attached), in its place.
TEST_F(RawModel, ReplaceUnkPutsInTheSourcesWords) {
  const std::string unk_model = dir_->path("unk");
  std::filesystem::copy(model(), unk_model);
  Model m = load_model(unk_model);
  m.params.vec(out_bo)(Vocab::kUnk) += 30.0f;
  save_weights(m.weights_path, m.params);
  const std::string input = dir_->write("unk.en", "Zwei Hunde, (spielen).\n");
  const test::BinaryRun plain = run_binary("translate -m " + unk_model + " -i " + input, *dir_);
  ASSERT_EQ(plain.status, 0) << plain.err;
  const Words before = words(plain.out);
  ASSERT_FALSE(before.empty());
  for (const std::string& word : before) EXPECT_EQ(word, "<unk>") << plain.out;
  const test::BinaryRun replaced = run_binary("translate -m " + unk_model + " -i " + input + " --replace-unk", *dir_);
  ASSERT_EQ(replaced.status, 0) << replaced.err;
  const Words after = words(replaced.out);
  ASSERT_EQ(after.size(), before.size());
  const std::set<std::string> sources = {"Zwei", "Hunde,", "(spielen)."};
  for (const std::string& word : after) EXPECT_TRUE(sources.count(word)) << replaced.out;
}

// train_command(dir) with `from` replaced by `to`.
std::string changed(std::string command, const std::string& from, const std::string& to) {
  return command.replace(command.find(from), from.size(), to);
}

TEST_F(RawModel, MisusedOptionsAreOneLineErrors) {
  const std::vector<std::pair<test::BinaryRun, std::string>> cases = {
      {run_binary(changed(train_command(dir_->path("x")), "--subwords 300", "--subwords 0"), *dir_),
       "--tokenizer raw needs --subwords"},
      {run_binary(changed(train_command(dir_->path("y")), "--tokenizer raw", "--tokenizer bytes"), *dir_),
       "words or raw, not 'bytes'"},
      // Resuming the raw run as a word-level one would read its text differently.
      {run_binary(changed(train_command(model()), "--tokenizer raw", "--tokenizer words") + " --max-updates 31", *dir_),
       "reads --tokenizer raw text, not words"}};
  for (const auto& [r, expected] : cases) {
    EXPECT_NE(r.status, 0);
    EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace rnnsearch
