// A sentence's translation does not depend on its batch (issue 81, docs/translating.md):
// words, log-probabilities, alignments, samples and alternatives are bitwise the same at
// batch sizes 1, 7 and 64, on 1 and 2 threads, in fp32, bf16 and int8 (fp32 where the CPU
// lacks them). Underneath, gemm_invariant (kernels/invariant_gemm.h) gives a row the same bits
// whatever the product's rows and on every CPU path, and the bf16 projection's fixed blocks do.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "rnnsearch/decode/translator.h"
#include "rnnsearch/kernels/bf16.h"
#include "rnnsearch/kernels/invariant_gemm.h"
#include "rnnsearch/kernels/precision.h"
#include "support/model_dir.h"
#include "support/temp_dir.h"

namespace rnnsearch {
namespace {

Mat<float> random_matrix(Index rows, Index cols, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  Mat<float> m(rows, cols);
  for (Index i = 0; i < rows; ++i)
    for (Index j = 0; j < cols; ++j) m(i, j) = uniform(rng);
  return m;
}

std::vector<InvariantGemmPath> supported_paths() {
  std::vector<InvariantGemmPath> paths;
  for (InvariantGemmPath path : {InvariantGemmPath::scalar, InvariantGemmPath::avx2, InvariantGemmPath::avx512})
    if (invariant_gemm_path_supported(path)) paths.push_back(path);
  return paths;
}

// C = A op(B) by gemm_invariant on path, rows [first, first + count) of A at a time
Mat<float> product(InvariantGemmPath path, const Mat<float>& A, const Mat<float>& B, bool transpose_b, Index count) {
  const Index N = transpose_b ? B.rows() : B.cols();
  Mat<float> C = Mat<float>::Constant(A.rows(), N, 0.5f);
  for (Index first = 0; first < A.rows(); first += count) {
    const Index rows = std::min(count, A.rows() - first);
    gemm_invariant(path, rows, N, A.cols(), A.row(first).data(), A.cols(), B.data(), B.cols(), transpose_b,
                   C.row(first).data(), C.cols(), false);
  }
  return C;
}

TEST(InvariantGemm, ARowHasTheSameBitsWhateverTheRowsAndPathAndMatchesTheProduct) {
  const Mat<float> A = random_matrix(70, 131, 1), B = random_matrix(131, 150, 2), Bt = B.transpose();
  const Mat<double> want = A.cast<double>() * B.cast<double>();
  const std::vector<InvariantGemmPath> paths = supported_paths();
  ASSERT_FALSE(paths.empty());
  const Mat<float> reference = product(paths.front(), A, B, false, A.rows());
  EXPECT_LT((reference.cast<double>() - want).cwiseAbs().maxCoeff(), 1e-4);
  for (InvariantGemmPath path : paths)
    for (Index rows : {Index{70}, Index{1}, Index{3}, Index{7}, Index{64}}) {
      SCOPED_TRACE("path " + std::to_string(static_cast<int>(path)) + ", " + std::to_string(rows) + " rows at a time");
      EXPECT_TRUE(product(path, A, B, false, rows) == reference);
      EXPECT_TRUE(product(path, A, Bt, true, rows) == reference) << "B given transposed";
    }
}

TEST(InvariantGemm, AccumulatesOntoC) {
  const Mat<float> A = random_matrix(5, 20, 3), B = random_matrix(20, 9, 4);
  Mat<float> C = random_matrix(5, 9, 5);
  const Mat<float> before = C;
  gemm_invariant(5, 9, 20, A.data(), 20, B.data(), 9, false, C.data(), 9, true);
  EXPECT_LT((C - before - A * B).cwiseAbs().maxCoeff(), 1e-5);
}

TEST(Bf16FixedBlocks, ARowHasTheSameBitsWhateverTheRows) {
  if (!bf16_supported()) GTEST_SKIP() << "no native bf16 here";
  const Mat<float> A = random_matrix(37, 96, 6), W = random_matrix(300, 96, 7);
  Bf16Matrix a, w;
  a.assign(A);
  w.assign(W);
  Mat<float> all(37, 300);
  gemm_bf16_fixed_blocks(a, w, true, all);
  for (Index i = 0; i < A.rows(); ++i) {
    Bf16Matrix row;
    row.assign(A.row(i));
    Mat<float> alone(1, 300);
    gemm_bf16_fixed_blocks(row, w, true, alone);
    EXPECT_TRUE(alone.row(0) == all.row(i)) << "row " << i;
  }
}

// The translations' every output, bits included
struct Output {
  std::vector<std::vector<int>> tokens;
  std::vector<double> log_probs, alternative_log_probs;
  std::vector<std::vector<float>> alignments;
  bool operator==(const Output& o) const {
    return tokens == o.tokens && log_probs == o.log_probs && alternative_log_probs == o.alternative_log_probs &&
           alignments == o.alignments;
  }
};

class BatchInvariance : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<std::string> src, tgt;
    for (int w = 0; w < 40; ++w) {
      src.push_back("s" + std::to_string(w));
      tgt.push_back("t" + std::to_string(w));
    }
    // hidden 32: rows of a multiple of 16 floats (docs/translating.md); 44 target words: not
    test::write_model_dir(dir_.path("m"), src, tgt, -20.0f, 16, 32, 16);
    models_ = load_ensemble({dir_.path("m")});
    std::mt19937_64 rng(11);
    for (int k = 0; k < 70; ++k) {
      std::string line;
      for (int w = 0, n = 1 + static_cast<int>(rng() % 14); w < n; ++w) line += (w ? " s" : "s") + std::to_string(rng() % 40);
      lines_.push_back(line);
    }
  }

