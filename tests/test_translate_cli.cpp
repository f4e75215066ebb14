// The translate, score and bleu commands, run as the real binary on a tiny random model
// written into a temporary directory (config.json, vocab.src, vocab.tgt, model.npz).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "rnnsearch/model/int8.h"
#include "rnnsearch/model/model_io.h"
#include "rnnsearch/text/tokenizer.h"
#include "rnnsearch/util/build_info.h"
#include "fixtures.h"
#include "model_dir.h"
#include "temp_dir.h"

namespace rnnsearch {
namespace {

using test::TempDir;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> split(const std::string& text, const std::string& separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t at; (at = text.find(separator, start)) != std::string::npos; start = at + separator.size())
    parts.push_back(text.substr(start, at - start));
  parts.push_back(text.substr(start));
  return parts;
}

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

struct Result {
  int status;
  std::vector<std::string> out, err;
  std::string out_text, err_text;
  // err less the warnings a CPU may or may not print ("--precision bf16 needs a CPU with
  // AVX512_BF16 ...; computing in fp32"): tests of the one-line error contract count these,
  // so that they hold on every CPU and under RNNSEARCH_CPU.
  std::vector<std::string> errors;
};

class Cli : public ::testing::Test {
 protected:
  // A model whose vocabularies hold plain words and which never chooses <unk>, so an output
  // re-tokenizes to itself.
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    write_model(model(), -30.0f);
  }
  // The test model with bias unk_bias added to <unk>'s output logit.
  static void write_model(const std::string& model, float unk_bias) {
    test::write_model_dir(model, {"a", "b", "c", "d", "e", "f"}, {"x", "y", "z", "w", "v"}, unk_bias);
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  static std::string model() { return dir_->path("model"); }
  static std::string write(const std::string& name, const std::string& text) { return dir_->write(name, text); }

  // Runs `rnnsearch ARGS`, capturing stdout and stderr in files.
  // Runs rnnsearch ARGUMENTS; `environment` ("NAME=value ...") is set for it alone.
  static Result run(const std::string& arguments, const std::string& stdin_file = "",
                    const std::string& environment = "") {
    const std::string out = dir_->path("stdout.txt"), err = dir_->path("stderr.txt");
    std::string command = (environment.empty() ? "" : "env " + environment + " ") + std::string(RNNSEARCH_BINARY) +
                          " " + arguments + " >" + out + " 2>" + err;
    if (!stdin_file.empty()) command += " <" + stdin_file;
    const int raw = std::system(command.c_str());
    Result r{WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, {}, {}, file_text(out), file_text(err), {}};
    r.out = lines_of(r.out_text);
    r.err = lines_of(r.err_text);
    const std::string fallback = "; computing in fp32";
    for (const std::string& line : r.err)
      if (line.size() < fallback.size() || line.compare(line.size() - fallback.size(), fallback.size(), fallback))
        r.errors.push_back(line);
    return r;
  }

  // Normal lines, an empty line, invalid UTF-8, a whitespace-only line, a line of 300
  // tokens (cut by --max-length 40) and an unknown word.
  static std::string mixed_input() {
    std::string long_line;
    for (int k = 0; k < 300; ++k) long_line += k % 2 ? "a " : "b ";
    return write("mixed.txt", "a b c\n\nd \xff\xfe e\n   \n" + long_line + "\nc unknownword f\n");
  }
  static constexpr size_t kMixedLines = 6;
  // The translate command of the precision tests, to be followed by --precision NAME.
  static std::string precision_command(const std::string& input) {
    return "translate -m " + model() + " -i " + input + " --max-length 40 --beam-size 3 ";
  }

  static TempDir* dir_;
};

TempDir* Cli::dir_ = nullptr;

bool sorted_descending(const std::vector<double>& scores) {
  for (size_t k = 1; k < scores.size(); ++k)
    if (scores[k] > scores[k - 1]) return false;
  return true;
}

TEST_F(Cli, TranslateGivesOneLinePerInputLine) {
  const std::string input = mixed_input();
  for (const std::string beam : {"1", "5"}) {
    // With --alignment a translated line always has " ||| " (a translation may be empty).
    const Result r = run("translate -m " + model() + " -i " + input + " --max-length 40 --alignment hard --beam-size " +
                         beam);
    ASSERT_EQ(r.status, 0) << r.err_text;
    ASSERT_EQ(r.out.size(), kMixedLines) << r.out_text;
    for (size_t k : {0, 4, 5}) EXPECT_NE(r.out[k].find(" ||| "), std::string::npos) << r.out[k];
    for (size_t k : {1, 2, 3}) EXPECT_EQ(r.out[k], "");
    // Warnings name the line: 3 is not UTF-8, 5 is cut.
    EXPECT_NE(r.err_text.find(input + ":3: warning: invalid UTF-8"), std::string::npos) << r.err_text;
    EXPECT_NE(r.err_text.find(input + ":5: warning: 300 tokens, cut"), std::string::npos) << r.err_text;
    EXPECT_EQ(r.err_text.find(":2:"), std::string::npos) << "an empty line is not worth a warning";
  }
}

TEST_F(Cli, TranslateReadsStdinAndWritesOutputFile) {
  const std::string input = write("stdin.txt", "a b\nc d e\n");
  const std::string output = dir_->path("out.txt");
  const Result r = run("translate --model " + model() + " --output " + output + " --batch-size 1 --threads 2", input);
  ASSERT_EQ(r.status, 0) << r.err_text;
  EXPECT_EQ(lines_of(file_text(output)).size(), 2u);
  EXPECT_TRUE(r.out.empty());
}

// A pipeline sees each chunk's output while the input is still open: the writer below
// sends its second line only once the first translation has arrived (or after 10 s).
TEST_F(Cli, TranslateFlushesEachChunkWhileInputIsOpen) {
  const std::string out = dir_->path("stream.out"), seen = dir_->path("stream.seen");
  const std::string writer = "(printf 'a b\\n'; i=0; while [ ! -s " + out + " ] && [ $i -lt 100 ]; do sleep 0.1; " +
                             "i=$((i+1)); done; [ -s " + out + " ] && touch " + seen + "; printf 'c d\\n')";
  const std::string command = writer + " | " + RNNSEARCH_BINARY + " translate -m " + model() +
                              " --batch-size 1 --maxi-batch 1 >" + out + " 2>/dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0);
  EXPECT_TRUE(std::filesystem::exists(seen)) << "the first line was not translated before the input ended";
  EXPECT_EQ(lines_of(file_text(out)).size(), 2u);
}

TEST_F(Cli, NBestGivesKSortedLinesPerInput) {
  const std::string input = mixed_input();
  const Result r = run("translate -m " + model() + " -i " + input + " --max-length 40 --beam-size 4 --n-best 3");
  ASSERT_EQ(r.status, 0) << r.err_text;
  std::map<int, std::vector<double>> scores;
  std::map<int, std::set<std::string>> translations;
  for (const std::string& line : r.out) {
    const auto fields = split(line, " ||| ");
    ASSERT_EQ(fields.size(), 3u) << line;
    const int i = std::stoi(fields[0]);
    scores[i].push_back(std::stod(fields[2]));
    translations[i].insert(fields[1]);
  }
  ASSERT_EQ(scores.size(), kMixedLines);  // every input line 0..5 is there
  for (const auto& [i, s] : scores) {
    const bool translated = i == 0 || i == 4 || i == 5;
    EXPECT_EQ(s.size(), translated ? 3u : 1u) << "line " << i;
    EXPECT_EQ(translations[i].size(), s.size()) << "line " << i << ": hypotheses must differ";
    EXPECT_TRUE(sorted_descending(s)) << "line " << i;
    for (double score : s) EXPECT_LE(score, 0.0);
  }
  EXPECT_EQ(r.out.front().substr(0, 6), "0 ||| ");
}

TEST_F(Cli, NBestLargerThanBeamIsAnError) {
  const Result r = run("translate -m " + model() + " --beam-size 2 --n-best 3", mixed_input());
  EXPECT_NE(r.status, 0);
  ASSERT_EQ(r.errors.size(), 1u) << r.err_text;
  EXPECT_NE(r.errors[0].find("--n-best"), std::string::npos);
}

void expect_distributions(const nlohmann::json& matrix, size_t rows, size_t cols, const std::string& where) {
  ASSERT_EQ(matrix.size(), rows) << where;
  for (const auto& row : matrix) {
    ASSERT_EQ(row.size(), cols) << where;
    double sum = 0;
    for (const auto& w : row) {
      EXPECT_GE(w.get<double>(), 0.0);
      sum += w.get<double>();
    }
    EXPECT_NEAR(sum, 1.0, 1e-3 * static_cast<double>(cols)) << where;  // 4 printed digits per weight
  }
}

TEST_F(Cli, JsonRecordsParseAndHoldAttentionDistributions) {
  const std::string input = mixed_input();
  const Result r = run("translate -m " + model() + " -i " + input + " --max-length 40 --format json");
  ASSERT_EQ(r.status, 0) << r.err_text;
  ASSERT_EQ(r.out.size(), kMixedLines);
  for (size_t k = 0; k < r.out.size(); ++k) {
    const auto record = nlohmann::json::parse(r.out[k]);
    EXPECT_EQ(record.at("line").get<size_t>(), k);
    const size_t source = record.at("source").size(), target = record.at("target").size();
    if (source == 0) {
      EXPECT_FALSE(record.contains("alignment")) << r.out[k];
      continue;
    }
    EXPECT_LE(record.at("score").get<double>(), 0.0);
    expect_distributions(record.at("alignment"), target + 1, source + 1, "line " + std::to_string(k));
  }
  // The cut line keeps its first 40 tokens; the unknown word is still shown as given.
  EXPECT_EQ(nlohmann::json::parse(r.out[4]).at("source").size(), 40u);
  EXPECT_EQ(nlohmann::json::parse(r.out[5]).at("source")[1], "unknownword");
}

TEST_F(Cli, SoftAlignmentRowsAreDistributions) {
  const Result r = run("translate -m " + model() + " --alignment soft", write("soft.txt", "a b c d\nf\n"));
  ASSERT_EQ(r.status, 0) << r.err_text;
  ASSERT_EQ(r.out.size(), 2u);
  const size_t sources[] = {4, 1};
  for (size_t k = 0; k < 2; ++k) {
    const auto fields = split(r.out[k], " ||| ");
    ASSERT_EQ(fields.size(), 2u) << r.out[k];
    nlohmann::json matrix = nlohmann::json::array();
    for (const std::string& row : words(fields[1])) {
      nlohmann::json weights = nlohmann::json::array();
      for (const std::string& w : split(row, ",")) weights.push_back(std::stod(w));
      matrix.push_back(weights);
    }
    expect_distributions(matrix, words(fields[0]).size() + 1, sources[k] + 1, r.out[k]);
  }
}

TEST_F(Cli, HardAlignmentPairsAreInRange) {
  const Result r = run("translate -m " + model() + " --alignment hard --beam-size 3",
                    write("hard.txt", "a b c d e\nf a\nc\n"));
  ASSERT_EQ(r.status, 0) << r.err_text;
  ASSERT_EQ(r.out.size(), 3u);
  const int sources[] = {5, 2, 1};
  for (size_t k = 0; k < 3; ++k) {
    const auto fields = split(r.out[k], " ||| ");
    ASSERT_EQ(fields.size(), 2u) << r.out[k];
    const int target = static_cast<int>(words(fields[0]).size());
    const auto pairs = words(fields[1]);
    EXPECT_EQ(static_cast<int>(pairs.size()), target) << "one pair per target token";
    for (const std::string& pair : pairs) {
      int s = -1, t = -1;
      ASSERT_EQ(std::sscanf(pair.c_str(), "%d-%d", &s, &t), 2) << pair;
      EXPECT_GE(s, 0);
      EXPECT_LE(s, sources[k]) << "the source </s> column is the last valid index";
      EXPECT_GE(t, 0);
      EXPECT_LT(t, target);
    }
  }
}

// score of (source, translation) is the translation's log-probability: translate ranked
// its n-best with --normalize 0, i.e. by exactly that number (both in fp32: score has no
// --precision). (Only translations that ended
// with </s> and are not empty: score adds </s>, and skips empty targets.)
TEST_F(Cli, ScoreOfATranslationIsItsLogProbability) {
  const std::vector<std::string> sources = {"a b c", "d e", "f a b c d"};
  std::string src_text;
  for (const std::string& s : sources) src_text += s + "\n";
  const Result translated =
      run("translate -m " + model() + " -i " + write("score.in", src_text) + " --beam-size 4 --n-best 4 --normalize 0 --precision fp32");
  ASSERT_EQ(translated.status, 0) << translated.err_text;
  ASSERT_EQ(translated.out.size(), 12u);
  std::string pair_src, pair_tgt;
  std::vector<double> log_probs;
  std::vector<size_t> target_tokens;
  for (const std::string& line : translated.out) {
    const auto fields = split(line, " ||| ");
    ASSERT_EQ(fields.size(), 3u);
    const size_t source_tokens = words(sources.at(std::stoul(fields[0]))).size();
    const size_t tokens = words(fields[1]).size();
    if (tokens == 0 || tokens == 2 * (source_tokens + 1) + 10) continue;  // empty, or cut at the limit
    pair_src += sources[std::stoul(fields[0])] + "\n";
    pair_tgt += fields[1] + "\n";
    log_probs.push_back(std::stod(fields[2]));
    target_tokens.push_back(tokens);
  }
  ASSERT_GE(log_probs.size(), 3u) << translated.out_text;
  const Result scored = run("score -m " + model() + " --src " + write("score.src", pair_src) + " --tgt " +
                            write("score.tgt", pair_tgt) + " --batch-size 2 --threads 2");
  ASSERT_EQ(scored.status, 0) << scored.err_text;
  ASSERT_EQ(scored.out.size(), log_probs.size());
  for (size_t k = 0; k < log_probs.size(); ++k) {
    const auto numbers = words(scored.out[k]);
    ASSERT_EQ(numbers.size(), 2u) << scored.out[k];
    const double log_prob = std::stod(numbers[0]), perplexity = std::stod(numbers[1]);
    EXPECT_NEAR(log_prob, log_probs[k], 1e-3 * std::abs(log_probs[k]) + 1e-4);
    EXPECT_NEAR(perplexity, std::exp(-log_prob / static_cast<double>(target_tokens[k] + 1)), 1e-3 * perplexity);
  }
}

// A translation may contain <unk>; scored, it must give the log-probability translate gave
// it, so <unk> has to come back from the tokenizer as the one token it was.
TEST_F(Cli, TranslationWithUnkScoresAsTranslated) {
  const std::string unk_model = dir_->path("unk_model");
  write_model(unk_model, 3.0f);  // <unk> competes with the words
  const std::string sources = write("unk.in", "a b c\nd e\nf a b c d\nc c\n");
  const Result translated =
      run("translate -m " + unk_model + " -i " + sources + " --beam-size 4 --n-best 4 --normalize 0 --precision fp32");
  ASSERT_EQ(translated.status, 0) << translated.err_text;
  const std::vector<std::string> source_lines = lines_of(file_text(sources));
  std::string pair_src, pair_tgt;
  std::vector<double> log_probs;
  for (const std::string& line : translated.out) {
    const auto fields = split(line, " ||| ");
    ASSERT_EQ(fields.size(), 3u);
    const std::string& source = source_lines.at(std::stoul(fields[0]));
    const size_t tokens = words(fields[1]).size();
    if (fields[1].find("<unk>") == std::string::npos || tokens == 2 * (words(source).size() + 1) + 10) continue;
    pair_src += source + "\n";
    pair_tgt += fields[1] + "\n";
    log_probs.push_back(std::stod(fields[2]));
  }
  ASSERT_GE(log_probs.size(), 1u) << "no translation with <unk>: " << translated.out_text;
  const Result scored = run("score -m " + unk_model + " --src " + write("unk.src", pair_src) + " --tgt " +
                            write("unk.tgt", pair_tgt));
  ASSERT_EQ(scored.status, 0) << scored.err_text;
  ASSERT_EQ(scored.out.size(), log_probs.size());
  for (size_t k = 0; k < log_probs.size(); ++k)
    EXPECT_NEAR(std::stod(words(scored.out[k]).at(0)), log_probs[k], 1e-3 * std::abs(log_probs[k]) + 1e-4)
        << lines_of(pair_tgt)[k];
}

// --replace-unk on a model that likes <unk>: no <unk> is left, each replacement is a
// source word (or, with --unk-dictionary, its entry).
TEST_F(Cli, ReplaceUnkLeavesNoUnk) {
  const std::string unk_model = dir_->path("unk_model2");
  write_model(unk_model, 3.0f);
  const std::string sources = write("replace.in", "a b c\nd e\nf a b c d\n");
  const Result plain = run("translate -m " + unk_model + " -i " + sources);
  ASSERT_EQ(plain.status, 0) << plain.err_text;
  ASSERT_NE(plain.out_text.find("<unk>"), std::string::npos) << "the test needs <unk> in the output";
  const Result replaced = run("translate -m " + unk_model + " -i " + sources + " --replace-unk");
  ASSERT_EQ(replaced.status, 0) << replaced.err_text;
  ASSERT_EQ(replaced.out.size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    const auto before = words(plain.out[k]), after = words(replaced.out[k]);
    ASSERT_EQ(before.size(), after.size());
    for (size_t i = 0; i < before.size(); ++i)
      if (before[i] == "<unk>")
        EXPECT_NE(std::string("abcdef").find(after[i]), std::string::npos) << replaced.out[k];
      else
        EXPECT_EQ(before[i], after[i]);
  }
  const std::string dictionary = write("unk.dict", "a A\nb B\nc C\nd D\ne E\nf F\n");
  const Result translated =
      run("translate -m " + unk_model + " -i " + sources + " --replace-unk --unk-dictionary " + dictionary);
  ASSERT_EQ(translated.status, 0) << translated.err_text;
  EXPECT_EQ(translated.out_text.find("<unk>"), std::string::npos);
  EXPECT_NE(translated.out_text.find_first_of("ABCDEF"), std::string::npos) << translated.out_text;
}

// An ensemble scores a translation with the mean of its models' log-probabilities: what
// translate -m A -m B reports is (log p_A + log p_B) / 2, each scored alone, and what score
// -m A -m B reports too. Models with other vocabularies are refused.
TEST_F(Cli, EnsembleAveragesLogProbabilities) {
  const std::string other = dir_->path("ensemble_other");
  write_model(other, 1.0f);
  const std::string sources = write("ensemble.in", "a b c\nd e\nf a b c d\n");
  const std::string ensemble = "-m " + model() + " -m " + other;
  const Result translated =
      run("translate " + ensemble + " -i " + sources + " --n-best 2 --normalize 0 --precision fp32");
  ASSERT_EQ(translated.status, 0) << translated.err_text;
  ASSERT_EQ(translated.out.size(), 6u);
  const std::vector<std::string> source_lines = lines_of(file_text(sources));
  std::string pair_src, pair_tgt;
  std::vector<double> ensemble_log_probs;
  for (const std::string& line : translated.out) {
    const auto fields = split(line, " ||| ");
    ASSERT_EQ(fields.size(), 3u) << line;
    if (words(fields[1]).empty()) continue;  // score does not score empty translations
    pair_src += source_lines.at(std::stoul(fields[0])) + "\n";
    pair_tgt += fields[1] + "\n";
    ensemble_log_probs.push_back(std::stod(fields[2]));
  }
  const size_t n = ensemble_log_probs.size();
  ASSERT_GE(n, 2u) << translated.out_text;
  const std::string src = write("ensemble.src", pair_src), tgt = write("ensemble.tgt", pair_tgt);
  const Result a = run("score -m " + model() + " --src " + src + " --tgt " + tgt);
  const Result b = run("score -m " + other + " --src " + src + " --tgt " + tgt);
  const Result both = run("score " + ensemble + " --src " + src + " --tgt " + tgt);
  ASSERT_EQ(a.out.size(), n);
  ASSERT_EQ(b.out.size(), n);
  ASSERT_EQ(both.out.size(), n);
  for (size_t k = 0; k < n; ++k) {
    const double mean = (std::stod(words(a.out[k]).at(0)) + std::stod(words(b.out[k]).at(0))) / 2;
    EXPECT_NEAR(ensemble_log_probs[k], mean, 1e-3 * std::abs(mean) + 1e-4) << translated.out[k];
    EXPECT_NEAR(std::stod(words(both.out[k]).at(0)), mean, 1e-4 * std::abs(mean) + 1e-5);
  }
  EXPECT_NE(std::stod(words(a.out[0]).at(0)), std::stod(words(b.out[0]).at(0))) << "the two models must differ";
  const Result mismatched = run("translate -m " + model() + " -m " + dir_->path("no-such-model"), sources);
  EXPECT_EQ(mismatched.status, 1);
}

// Output paths that would destroy data: -o naming the input is refused before it is
// truncated; a symlink stays a symlink (its target gets the file); a FIFO stays a FIFO.
TEST_F(Cli, OutputNeverDestroysInputsLinksOrSpecialFiles) {
  const std::string input = write("same.txt", "a b c\nd e\n");
  for (const std::string& command : {"translate -m " + model(), std::string("tokenize")}) {
    const Result r = run(command + " -i " + input + " -o " + input);
    EXPECT_EQ(r.status, 1) << command;
    EXPECT_NE(r.err_text.find("is also the input"), std::string::npos) << r.err_text;
    EXPECT_EQ(file_text(input), "a b c\nd e\n") << command;
  }
  namespace fs = std::filesystem;
  const std::string target = dir_->path("vocab.target"), link = dir_->path("vocab.link");
  write("vocab.target", "old\n");
  fs::create_symlink(target, link);
  ASSERT_EQ(run("vocab -i " + input + " -o " + link + " --min-count 1").status, 0);
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_NE(file_text(target).find("<unk>"), std::string::npos);
  const std::string fifo = dir_->path("vocab.fifo"), copy = dir_->path("vocab.copy");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(std::system(("cat " + fifo + " > " + copy + " &").c_str()), 0);
  ASSERT_EQ(run("vocab -i " + input + " -o " + fifo + " --min-count 1").status, 0);
  for (int k = 0; k < 100 && file_text(copy).find("<unk>") == std::string::npos; ++k) usleep(20000);
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_NE(file_text(copy).find("<unk>"), std::string::npos);
}

// Output that cannot be written is an error, not a success (> /dev/full).
TEST_F(Cli, UnwritableStdoutIsAnError) {
  const std::string text = write("full.txt", "a b c\n");
  for (const std::string& command : {"bleu -r " + text + " --hyp " + text, "score -m " + model() + " --src " + text +
                                         " --tgt " + text, "translate -m " + model() + " -i " + text}) {
    const int raw = std::system((std::string(RNNSEARCH_BINARY) + " " + command + " > /dev/full 2>/dev/null").c_str());
    EXPECT_EQ(WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, 1) << command;
  }
}

// A read error on standard input is an error, not an end of input (here stdin is a
// directory, whose read(2) fails with EISDIR; it gave no output and exit 0).
TEST_F(Cli, UnreadableStdinIsAnError) {
  const std::string directory = dir_->path("");
  for (const std::string& command : {std::string("tokenize"), "translate -m " + model(), "bleu -r " + write("r.txt", "a\n")}) {
    const Result r = run(command, directory);
    EXPECT_EQ(r.status, 1) << command;
    ASSERT_EQ(r.errors.size(), 1u) << command << ": " << r.err_text;
    EXPECT_NE(r.errors[0].find("stdin"), std::string::npos) << r.errors[0];
    EXPECT_NE(r.errors[0].find("Is a directory"), std::string::npos) << r.errors[0];
  }
}

// Running out of memory is an error message and exit 1, not a signal: a beam of ten
// million hypotheses under a 600 MB address-space limit (it was SIGSEGV: Eigen's resize
// freed a workspace before the failing allocation, and its destructor freed it again).
TEST_F(Cli, OutOfMemoryIsAnErrorNotASignal) {
  if (test::kAddressSanitizer) GTEST_SKIP() << "AddressSanitizer reserves more address space than the limit";
  const std::string input = write("oom.in", "a b c d e f\n");
  const std::string command = "ulimit -v 600000; exec " + std::string(RNNSEARCH_BINARY) + " translate -m " + model() +
                              " -i " + input + " --beam-size 10000000 > /dev/null 2> " + dir_->path("oom.err");
  const int raw = std::system(("sh -c '" + command + "'").c_str());
  EXPECT_TRUE(WIFEXITED(raw) && WEXITSTATUS(raw) == 1) << "status " << raw;
  EXPECT_NE(file_text(dir_->path("oom.err")).find("out of memory"), std::string::npos)
      << file_text(dir_->path("oom.err"));
}

TEST_F(Cli, ScoreHandlesEmptyAndInvalidLinesAndJson) {
  const std::string src = write("s.src", "a b\n\nc \xff\nd e f\n");
  const std::string tgt = write("s.tgt", "x y\nz\nw\nv x\n");
  const Result r = run("score -m " + model() + " --src " + src + " --tgt " + tgt + " --alignment hard");
  ASSERT_EQ(r.status, 0) << r.err_text;
  ASSERT_EQ(r.out.size(), 4u);
  EXPECT_EQ(r.out[1], "");
  EXPECT_EQ(r.out[2], "");
  EXPECT_EQ(split(r.out[0], " ||| ").size(), 2u) << r.out[0];
  EXPECT_LT(std::stod(words(r.out[3])[0]), 0.0);
  EXPECT_NE(r.err_text.find(":2: warning: empty source"), std::string::npos) << r.err_text;
  EXPECT_NE(r.err_text.find(":3: warning: invalid UTF-8"), std::string::npos) << r.err_text;

  const Result j = run("score -m " + model() + " --src " + src + " --tgt " + tgt + " --format json");
  ASSERT_EQ(j.status, 0) << j.err_text;
  ASSERT_EQ(j.out.size(), 4u);
  const auto record = nlohmann::json::parse(j.out[3]);
  EXPECT_EQ(record.at("target"), nlohmann::json({"v", "x"}));
  expect_distributions(record.at("alignment"), 3, 4, j.out[3]);
  EXPECT_TRUE(nlohmann::json::parse(j.out[1]).at("score").is_null()) << "not scored";
}

TEST_F(Cli, ScoreLineCountMismatchIsAnError) {
  const Result r = run("score -m " + model() + " --src " + write("m.src", "a\nb\nc\n") + " --tgt " +
                    write("m.tgt", "x\ny\n"));
  EXPECT_NE(r.status, 0);
  ASSERT_EQ(r.errors.size(), 1u) << r.err_text;
  EXPECT_NE(r.errors[0].find("differ in length"), std::string::npos) << r.errors[0];
  EXPECT_TRUE(r.out.empty());
}

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

TEST_F(Cli, HeatmapsWriteIndexAndOneSvgPerSentenceUpToTheLimit) {
  const std::string input = write("heat.txt", "a b c\n\nd e\nf\nc c a\n");
  for (const auto& [limit, svgs] : {std::pair<std::string, size_t>{"100", 4}, {"2", 2}}) {
    const std::string out = dir_->path("heatmaps-" + limit);
    const Result r =
        run("translate -m " + model() + " -i " + input + " --heatmaps " + out + " --heatmaps-limit " + limit);
    ASSERT_EQ(r.status, 0) << r.err_text;
    EXPECT_EQ(r.out.size(), 5u);
    const std::string index = out + "/index.html";
    EXPECT_TRUE(std::filesystem::exists(index));
    EXPECT_NE(r.err_text.find(index), std::string::npos) << r.err_text;
    size_t count = 0;
    for (const auto& entry : std::filesystem::directory_iterator(out)) count += entry.path().extension() == ".svg";
    EXPECT_EQ(count, svgs);
  }
  const std::string scored = dir_->path("heatmaps-score");
  const Result r = run("score -m " + model() + " --src " + write("h.src", "a b\nc\n") + " --tgt " +
                    write("h.tgt", "x\ny z\n") + " --heatmaps " + scored);
  ASSERT_EQ(r.status, 0) << r.err_text;
  EXPECT_TRUE(std::filesystem::exists(scored + "/index.html"));
}

// rnnsearch shortlist learns MODEL/lex.s2t; a shortlist that keeps every target word
// translates exactly as without it (in fp32, which the default precision, auto, picks with a
// shortlist), and a broken table is a one-line error naming its line.
TEST_F(Cli, ShortlistLearnsATableAndKeepingEveryWordChangesNothing) {
  const std::string src = write("lex.src", "a b c\nd e\na f\nb c d\n");
  const std::string tgt = write("lex.tgt", "x y z\nw v\nx v\ny z w\n");
  const std::string table = dir_->path("lex.s2t");
  const Result learned = run("shortlist -m " + model() + " --train-src " + src + " --train-tgt " + tgt + " -o " + table);
  ASSERT_EQ(learned.status, 0) << learned.err_text;
  const std::vector<std::string> entries = lines_of(file_text(table));
  ASSERT_FALSE(entries.empty());
  for (const std::string& entry : entries) EXPECT_EQ(words(entry).size(), 3u) << "target source prob: " << entry;

  const std::string input = mixed_input();
  const std::string translate = "translate -m " + model() + " -i " + input + " --max-length 40 --beam-size 3 ";
  const Result full = run(translate + "--precision fp32");
  const Result everything = run(translate + "--shortlist " + table + " 1000 1");
  ASSERT_EQ(everything.status, 0) << everything.err_text;
  EXPECT_EQ(everything.out, full.out);
  const Result short_list = run(translate + "--shortlist " + table + " 0 2");
  ASSERT_EQ(short_list.status, 0) << short_list.err_text;
  EXPECT_EQ(short_list.out.size(), kMixedLines) << "line-aligned with the input";

  const std::string broken = write("broken.s2t", "x a 0.5\ny b\n");
  const Result bad = run(translate + "--shortlist " + broken + " 10 5");
  EXPECT_EQ(bad.status, 1);
  ASSERT_EQ(bad.errors.size(), 1u) << bad.err_text;
  EXPECT_NE(bad.errors[0].find(broken + ":2:"), std::string::npos) << bad.errors[0];
  for (const std::string sizes : {"10", "ten 5", "10 1.5"}) {
    const Result r = run(translate + "--shortlist " + table + " " + sizes);
    EXPECT_EQ(r.status, 1) << sizes;
    ASSERT_EQ(r.errors.size(), 1u) << sizes << ": " << r.err_text;
    EXPECT_NE(r.errors[0].find("--shortlist"), std::string::npos) << r.errors[0];
  }
}

// bf16 and int8 change the logits by a few roundings: on this model not enough to change a
// translation. Where the CPU lacks the instructions, they compute in fp32 and say so. The
// default, auto, picks one of them (and fp32 with a shortlist: the test above).
TEST_F(Cli, LowPrecisionTranslatesAsFp32Does) {
  const std::string input = mixed_input(), translate = precision_command(input);
  const Result fp32 = run(translate + "--precision fp32");
  ASSERT_EQ(fp32.status, 0) << fp32.err_text;
  for (const std::string precision : {"bf16", "int8", "auto"}) {
    const Result low = run(translate + "--precision " + precision);
    ASSERT_EQ(low.status, 0) << precision << ": " << low.err_text;
    EXPECT_EQ(low.out, fp32.out) << precision;
    if (precision == "auto") continue;  // tested above
    const Result with_shortlist = run(translate + "--precision " + precision + " --shortlist " + input + " 10 1");
    EXPECT_EQ(with_shortlist.status, 1) << precision;
    ASSERT_EQ(with_shortlist.errors.size(), 1u) << with_shortlist.err_text;
    EXPECT_NE(with_shortlist.errors[0].find("do not combine"), std::string::npos) << with_shortlist.errors[0];
  }
}

// RNNSEARCH_CPU takes the paths a smaller CPU would: on an AVX-512 machine the fallbacks of
// --precision bf16 (a warning, then fp32) run here too, and int8 runs the products of AVX2
// without VNNI, or falls back below AVX2. An unknown value is a one-line error that names
// the variable.
TEST_F(Cli, RnnsearchCpuForcesTheFallbacks) {
  const std::string translate = precision_command(mixed_input());
  const Result fp32 = run(translate + "--precision fp32");
  ASSERT_EQ(fp32.status, 0) << fp32.err_text;
  struct Case {
    std::string cap, precision, runs_in;
  };
  for (const Case& c : std::vector<Case>{{"avx2", "bf16", "fp32"},
                                         {"avx2", "int8", int8_supported() ? "int8" : "fp32"},
                                         {"avx2", "auto", int8_supported() ? "int8" : "fp32"},
                                         {"sse41", "bf16", "fp32"},
                                         {"sse41", "int8", "fp32"},
                                         {"sse41", "auto", "fp32"}}) {
    const std::string what = "RNNSEARCH_CPU=" + c.cap + " --precision " + c.precision;
    const Result low = run(translate + "--precision " + c.precision, "", "RNNSEARCH_CPU=" + c.cap);
    ASSERT_EQ(low.status, 0) << what << ": " << low.err_text;
    EXPECT_EQ(low.out, fp32.out) << what;
    EXPECT_NE(low.err_text.find("projection in " + c.runs_in + " (CPU "), std::string::npos) << what << low.err_text;
    EXPECT_NE(low.err_text.find("(RNNSEARCH_CPU=" + c.cap + ")"), std::string::npos) << low.err_text;
    const bool falls_back = c.precision != "auto" && c.runs_in != c.precision;
    EXPECT_EQ(low.err_text.find("--precision " + c.precision + " needs a CPU with") != std::string::npos, falls_back)
        << what << ": " << low.err_text;
  }
  const Result unknown = run(translate, "", "RNNSEARCH_CPU=avx3");
  EXPECT_EQ(unknown.status, 1);
  ASSERT_EQ(unknown.err.size(), 1u) << unknown.err_text;
  EXPECT_NE(unknown.err[0].find("RNNSEARCH_CPU must be native, avx512, avx2 or sse41, not 'avx3'"), std::string::npos)
      << unknown.err[0];
  EXPECT_TRUE(unknown.out.empty());
}

TEST_F(Cli, MissingModelIsOneLineError) {
  const Result r = run("translate -m " + dir_->path("no-such-model"), mixed_input());
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(r.errors.size(), 1u) << r.err_text;
}

// Every numeric option is checked before any work starts: one line naming the option and
// the value, prefixed once, and a non-zero exit.
TEST_F(Cli, InvalidNumericOptionsAreOneLineErrors) {
  const std::string train = "train --train-src a --train-tgt b --valid-src c --valid-tgt d -m " + dir_->path("m") + " ";
  const std::string translate = "translate -m " + dir_->path("no-such-model") + " ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {train + "--lr -1", "--lr must be"},          {train + "--dropout 1.5", "--dropout must be"},
      {train + "--dropout nan", "--dropout must be"}, {train + "--clip-norm -1", "--clip-norm must be"},
      {train + "--batch-size 0", "--batch-size must be"}, {train + "--emb -1", "--emb must be"},
      {train + "--max-updates -5", "--max-updates must be"}, {train + "--patience -1", "--patience must be"},
      {translate + "--beam-size 0", "--beam-size must be"}, {translate + "--n-best -1", "--n-best must be"},
      {translate + "--batch-size 0", "--batch-size must be"}, {translate + "--normalize nan", "--normalize must be"},
      {train + "--precision fp16", "--precision must be auto, fp32, bf16 or int8, not 'fp16'"},
      {translate + "--precision half", "--precision must be auto, fp32, bf16 or int8, not 'half'"},
      {train + "--precision int8", "--precision int8 is for translate"},
      {train + "--subwords-sample 100", "--subwords-sample must be 0 (every sentence) or more than 100, not 100"},
      {train + "--subwords-sample -1", "--subwords-sample must be"},
      // a value or name holding Boost's own message placeholders (formatting them looped forever)
      {train + "--emb %value%", "'%25value%25'"}, {train + "--%canonical_option%", "%25canonical_option%25"}};
  for (const auto& [command, message] : cases) {
    const Result r = run(command, "");
    EXPECT_EQ(r.status, 1) << command;
    ASSERT_EQ(r.errors.size(), 1u) << command << ": " << r.err_text;
    EXPECT_NE(r.errors[0].find(message), std::string::npos) << r.errors[0];
    EXPECT_EQ(r.errors[0].find("error:"), r.errors[0].rfind("error:")) << "prefixed twice: " << r.errors[0];
  }
}

