// `rnnsearch train` as users run it: on corpora/tiny with a tiny model. Resuming after an
// interruption (a budget that ran out, or SIGTERM) ends with exactly the weights of an
// uninterrupted run (--threads 1); bad input fails with one line naming the file.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <filesystem>
#include <functional>
#include <set>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <tuple>

#include "rnnsearch/align/links.h"
#include "rnnsearch/io/atomic_file.h"
#include "rnnsearch/io/npz.h"
#include "rnnsearch/util/build_info.h"
#include "support/fixtures.h"
#include "support/run_binary.h"
#include "support/temp_dir.h"

namespace rnnsearch {
namespace {

const std::string kTiny = std::string(RNNSEARCH_SOURCE_DIR) + "/corpora/tiny/";

std::string train_command(const std::string& model, const std::string& extra) {
  return std::string(RNNSEARCH_BINARY) + " train --train-src " + kTiny + "train.en --train-tgt " + kTiny +
         "train.de --valid-src " + kTiny + "val.en --valid-tgt " + kTiny + "val.de --model " + model +
         " --emb 8 --hidden 12 --maxout 6 --batch-size 16 --threads 1 --dropout 0.2 --valid-freq 7 " + extra;
}

// train_command with another --valid-freq than its 7 (0: validate at epoch ends).
std::string with_valid_freq(std::string command, long n) {
  return command.replace(command.find("--valid-freq 7"), 14, "--valid-freq " + std::to_string(n));
}

// Runs a shell command; returns its exit status and stderr.
std::pair<int, std::string> run(const std::string& command, const test::TempDir& dir) {
  const test::BinaryRun r = test::run_shell(command, dir);
  return {r.status, r.err};
}

class ResumedRun : public ::testing::TestWithParam<std::string> {};

// Also with every training feature that keeps state or draws random numbers: the weight
// average lives in optimizer.npz, label smoothing and separate dropout rates in each update.
TEST_P(ResumedRun, EqualsUninterruptedRun) {
  test::TempDir dir;
  const std::string options = GetParam();
  ASSERT_EQ(run(train_command(dir.path("straight"), "--max-updates 30 " + options), dir).first, 0);
  ASSERT_EQ(run(train_command(dir.path("resumed"), "--max-updates 12 " + options), dir).first, 0);
  const auto [status, err] = run(train_command(dir.path("resumed"), "--max-updates 30 " + options), dir);
  ASSERT_EQ(status, 0) << err;
  EXPECT_NE(err.find("resuming at update 12"), std::string::npos) << err;
  // (EXPECT_TRUE, not EXPECT_EQ: a failure must not print megabytes of binary)
  EXPECT_TRUE(read_file(dir.path("resumed/model.npz")) == read_file(dir.path("straight/model.npz")));
  EXPECT_TRUE(read_file(dir.path("resumed/optimizer.npz")) == read_file(dir.path("straight/optimizer.npz")));
  EXPECT_TRUE(read_file(dir.path("resumed/model.best.npz")) == read_file(dir.path("straight/model.best.npz")));
}

INSTANTIATE_TEST_SUITE_P(Features, ResumedRun,
                         ::testing::Values("", "--exponential-smoothing 0.05 --label-smoothing 0.1 "
                                               "--dropout-embeddings 0.1 --dropout-output 0.3",
                                           "--dropout-src 0.2 --dropout-trg 0.3 --dec-cell-base-depth 2",
                                           "--accumulate 3", "--lr-warmup 10 --lr-decay-inv-sqrt 15 --save-freq 5",
                                           "--layer-normalization --exponential-smoothing 0.05",
                                           "--enc-cell-depth 3 --dec-cell-base-depth 3 --enc-depth 2 --skip "
                                           "--layer-normalization --label-smoothing 0.1",
                                           "--enc-cell-depth 2 --dec-cell-base-depth 2 --dec-cell-high-depth 2 "
                                           "--enc-depth 2 --dec-depth 2 --skip --layer-normalization --dropout-rnn 0.3"));

// The first update of a 4-update warm-up takes a quarter of the rate: the same weights as a
// run with --lr a quarter of the default (Adam's first step is proportional to the rate).
TEST(Train, WarmupScalesTheRateOfEachUpdate) {
  test::TempDir dir;
  ASSERT_EQ(run(train_command(dir.path("warmup"), "--max-updates 1 --lr-warmup 4"), dir).first, 0);
  ASSERT_EQ(run(train_command(dir.path("quarter"), "--max-updates 1 --lr 0.00025"), dir).first, 0);
  ASSERT_EQ(run(train_command(dir.path("full"), "--max-updates 1"), dir).first, 0);
  EXPECT_TRUE(read_file(dir.path("warmup/model.npz")) == read_file(dir.path("quarter/model.npz")));
  EXPECT_FALSE(read_file(dir.path("warmup/model.npz")) == read_file(dir.path("full/model.npz")));
}

// --lr-decay 0.5 --lr-decay-stalled 2: the rate halves at every second validation in a row
// without improvement (with --lr 0 none improves after the first), logged, and the factor
// is kept in progress.json across a resume.
TEST(Train, StalledValidationsDecayTheRate) {
  test::TempDir dir;
  const std::string options = "--lr 0 --lr-decay 0.5 --lr-decay-stalled 2 ";
  ASSERT_EQ(run(train_command(dir.path("m"), options + "--max-updates 20"), dir).first, 0);
  const auto [status, err] = run(train_command(dir.path("m"), options + "--max-updates 40"), dir);
  ASSERT_EQ(status, 0) << err;
  const nlohmann::json progress = nlohmann::json::parse(read_file(dir.path("m/progress.json")));
  const int stalled = progress.at("validations_without_improvement").get<int>();
  ASSERT_GE(stalled, 5);
  EXPECT_EQ(progress.at("lr_scale").get<double>(), std::pow(0.5, stalled / 2));
  const std::string log = read_file(dir.path("m/train.log"));
  size_t decays = 0;
  for (size_t at = log.find("learning rate decayed"); at != std::string::npos; at = log.find("learning rate decayed", at + 1))
    ++decays;
  EXPECT_EQ(decays, static_cast<size_t>(stalled / 2)) << log;
}

// The updates of the log's validation lines, and how many of them name an epoch end.
std::pair<std::vector<long>, int> validations(const std::string& log) {
  std::vector<long> updates;
  int epoch_ends = 0;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("valid ", 0) != 0) continue;
    epoch_ends += line.find("(end of epoch") != std::string::npos;
    updates.push_back(std::stol(line.substr(line.find("update ") + 7)));
  }
  return {updates, epoch_ends};
}

