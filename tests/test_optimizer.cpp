// The optimizer's weight average (--exponential-smoothing) follows θ̄ += α (θ − θ̄) from the
// weights the first step started from, and survives a save/load round trip; steps on parts
// of the weights (MPI ranks) equal the step on the whole; the gradient norm by blocks; the
// learning-rate schedules; a thread started by a bound OpenMP worker (the overlapped ring's
// exchange) runs on every place.
#include <gtest/gtest.h>
#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <thread>

#include "rnnsearch/error.h"
#include "rnnsearch/io/npz.h"
#include "rnnsearch/train/lr_schedule.h"
#include "rnnsearch/train/optimizer.h"
#include "rnnsearch/util/cpu.h"
#include "support/temp_dir.h"

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

// An MPI rank steps only its part of the weights (WeightPartition): two optimizers that
// step halves of the vector, their halves put together after each step as the all-gather
// does, follow the optimizer that steps everything, bit for bit, weights and state alike;
// and a part's step leaves the weights outside it alone.
TEST(Optimizer, StepsOnPartsEqualTheStepOnTheWhole) {
  OptimizerOptions options;  // Adam
  options.smoothing = 0.1;
  const size_t size = 37, cut = 16;
  AlignedVector<float> whole(size), grads(size);
  for (size_t k = 0; k < size; ++k) whole[k] = 0.1f * static_cast<float>(k) - 1.5f;
  AlignedVector<float> first = whole, second = whole;
  Optimizer all(options, size), lower(options, size, 0, cut), upper(options, size, cut, size);
  for (int step = 1; step <= 5; ++step) {
    for (size_t k = 0; k < size; ++k) grads[k] = std::sin(static_cast<float>(step * 7 + k));
    all.step(whole, grads, 0.5f);
    const AlignedVector<float> before = first;  // = second
    lower.step(first, grads, 0.5f);
    upper.step(second, grads, 0.5f);
    EXPECT_TRUE(std::equal(first.begin() + cut, first.end(), before.begin() + cut));
    EXPECT_TRUE(std::equal(second.begin(), second.begin() + cut, before.begin()));
    std::copy(second.begin() + cut, second.end(), first.begin() + cut);  // the all-gather
    second = first;
    ASSERT_EQ(first, whole) << "step " << step;
  }
  const auto whole_state = all.state(), lower_state = lower.state(), upper_state = upper.state();
  ASSERT_EQ(whole_state.size(), 3u);  // m, v, average
  ASSERT_EQ(lower_state.size(), 3u);
  for (size_t s = 0; s < whole_state.size(); ++s)
    for (size_t k = 0; k < size; ++k)
      EXPECT_EQ((*whole_state[s])[k], (*(k < cut ? lower_state : upper_state)[s])[k]) << "array " << s << ", " << k;
}

// The norm's blocks, summed by parts (as ranks sum their own blocks) and put together,
// give exactly the norm of all blocks summed at once, which is ‖g‖₂.
TEST(Optimizer, NormOfBlockSumsByPartsEqualsTheGlobalNorm) {
  AlignedVector<float> grads(1001);
  for (size_t k = 0; k < grads.size(); ++k) grads[k] = std::cos(static_cast<float>(k)) * (k % 7 == 0 ? 100.f : 1.f);
  double parts[kNormBlocks] = {}, other[kNormBlocks] = {}, all[kNormBlocks] = {};
  norm_block_sums(grads, 0, 21, parts);
  norm_block_sums(grads, 21, kNormBlocks, other);
  for (int b = 21; b < kNormBlocks; ++b) parts[b] = other[b];
  norm_block_sums(grads, 0, kNormBlocks, all);
  const double global_norm = norm_from_block_sums(all);
  EXPECT_EQ(norm_from_block_sums(parts), global_norm);
  double squares = 0;
  for (float g : grads) squares += double(g) * g;
  EXPECT_NEAR(global_norm, std::sqrt(squares), 1e-12 * std::sqrt(squares));
}

