// The optimizer's weight average (--exponential-smoothing) follows θ̄ += α (θ − θ̄) from the
// weights the first step started from, and survives a save/load round trip.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "rnnsearch/error.h"
#include "rnnsearch/io/npz.h"
#include "rnnsearch/train/optimizer.h"
#include "temp_dir.h"

namespace rnnsearch {
namespace {

TEST(Optimizer, ExponentialSmoothingAveragesTheWeights) {
  OptimizerOptions options;
  options.kind = OptimizerKind::sgd;
  options.lr = 1.0;
  options.smoothing = 0.25;  // α_t = max(0.25, 9 / (9 + t)): 0.9, 0.818.., 0.75, ..., then 0.25 from t = 27
  Optimizer optimizer(options, 2);
  EXPECT_EQ(optimizer.average(), nullptr);
  AlignedVector<float> params = {1.0f, -2.0f}, grads = {0.5f, 1.0f};
  double expected[2] = {1.0, -2.0};
  for (int step = 1; step <= 30; ++step) {
    optimizer.step(params, grads);
    const double alpha = std::max(0.25, 9.0 / (9.0 + step));
    for (int k = 0; k < 2; ++k) expected[k] += alpha * (params[k] - expected[k]);
  }
  ASSERT_NE(optimizer.average(), nullptr);
  for (int k = 0; k < 2; ++k) EXPECT_NEAR((*optimizer.average())[k], expected[k], 1e-4 * std::abs(expected[k]));
  EXPECT_NE((*optimizer.average())[0], params[0]);

  test::TempDir dir;
  optimizer.save(dir.path("optimizer.npz"));
  Optimizer loaded(options, 2);
  loaded.load(dir.path("optimizer.npz"));
  EXPECT_EQ(loaded.steps(), 30);
  ASSERT_NE(loaded.average(), nullptr);
  EXPECT_EQ(*loaded.average(), *optimizer.average());
}

// The step count is stored as an integer: 2^24 + 1 does not survive a float32 round trip.
TEST(Optimizer, StepCountSurvivesSaveAndLoadExactly) {
  OptimizerOptions options;
  options.kind = OptimizerKind::sgd;
  test::TempDir dir;
  const std::int64_t step = (std::int64_t{1} << 24) + 1;
  save_npz(dir.path("optimizer.npz"), {{"step", {1}, nullptr, &step}});
  Optimizer optimizer(options, 2);
  optimizer.load(dir.path("optimizer.npz"));
  EXPECT_EQ(optimizer.steps(), step);
  optimizer.save(dir.path("again.npz"));
  Optimizer again(options, 2);
  again.load(dir.path("again.npz"));
  EXPECT_EQ(again.steps(), step);
  const float float_step = 3.0f;  // an old file's float32 step is refused, not rounded
  save_npz(dir.path("float.npz"), {{"step", {1}, &float_step}});
  EXPECT_THROW(again.load(dir.path("float.npz")), Error);
}

}  // namespace
}  // namespace rnnsearch