// --valid-freq 7 over 40 updates (epochs of 19: 300 pairs, batches of 16): validations at
// 7, 14, ..., 35 and at the run's end only, as Marian's; without it, at each epoch end.
TEST(Train, ValidFreqValidatesEveryNUpdatesAndAtTheEnd) {
  test::TempDir dir;
  ASSERT_EQ(run(train_command(dir.path("freq"), "--max-updates 40"), dir).first, 0);
  const auto [updates, epoch_ends] = validations(read_file(dir.path("freq/train.log")));
  EXPECT_EQ(updates, (std::vector<long>{7, 14, 21, 28, 35, 40}));
  EXPECT_EQ(epoch_ends, 0);
  ASSERT_EQ(run(with_valid_freq(train_command(dir.path("epochs"), "--max-epochs 2"), 0), dir).first, 0);
  const auto [epoch_updates, ends] = validations(read_file(dir.path("epochs/train.log")));
  EXPECT_EQ(epoch_updates, (std::vector<long>{19, 38}));
  EXPECT_EQ(ends, 2);
}

// With --valid-freq 19 and epochs of 19 updates the checkpoint of update 19 is taken at the
// epoch's last batch, before the epoch advances (epoch ends save nothing of their own): the
// resumed run starts the next epoch and ends equal to the bit to an uninterrupted one.
TEST(Train, ResumesFromACheckpointAtAnEpochsLastBatch) {
  test::TempDir dir;
  const auto command = [&](const std::string& model, const std::string& updates) {
    return with_valid_freq(train_command(dir.path(model), "--max-updates " + updates), 19);
  };
  ASSERT_EQ(run(command("straight", "30"), dir).first, 0);
  ASSERT_EQ(run(command("resumed", "19"), dir).first, 0);
  EXPECT_EQ(nlohmann::json::parse(read_file(dir.path("resumed/progress.json"))).at("batch_in_epoch").get<long>(), 19);
  const auto [status, err] = run(command("resumed", "30"), dir);
  ASSERT_EQ(status, 0) << err;
  EXPECT_NE(err.find("resuming at update 19"), std::string::npos) << err;
  EXPECT_TRUE(read_file(dir.path("resumed/model.npz")) == read_file(dir.path("straight/model.npz")));
  EXPECT_TRUE(read_file(dir.path("resumed/optimizer.npz")) == read_file(dir.path("straight/optimizer.npz")));
}

// --valid-metrics bleu,cross-entropy: both figures in every validation line, BLEU selects
// model.best.npz, and with smoothing the best weights are the average, not the latest.
TEST(Train, ValidBleuSelectsAndSmoothedWeightsAreSaved) {
  test::TempDir dir;
  const auto [status, err] = run(
      train_command(dir.path("m"), "--max-updates 14 --valid-metrics bleu,cross-entropy --exponential-smoothing 0.2"),
      dir);
  ASSERT_EQ(status, 0) << err;
  const std::string log = read_file(dir.path("m/train.log"));
  EXPECT_NE(log.find(" ppl "), std::string::npos) << log;
  EXPECT_NE(log.find(" bleu "), std::string::npos) << log;
  EXPECT_NE(log.find("best validation BLEU"), std::string::npos) << log;
  EXPECT_FALSE(read_file(dir.path("m/model.best.npz")) == read_file(dir.path("m/model.npz")));
  const auto [bad, bad_err] = run(train_command(dir.path("x"), "--valid-metrics bleu,rouge"), dir);
  EXPECT_EQ(bad, 1);
  EXPECT_NE(bad_err.find("rouge"), std::string::npos) << bad_err;
}

// --valid-metrics chrf,bleu: chrF2 of the translations selects model.best.npz, and every
// validation line has both figures.
TEST(Train, ValidChrfSelects) {
  test::TempDir dir;
  const auto [status, err] = run(train_command(dir.path("m"), "--max-updates 7 --valid-metrics chrf,bleu"), dir);
  ASSERT_EQ(status, 0) << err;
  const std::string log = read_file(dir.path("m/train.log"));
  EXPECT_NE(log.find(" bleu "), std::string::npos) << log;
  EXPECT_NE(log.find(" chrf "), std::string::npos) << log;
  EXPECT_NE(log.find("best validation chrF2 "), std::string::npos) << log;
}

// kill -9 at random instants (saves every 7 updates, so many land inside a save): every
// interrupted directory resumes, and the run ends with exactly the weights of one that was
// never interrupted. scripts/kill_soak.sh runs the same for hundreds of kills.
TEST(Train, KilledAtRandomInstantsResumesExactly) {
  test::TempDir dir;
  const std::string budget = "--max-updates 300 ";
  ASSERT_EQ(run(train_command(dir.path("straight"), budget), dir).first, 0);
  std::mt19937 rng(7);
  int kills = 0;
  for (int attempt = 0; attempt < 60 && kills < 8; ++attempt) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      execl("/bin/sh", "sh", "-c", ("exec " + train_command(dir.path("killed"), budget) + " > /dev/null 2> " +
                                    dir.path("killed.err")).c_str(), nullptr);
      _exit(127);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(20, 250)(rng)));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) {
      ++kills;
      continue;
    }
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << read_file(dir.path("killed.err"));
    std::filesystem::remove_all(dir.path("killed"));  // finished before its kill: start over
  }
  const auto [status, err] = run(train_command(dir.path("killed"), budget), dir);  // finish
  ASSERT_EQ(status, 0) << err;
  EXPECT_GE(kills, 8);
  EXPECT_TRUE(read_file(dir.path("killed/model.npz")) == read_file(dir.path("straight/model.npz")));
  EXPECT_TRUE(read_file(dir.path("killed/optimizer.npz")) == read_file(dir.path("straight/optimizer.npz")));
  for (const auto& entry : std::filesystem::directory_iterator(dir.path("killed")))
    EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos) << entry.path();
}