// lr_t = lr · min(1, t / W) · sqrt(D / max(t, D)) · F^k, at chosen updates.
TEST(LrSchedule, WarmupInverseSquareRootAndDecay) {
  const double lr = 1e-3;
  EXPECT_EQ(scheduled_lr(lr, {}, 1, 1.0), lr);  // no schedule: the rate itself
  const LrSchedule warmup{.warmup = 4};
  EXPECT_DOUBLE_EQ(scheduled_lr(lr, warmup, 1, 1.0), lr / 4);
  EXPECT_DOUBLE_EQ(scheduled_lr(lr, warmup, 3, 1.0), lr * 3 / 4);
  EXPECT_DOUBLE_EQ(scheduled_lr(lr, warmup, 4, 1.0), lr);
  EXPECT_DOUBLE_EQ(scheduled_lr(lr, warmup, 1000, 1.0), lr);
  const LrSchedule inv_sqrt{.inv_sqrt = 100};
  EXPECT_DOUBLE_EQ(scheduled_lr(lr, inv_sqrt, 50, 1.0), lr);
  EXPECT_DOUBLE_EQ(scheduled_lr(lr, inv_sqrt, 100, 1.0), lr);
  EXPECT_DOUBLE_EQ(scheduled_lr(lr, inv_sqrt, 400, 1.0), lr / 2);
  const LrSchedule both{.warmup = 10, .inv_sqrt = 10};  // Marian's usual pair: peak at t = 10
  EXPECT_DOUBLE_EQ(scheduled_lr(lr, both, 5, 1.0), lr / 2);
  EXPECT_DOUBLE_EQ(scheduled_lr(lr, both, 10, 1.0), lr);
  EXPECT_DOUBLE_EQ(scheduled_lr(lr, both, 40, 0.25), lr / 2 * 0.25);
  const LrSchedule stalled{.decay = 0.5, .decay_stalled = 3};
  EXPECT_FALSE(decays_now(stalled, 0));
  EXPECT_FALSE(decays_now(stalled, 2));
  EXPECT_TRUE(decays_now(stalled, 3));
  EXPECT_FALSE(decays_now(stalled, 4));
  EXPECT_TRUE(decays_now(stalled, 6));
  EXPECT_FALSE(decays_now({}, 3));  // --lr-decay 0: never
}

// Under OMP_PROC_BIND each OpenMP worker is bound to its place, and a thread it starts
// inherits that place alone: run_on_every_openmp_place gives such a thread (the overlapped
// ring's exchange, train/weight_partition.h) the CPUs of every place. ctest runs this test
// again as openmp_places, with OMP_PROC_BIND=close and OMP_PLACES=threads; without them it is
// skipped.
TEST(Threads, StartedByABoundWorkerRunOnEveryPlace) {
  if (!std::getenv("OMP_PLACES")) GTEST_SKIP() << "run by ctest's openmp_places, with OMP_PROC_BIND and OMP_PLACES set";
  if (omp_get_num_procs() < 2) GTEST_SKIP() << "one CPU: one place";
  ASSERT_NE(omp_get_proc_bind(), omp_proc_bind_false);
  ASSERT_GE(omp_get_num_places(), 2);
  int every = 0;  // the CPUs of all places (OMP_PLACES=threads: each in one place)
  for (int place = 0; place < omp_get_num_places(); ++place) every += omp_get_place_num_procs(place);
  int inherited = 0, given = 0;
#pragma omp parallel num_threads(2)
  if (omp_get_thread_num() == 1) {
    std::thread([&] {
      cpu_set_t cpus;
      ASSERT_EQ(sched_getaffinity(0, sizeof cpus, &cpus), 0);
      inherited = CPU_COUNT(&cpus);
      run_on_every_openmp_place();
      ASSERT_EQ(sched_getaffinity(0, sizeof cpus, &cpus), 0);
      given = CPU_COUNT(&cpus);
    }).join();
  }
  EXPECT_EQ(inherited, omp_get_place_num_procs(1));  // the starting worker's place
  EXPECT_EQ(given, every);
}

}  // namespace
}  // namespace rnnsearch
