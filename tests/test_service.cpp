// The server's scheduler (serve/service.h) without HTTP: requests from many client threads,
// with different decoding options, queued into the continuous searches, must each get what a
// Translator with their options gives them; a full queue and a stopped service answer 503;
// /score and /align requests are the Scorer's and the Aligner's results; a sentence's
// translation has the same bits alone and among other clients' sentences.
#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "rnnsearch/kernels/precision.h"
#include "rnnsearch/serve/service.h"
#include "support/model_dir.h"
#include "support/temp_dir.h"

namespace rnnsearch::serve {
namespace {

const std::vector<std::string> kSentences = {"the dog runs", "a cat sleeps", "dog dog the cat",
                                             "",             "runs a dog",   "the cat the dog sleeps"};

class Service : public ::testing::Test {
 protected:
  void SetUp() override { models_ = test::load_six_word_model(dir_.path("m")); }
  // What `rnnsearch translate` (a Translator made for the request's options) gives the lines.
  std::vector<LineTranslation> expected(const TranslateRequest& request, const ServiceOptions& service) const {
    TranslatorOptions options;
    options.beam = request.beam;
    options.beam.alignment = request.alignment != AlignmentFormat::none || request.replace_unk || request.heatmap;
    options.replace_unk = request.replace_unk;
    options.max_length = service.max_tokens;
    Translator translator(models_.front(), ensemble_weights(models_), options);
    return translator.translate(request.sentences, 0);
  }
  static void expect_equal(const std::vector<LineTranslation>& got, const std::vector<LineTranslation>& want,
                           const std::string& where) {
    ASSERT_EQ(got.size(), want.size()) << where;
    for (size_t k = 0; k < got.size(); ++k) {
      ASSERT_EQ(got[k].hypotheses.size(), want[k].hypotheses.size()) << where << " line " << k;
      for (size_t h = 0; h < got[k].hypotheses.size(); ++h) {
        EXPECT_EQ(got[k].hypotheses[h].words, want[k].hypotheses[h].words) << where << " line " << k;
        // scores and attention to float rounding (what the CLI prints, %.4g and 6 digits, is equal):
        // a row's products depend on the rows that share its GEMM
        EXPECT_NEAR(got[k].hypotheses[h].score, want[k].hypotheses[h].score, 1e-5) << where << " line " << k;
        const std::vector<float>&a = got[k].hypotheses[h].alignment.weights, &b = want[k].hypotheses[h].alignment.weights;
        ASSERT_EQ(a.size(), b.size()) << where << " line " << k;
        for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-5) << where << " line " << k;
      }
    }
  }
  test::TempDir dir_;
  std::vector<Model> models_, no_reverse_;
};

TEST_F(Service, ConcurrentRequestsWithOtherOptionsEachGetTheirTranslatorsResults) {
  const std::vector<std::string> bodies = {
      R"({"q": ["the dog runs", "a cat sleeps", "dog dog the cat", "", "runs a dog", "the cat the dog sleeps"]})",
      R"({"q": ["the dog runs", "a cat sleeps", "dog dog the cat", "", "runs a dog", "the cat the dog sleeps"],
          "beam_size": 3, "n_best": 2, "alignment": "soft"})",
      R"({"q": ["the cat the dog sleeps", "runs a dog", "a cat sleeps"], "beam_size": 1})",
      R"({"q": ["dog dog the cat", "the dog runs"], "coverage_penalty": 0.4, "word_penalty": -0.3,
          "alignment": "hard"})"};
  for (int threads : {1, 2}) {
    ServiceOptions options;
    options.threads = threads;
    options.batch_size = 3;  // fewer than a request's sentences: requests share and span searches
    TranslationService service(models_, no_reverse_, options);
    std::vector<TranslateRequest> requests;
    std::vector<std::vector<LineTranslation>> want;
    for (const std::string& body : bodies) {
      requests.push_back(service.parse_translate_request(body));
      want.push_back(expected(requests.back(), options));
    }
    constexpr int kClients = 6, kRounds = 5;
    std::vector<std::thread> clients;
    std::vector<std::vector<std::vector<LineTranslation>>> got(kClients);
    for (int c = 0; c < kClients; ++c)
      clients.emplace_back([&, c] {
        for (int r = 0; r < kRounds; ++r) got[c].push_back(service.translate(requests[(c + r) % requests.size()]));
      });
    for (std::thread& client : clients) client.join();
    for (int c = 0; c < kClients; ++c)
      for (int r = 0; r < kRounds; ++r)
        expect_equal(got[c][r], want[(c + r) % requests.size()],
                     std::to_string(threads) + " threads, client " + std::to_string(c) + ", round " + std::to_string(r));
  }
}

TEST_F(Service, AFullQueueAndAStoppedServiceAnswer503) {
  ServiceOptions options;
  options.max_queue = 2;
  TranslationService service(models_, no_reverse_, options);
  const TranslateRequest three = service.parse_translate_request(R"({"q": ["a dog", "the cat", "dog runs"]})");
  try {
    service.translate(three);
    ADD_FAILURE() << "three sentences were queued past --max-queue 2";
  } catch (const RequestError& e) {
    EXPECT_EQ(e.status, 503);
    EXPECT_EQ(std::string(e.what()), "busy: 0 sentences are queued (--max-queue 2)");
  }
  const TranslateRequest two = service.parse_translate_request(R"({"q": ["a dog", "the cat"]})");
  EXPECT_EQ(service.translate(two).size(), 2u) << "the refused request left nothing behind";
  service.stop();
  for (const auto& call : std::vector<std::function<void()>>{
           [&] { service.translate(two); },
           [&] { service.score(service.parse_score_request(R"({"src": "a dog", "tgt": "ein hund"})")); }}) {
    try {
      call();
      ADD_FAILURE() << "a stopped service answered";
    } catch (const RequestError& e) {
      EXPECT_EQ(e.status, 503);
      EXPECT_EQ(std::string(e.what()), "the server is stopping");
    }
  }
}

