// --precision bf16 (kernels/bf16.h): the rounding to bf16, the bf16 products against the same
// products of the rounded operands in double precision, and the output layer in bf16 against
// fp32 for each kind of output layer. The products need a CPU with AVX512_BF16 and a build
// with oneDNN; elsewhere those tests are skipped (and --precision bf16 computes in fp32).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <set>

#include "support/low_precision.h"
#include "rnnsearch/kernels/bf16.h"
#include "rnnsearch/model/bf16_products.h"
#include "rnnsearch/text/vocab.h"
#include "rnnsearch/train/sharded_model.h"

namespace rnnsearch {
namespace {

TEST(Bf16, RoundsToNearestWithTiesToEven) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(bf16_to_float(float_to_bf16(-2.5f)), -2.5f);  // representable: unchanged
  // 1 + 2⁻⁸ lies halfway between 1 and 1 + 2⁻⁷: the tie goes to the even mantissa, 1.
  EXPECT_EQ(bf16_to_float(float_to_bf16(1.0f + 0x1p-8f)), 1.0f);
  // 1 + 3·2⁻⁸ lies halfway between 1 + 2⁻⁷ (odd) and 1 + 2⁻⁶ (even): up.
  EXPECT_EQ(bf16_to_float(float_to_bf16(1.0f + 3 * 0x1p-8f)), 1.0f + 0x1p-6f);
  // just above a tie rounds up
  EXPECT_EQ(bf16_to_float(float_to_bf16(1.0f + 0x1p-8f + 0x1p-20f)), 1.0f + 0x1p-7f);
  EXPECT_EQ(bf16_to_float(float_to_bf16(std::numeric_limits<float>::infinity())),
            std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  // the largest float rounds to infinity, as in IEEE rounding to a narrower format
  EXPECT_TRUE(std::isinf(bf16_to_float(float_to_bf16(std::numeric_limits<float>::max()))));
}

TEST(Bf16, MatrixKeepsShapeAndRoundsEachValue) {
  const Mat<float> big = Mat<float>::Random(9, 20);
  const auto block = big.block(2, 3, 4, 11);  // row stride 20
  Bf16Matrix m;
  m.assign(block);
  ASSERT_EQ(m.rows, 4);
  ASSERT_EQ(m.cols, 11);
  for (Index i = 0; i < 4; ++i)
    for (Index k = 0; k < 11; ++k) EXPECT_EQ(m.values[static_cast<size_t>(i * 11 + k)], float_to_bf16(block(i, k)));
}

// The matrix a Bf16Matrix holds, in double.
Mat<double> widened(const Bf16Matrix& m) {
  Mat<double> out(m.rows, m.cols);
  for (Index i = 0; i < m.rows; ++i)
    for (Index k = 0; k < m.cols; ++k) out(i, k) = bf16_to_float(m.values[static_cast<size_t>(i * m.cols + k)]);
  return out;
}

// Products of bf16 values are exact in fp32; only the fp32 sums round.
TEST(Bf16, ProductsMatchDoublePrecisionOfTheRoundedOperands) {
  if (!bf16_supported()) GTEST_SKIP() << "no AVX512_BF16 or no oneDNN: bf16 computes in fp32";
  const Index m = 37, k = 129, n = 301;
  for (bool transpose_a : {false, true})
    for (bool transpose_b : {false, true})
      for (bool accumulate : {false, true}) {
        Bf16Matrix A, B;
        const Mat<float> a = Mat<float>::Random(m, k), b = Mat<float>::Random(k, n);
        A.assign(transpose_a ? Mat<float>(a.transpose()) : a);
        B.assign(transpose_b ? Mat<float>(b.transpose()) : b);
        const Mat<double> a_wide = transpose_a ? Mat<double>(widened(A).transpose()) : widened(A);
        const Mat<double> b_wide = transpose_b ? Mat<double>(widened(B).transpose()) : widened(B);
        // C is a block of a larger matrix: its row stride is not its width
        Mat<float> big_c = Mat<float>::Constant(m + 3, n + 5, 0.5f);
        gemm_bf16(A, transpose_a, B, transpose_b, big_c.block(1, 2, m, n), accumulate);
        const Mat<double> want = a_wide * b_wide + Mat<double>::Constant(m, n, accumulate ? 0.5 : 0.0);
        const double error = (big_c.block(1, 2, m, n).cast<double>() - want).cwiseAbs().maxCoeff();
        EXPECT_LT(error, 1e-5) << "transpose_a " << transpose_a << " transpose_b " << transpose_b << " accumulate "
                               << accumulate;
        EXPECT_EQ(big_c.row(0).cwiseAbs().maxCoeff(), 0.5f) << "rows outside the block are untouched";
        EXPECT_EQ(big_c.col(1).cwiseAbs().maxCoeff(), 0.5f) << "columns outside the block are untouched";
      }
}

// gemm_bf16 keeps the primitives of its most recent shapes only (a bounded cache of 256):
// more shapes than it keeps, twice over in turn, evict and make primitives again, and every
// product stays right.
TEST(Bf16, ManyShapesInTurnStayRight) {
  if (!bf16_supported()) GTEST_SKIP() << "no AVX512_BF16 or no oneDNN: bf16 computes in fp32";
  const Index k = 24, n = 40;
  Bf16Matrix B;
  B.assign(Mat<float>(Mat<float>::Random(k, n)));
  for (int pass = 0; pass < 2; ++pass)
    for (Index m = 1; m <= 300; ++m) {
      Bf16Matrix A;
      A.assign(Mat<float>(Mat<float>::Random(m, k)));
      Mat<float> c(m, n);
      gemm_bf16(A, false, B, false, c, false);
      const double error = (c.cast<double>() - widened(A) * widened(B)).cwiseAbs().maxCoeff();
      ASSERT_LT(error, 1e-5) << "pass " << pass << ", " << m << " rows";
    }
}

// The training threads share the cached primitives: two threads multiplying the same shapes
// at once, while more shapes than the cache keeps evict them, get every product right (a
// primitive one thread runs stays alive after the other evicts it).
TEST(Bf16, ThreadsShareThePrimitivesOfAShape) {
  if (!bf16_supported()) GTEST_SKIP() << "no AVX512_BF16 or no oneDNN: bf16 computes in fp32";
  const Index k = 24, n = 40;
  Bf16Matrix B;
  B.assign(Mat<float>(Mat<float>::Random(k, n)));
  int wrong = 0;
#pragma omp parallel num_threads(2) reduction(+ : wrong)
  for (Index m = 1; m <= 300; ++m) {
    Bf16Matrix A;
    A.assign(Mat<float>(Mat<float>::Random(m, k)));
    Mat<float> c(m, n);
    gemm_bf16(A, false, B, false, c, false);
    wrong += (c.cast<double>() - widened(A) * widened(B)).cwiseAbs().maxCoeff() > 1e-5;
  }
  EXPECT_EQ(wrong, 0);
}

// The output layer's cost, weight gradients and input gradient in bf16 stay within a few
// bf16 roundings (2⁻⁹ relative each) of fp32, for maxout, linear and tied outputs, across
// chunks of output_layer_cost.
TEST(Bf16, OutputLayerAgreesWithFp32) {
  if (!bf16_supported()) GTEST_SKIP() << "no AVX512_BF16 or no oneDNN: bf16 computes in fp32";
  for (const auto& [name, config] : test::output_layer_variants()) {
    Parameters<float> params(config);
    params.init_uniform(0.5, 5);
    std::mt19937_64 rng(5);
    const Index N = kOutputChunkRows + 40, din = config.output_input();
    const Mat<float> X = Mat<float>::Random(N, din);
    std::vector<int> targets(N);
    for (Index i = 0; i < N; ++i) targets[i] = static_cast<int>(rng() % config.tgt_vocab);

    auto run = [&](const Bf16Projection* bf16, Parameters<float>& grads, Mat<float>& dX) {
      OutputCache<float> cache;
      cache.bf16 = bf16;
      grads.set_zero();
      dX.resize(N, din);
      return output_layer_cost<float>(params, X, targets.data(), 0.1f, cache, nullptr, 0.01f, &grads, &dX);
    };
    Parameters<float> grads32(config), grads16(config);
    Mat<float> dX32, dX16;
    const float cost32 = run(nullptr, grads32, dX32);
    Bf16Projection projection;
    convert_projection(params, projection);
    const float cost16 = run(&projection, grads16, dX16);
    EXPECT_NEAR(cost16, cost32, 1e-3 * std::abs(cost32)) << name;
    EXPECT_NE(cost16, cost32) << name << ": the bf16 path was not taken";
    EXPECT_LT(test::relative_difference(dX16, dX32), 1e-2) << name;
    const Param projection_weight =
        config.output == OutputKind::linear ? out_W : config.tied_embeddings ? tgt_emb : out_Wo;
    for (Param p : {projection_weight, out_W}) {
      EXPECT_LT(test::relative_difference(grads16.mat(p), grads32.mat(p)), 1e-2) << name << " " << p;
      EXPECT_GT(test::relative_difference(grads16.mat(p), grads32.mat(p)), 0) << name << " " << p;
    }
  }
}

// Decoding (translate --precision bf16) with each ensemble member's bf16 projection.
TEST(Bf16, BeamSearchDecodesWithTheBf16Projection) {
  if (!bf16_supported()) GTEST_SKIP() << "no AVX512_BF16 or no oneDNN: bf16 computes in fp32";
  test::expect_ensemble_decodes_near_fp32<Bf16Projection>(2e-2);
}

// Each entry rounded to bf16, in double.
Mat<double> rounded(const MatCRef<float>& m) {
  return m.unaryExpr([](float v) { return static_cast<double>(bf16_to_float(float_to_bf16(v))); });
}

double relative_error(const MatCRef<float>& got, const Mat<double>& want) {
  return (got.cast<double>() - want).norm() / want.norm();
}

// Bf16Weights copies exactly the parameter matrices the model multiplies (not the
// embeddings, which are looked up, nor the vocabulary projection, which has Bf16Projection),
// for every kind of output layer, and finds a block only inside one of them.
TEST(Bf16Weights, CopiesEveryMultipliedMatrixAndNothingElse) {
  for (const auto& [name, config] : test::output_layer_variants()) {
    Parameters<float> params(config);
    params.init_uniform(0.5, 3);
    Bf16Weights weights;
    weights.assign(params);
    for (int p = 0; p < params.tensor_count(); ++p) {
      const Param param = static_cast<Param>(p);
      const ParamSpec& spec = params.spec(param);
      if (!spec.present) continue;
      const uint16_t* copy = weights.find(params.data(param), spec.rows, spec.cols, spec.cols);
      const bool multiplied = !spec.is_vector && param != src_emb && param != tgt_emb && param != projection_weight(config);
      if (!multiplied) {
        EXPECT_EQ(copy, nullptr) << name << " " << spec.name;
        continue;
      }
      ASSERT_NE(copy, nullptr) << name << " " << spec.name;
      for (size_t i = 0; i < spec.size(); ++i)
        ASSERT_EQ(copy[i], float_to_bf16(params.data(param)[i])) << name << " " << spec.name << " " << i;
      // a block that runs one value past the matrix's end is not one of them
      EXPECT_EQ(weights.find(params.data(param) + 1, spec.rows, spec.cols, spec.cols), nullptr) << spec.name;
      EXPECT_NE(weights.find(params.data(param) + 1, spec.rows - 1, spec.cols - 1, spec.cols), nullptr) << spec.name;
    }
  }
}

// A small model's parameters (e=32, n=24, l=32: dec_U is 24×72) and their bf16 copy.
struct RoundedParameters {
  Parameters<float> params;
  Bf16Weights weights;
  explicit RoundedParameters(uint64_t seed) : params(test::tiny_config(50, 300, OutputKind::maxout, 32, 24, 32)) {
    params.init_uniform(0.5, seed);
    weights.assign(params);
  }
};

// Under Bf16Products a thread's float products (Eigen's, through sgemm_) multiply both
// operands rounded to bf16, in every transposition, with row strides, accumulating, and in
// slices; once it ends they are fp32 again.
TEST(Bf16Products, RoundBothOperandsOfTheThreadsProducts) {
  if (!bf16_training_supported()) GTEST_SKIP() << "no AVX512_BF16, or no oneDNN and OpenBLAS: training computes in fp32";
  RoundedParameters model(7);
  const Bf16Weights& weights = model.weights;
  const auto U = model.params.mat(dec_U);
  const Mat<float> wide = Mat<float>::Random(40, 30), dg = Mat<float>::Random(37, 72), start = Mat<float>::Random(24, 72);
  const auto x = wide.block(1, 2, 37, 24);  // row stride 30
  const Mat<float> xt = x.transpose();
  const Mat<double> U64 = rounded(U), x64 = rounded(x), dg64 = rounded(dg);
  Mat<float> y(37, 72), yt(72, 37), dx(37, 24), dU = start;
  {
    Bf16Products products(weights);
    y.noalias() = x * U;
    yt.noalias() = U.transpose() * xt;
    dx.noalias() = dg * U.transpose();
    dU.noalias() += x.transpose() * dg;
  }
  EXPECT_LT(relative_error(y, x64 * U64), 1e-6);
  EXPECT_LT(relative_error(yt, U64.transpose() * x64.transpose()), 1e-6);
  EXPECT_LT(relative_error(dx, dg64 * U64.transpose()), 1e-6);
  EXPECT_LT(relative_error(dU, start.cast<double>() + x64.transpose() * dg64), 1e-6);
  // Over more rows than a slice (kProductSliceLength, 512): products of slices, summed over them
  // when the rows are the inner dimension.
  const Mat<float> tall = Mat<float>::Random(1300, 24), tall_dg = Mat<float>::Random(1300, 72);
  const Mat<double> tall64 = rounded(tall), tall_dg64 = rounded(tall_dg);
  Mat<float> tall_y(1300, 72), tall_dx(1300, 24), tall_dU = start;
  {
    Bf16Products products(weights);
    tall_y.noalias() = tall * U;
    tall_dx.noalias() = tall_dg * U.transpose();
    tall_dU.noalias() += tall.transpose() * tall_dg;
  }
  EXPECT_LT(relative_error(tall_y, tall64 * U64), 1e-6);
  EXPECT_LT(relative_error(tall_dx, tall_dg64 * U64.transpose()), 1e-6);
  EXPECT_LT(relative_error(tall_dU, start.cast<double>() + tall64.transpose() * tall_dg64), 1e-6);
  // the roundings show: fp32's product is a few bf16 epsilons (2⁻⁸) away
  const Mat<float> y32 = x * U;
  EXPECT_GT(relative_error(y, x.cast<double>() * U.cast<double>()), 1e-4);
  EXPECT_LT(relative_error(y32, x.cast<double>() * U.cast<double>()), 1e-6);
}

// The batch-dependent side of a product runs in slices of kProductSliceLength and then of
// powers of two: the slices cover the side exactly, and a thread meets few lengths.
TEST(Bf16Products, SliceLengthsAreFewAndCoverTheSide) {
  std::set<int> lengths;
  for (int side = 1; side <= 3200; ++side) {
    int covered = 0;
    for (int length; covered < side; covered += length) {
      length = product_slice_length(side - covered);
      ASSERT_GE(length, 1);
      lengths.insert(length);
    }
    EXPECT_EQ(covered, side);
  }
  EXPECT_EQ(lengths, (std::set<int>{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}));
  std::set<int> of_shard_multiples;  // sides of S·B or T·B rows with B = 32
  for (int side = 32; side <= 3200; side += 32)
    for (int covered = 0, length; covered < side; covered += length)
      of_shard_multiples.insert(length = product_slice_length(side - covered));
  EXPECT_EQ(of_shard_multiples, (std::set<int>{32, 64, 128, 256, 512}));
}

// A parameter is rounded once per assign(), not at each product: until the next assign()
// (the trainer's, after every update) products read the copy.
TEST(Bf16Products, ReadParametersFromTheCopyOfTheLastAssign) {
  if (!bf16_training_supported()) GTEST_SKIP() << "no AVX512_BF16, or no oneDNN and OpenBLAS: training computes in fp32";
  RoundedParameters model(9);
  Parameters<float>& params = model.params;
  Bf16Weights& weights = model.weights;
  const Mat<float> x = Mat<float>::Random(37, 24);
  const Mat<double> before = rounded(x) * rounded(params.mat(dec_U));
  params.mat(dec_U) *= 3;
  Mat<float> y(37, 72);
  Bf16Products products(weights);
  y.noalias() = x * params.mat(dec_U);
  EXPECT_LT(relative_error(y, before), 1e-6);
  weights.assign(params);
  y.noalias() = x * params.mat(dec_U);
  EXPECT_LT(relative_error(y, rounded(x) * rounded(params.mat(dec_U))), 1e-6);
}

// A training step of ShardedModel in bf16 (every product in bf16): the cost and the gradient
// of every parameter stay within bf16's roundings of fp32's, and do differ from them.
TEST(Bf16Products, TrainingGradientsAgreeWithFp32) {
  if (!bf16_training_supported()) GTEST_SKIP() << "no AVX512_BF16, or no oneDNN and OpenBLAS: training computes in fp32";
  for (const auto& [name, config] : test::output_layer_variants()) {
    Parameters<float> params(config);
    params.init_uniform(0.1, 4);
    std::mt19937_64 rng(4);
    ParallelCorpus corpus;
    for (int pair = 0; pair < 8; ++pair) {
      std::vector<int> src(5 + rng() % 8), tgt(5 + rng() % 8);
      for (int& id : src) id = 4 + static_cast<int>(rng() % (config.src_vocab - 4));
      for (int& id : tgt) id = 4 + static_cast<int>(rng() % (config.tgt_vocab - 4));
      src.back() = tgt.back() = Vocab::kEos;
      corpus.src.push_back(src);
      corpus.tgt.push_back(tgt);
    }
    const std::vector<uint32_t> ids = {0, 1, 2, 3, 4, 5, 6, 7};
    ShardedModel fp32(config, 2, Precision::fp32), bf16(config, 2, Precision::bf16);
    Parameters<float> grads32(config), grads16(config);
    const float scale = 1.0f / static_cast<float>(ShardedModel::target_tokens(corpus, ids));
    const double cost32 = fp32.add_gradient(params, corpus, ids, {}, scale, grads32);
    const double cost16 = bf16.add_gradient(params, corpus, ids, {}, scale, grads16);
    fp32.sum_gradients(grads32);
    bf16.sum_gradients(grads16);
    EXPECT_NEAR(cost16, cost32, 1e-3 * cost32) << name;
    EXPECT_NE(cost16, cost32) << name;
    // The deep, layer-normalized model is chaotic at this size: its fp32 gradient itself moves
    // by up to ~100% per tensor when the parameters are rounded to bf16 (measured: 60–110%,
    // init 0.1 to 0.5), and bf16's moves as much, so the gradients cannot tell roundings from
    // a wrong operand. Its products are the deep model's and the layer-normalized one's,
    // whose gradients are checked below; its cost is checked above.
    if (config.layer_norm && config.enc_depth > 1) continue;
    const auto all32 = ConstMatMap<float>(grads32.values().data(), 1, static_cast<Index>(grads32.values().size()));
    const auto all16 = ConstMatMap<float>(grads16.values().data(), 1, static_cast<Index>(grads16.values().size()));
    // Layer normalization divides each product by its rows' spread and its backward subtracts
    // two means: the roundings weigh more (3.5% here, every tensor 3–6%, against 0.3–12%).
    EXPECT_LT(test::relative_difference(all16, all32), config.layer_norm ? 5e-2 : 3e-2) << name;
    // Per tensor the gradient can be a sum of nearly cancelling terms (the attention's, with
    // weights this small, is nearly uniform), which the roundings move by up to ~12% here; a
    // wrong operand would move it by ~100%.
    for (int p = 0; p < params.tensor_count(); ++p) {
      const Param param = static_cast<Param>(p);
      if (!params.spec(param).present) continue;
      const auto g32 = grads32.mat(param), g16 = grads16.mat(param);
      EXPECT_LT(test::relative_difference(g16, g32), 0.25) << name << " " << params.spec(param).name;
      EXPECT_GT(test::relative_difference(g16, g32), 0) << name << " " << params.spec(param).name;
    }
  }
}

}  // namespace
}  // namespace rnnsearch