// A full disk while a checkpoint is written (here a file-size limit, RLIMIT_FSIZE with SIGXFSZ
// ignored, so write(2) fails with EFBIG where a full disk gives ENOSPC) is an error naming
// the file, exit 1, and the previous set stays resumable: finishing the run ends
// bit-identical to one that never failed. The limit is set in turn below the size of the
// weights (model.best.npz, written first at update 21's validation, fails), then between it
// and optimizer.npz (the larger: the weights are saved, the optimizer state fails).
TEST(Train, FullDiskWhileSavingKeepsThePreviousSet) {
  test::TempDir dir;
  ASSERT_EQ(run(train_command(dir.path("straight"), "--max-updates 21"), dir).first, 0);
  ASSERT_EQ(run(train_command(dir.path("base"), "--max-updates 14"), dir).first, 0);
  const auto model_size = std::filesystem::file_size(dir.path("base/model.npz"));
  const auto optimizer_size = std::filesystem::file_size(dir.path("base/optimizer.npz"));
  ASSERT_LT(model_size, optimizer_size);
  for (const auto& [limit, failing] : {std::pair{model_size / 2, "model.best.npz"},
                                       std::pair{(model_size + optimizer_size) / 2, "optimizer.npz"}}) {
    std::filesystem::remove_all(dir.path("full"));
    std::filesystem::copy(dir.path("base"), dir.path("full"));
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      signal(SIGXFSZ, SIG_IGN);
      const rlimit rl{static_cast<rlim_t>(limit), static_cast<rlim_t>(limit)};
      setrlimit(RLIMIT_FSIZE, &rl);
      execl("/bin/sh", "sh", "-c", ("exec " + train_command(dir.path("full"), "--max-updates 21") + " > /dev/null 2> " +
                                    dir.path("full.err")).c_str(), nullptr);
      _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    const std::string err = read_file(dir.path("full.err"));
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << "status " << status << ": " << err;
    EXPECT_NE(err.find(failing), std::string::npos) << err;
    const auto [resumed, resume_err] = run(train_command(dir.path("full"), "--max-updates 21"), dir);
    ASSERT_EQ(resumed, 0) << resume_err;
    EXPECT_NE(resume_err.find("resuming at update 14"), std::string::npos) << resume_err;
    EXPECT_TRUE(read_file(dir.path("full/model.npz")) == read_file(dir.path("straight/model.npz"))) << failing;
    EXPECT_TRUE(read_file(dir.path("full/optimizer.npz")) == read_file(dir.path("straight/optimizer.npz")));
  }
}

TEST(Train, RefusesToResumeFromFilesOfDifferentCheckpoints) {
  test::TempDir dir;
  ASSERT_EQ(run(train_command(dir.path("m"), "--max-updates 8"), dir).first, 0);
  // What a crash after writing model.npz but before progress.json leaves behind: a
  // model.npz from another update than the optimizer state and the data position.
  ASSERT_EQ(run(train_command(dir.path("other"), "--max-updates 9"), dir).first, 0);
  std::filesystem::copy_file(dir.path("other/model.npz"), dir.path("m/model.npz"),
                             std::filesystem::copy_options::overwrite_existing);
  const auto [status, err] = run(train_command(dir.path("m"), "--max-updates 20"), dir);
  EXPECT_NE(status, 0);
  EXPECT_NE(err.find("m/model.npz"), std::string::npos) << err;
  EXPECT_NE(err.find("progress.json"), std::string::npos) << err;
}

// A resumed run keeps its config.json: a model option given that differs from it is refused
// with one line naming the option and both values, and nothing in the run changes; options
// left out, or given with the run's values, resume.
TEST(Train, ResumeRefusesADifferentModelOptionGiven) {
  test::TempDir dir;
  ASSERT_EQ(run(train_command(dir.path("m"), "--max-updates 4 --dec-cell-base-depth 2"), dir).first, 0);
  const std::string before = read_file(dir.path("m/model.npz"));
  for (const char* other : {"--dec-cell-base-depth 1", "--dec-cell-base-depth 3", "--layer-normalization",
                            "--dec-cell-base-depth 2 --enc-depth 2", "--output-layer linear",
                            "--enc-type alternating"}) {
    const auto [status, err] = run(train_command(dir.path("m"), std::string("--max-updates 8 ") + other), dir);
    EXPECT_EQ(status, 1) << other;
    EXPECT_NE(err.find("m/config.json"), std::string::npos) << err;
    EXPECT_NE(err.find("the run to resume has --"), std::string::npos) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  }
  const auto [status, err] = run(train_command(dir.path("m"), "--max-updates 8 --layer-normalization"), dir);
  EXPECT_NE(err.find("--layer-normalization off, not on"), std::string::npos) << err;
  EXPECT_TRUE(read_file(dir.path("m/model.npz")) == before);
  for (const char* same : {"--dec-cell-base-depth 2", ""}) {
    const auto [resumed, resumed_err] = run(train_command(dir.path("m"), std::string("--max-updates 6 ") + same), dir);
    EXPECT_EQ(resumed, 0) << resumed_err;
    EXPECT_NE(resumed_err.find("resuming at update"), std::string::npos) << resumed_err;
  }
  // options that need others a new run would need too resume with the run's alone
  ASSERT_EQ(run(train_command(dir.path("deep"), "--max-updates 4 --dec-cell-base-depth 2 --dec-depth 2 --skip"), dir).first,
            0);
  for (const char* part : {"--skip", "--dec-depth 2"}) {
    const auto [resumed, resumed_err] = run(train_command(dir.path("deep"), std::string("--max-updates 6 ") + part), dir);
    EXPECT_EQ(resumed, 0) << resumed_err;
    EXPECT_NE(resumed_err.find("resuming at update"), std::string::npos) << resumed_err;
  }
}

// The same for the options that made the run's vocabularies: another --min-count, --no-lowercase
// on a lowercasing run, or a --vocab-src that is not the run's vocabulary is one line naming the
// file, and the run is untouched; the run's own values and vocabulary files resume.
TEST(Train, ResumeRefusesOtherVocabularyOptions) {
  test::TempDir dir;
  ASSERT_EQ(run(train_command(dir.path("m"), "--max-updates 4 --min-count 2"), dir).first, 0);
  const std::string before = read_file(dir.path("m/model.npz"));
  // a vocabulary of its own: the run's without its last word
  std::string other_vocab = read_file(dir.path("m/vocab.src"));
  other_vocab.erase(other_vocab.rfind('\n', other_vocab.size() - 2) + 1);
  write_file_atomically(dir.path("other.vocab"), other_vocab);
  const std::string vocab_pair = " --vocab-tgt " + dir.path("m/vocab.tgt");
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"--min-count 1", "m/config.json", "the run to resume has --min-count 2, not 1"},
      {"--no-lowercase", "m/config.json", "the run to resume lowercases its text, not --no-lowercase"},
      {"--vocab-src " + dir.path("other.vocab") + vocab_pair, "other.vocab",
       "is not the vocabulary of the run to resume"}};
  for (const auto& [other, file, expected] : cases) {
    const auto [status, err] = run(train_command(dir.path("m"), "--max-updates 8 " + other), dir);
    EXPECT_EQ(status, 1) << other;
    EXPECT_NE(err.find(file), std::string::npos) << err;
    EXPECT_NE(err.find(expected), std::string::npos) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  }
  EXPECT_TRUE(read_file(dir.path("m/model.npz")) == before);
  for (const std::string& same : {std::string("--min-count 2"), "--vocab-src " + dir.path("m/vocab.src") + vocab_pair}) {
    const auto [resumed, resumed_err] = run(train_command(dir.path("m"), "--max-updates 6 " + same), dir);
    EXPECT_EQ(resumed, 0) << resumed_err;
    EXPECT_NE(resumed_err.find("resuming at update"), std::string::npos) << resumed_err;
  }
}