// A build without an optional library (docs/building.md) keeps the commands that need it, and
// they say in one line what is missing; --version names what the build has.
TEST_F(Cli, WhatTheBuildLacksIsOneLineNamingThePackage) {
  const Result version = run("--version", "");
  EXPECT_EQ(version.status, 0) << version.err_text;
  EXPECT_NE(version.out_text.find("subwords: "), std::string::npos) << version.out_text;
  EXPECT_NE(version.out_text.find("serve: "), std::string::npos) << version.out_text;
  const std::string tiny = std::string(RNNSEARCH_SOURCE_DIR) + "/corpora/tiny/";
  const std::string train = "train --train-src " + tiny + "train.en --train-tgt " + tiny + "train.de --valid-src " +
                            tiny + "val.en --valid-tgt " + tiny + "val.de --max-updates 1 --subwords 50 -m ";
  std::vector<std::pair<std::string, std::string>> cases;
  if (!rnnsearch::build_info().sentencepiece)
    cases.push_back({train + dir_->path("sp"), "this build has no SentencePiece, which subword units need (install "
                                               "libsentencepiece-dev and rebuild)"});
  if (!rnnsearch::build_info().http)
    cases.push_back({"serve -m " + dir_->path("no-such-model"),
                     "rnnsearch serve: error: this build has no HTTP library (install libcpp-httplib-dev and rebuild)"});
  if (cases.empty()) GTEST_SKIP() << "this build has SentencePiece and cpp-httplib";
  for (const auto& [command, message] : cases) {
    const Result r = run(command, "");
    EXPECT_EQ(r.status, 1) << command;
    ASSERT_EQ(r.errors.size(), 1u) << command << ": " << r.err_text;
    EXPECT_NE(r.errors[0].find(message), std::string::npos) << r.errors[0];
  }
}

}  // namespace
}  // namespace rnnsearch