TEST_F(Service, ScoreAndAlignAreTheScorersAndTheAlignersResults) {
  ServiceOptions options;
  options.threads = 2;
  TranslationService service(models_, no_reverse_, options);
  const ScoreRequest request = service.parse_score_request(
      R"({"src": ["the dog runs", "a cat", ""], "tgt": ["die katze", "ein hund läuft", "ein"], "normalize": 1.0})");
  ASSERT_EQ(request.src.size(), 3u);
  const std::vector<ScoredPair> got = service.score(request);
  ScorerOptions sopts;
  sopts.max_length = options.max_tokens;
  Scorer scorer(models_.front(), ensemble_weights(models_), sopts);
  const std::vector<ScoredPair> want = scorer.score(request.src, request.tgt, 0);
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    ASSERT_EQ(got[k].scored(), want[k].scored()) << k;
    if (!want[k].scored()) continue;  // the empty source
    // to rounding: the service's Scorer splits the pairs over its threads' batches
    EXPECT_NEAR(got[k].log_prob, want[k].log_prob, 1e-5) << k;
    EXPECT_NEAR(got[k].score, ranking_score(request.ranking, want[k]), 1e-5) << k << ": the request's ranking";
  }
  const AlignRequest align_request =
      service.parse_align_request(R"({"src": ["the dog runs", "a cat"], "tgt": ["die katze", "ein hund läuft"],
                                      "method": "threshold:0.1"})");
  align::AlignerOptions aopts;
  aopts.max_length = options.max_tokens;
  aopts.method = align_request.method;
  align::Aligner aligner(models_, no_reverse_, aopts);
  const std::vector<align::AlignedPair> want_links = aligner.align(align_request.src, align_request.tgt, 0);
  const std::vector<align::AlignedPair> got_links = service.align(align_request);
  ASSERT_EQ(got_links.size(), want_links.size());
  for (size_t k = 0; k < got_links.size(); ++k)
    EXPECT_EQ(align::pharaoh_text(got_links[k].links), align::pharaoh_text(want_links[k].links)) << k;
}


// Issue 81: whatever other clients' sentences share its search, a sentence's translation
// (words, log-probability, attention) has the bits it has alone, at every precision.
TEST(ServiceInvariance, ASentenceHasTheSameBitsAloneAndAmongOtherClients) {
  test::TempDir dir;
  std::vector<std::string> src, tgt;
  for (int w = 0; w < 40; ++w) {
    src.push_back("s" + std::to_string(w));
    tgt.push_back("t" + std::to_string(w));
  }
  test::write_model_dir(dir.path("m"), src, tgt, -20.0f, 16, 32, 16);  // rows of 16 floats (docs/translating.md)
  const std::vector<Model> models = load_ensemble({dir.path("m")}), no_reverse;
  std::mt19937_64 rng(3);
  std::vector<std::string> lines;
  for (int k = 0; k < 24; ++k) {
    std::string line;
    for (int w = 0, n = 1 + static_cast<int>(rng() % 12); w < n; ++w) line += (w ? " s" : "s") + std::to_string(rng() % 40);
    lines.push_back(line);
  }
  const auto body = [](const std::vector<std::string>& q) {
    return nlohmann::json{{"q", q}, {"beam_size", 4}, {"n_best", 2}, {"alignment", "soft"}}.dump();
  };
  for (const char* precision : {"fp32", "bf16", "int8"}) {
    ServiceOptions options;
    options.threads = 2;
    options.batch_size = 8;
    options.precision = precision_option(precision, PrecisionUse::decoding);
    TranslationService service(models, no_reverse, options);
    std::vector<LineTranslation> alone;
    for (const std::string& line : lines) alone.push_back(service.translate(service.parse_translate_request(body({line})))[0]);
    constexpr int kClients = 6;
    std::vector<std::thread> clients;
    std::vector<std::vector<std::pair<size_t, LineTranslation>>> got(kClients);
    for (int c = 0; c < kClients; ++c)
      clients.emplace_back([&, c] {
        for (size_t first = static_cast<size_t>(c); first < lines.size(); first += 5) {
          std::vector<std::string> q(lines.begin() + static_cast<long>(first),
                                     lines.begin() + static_cast<long>(std::min(first + 4, lines.size())));
          const std::vector<LineTranslation> result = service.translate(service.parse_translate_request(body(q)));
          for (size_t k = 0; k < result.size(); ++k) got[c].emplace_back(first + k, result[k]);
        }
      });
    for (std::thread& client : clients) client.join();
    for (int c = 0; c < kClients; ++c)
      for (const auto& [line, translation] : got[c]) {
        const std::vector<Hypothesis>&a = translation.hypotheses, &b = alone[line].hypotheses;
        ASSERT_EQ(a.size(), b.size()) << precision << ", line " << line;
        for (size_t h = 0; h < a.size(); ++h) {
          EXPECT_EQ(a[h].tokens, b[h].tokens) << precision << ", line " << line;
          EXPECT_EQ(a[h].log_prob, b[h].log_prob) << precision << ", line " << line;
          EXPECT_EQ(a[h].alignment.weights, b[h].alignment.weights) << precision << ", line " << line;
        }
      }
  }
}

}  // namespace
}  // namespace rnnsearch::serve