// --save-freq 5 without --valid-freq: checkpoints at updates 5, 10, ... long before the
// first epoch ends (300 updates of one sentence), the first time progress.json appears.
TEST(Train, SaveFreqWritesCheckpointsBetweenValidations) {
  test::TempDir dir;
  const std::string model = dir.path("m");
  const pid_t child = fork();
  if (child == 0) {
    execl("/bin/sh", "sh", "-c",
          ("exec " + std::string(RNNSEARCH_BINARY) + " train --train-src " + kTiny + "train.en --train-tgt " + kTiny +
           "train.de --valid-src " + kTiny + "val.en --valid-tgt " + kTiny + "val.de --model " + model +
           " --emb 8 --hidden 12 --maxout 6 --batch-size 1 --threads 1 --max-updates 100000 --save-freq 5 2>/dev/null")
              .c_str(),
          (char*)nullptr);
    _exit(127);
  }
  std::string progress;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (progress.empty() && std::chrono::steady_clock::now() < deadline) {
    if (std::filesystem::exists(model + "/progress.json")) progress = read_file(model + "/progress.json");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  ASSERT_FALSE(progress.empty()) << "no checkpoint within 60 s";
  const long update = nlohmann::json::parse(progress).at("update").get<long>();
  EXPECT_EQ(update % 5, 0) << progress;
  EXPECT_LT(update, 300) << progress;
}

TEST(Train, SigtermSavesAndTheRunResumesExactly) {
  test::TempDir dir;
  const std::string model = dir.path("interrupted");
  const pid_t child = fork();
  if (child == 0) {
    execl("/bin/sh", "sh", "-c", ("exec " + train_command(model, "--max-updates 100000 2>/dev/null")).c_str(),
          (char*)nullptr);
    _exit(127);
  }
  // Let it train past its first checkpoint, then ask it to stop.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!std::filesystem::exists(model + "/progress.json") && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  kill(child, SIGTERM);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  const std::string log = read_file(model + "/train.log");
  const size_t at = log.find("stopped by SIGTERM at update ");
  ASSERT_NE(at, std::string::npos) << log;
  const long stopped = std::stol(log.substr(at + 29));
  // Continue to a later budget, and compare with a run that was never interrupted.
  const std::string budget = "--max-updates " + std::to_string(stopped + 9);
  ASSERT_EQ(run(train_command(model, budget), dir).first, 0);
  ASSERT_EQ(run(train_command(dir.path("straight"), budget), dir).first, 0);
  EXPECT_TRUE(read_file(model + "/model.npz") == read_file(dir.path("straight/model.npz")));
}

// Largest |difference| between two model.npz files' weights.
double max_difference(const std::string& a, const std::string& b) {
  const auto x = load_npz(a), y = load_npz(b);
  double largest = 0;
  for (const auto& [name, array] : x)
    for (size_t k = 0; k < array.data.size(); ++k)
      largest = std::max(largest, std::abs(static_cast<double>(array.data[k]) - y.at(name).data.at(k)));
  return largest;
}

// --accumulate 2 with batches of 8 takes the step of one batch of 16 holding the same pairs
// (a 16-pair corpus: one batch, or two of 8): the gradient is the mean over all the
// update's target tokens, whichever batch each token was in. (In fp32: bf16's roundings of
// the two halves' products differ from those of the whole.)
TEST(Train, AccumulatedBatchesStepAsOneBatch) {
  test::TempDir dir;
  for (const char* side : {"en", "de"}) {
    const std::string text = read_file(kTiny + "train." + side);
    size_t end = 0;
    for (int line = 0; line < 16; ++line) end = text.find('\n', end) + 1;
    write_file_atomically(dir.path(std::string("train16.") + side), text.substr(0, end));
  }
  auto command = [&](const std::string& model, const std::string& options) {
    return std::string(RNNSEARCH_BINARY) + " train --train-src " + dir.path("train16.en") + " --train-tgt " +
           dir.path("train16.de") + " --valid-src " + kTiny + "val.en --valid-tgt " + kTiny + "val.de --model " +
           dir.path(model) + " --emb 8 --hidden 12 --maxout 6 --threads 1 --dropout 0 --label-smoothing 0.1 " +
           "--max-updates 3 --precision fp32 " + options;
  };
  ASSERT_EQ(run(command("one", "--batch-size 16"), dir).first, 0);
  ASSERT_EQ(run(command("two", "--batch-size 8 --accumulate 2"), dir).first, 0);
  ASSERT_EQ(run(command("halves", "--batch-size 8"), dir).first, 0);
  // Float rounding only: the same sums in another order.
  EXPECT_LT(max_difference(dir.path("one/model.npz"), dir.path("two/model.npz")), 1e-5);
  // Without accumulation the three updates see other batches, and the weights differ.
  EXPECT_GT(max_difference(dir.path("one/model.npz"), dir.path("halves/model.npz")), 1e-3);
}

// The training corpus is binarized into corpus.bin by the first run; a resumed run maps it
// instead of reading the text, and a file that is damaged or made from other data (here
// the text's modification time changed) is rebuilt, never trusted; scratch files a killed
// run left are removed. Through all of it the run ends with the weights of an uninterrupted
// one that read the text (--no-corpus-cache).
TEST(Train, CorpusCacheIsMappedAndRebuiltWhenDamagedOrStale) {
  test::TempDir dir;
  const std::string en = dir.write("train.en", read_file(kTiny + "train.en"));
  auto command = [&](const std::string& model, const std::string& extra) {
    std::string c = train_command(model, extra);
    return c.replace(c.find(kTiny + "train.en"), kTiny.size() + 8, en);
  };
  ASSERT_EQ(run(train_command(dir.path("text"), "--max-updates 50 --no-corpus-cache"), dir).first, 0);
  EXPECT_FALSE(std::filesystem::exists(dir.path("text/corpus.bin")));
  const std::string cache = dir.path("m/corpus.bin");
  auto corrupt = [&] {
    std::string bytes = read_file(cache);
    bytes[bytes.size() - 3] ^= 1;
    write_file_atomically(cache, bytes);
  };
  auto touch = [&] { std::filesystem::last_write_time(en, std::filesystem::last_write_time(en) + std::chrono::hours(1)); };
  const std::string scratch = cache + ".tmp.999999";  // what a binarizing killed with -9 leaves
  auto leave_scratch = [&] {
    dir.write("m/corpus.bin.tmp.999999.src", "ids");
    dir.write("m/corpus.bin.tmp.999999.tgt", "ids");
  };
  const std::vector<std::tuple<std::function<void()>, std::string, std::string>> steps = {
      {[] {}, "10", "corpus.bin not written yet: the training corpus binarized into it"},
      {[] {}, "20", "corpus.bin: the training corpus as binarized before (text not read)"},
      {corrupt, "30", "corpus.bin damaged: its checksum does not match: the training corpus binarized into it"},
      {touch, "40", "corpus.bin made from other data"},
      {leave_scratch, "50", "as binarized before"}};
  for (const auto& [change, updates, logged] : steps) {
    change();
    const auto [status, err] = run(command(dir.path("m"), "--max-updates " + updates), dir);
    ASSERT_EQ(status, 0) << err;
    EXPECT_NE(err.find(logged), std::string::npos) << updates << ": " << err;
  }
  EXPECT_TRUE(read_file(dir.path("m/model.npz")) == read_file(dir.path("text/model.npz")));
  EXPECT_FALSE(std::filesystem::exists(scratch + ".src") || std::filesystem::exists(scratch + ".tgt"))
      << "scratch files of a killed run are removed";
}

TEST(Train, WritesTheModelDirectory) {
  test::TempDir dir;
  ASSERT_EQ(run(train_command(dir.path("m"), "--max-epochs 1"), dir).first, 0);
  for (const char* file : {"model.npz", "model.best.npz", "config.json", "vocab.src", "vocab.tgt", "optimizer.npz",
                           "progress.json", "train.log", "corpus.bin"})
    EXPECT_TRUE(std::filesystem::exists(dir.path(std::string("m/") + file))) << file;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path("m")))
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << "temporary left: " << entry.path();
  const std::string vocab = read_file(dir.path("m/vocab.tgt"));
  const long target_vocab = std::count(vocab.begin(), vocab.end(), '\n');
  EXPECT_EQ(load_npz(dir.path("m/model.npz")).at("out_Wo").shape, (std::vector<long>{6, target_vocab}));
}