  Output translate(const BeamOptions& beam, Precision precision, int threads, int batch_size) {
    TranslatorOptions options;
    options.beam = beam;
    options.beam.alignment = true;
    options.threads = threads;
    options.batch_size = batch_size;
    options.precision = precision;
    Translator translator(models_.front(), ensemble_weights(models_), options);
    Output out;
    for (const LineTranslation& line : translator.translate(lines_, 0))
      for (const Hypothesis& h : line.hypotheses) {
        out.tokens.push_back(h.tokens);
        out.log_probs.push_back(h.log_prob);
        out.alternative_log_probs.push_back(h.alternative_log_prob);
        out.alignments.push_back(h.alignment.weights);
      }
    return out;
  }

  void expect_invariant(const BeamOptions& beam) {
    for (const char* name : {"fp32", "bf16", "int8"}) {
      const Precision precision = precision_option(name, PrecisionUse::decoding);
      const Output alone = translate(beam, precision, 1, 1);
      EXPECT_FALSE(alone.tokens.empty());
      for (int threads : {1, 2})
        for (int batch_size : {1, 7, 64}) {
          if (threads == 1 && batch_size == 1) continue;
          EXPECT_TRUE(translate(beam, precision, threads, batch_size) == alone)
              << name << ", " << threads << " threads, batch size " << batch_size;
        }
    }
  }

  test::TempDir dir_;
  std::vector<Model> models_;
  std::vector<std::string> lines_;
};

TEST_F(BatchInvariance, Beam) {
  BeamOptions beam;
  beam.beam_size = 5;
  beam.n_best = 2;
  expect_invariant(beam);
}

TEST_F(BatchInvariance, Greedy) {
  BeamOptions beam;
  beam.beam_size = 1;
  expect_invariant(beam);
}

TEST_F(BatchInvariance, SamplingWholeDistribution) {
  BeamOptions beam;
  beam.sampling_topk = 0;
  beam.n_best = 3;
  beam.sampling_seed = 7;
  expect_invariant(beam);
}

TEST_F(BatchInvariance, SamplingTopK) {
  BeamOptions beam;
  beam.sampling_topk = 5;
  beam.n_best = 3;
  beam.sampling_seed = 7;
  expect_invariant(beam);
}

TEST_F(BatchInvariance, Alternatives) {
  BeamOptions beam;
  beam.alternatives = 4;
  expect_invariant(beam);
}

}  // namespace
}  // namespace rnnsearch
