// rnnsearch translate's sampling options with CTranslate2's values (docs/translating.md,
// Sampling): --sampling-topk 1, the default, is the search's output byte for byte; 0 samples
// the whole distribution; --sampling-topp 1 filters nothing; the options of the old meaning
// (--sampling-topp alone sampled) are refused with a message saying what to write. And the
// one --threads default: 0, a thread per core.
#include <gtest/gtest.h>
#include <omp.h>

#include "support/cli.h"

namespace rnnsearch::test {
namespace {

class CliSampling : public Cli {
 protected:
  static std::string command() {
    return "translate -m " + model() + " -i " + write("sampled.txt", "a b c\nd e\nf\nc a\nb b d\n") + " --format json";
  }
  static std::vector<std::string> output(const std::string& options) {
    const Result result = run(command() + options);
    EXPECT_EQ(result.status, 0) << options << ": " << result.err_text;
    return result.out;
  }
};

TEST_F(CliSampling, TopKOneIsTheBeamSearchAndGreedyOutputExactly) {
  const std::vector<std::string> beam = output(" --beam-size 4 --n-best 3");
  ASSERT_EQ(beam.size(), 15u);
  EXPECT_EQ(output(" --beam-size 4 --n-best 3 --sampling-topk 1"), beam);
  const std::vector<std::string> greedy = output(" --beam-size 1");
  EXPECT_EQ(output(" --beam-size 1 --sampling-topk 1"), greedy);
  EXPECT_EQ(output(""), output(" --sampling-topk 1"));
}

// --sampling-topk 0 takes the sampler's whole-distribution path (TokenSampler::draw with K = 0,
// P = 1), the path of the old --sampling-topp 1: the same seed gives the draws it gave.
TEST_F(CliSampling, TopKZeroSamplesTheWholeDistributionAndTopPOneIsNoFilter) {
  const std::vector<std::string> all = output(" --sampling-topk 0 --sampling-seed 7 --n-best 4");
  ASSERT_EQ(all.size(), 20u) << "4 samples a line";
  EXPECT_NE(all, output(" --beam-size 4 --n-best 4"));
  EXPECT_NE(all, output(" --sampling-topk 0 --sampling-seed 8 --n-best 4"));
  EXPECT_EQ(output(" --sampling-topk 0 --sampling-topp 1 --sampling-seed 7 --n-best 4"), all);
  // the test model has a few output tokens: top-K with K above them all is the whole distribution
  EXPECT_EQ(output(" --sampling-topk 50 --sampling-seed 7 --n-best 4"), all);
  EXPECT_NE(output(" --sampling-topk 2 --sampling-seed 7 --n-best 4"), all);
  EXPECT_NE(output(" --sampling-topk 0 --sampling-topp 0.5 --sampling-seed 7 --n-best 4"), all);
}

TEST_F(CliSampling, TheOldSpellingsAreRefusedSayingWhatToWrite) {
  const std::string topp_alone =
      "rnnsearch translate: error: --sampling-topp goes with sampling: --sampling-topk 0 (the whole distribution) or "
      "K > 1 (--sampling-topp alone no longer samples)";
  for (const char* old : {" --sampling-topp 1", " --sampling-topp 0.9", " --sampling-topp 1 --sampling-seed 3"}) {
    const Result refused = run(command() + old);
    EXPECT_EQ(refused.status, 1) << old;
    EXPECT_TRUE(refused.out.empty()) << old;
    EXPECT_EQ(refused.errors, std::vector<std::string>{topp_alone}) << old;
  }
  const Result seed = run(command() + " --sampling-seed 3");
  EXPECT_EQ(seed.errors, std::vector<std::string>{"rnnsearch translate: error: --sampling-seed goes with sampling: "
                                                  "--sampling-topk 0 (the whole distribution) or K > 1"});
  const Result zero = run(command() + " --sampling-topk 5 --sampling-topp 0");  // the old "off"
  EXPECT_EQ(zero.errors, std::vector<std::string>{"rnnsearch translate: error: --sampling-topp must be a number >= "
                                                  "0.01, not 0"});
}

// Every command's --threads defaults to 0: OpenMP's default, OMP_NUM_THREADS when set (ctest
// sets 1 for the tests that run the binary), else a thread per core this process may run on
// (what train and Python always did); --threads N overrides both. The output is the same.
TEST_F(CliSampling, ThreadsDefaultToOnePerCore) {
  const Result result = run(command(), "", "-u OMP_NUM_THREADS");
  ASSERT_EQ(result.status, 0) << result.err_text;
  const std::string threads = ", " + std::to_string(omp_get_num_procs()) + " thread(s)";
  EXPECT_NE(result.err_text.find(threads), std::string::npos) << result.err_text;
  const Result pinned = run(command(), "", "OMP_NUM_THREADS=1");
  EXPECT_NE(pinned.err_text.find(", 1 thread(s)"), std::string::npos) << pinned.err_text;
  const Result bad = run(command(), "", "OMP_NUM_THREADS=4abc");  // not a count: ignored, with a warning
  ASSERT_EQ(bad.status, 0) << bad.err_text;
  EXPECT_NE(bad.err_text.find("rnnsearch: warning: OMP_NUM_THREADS='4abc' is not a whole number > 0"), std::string::npos)
      << bad.err_text;
  EXPECT_NE(bad.err_text.find(threads), std::string::npos) << bad.err_text;
  const Result given = run(command() + " --threads 2", "", "OMP_NUM_THREADS=1");
  EXPECT_NE(given.err_text.find(", 2 thread(s)"), std::string::npos) << given.err_text;
  EXPECT_EQ(pinned.out, result.out) << "the same output at any thread count";
  EXPECT_EQ(given.out, result.out);
  // in batches of one line, so that two threads do decode different lines at once
  const Result one = run(command() + " --batch-size 1 --threads 1"), two = run(command() + " --batch-size 1 --threads 2");
  ASSERT_EQ(two.status, 0) << two.err_text;
  EXPECT_EQ(one.out, two.out);
  EXPECT_EQ(one.out, result.out);
}

}  // namespace
}  // namespace rnnsearch::test