// A deep-transition, stacked encoder and a conditional decoder with a second layer:
// config.json and model.npz say so, and the model translates; a depth outside 1..16 is one
// line naming the option, and so are depths that do not go together.
TEST(Train, DeepTransitionModelTrainsAndTranslates) {
  test::TempDir dir;
  const auto [status, err] =
      run(train_command(dir.path("m"), "--max-updates 10 --enc-cell-depth 2 --dec-cell-base-depth 3 --enc-depth 2 "
                                       "--enc-type alternating --dec-depth 2 --dec-cell-high-depth 2 --skip"),
          dir);
  ASSERT_EQ(status, 0) << err;
  EXPECT_NE(err.find("enc-cell-depth=2 dec-cell-base-depth=3 enc-depth=2 enc-type=alternating dec-depth=2 "
                     "dec-cell-high-depth=2 skip"),
            std::string::npos)
      << err;
  EXPECT_NE(read_file(dir.path("m/config.json")).find("\"enc_type\": \"alternating\""), std::string::npos);
  EXPECT_EQ(load_npz(dir.path("m/model.npz")).at("dec_l2_cell2_U").shape, (std::vector<long>{12, 36}));
  EXPECT_NE(read_file(dir.path("m/config.json")).find("\"dec_depth\": 2"), std::string::npos);
  EXPECT_EQ(load_npz(dir.path("m/model.npz")).at("enc_fw_l2_cell2_U").shape, (std::vector<long>{12, 36}));
  EXPECT_NE(read_file(dir.path("m/config.json")).find("\"enc_cell_depth\": 2"), std::string::npos);
  EXPECT_NE(read_file(dir.path("m/config.json")).find("\"dec_cell_base_depth\": 3"), std::string::npos);
  EXPECT_EQ(load_npz(dir.path("m/model.npz")).at("enc_bw_cell2_U").shape, (std::vector<long>{12, 36}));
  EXPECT_EQ(load_npz(dir.path("m/model.npz")).at("dec_cell3_b").shape, (std::vector<long>{36}));
  const test::BinaryRun translated = test::run_shell(std::string(RNNSEARCH_BINARY) + " translate --model " +
                                                         dir.path("m") + " --input " + kTiny + "val.en",
                                                     dir);
  ASSERT_EQ(translated.status, 0) << translated.err;
  EXPECT_EQ(test::lines_of(translated.out).size(), test::lines_of(read_file(std::string(kTiny) + "val.en")).size());
  for (const std::string option : {"enc-cell-depth", "dec-cell-base-depth", "enc-depth", "dec-depth", "dec-cell-high-depth"})
    for (const char* depth : {"0", "17"}) {
      const auto [bad, message] = run(train_command(dir.path("bad"), "--" + option + " " + depth), dir);
      EXPECT_EQ(bad, 1);
      EXPECT_EQ(message, "rnnsearch train: error: --" + option + " must be between 1 and 16, not " + depth + "\n");
    }
  for (const auto& [options, problem] :
       {std::pair<std::string, std::string>{"--dec-depth 2", "sit on the conditional GRU"},
        {"--dec-cell-base-depth 2 --dec-cell-high-depth 2", "give --dec-depth 2 or more"},
        {"--skip", "give --enc-depth or --dec-depth 2 or more"},
        {"--enc-type alternating", "give --enc-depth 2 or more"},
        {"--enc-depth 2 --enc-type bi-unidirectional", "'bi-unidirectional' (Marian's) is not built"},
        {"--enc-depth 2 --enc-type forward", "unknown encoder type 'forward' (expected bidirectional or alternating)"}}) {
    const auto [bad, message] = run(train_command(dir.path("bad"), options), dir);
    EXPECT_EQ(bad, 1) << options;
    EXPECT_NE(message.find(problem), std::string::npos) << message;
    EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 1) << message;
  }
}

// A layer-normalized model: config.json says so, model.npz has the gains and biases, the log
// names it, and it translates (its decoder step normalises as training did).
TEST(Train, LayerNormalizedModelTrainsAndTranslates) {
  test::TempDir dir;
  const auto [status, err] = run(train_command(dir.path("m"), "--max-updates 10 --layer-normalization"), dir);
  ASSERT_EQ(status, 0) << err;
  EXPECT_NE(err.find("layer-normalized"), std::string::npos) << err;
  EXPECT_NE(read_file(dir.path("m/config.json")).find("\"layer_normalization\": true"), std::string::npos);
  EXPECT_EQ(load_npz(dir.path("m/model.npz")).at("dec_U_lns").shape, (std::vector<long>{36}));
  const test::BinaryRun translated = test::run_shell(std::string(RNNSEARCH_BINARY) + " translate --model " +
                                                         dir.path("m") + " --input " + kTiny + "val.en",
                                                     dir);
  ASSERT_EQ(translated.status, 0) << translated.err;
  const std::string source = read_file(std::string(kTiny) + "val.en");
  EXPECT_EQ(test::lines_of(translated.out).size(), test::lines_of(source).size());
}

