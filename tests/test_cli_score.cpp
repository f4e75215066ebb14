// rnnsearch score (forced decoding), run as the real binary on a tiny random model
// (support/cli.h): log-probabilities that agree with translate's, ensembles, bad lines.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rnnsearch/text/tokenizer.h"
#include "support/cli.h"

namespace rnnsearch {
namespace {

using namespace test;

// The n-best translations of three sources that `translate ranking` gives (in fp32: score
// has no --precision), as score's input: only translations that ended with </s> and are not
// empty (score adds </s>, and skips empty targets).
struct TranslatedPairs {
  std::string src, tgt;        // score's --src and --tgt text
  std::vector<double> scores;  // translate's score of each
  std::vector<size_t> target_tokens;
};

TranslatedPairs translated_pairs(const Result& translated, const std::vector<std::string>& sources) {
  TranslatedPairs pairs;
  EXPECT_EQ(translated.status, 0) << translated.err_text;
  EXPECT_EQ(translated.out.size(), 4 * sources.size());
  for (const std::string& line : translated.out) {
    const auto fields = split(line, " ||| ");
    EXPECT_EQ(fields.size(), 3u) << line;
    if (fields.size() != 3) continue;
    const size_t source_tokens = words(sources.at(std::stoul(fields[0]))).size();
    const size_t tokens = words(fields[1]).size();
    if (tokens == 0 || tokens == 2 * (source_tokens + 1) + 10) continue;  // empty, or cut at the limit
    pairs.src += sources[std::stoul(fields[0])] + "\n";
    pairs.tgt += fields[1] + "\n";
    pairs.scores.push_back(std::stod(fields[2]));
    pairs.target_tokens.push_back(tokens);
  }
  EXPECT_GE(pairs.scores.size(), 3u) << translated.out_text;
  return pairs;
}

const std::vector<std::string> kScoredSources = {"a b c", "d e", "f a b c d"};

// score of (source, translation) is the translation's log-probability: translate ranked
// its n-best with --normalize 0, i.e. by exactly that number.
TEST_F(Cli, ScoreOfATranslationIsItsLogProbability) {
  std::string src_text;
  for (const std::string& s : kScoredSources) src_text += s + "\n";
  const TranslatedPairs pairs = translated_pairs(
      run("translate -m " + model() + " -i " + write("score.in", src_text) + " --beam-size 4 --n-best 4 --normalize 0 --precision fp32"),
      kScoredSources);
  const Result scored = run("score -m " + model() + " --src " + write("score.src", pairs.src) + " --tgt " +
                            write("score.tgt", pairs.tgt) + " --batch-size 2 --threads 2");
  ASSERT_EQ(scored.status, 0) << scored.err_text;
  ASSERT_EQ(scored.out.size(), pairs.scores.size());
  for (size_t k = 0; k < pairs.scores.size(); ++k) {
    const auto numbers = words(scored.out[k]);
    ASSERT_EQ(numbers.size(), 2u) << scored.out[k];
    const double log_prob = std::stod(numbers[0]), perplexity = std::stod(numbers[1]);
    EXPECT_NEAR(log_prob, pairs.scores[k], 1e-3 * std::abs(pairs.scores[k]) + 1e-4);
    EXPECT_NEAR(perplexity, std::exp(-log_prob / static_cast<double>(pairs.target_tokens[k] + 1)), 1e-3 * perplexity);
  }
}

// With translate's ranking options, score prints a third number: the score translate ranked
// that translation by (length normalisation, word penalty, GNMT's length and coverage
// penalties, the coverage read from the forced decoding's attention); the JSON's "score" is
// the same number. --normalize and --length-penalty-alpha together are refused, as by translate.
TEST_F(Cli, ScoreRanksAsTranslateWithItsRankingOptions) {
  std::string src_text;
  for (const std::string& s : kScoredSources) src_text += s + "\n";
  for (const std::string ranking : {"--normalize 0.7 --word-penalty 0.4",
                                    "--length-penalty-alpha 0.6 --coverage-penalty 0.5 --word-penalty 0.3"}) {
    SCOPED_TRACE(ranking);
    const TranslatedPairs pairs = translated_pairs(
        run("translate -m " + model() + " -i " + write("rank.in", src_text) + " --beam-size 4 --n-best 4 --precision fp32 " + ranking),
        kScoredSources);
    const std::string files = " --src " + write("rank.src", pairs.src) + " --tgt " + write("rank.tgt", pairs.tgt);
    const Result scored = run("score -m " + model() + files + " --batch-size 2 " + ranking);
    const Result json_scored = run("score -m " + model() + files + " --format json " + ranking);
    ASSERT_EQ(scored.status, 0) << scored.err_text;
    ASSERT_EQ(json_scored.status, 0) << json_scored.err_text;
    ASSERT_EQ(scored.out.size(), pairs.scores.size());
    ASSERT_EQ(json_scored.out.size(), pairs.scores.size());
    for (size_t k = 0; k < pairs.scores.size(); ++k) {
      const auto numbers = words(scored.out[k]);
      ASSERT_EQ(numbers.size(), 3u) << scored.out[k];
      const double score = std::stod(numbers[2]);
      EXPECT_NEAR(score, pairs.scores[k], 1e-3 * std::abs(pairs.scores[k]) + 1e-4) << scored.out[k];
      EXPECT_NE(score, std::stod(numbers[0])) << "the options change the score, not the log-probability";
      EXPECT_NEAR(nlohmann::json::parse(json_scored.out[k])["score"].get<double>(), score, 1e-5 * std::abs(score));
    }
  }
  const Result both = run("score -m " + model() + " --src " + write("b.src", "a b\n") + " --tgt " +
                          write("b.tgt", "x y\n") + " --normalize 1 --length-penalty-alpha 0.6");
  EXPECT_NE(both.status, 0);
  ASSERT_EQ(both.errors.size(), 1u) << both.err_text;
  EXPECT_NE(both.errors[0].find("--length-penalty-alpha and --normalize both rank by length"), std::string::npos);
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

// -o writes what standard output gets; naming an input as the output is refused before
// anything is written, and the input stays as it was.
TEST_F(Cli, ScoreOutputFileIsStdoutsTextAndNeverAnInput) {
  const std::string src = write("o.src", "a b\nc\n"), tgt = write("o.tgt", "x y\nz\n");
  const std::string command = "score -m " + model() + " --src " + src + " --tgt " + tgt;
  const Result to_stdout = run(command);
  ASSERT_EQ(to_stdout.status, 0) << to_stdout.err_text;
  const Result to_file = run(command + " -o " + dir_->path("scores.txt"));
  ASSERT_EQ(to_file.status, 0) << to_file.err_text;
  EXPECT_TRUE(to_file.out.empty());
  EXPECT_EQ(file_text(dir_->path("scores.txt")), to_stdout.out_text);
  const Result refused = run(command + " -o " + tgt);
  EXPECT_EQ(refused.status, 1);
  ASSERT_EQ(refused.errors.size(), 1u) << refused.err_text;
  EXPECT_NE(refused.errors[0].find(tgt), std::string::npos) << refused.errors[0];
  EXPECT_EQ(file_text(tgt), "x y\nz\n");
}

// Progress as translate shows it (test_cli_translate): pairs left unscored count at once,
// then each batch; standard output is the same with it, without it and on a terminal.
TEST_F(Cli, ScoreProgressIsOnStderrAloneAndStdoutIsTheSame) {
  std::string src, tgt;
  for (int k = 0; k < 20; ++k) {
    src += std::string(1, "abcdef"[k % 6]) + " " + "abcdef"[k * 5 % 6] + "\n";
    tgt += k == 7 ? "\n" : std::string(1, "xyzwv"[k % 5]) + "\n";  // line 8: not scored
  }
  const std::string command = "score -m " + model() + " --src " + write("progress.src", src) + " --tgt " +
                              write("progress.tgt", tgt) + " --batch-size 4 --threads 1 ";
  const Result quiet = run(command + "--quiet");
  ASSERT_EQ(quiet.status, 0);
  ASSERT_EQ(quiet.out.size(), 20u);
  const Result plain = run(command + "--log-every 0");
  EXPECT_EQ(plain.out_text, quiet.out_text);
  std::vector<int> counts;
  for (const std::string& line : plain.err)
    if (line.rfind("rnnsearch score: scoring: ", 0) == 0 && line.find("/20 pairs") != std::string::npos)
      counts.push_back(std::stoi(line.substr(std::string("rnnsearch score: scoring: ").size())));
  ASSERT_GE(counts.size(), 3u) << plain.err_text;
  EXPECT_EQ(counts.front(), 1);  // the pair left unscored
  EXPECT_EQ(counts.back(), 20);
  EXPECT_TRUE(std::is_sorted(counts.begin(), counts.end()));
  EXPECT_NE(plain.err_text.find("rnnsearch score: scoring: done, 20 pairs in "), std::string::npos) << plain.err_text;

  const BinaryRun terminal = run_shell_on_terminal(std::string(RNNSEARCH_BINARY) + " " + command, *dir_);
  ASSERT_EQ(terminal.status, 0) << terminal.err;
  EXPECT_EQ(terminal.out, quiet.out_text);
  EXPECT_NE(terminal.err.find("\r\033[Krnnsearch score: scoring: 0/20 pairs (0.0%)"), std::string::npos) << terminal.err;
}

}  // namespace
}  // namespace rnnsearch