// --profile writes the time of each phase into train.log at the end of a training run and
// at the end of a benchmark (--bench-seconds), where the phases are looked at most.
TEST(Train, ProfileReportsThePhasesOfTrainingAndOfABenchmark) {
  test::TempDir dir;
  for (const std::string extra : {"--max-updates 5", "--bench-seconds 0.3 --bench-warmup 2"}) {
    const std::string model = dir.path(extra.substr(2, 5));
    const auto [status, err] = run(train_command(model, extra + " --profile"), dir);
    ASSERT_EQ(status, 0) << err;
    const std::string log = read_file(model + "/train.log");
    EXPECT_NE(log.find("time by phase"), std::string::npos) << extra << ":\n" << log;
    EXPECT_NE(log.find("output layer fwd+bwd"), std::string::npos) << extra << ":\n" << log;
  }
}

TEST(Train, InitFromStartsFromThoseWeightsAndRefusesOtherShapesOrMeanings) {
  test::TempDir dir;
  ASSERT_EQ(run(train_command(dir.path("base"), "--max-updates 5"), dir).first, 0);
  const std::string weights = dir.path("base/model.npz");
  // With a learning rate of 0 the fine-tuned model keeps exactly the weights it started from.
  const auto [status, err] = run(train_command(dir.path("tuned"), "--max-updates 2 --optimizer sgd --lr 0 --vocab-src " +
                                                                      dir.path("base/vocab.src") + " --vocab-tgt " +
                                                                      dir.path("base/vocab.tgt") + " --init-from " + weights),
                                 dir);
  ASSERT_EQ(status, 0) << err;
  EXPECT_TRUE(read_file(dir.path("tuned/model.npz")) == read_file(weights));
  EXPECT_EQ(read_file(dir.path("tuned/vocab.tgt")), read_file(dir.path("base/vocab.tgt")));
  std::string other_size = train_command(dir.path("other"), "--max-updates 1 --init-from " + weights);
  other_size.replace(other_size.find("--hidden 12"), 11, "--hidden 16");
  const auto [bad_status, bad_err] = run(other_size, dir);
  EXPECT_NE(bad_status, 0);
  EXPECT_NE(bad_err.find(weights), std::string::npos) << bad_err;
  EXPECT_NE(bad_err.find("shape"), std::string::npos) << bad_err;
  // Weights that fit but mean something else: another vocabulary (of the same training text,
  // --min-count 1), text read otherwise (--no-lowercase), or the same tensors read in another
  // direction (--enc-type) or without residuals (--skip). Each is one line naming the file
  // beside the weights that differs; those checked before the run's definition is made leave
  // its directory uncreated.
  ASSERT_EQ(run(train_command(dir.path("alt"), "--max-updates 1 --enc-depth 2 --enc-type alternating --skip"), dir).first,
            0);
  const std::string alt = dir.path("alt/model.npz"),
                    alt_vocabs = " --vocab-src " + dir.path("alt/vocab.src") + " --vocab-tgt " + dir.path("alt/vocab.tgt");
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"--min-count 1 --init-from " + weights, "base/vocab.src", "other vocabularies than this run's"},
      {"--no-lowercase --init-from " + weights, "base/config.json",
       "its model reads --tokenizer words (lowercased) text, this run words"},
      {"--enc-depth 2 --skip --init-from " + alt + alt_vocabs, "alt/config.json",
       "has --enc-type alternating, this run bidirectional"},
      {"--enc-depth 2 --enc-type alternating --init-from " + alt + alt_vocabs, "alt/config.json",
       "has --skip on, this run off"}};
  int k = 0;
  for (const auto& [options, file, expected] : cases) {
    const std::string model = dir.path("refused" + std::to_string(k++));
    const auto [refused, refused_err] = run(train_command(model, "--max-updates 1 " + options), dir);
    EXPECT_EQ(refused, 1) << options;
    EXPECT_NE(refused_err.find(file + ": --init-from "), std::string::npos) << refused_err;
    EXPECT_NE(refused_err.find(expected), std::string::npos) << refused_err;
    EXPECT_EQ(std::count(refused_err.begin(), refused_err.end(), '\n'), 1) << refused_err;
    if (expected.find("vocabularies") == std::string::npos) {
      EXPECT_FALSE(std::filesystem::exists(model + "/config.json")) << options;
    }
  }
  // The weights reached through a symbolic link in another directory are checked against the
  // model they are in
  std::filesystem::create_directory(dir.path("links"));
  std::filesystem::create_symlink(alt, dir.path("links/model.npz"));
  const auto [linked, linked_err] =
      run(train_command(dir.path("linked"), "--max-updates 1 --enc-depth 2 --skip --init-from " +
                                                dir.path("links/model.npz") + alt_vocabs),
          dir);
  EXPECT_EQ(linked, 1);
  EXPECT_NE(linked_err.find("alt/config.json: --init-from "), std::string::npos) << linked_err;
}

TEST(Train, BadInputFailsWithOneLineNamingTheFile) {
  test::TempDir dir;
  const std::string short_tgt = dir.write("short.de", "eins\nzwei\n");
  const std::string cmd = std::string(RNNSEARCH_BINARY) + " train --train-src " + kTiny + "train.en --train-tgt " +
                          short_tgt + " --valid-src " + kTiny + "val.en --valid-tgt " + kTiny +
                          "val.de --model " + dir.path("m") + " --emb 4 --hidden 4 --maxout 2";
  const auto [status, err] = run(cmd, dir);
  EXPECT_NE(status, 0);
  EXPECT_NE(err.find("short.de"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;

  const std::string bad = dir.write("bad.en", "ok\n\xff\xfe broken\n");
  const auto [status2, err2] = run(std::string(RNNSEARCH_BINARY) + " train --train-src " + bad + " --train-tgt " +
                                       short_tgt + " --valid-src " + bad + " --valid-tgt " + short_tgt +
                                       " --model " + dir.path("m2"),
                                   dir);
  EXPECT_NE(status2, 0);
  EXPECT_NE(err2.find("bad.en:2"), std::string::npos) << err2;
}

// An update skipped for a non-finite gradient counts as an update but not as an optimizer
// step; the checkpoint must still resume (it was refused: "optimizer.npz is at update 1
// but progress.json at 3").
TEST(Train, ResumesAfterSkippedUpdates) {
  test::TempDir dir;
  const std::string diverging = "--optimizer sgd --lr 1e30 --clip-norm 0 --max-updates ";
  const auto [first, first_err] = run(train_command(dir.path("m"), diverging + "3"), dir);
  ASSERT_EQ(first, 0) << first_err;
  ASSERT_NE(first_err.find("update skipped"), std::string::npos) << first_err;
  const auto [status, err] = run(train_command(dir.path("m"), diverging + "5"), dir);
  EXPECT_EQ(status, 0) << err;
  EXPECT_NE(err.find("resuming at update 3"), std::string::npos) << err;
}

// A second trainer on a model directory in use is refused, with the directory named, and
// leaves the first one's log alone.
TEST(Train, SecondTrainerOnOneDirectoryIsRefused) {
  test::TempDir dir;
  const std::string first = train_command(dir.path("m"), "--max-updates 100000");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", ("exec " + first + " > /dev/null 2>&1").c_str(), nullptr);
    _exit(127);
  }
  // Wait until the first trainer has started (its log exists), then start a second.
  for (int k = 0; k < 200 && !std::filesystem::exists(dir.path("m/train.log")); ++k)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  const auto [status, err] = run(train_command(dir.path("m"), "--max-updates 5"), dir);
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  EXPECT_EQ(status, 1);
  EXPECT_NE(err.find("another rnnsearch train"), std::string::npos) << err;
  EXPECT_NE(err.find("train.lock"), std::string::npos) << err;
  // After the first one is gone (killed: the kernel dropped its lock), the directory is free.
  const auto [again, again_err] = run(train_command(dir.path("m"), "--max-updates 2"), dir);
  EXPECT_EQ(again, 0) << again_err;
}

TEST(Train, DivergenceStopsWithAClearMessage) {
  test::TempDir dir;
  const auto [status, err] =
      run(train_command(dir.path("m"), "--optimizer sgd --lr 1e30 --clip-norm 0 --max-updates 200"), dir);
  EXPECT_NE(status, 0);
  EXPECT_NE(err.find("non-finite"), std::string::npos) << err;
  EXPECT_NE(err.find("update skipped"), std::string::npos) << err;
}

// The corpus preparation of a first run (SentencePiece learning where the build has it,
// counting the vocabularies, binarizing) on a generated corpus of 60,000 pairs (under ASan,
// ten times slower, 10,000: each stage still takes over 0.05 s): with --log-every 0.05 each
// stage shows its progress while it runs and a "done" line when it ends, a stage of three
// periods or more at least two lines; --quiet: nothing on stderr, the same in train.log.
TEST(Train, PreparationShowsEachStageEveryLogPeriod) {
  test::TempDir dir;
  std::mt19937 random(7);
  const int pairs = test::kAddressSanitizer ? 10000 : 60000;
  for (const char* name : {"big.src", "big.tgt"}) {
    std::string text;
    for (int k = 0; k < pairs; ++k) {
      const int words = 5 + static_cast<int>(random() % 11);
      for (int w = 0; w < words; ++w) text += (w ? " w" : "w") + std::to_string(random() % 2000);
      text += "\n";
    }
    dir.write(name, text);
  }
  const bool subwords = build_info().sentencepiece;
  const std::string command = std::string(RNNSEARCH_BINARY) + " train --train-src " + dir.path("big.src") +
                              " --train-tgt " + dir.path("big.tgt") + " --valid-src " + kTiny + "val.en --valid-tgt " +
                              kTiny + "val.de --emb 8 --hidden 8 --maxout 4 --max-updates 1 --threads 1 " +
                              (subwords ? "--subwords 500 " : "--min-count 1 ");
  const test::BinaryRun shown = test::run_shell(command + "--model " + dir.path("shown") + " --log-every 0.05", dir);
  ASSERT_EQ(shown.status, 0) << shown.err;
  const std::vector<std::string> lines = test::lines_of(shown.err);
  std::vector<std::string> stages = {"counting the vocabularies", "binarizing the training corpus"};
  if (subwords) stages.push_back("learning the subword model");
  for (const std::string& stage : stages) {
    const std::string prefix = "rnnsearch train: " + stage + ": ";
    int periodic = 0;
    double seconds = -1;
    for (const std::string& line : lines) {
      if (line.rfind(prefix + "done", 0) == 0)
        seconds = std::stod(line.substr(line.rfind(" in ") + 4));
      else if (line.rfind(prefix, 0) == 0)
        ++periodic;
    }
    ASSERT_GE(seconds, 0.05) << stage << " ended without its line\n" << shown.err;
    EXPECT_GE(periodic, seconds >= 0.15 ? 2 : 1) << stage << " took " << seconds << " s\n" << shown.err;
  }

  const test::BinaryRun quiet = test::run_shell(command + "--model " + dir.path("quiet") + " --quiet", dir);
  ASSERT_EQ(quiet.status, 0);
  EXPECT_EQ(quiet.err, "");
  EXPECT_NE(read_file(dir.path("quiet/train.log")).find("done: 1 updates"), std::string::npos);
}

// Guided alignment does what it is for: links no unguided model would learn (every target word
// to the first source word) pull the attention to them. A tiny model, raw words, trained as
// long with and without them; `align` reads each model's argmax links and counts how many are
// the given ones. (Links a tiny model can hardly express, such as the mirrored positions, move
// its attention too, but a few hundred updates are not enough for a clear margin.) Once more in bf16 products (fp32 where the CPU
// lacks AVX512_BF16), through the same cost.
TEST(Train, GuidedAttentionIsCloserToItsLinksThanUnguided) {
  if (!build_info().sentencepiece) GTEST_SKIP() << "this build has no SentencePiece (raw text needs --subwords)";
  test::TempDir dir;
  std::ifstream src_in(kTiny + "train.en"), tgt_in(kTiny + "train.de");
  std::ofstream links_out(dir.path("first.links"));
  std::vector<std::set<std::pair<int, int>>> given;
  for (std::string s, t; std::getline(src_in, s) && std::getline(tgt_in, t);) {
    std::istringstream ts(t);
    const auto count = [](std::istringstream& in) {
      int n = 0;
      for (std::string w; in >> w;) ++n;
      return n;
    };
    const int J = count(ts);
    given.emplace_back();
    for (int j = 0; j < J; ++j) {
      links_out << (j ? " " : "") << "0-" << j;
      given.back().insert({0, j});
    }
    links_out << "\n";
  }
  links_out.close();
  const auto agreement = [&](const std::string& model) {  // the share of align's links that are given ones
    const test::BinaryRun r = test::run_shell(std::string(RNNSEARCH_BINARY) + " align -m " + model + " --src " + kTiny +
                                                  "train.en --tgt " + kTiny + "train.de --quiet", dir);
    EXPECT_EQ(r.status, 0) << r.err;
    std::istringstream out(r.out);
    size_t k = 0, hits = 0, total = 0;
    for (std::string line; std::getline(out, line); ++k)
      for (const align::Link& l : align::parse_pharaoh(line, "out", k + 1)) {
        ++total;
        hits += k < given.size() && given[k].count({l.source, l.target});
      }
    EXPECT_EQ(k, given.size());
    return total ? static_cast<double>(hits) / static_cast<double>(total) : 0.0;
  };
  const std::string raw = "--tokenizer raw --subwords 200 --max-updates 250 --precision fp32 ";
  const std::string guided = "--guided-alignment " + dir.path("first.links") + " --guided-alignment-weight 1 ";
  ASSERT_EQ(run(train_command(dir.path("unguided"), raw), dir).first, 0);
  const auto [status, err] = run(train_command(dir.path("guided"), raw + guided), dir);
  ASSERT_EQ(status, 0) << err;
  std::string bf16 = raw + guided;
  bf16.replace(bf16.find("--precision fp32"), 16, "--precision bf16");
  ASSERT_EQ(run(train_command(dir.path("guided_bf16"), bf16), dir).first, 0);
  const double unguided_share = agreement(dir.path("unguided")), guided_share = agreement(dir.path("guided")),
               bf16_share = agreement(dir.path("guided_bf16"));
  EXPECT_GT(guided_share, unguided_share + 0.3) << "unguided " << unguided_share << ", guided " << guided_share;
  EXPECT_GT(bf16_share, unguided_share + 0.3) << "unguided " << unguided_share << ", guided bf16 " << bf16_share;
}

// The alignment output (--alignment-output) does what it is for, and every command shows it: a
// tiny model trained on links that no translation model's attention would follow (every target
// word to the first source word) reads those links back through its alignment output far more
// often than through its attention (--raw-attention), in `align`, in `translate --alignment
// hard` and in `score --alignment hard`.
TEST(Train, AlignmentOutputFollowsItsLinksWhereTheAttentionDoesNot) {
  if (!build_info().sentencepiece) GTEST_SKIP() << "this build has no SentencePiece (raw text needs --subwords)";
  test::TempDir dir;
  std::ifstream src_in(kTiny + "train.en"), tgt_in(kTiny + "train.de");
  std::ofstream links_out(dir.path("first.links"));
  const auto words = [](const std::string& line) {
    std::istringstream in(line);
    int n = 0;
    for (std::string w; in >> w;) ++n;
    return n;
  };
  for (std::string s, t; std::getline(src_in, s) && std::getline(tgt_in, t);) {
    for (int j = 0; j < words(t); ++j) links_out << (j ? " " : "") << "0-" << j;
    links_out << "\n";
  }
  links_out.close();
  const std::string bin = std::string(RNNSEARCH_BINARY);
  // the share of a command's links (pairs 'i-j' after the last '|||', or whole lines) with i = 0
  const auto first = [&](const std::string& command, bool after_bars) {
    const test::BinaryRun r = test::run_shell(command + " --quiet", dir);
    EXPECT_EQ(r.status, 0) << command << "\n" << r.err;
    std::istringstream out(r.out);
    size_t hits = 0, total = 0;
    for (std::string line; std::getline(out, line);) {
      if (after_bars) line = line.substr(line.rfind("|||") + 3);
      for (const align::Link& l : align::parse_pharaoh(line, "out", 1)) {
        ++total;
        hits += l.source == 0;
      }
    }
    return total ? static_cast<double>(hits) / static_cast<double>(total) : 0.0;
  };
  const std::string raw = "--tokenizer raw --subwords 200 --max-updates 250 --precision fp32 --guided-alignment " +
                          dir.path("first.links") + " ";
  const auto [status, err] = run(train_command(dir.path("aln"), raw + "--alignment-output 16"), dir);
  ASSERT_EQ(status, 0) << err;
  const std::string model = " -m " + dir.path("aln");
  const std::string pairs = " --src " + kTiny + "train.en --tgt " + kTiny + "train.de";
  const std::string align = bin + " align" + model + pairs, score = bin + " score" + model + pairs + " --alignment hard";
  const std::string translate = bin + " translate" + model + " -i " + kTiny + "train.en --alignment hard";
  for (const auto& [command, after_bars] : {std::pair{align, false}, {score, true}, {translate, true}}) {
    const double output = first(command, after_bars), attention = first(command + " --raw-attention", after_bars);
    EXPECT_GT(output, attention + 0.3) << command << ": alignment output " << output << ", attention " << attention;
    EXPECT_GT(output, 0.6) << command;
  }
}

// A model with an alignment output runs through every command that shows alignments: cheap enough for the sanitizer stage, which skips the
// statistical test above (scripts/sanitize.sh).
TEST(Train, AlignmentOutputModelRunsThroughEveryCommand) {
  test::TempDir dir;
  std::ifstream src_in(kTiny + "train.en"), tgt_in(kTiny + "train.de");
  std::ofstream links_out(dir.path("diagonal.links"));
  for (std::string s, t; std::getline(src_in, s) && std::getline(tgt_in, t);) links_out << "0-0 1-1\n";
  links_out.close();
  const auto [status, err] = run(train_command(dir.path("aln"), "--max-updates 3 --alignment-output 8 --guided-alignment " +
                                                                    dir.path("diagonal.links")),
                                 dir);
  ASSERT_EQ(status, 0) << err;
  const std::string bin = std::string(RNNSEARCH_BINARY), model = " -m " + dir.path("aln");
  const std::string pairs = " --src " + kTiny + "val.en --tgt " + kTiny + "val.de";
  for (const std::string& command :
       {bin + " align" + model + pairs, bin + " score" + model + pairs + " --alignment hard",
        bin + " translate" + model + " -i " + kTiny + "val.en --alignment hard --n-best 2",
        bin + " translate" + model + " -i " + kTiny + "val.en --alignment soft --raw-attention"}) {
    const test::BinaryRun r = test::run_shell(command + " --quiet", dir);
    ASSERT_EQ(r.status, 0) << command << "\n" << r.err;
    EXPECT_FALSE(r.out.empty()) << command;
  }
  // align's links: a line per pair, and links (a model this young may still link a pair's
  // every word to </s>, which gives no link: so links in all, not on every line)
  const test::BinaryRun aligned = test::run_shell(bin + " align" + model + pairs + " --quiet", dir);
  std::istringstream out(aligned.out);
  std::ifstream src(kTiny + "val.en");
  size_t k = 0, links = 0;
  for (std::string line, s; std::getline(src, s); ++k) {
    ASSERT_TRUE(std::getline(out, line)) << "pair " << k + 1 << " has no line";
    links += align::parse_pharaoh(line, "align", k + 1).size();
  }
  EXPECT_GT(k, 0u);
  EXPECT_GT(links, 0u);
}

}  // namespace
}  // namespace rnnsearch
