// rnnsearch serve, run as the real binary on a free loopback port with a tiny random model:
// every endpoint, the errors and limits, concurrent clients whose results must equal
// `rnnsearch translate` byte for byte whatever shares their batch, slow and vanishing
// clients, and SIGTERM with requests in flight.
// Eigen (model_dir.h) before httplib.h: its <resolv.h> defines `_res`, a name Eigen uses.
#include "rnnsearch/decode/decode_options.h"
#include "support/run_binary.h"
#include "support/model_dir.h"
#include "support/serve_process.h"
#include "support/temp_dir.h"

#include <omp.h>

#include <functional>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

namespace rnnsearch {
namespace {

using nlohmann::json;
using test::TempDir;
using Clock = std::chrono::steady_clock;

using test::connect_to;
using test::get;
using test::lines_of;
using test::post;
using test::Reply;
using test::Server;

// A counter or gauge of /metrics (the first series of that name).
double metric(const std::string& text, const std::string& name) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.compare(0, name.size() + 1, name + " ") == 0 || line.compare(0, name.size() + 1, name + "{") == 0)
      return std::stod(line.substr(line.rfind(' ') + 1));
  return -1;
}

class Serve : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    std::vector<std::string> src, tgt;
    for (const char* w : {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}) src.push_back(w);
    for (const char* w : {"u", "v", "w", "x", "y", "z", "q", "r"}) tgt.push_back(w);
    test::write_model_dir(model(), src, tgt, -30.0f, /*emb=*/8, /*hidden=*/12, /*maxout=*/6);
    test::write_model_dir(deep_model(), src, tgt, -30.0f, 8, 12, 6, test::deep_s2s);
    // Sentences of 1 to 25 words, an unknown word, an empty line and one of spaces.
    std::mt19937 rng(5);
    for (int k = 0; k < 60; ++k) {
      std::string line;
      for (int n = 1 + static_cast<int>(rng() % 25); n > 0; --n) line += src[rng() % src.size()] + " ";
      sentences_.push_back(line);
    }
    sentences_.push_back("a b unknownword c");
    sentences_.push_back("");
    sentences_.push_back("   ");
    std::string text;
    for (const std::string& s : sentences_) text += s + "\n";
    input_ = dir_->write("input.txt", text);
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string model() { return dir_->path("model"); }
  static std::string deep_model() { return dir_->path("deep"); }
  // 16 clients x 50 requests of 1 to 3 sentences, with three sets of options, all at once:
  // each gets the CLI's translations, and some steps decode several requests' sentences.
  static void concurrent_requests(const std::string& flags);

  // The decoding controls in a request to the server of model_dir give what translate gives
  // with the same options.
  // The n-best records of `translate --format json --precision fp32 cli_args` against a
  // /translate of every sentence with these fields.
  static void expect_the_cli_records(const Server& server, const std::string& cli_args, const json& fields,
                                     const std::string& model_dir);
  // A /translate reply of all sentences: each one's best target is that of the CLI's JSON record
  // (records: one per sentence), and `also` holds for each translated sentence.
  static void expect_the_cli_best(const Reply& reply, const std::vector<std::string>& records,
                                  const std::function<void(size_t k, const json& hypotheses)>& also = {}) {
    ASSERT_EQ(reply.status, 200) << reply.text;
    for (size_t k = 0; k < sentences_.size(); ++k) {
      const json& hypotheses = reply.body["translations"][k]["hypotheses"];
      const json cli_record = json::parse(records.at(k));
      if (hypotheses.empty()) {
        EXPECT_TRUE(cli_record["target"].empty()) << sentences_[k];
        continue;
      }
      EXPECT_EQ(hypotheses[0]["target"], cli_record["target"]) << sentences_[k];
      if (also) also(k, hypotheses);
    }
  }
  static void expect_controls_give_the_cli_translations(const Server& server, const std::string& model_dir) {
    expect_the_cli_records(server,
                           "--beam-size 4 --n-best 3 --max-length-factor 0.8 --word-penalty 0.3 "
                           "--length-penalty-alpha 0.6 --coverage-penalty 0.2",
                           {{"beam_size", 4}, {"n_best", 3}, {"max_length_factor", 0.8}, {"word_penalty", 0.3},
                            {"length_penalty_alpha", 0.6}, {"coverage_penalty", 0.2}},
                           model_dir);
  }

  // `rnnsearch translate` of all sentences with these options: its stdout lines.
  static std::vector<std::string> cli(const std::string& options, const std::string& model_dir = model()) {
    const std::string out = dir_->path("cli.txt");
    const std::string command = std::string(RNNSEARCH_BINARY) + " translate -m " + model_dir + " -i " + input_ + " " +
                                options + " >" + out + " 2>/dev/null";
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
    return lines_of(dir_->read("cli.txt"));
  }

  static TempDir* dir_;
  static std::vector<std::string> sentences_;
  static std::string input_;
};

TempDir* Serve::dir_ = nullptr;
std::vector<std::string> Serve::sentences_;
std::string Serve::input_;

TEST_F(Serve, HealthInfoMetricsAndPage) {
  Server server(*dir_, "-m " + model());
  ASSERT_GT(server.port(), 0);
  EXPECT_EQ(server.host(), "127.0.0.1") << "binds to loopback unless --host says otherwise";
  const Reply health = get(server, "/health");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body, json({{"status", "ok"}}));
  const Reply info = get(server, "/info");
  ASSERT_EQ(info.status, 200);
  EXPECT_EQ(info.body["source_vocabulary"], 14) << "10 words and the 4 special tokens";
  EXPECT_EQ(info.body["target_vocabulary"], 12);
  EXPECT_EQ(info.body["models"].size(), 1u);
  EXPECT_EQ(info.body["models"][0]["config"]["hidden"], 12);
  EXPECT_TRUE(info.body["version"].get<std::string>().rfind("rnnsearch-", 0) == 0);
  EXPECT_TRUE(info.body["precision"].is_string());
  // "options": the decoding options' table (decode/decode_options.h), which the page's fields are built from
  const std::vector<DecodeOptionSpec>& specs = decode_option_specs();
  ASSERT_EQ(info.body["options"].size(), specs.size());
  std::map<std::string, json> options;
  for (size_t k = 0; k < specs.size(); ++k) {
    const json& entry = info.body["options"][k];
    EXPECT_EQ(entry["name"], specs[k].keyword());
    EXPECT_EQ(entry["option"], std::string("--") + specs[k].name);
    EXPECT_EQ(entry["help"], specs[k].help);
    options[entry["name"].get<std::string>()] = entry;
  }
  EXPECT_EQ(options["beam_size"]["type"], "integer");
  EXPECT_EQ(options["beam_size"]["minimum"], 1);
  EXPECT_EQ(options["beam_size"]["defaults"], json({{"translate", 5}})) << "score takes no beam size";
  EXPECT_EQ(options["normalize"]["defaults"], json({{"translate", 1.0}, {"score", 0.0}}));
  EXPECT_EQ(options["normalize"]["maximum"], nullptr) << "unbounded";
  EXPECT_EQ(options["length_penalty_alpha"]["defaults"]["translate"], nullptr) << "off unless given";
  ASSERT_EQ(post(server, "/translate", R"({"q": ["a b c", "d e"]})").status, 200);
  const Reply metrics = get(server, "/metrics");
  ASSERT_EQ(metrics.status, 200);
  EXPECT_EQ(metric(metrics.text, "rnnsearch_sentences_total"), 2);
  const double steps = metric(metrics.text, "rnnsearch_steps_total");
  EXPECT_GT(steps, 1) << "one step per output token";
  EXPECT_NE(metrics.text.find("rnnsearch_requests_total{path=\"/translate\",code=\"200\"} 1"), std::string::npos)
      << metrics.text;
  EXPECT_NE(metrics.text.find("rnnsearch_request_seconds_bucket{le=\"+Inf\"}"), std::string::npos);
  EXPECT_EQ(metric(metrics.text, "rnnsearch_step_sentences_bucket{le=\"2\"}"), steps) << "two sentences at most";
  EXPECT_LT(metric(metrics.text, "rnnsearch_step_sentences_bucket{le=\"1\"}"), steps) << "the two decode together";
  EXPECT_EQ(metric(metrics.text, "rnnsearch_decoding_sentences"), 0);
  EXPECT_EQ(metric(metrics.text, "rnnsearch_queue_sentences"), 0);
  const Reply page = get(server, "/");
  ASSERT_EQ(page.status, 200);
  EXPECT_NE(page.text.find("<textarea id=\"source\""), std::string::npos);
  EXPECT_NE(page.text.find("fetch(\"translate\""), std::string::npos);
  // Self-contained: no script, style, image or font from elsewhere.
  for (const char* external : {"http://", "https://", "src=", "@import", "url("})
    EXPECT_EQ(page.text.find(external), std::string::npos) << external;
}

TEST_F(Serve, TranslationsEqualTheCliByteForByte) {
  Server server(*dir_, "-m " + model());
  const std::vector<std::string> expected = cli("");
  ASSERT_EQ(expected.size(), sentences_.size());
  const Reply all = post(server, "/translate", json({{"q", sentences_}}).dump());
  ASSERT_EQ(all.status, 200) << all.text;
  ASSERT_EQ(all.body["translations"].size(), sentences_.size());
  for (size_t k = 0; k < sentences_.size(); ++k) {
    EXPECT_EQ(all.body["translations"][k]["translation"], expected[k]) << sentences_[k];
    // One string in, one translation out.
    const Reply one = post(server, "/translate", json({{"q", sentences_[k]}}).dump());
    ASSERT_EQ(one.status, 200);
    EXPECT_EQ(one.body["translations"][0]["translation"], expected[k]);
  }
  EXPECT_TRUE(all.body["translations"][sentences_.size() - 2]["hypotheses"].empty()) << "an empty line";
  EXPECT_NE(post(server, "/translate", R"({"q": "a a a a b"})").body["translations"][0]["translation"], "")
      << "a sentence of words has a translation";
}

// The Pharaoh line of links [[source, target], ...] in an answer, as the command line prints them.
std::string pharaoh_of(const json& links) {
  std::string pharaoh;
  for (const json& link : links)
    pharaoh += (pharaoh.empty() ? "" : " ") + std::to_string(link[0].get<int>()) + "-" + std::to_string(link[1].get<int>());
  return pharaoh;
}

TEST_F(Serve, NBestScoresAndAlignmentsAreTheCliJson) {
  // In fp32: with an int8 projection, the float rounding that differs with what else shares a
  // decoder step can move an activation to the next quantization level, and scores then
  // differ by up to ~1e-3 (as translate --batch-size 32 and 7 do); the words stay the same.
  Server server(*dir_, "-m " + model() + " --precision fp32");
  const std::vector<std::string> records = cli("--beam-size 4 --n-best 3 --format json --normalize 0.5 --precision fp32");
  const std::vector<std::string> hard = cli("--beam-size 4 --n-best 3 --alignment hard --normalize 0.5 --precision fp32");
  const Reply soft_reply = post(server, "/translate",
                                json({{"q", sentences_}, {"beam_size", 4}, {"n_best", 3}, {"normalize", 0.5},
                                      {"alignment", "soft"}, {"heatmap", true}}).dump());
  const Reply hard_reply = post(server, "/translate",
                                json({{"q", sentences_}, {"beam_size", 4}, {"n_best", 3}, {"normalize", 0.5},
                                      {"alignment", "hard"}}).dump());
  ASSERT_EQ(soft_reply.status, 200) << soft_reply.text;
  ASSERT_EQ(hard_reply.status, 200) << hard_reply.text;
  size_t record = 0, compared = 0;
  for (size_t k = 0; k < sentences_.size(); ++k) {
    const json& soft = soft_reply.body["translations"][k]["hypotheses"];
    const json& pairs = hard_reply.body["translations"][k]["hypotheses"];
    if (soft.empty()) {  // the CLI prints one empty hypothesis
      ++record;
      continue;
    }
    ASSERT_EQ(soft.size(), 3u);
    for (size_t h = 0; h < soft.size(); ++h, ++record) {
      const json cli_record = json::parse(records.at(record));
      EXPECT_EQ(soft_reply.body["translations"][k]["source"], cli_record["source"]);
      EXPECT_EQ(soft[h]["target"], cli_record["target"]);
      // Scores and weights agree to float rounding: a step's products round differently
      // when it holds other sentences (translate --batch-size 1 and 32 differ as much).
      EXPECT_NEAR(soft[h]["score"].get<double>(), cli_record["score"].get<double>(), 1e-5);
      ASSERT_EQ(soft[h]["alignment"].size(), cli_record["alignment"].size());
      for (size_t i = 0; i < soft[h]["alignment"].size(); ++i)
        for (size_t j = 0; j < soft[h]["alignment"][i].size(); ++j)
          EXPECT_NEAR(soft[h]["alignment"][i][j].get<double>(), cli_record["alignment"][i][j].get<double>(), 1e-4);
      EXPECT_NE(soft[h]["heatmap_svg"].get<std::string>().find("<rect class=\"cell\""), std::string::npos);
      // "LINE ||| translation ||| alignment ||| score"
      const std::string line = hard.at(record);
      const size_t first = line.find(" ||| "), second = line.find(" ||| ", first + 5), third = line.rfind(" ||| ");
      EXPECT_EQ(pairs[h]["translation"], line.substr(first + 5, second - first - 5));
      EXPECT_EQ(pharaoh_of(pairs[h]["alignment"]), line.substr(second + 5, third - second - 5));
      ++compared;
    }
  }
  EXPECT_EQ(record, records.size());
  EXPECT_GT(compared, 150u);
}

// 16 clients × 50 requests of one or a few sentences, with three sets of options: every
// translation equals the CLI's with the same options, and decoder steps did hold the
// sentences of several requests.
void Serve::concurrent_requests(const std::string& flags) {
  Server server(*dir_, "-m " + model() + " --batch-wait-ms 20 --batch-size 16 " + flags);
  struct Options {
    json request;
    std::vector<std::string> expected;
  };
  std::vector<Options> options = {{json::object(), cli("")},
                                  {{{"beam_size", 1}}, cli("--beam-size 1")},
                                  {{{"beam_size", 3}, {"normalize", 0.0}}, cli("--beam-size 3 --normalize 0")}};
  std::atomic<int> failures{0}, mismatches{0}, done{0};
  std::mutex failure_mutex;
  std::vector<std::string> failure_reasons;
  std::vector<std::thread> clients;
  for (int c = 0; c < 16; ++c)
    clients.emplace_back([&, c] {
      std::mt19937 rng(100 + c);
      httplib::Client client = server.client();
      client.set_keep_alive(true);
      for (int r = 0; r < 50; ++r) {
        const Options& o = options[rng() % options.size()];
        std::vector<size_t> picked;
        for (int n = 1 + static_cast<int>(rng() % 3); n > 0; --n) picked.push_back(rng() % sentences_.size());
        json request = o.request;
        if (picked.size() == 1 && rng() % 2) {
          request["q"] = sentences_[picked[0]];
        } else {
          request["q"] = json::array();
          for (size_t k : picked) request["q"].push_back(sentences_[k]);
        }
        const auto res = client.Post("/translate", request.dump(), "application/json");
        if (!res || res->status != 200) {
          const std::lock_guard<std::mutex> lock(failure_mutex);
          failure_reasons.push_back("client " + std::to_string(c) + " request " + std::to_string(r) + ": " +
                                    (res ? std::to_string(res->status) + " " + res->body : httplib::to_string(res.error())));
          ++failures;
          continue;
        }
        const json body = json::parse(res->body);
        if (body["translations"].size() != picked.size()) ++mismatches;
        for (size_t i = 0; i < picked.size() && i < body["translations"].size(); ++i)
          if (body["translations"][i]["translation"] != o.expected[picked[i]]) ++mismatches;
        ++done;
      }
    });
  for (std::thread& t : clients) t.join();
  std::string reasons;
  for (const std::string& reason : failure_reasons) reasons += reason + "\n";
  EXPECT_EQ(failures, 0) << reasons << "the server's log:\n" << server.log();
  EXPECT_EQ(mismatches, 0);
  EXPECT_EQ(done, 800);
  const std::string metrics = get(server, "/metrics").text;
  const double steps = metric(metrics, "rnnsearch_steps_total");
  const double step_requests = metric(metrics, "rnnsearch_step_requests_total");
  EXPECT_GT(step_requests, steps) << "some steps should decode the sentences of several requests\n" << metrics;
}

TEST_F(Serve, ConcurrentRequestsAreBatchedAndEachGetsItsOwnResults) { concurrent_requests("--threads 1"); }

// Two searches: a request's own thread decodes on one (the server idle when it came) while
// the other's decoding thread takes the requests that come meanwhile.
TEST_F(Serve, ConcurrentRequestsOnTwoSearches) { concurrent_requests("--threads 2"); }

void Serve::expect_the_cli_records(const Server& server, const std::string& cli_args, const json& fields,
                                   const std::string& model_dir) {
  const std::vector<std::string> records = cli(cli_args + " --format json --precision fp32", model_dir);
  json body = fields;
  body["q"] = sentences_;
  const Reply reply = post(server, "/translate", body.dump());
  ASSERT_EQ(reply.status, 200) << reply.text;
  size_t record = 0;
  for (size_t k = 0; k < sentences_.size(); ++k) {
    const json& hypotheses = reply.body["translations"][k]["hypotheses"];
    if (hypotheses.empty()) {  // the CLI prints one empty hypothesis
      ++record;
      continue;
    }
    for (size_t h = 0; h < hypotheses.size(); ++h, ++record) {
      const json cli_record = json::parse(records.at(record));
      EXPECT_EQ(hypotheses[h]["target"], cli_record["target"]) << sentences_[k];
      // float rounding differs with what shares a step; more of it in the deep, normalized model
      const double score = cli_record["score"].get<double>();
      EXPECT_NEAR(hypotheses[h]["score"].get<double>(), score, 1e-5 + 4e-6 * std::abs(score));
      EXPECT_EQ(hypotheses[h].contains("alternative"), cli_record.contains("alternative"));
      if (cli_record.contains("alternative")) {
        EXPECT_EQ(hypotheses[h]["alternative"]["position"], cli_record["alternative"]["position"]);
        EXPECT_EQ(hypotheses[h]["alternative"]["word"], cli_record["alternative"]["word"]);
        EXPECT_NEAR(hypotheses[h]["alternative"]["probability"].get<double>(),
                    cli_record["alternative"]["probability"].get<double>(), 1e-5);
      }
    }
  }
  EXPECT_EQ(record, records.size());
}

TEST_F(Serve, DecodingControlsGiveTheCliTranslations) {
  Server server(*dir_, "-m " + model() + " --precision fp32");
  expect_controls_give_the_cli_translations(server, model());
}

// Sampling: a request of the input's lines gets the CLI's samples, as a sentence's draws follow
// from the seed and its place (its line, its index in the request) alone.
TEST_F(Serve, SamplingGivesTheCliSamples) {
  Server server(*dir_, "-m " + model() + " --precision fp32");
  expect_the_cli_records(server, "--sampling-topk 4 --sampling-temperature 1.5 --sampling-seed 7 --n-best 6",
                         {{"sampling_topk", 4}, {"sampling_temperature", 1.5}, {"sampling_seed", 7}, {"n_best", 6}},
                         model());
  EXPECT_NE(cli("--sampling-topk 0 --sampling-seed 7"), cli("--sampling-topk 0 --sampling-seed 8"));
}

// The sampling fields take CTranslate2's values, as the CLI's options do: sampling_topk 1 is the
// beam search, 0 the whole distribution (the CLI's samples for the same seed), sampling_topp 1
// no filter; sampling_topp alone (until 2026-12-07: sampling) is a 400 with the CLI's words.
TEST_F(Serve, SamplingTakesCTranslate2sValues) {
  Server server(*dir_, "-m " + model() + " --precision fp32");
  expect_the_cli_records(server, "--beam-size 3 --n-best 2", {{"beam_size", 3}, {"n_best", 2}, {"sampling_topk", 1}},
                         model());
  expect_the_cli_records(server, "--sampling-topk 0 --sampling-seed 7 --n-best 3",
                         {{"sampling_topk", 0}, {"sampling_topp", 1}, {"sampling_seed", 7}, {"n_best", 3}}, model());
  for (const char* old : {R"({"q": "a b c", "sampling_topp": 1})", R"({"q": "a b c", "sampling_topp": 0.9})"}) {
    const Reply refused = post(server, "/translate", old);
    EXPECT_EQ(refused.status, 400) << old;
    EXPECT_EQ(refused.body["error"],
              "--sampling-topp goes with sampling: --sampling-topk 0 (the whole distribution) or K > 1 "
              "(--sampling-topp alone no longer samples)")
        << old;
  }
}

// serve's --threads, as every command's, defaults to a decoding thread per core.
TEST_F(Serve, ThreadsDefaultToOnePerCore) {
  Server server(*dir_, "-m " + model(), /*default_threads=*/true);
  const Reply info = get(server, "/info");
  ASSERT_EQ(info.status, 200);
  EXPECT_EQ(info.body["batching"]["threads"], omp_get_num_procs());
  EXPECT_EQ(post(server, "/translate", R"({"q": ["a b c", "d e", "f"]})").status, 200);
}

// "alternatives": each sentence's K next words after its prefix (here: its first words), each
// with its position, word and probability, as the CLI's --alternatives gives them.
TEST_F(Serve, AlternativesGiveTheCliAlternatives) {
  Server server(*dir_, "-m " + model() + " --precision fp32");
  expect_the_cli_records(server, "--alternatives 3", {{"alternatives", 3}}, model());
  const Reply reply = post(server, "/translate", R"({"q": "a b c", "target_prefix": "z z", "alternatives": 2})");
  ASSERT_EQ(reply.status, 200) << reply.text;
  const json& hypotheses = reply.body["translations"][0]["hypotheses"];
  ASSERT_EQ(hypotheses.size(), 2u) << reply.text;
  for (const json& h : hypotheses) EXPECT_EQ(h["alternative"]["position"], 2) << reply.text;
  EXPECT_NE(hypotheses[0]["alternative"]["word"], hypotheses[1]["alternative"]["word"]);
  EXPECT_GE(hypotheses[0]["alternative"]["probability"].get<double>(), hypotheses[1]["alternative"]["probability"].get<double>());
}

// Issue 42's Marian-style deep s2s model (test::deep_s2s: deep transitions, stacked layers
// with residual connections, layer normalization) serves what translate gives, and says what
// it is in /info.
TEST_F(Serve, DeepLayerNormalizedModelGivesTheCliTranslations) {
  Server server(*dir_, "-m " + deep_model() + " --precision fp32");
  const Reply info = get(server, "/info");
  ASSERT_EQ(info.status, 200);
  const json& config = info.body["models"][0]["config"];
  EXPECT_EQ(config["enc_cell_depth"], 2) << config.dump();
  EXPECT_EQ(config["dec_depth"], 2);
  EXPECT_EQ(config["layer_normalization"], true);
  expect_controls_give_the_cli_translations(server, deep_model());
  const std::vector<std::string> expected = cli("--precision fp32", deep_model());
  const Reply all = post(server, "/translate", json({{"q", sentences_}}).dump());
  ASSERT_EQ(all.status, 200) << all.text;
  for (size_t k = 0; k < sentences_.size(); ++k)
    EXPECT_EQ(all.body["translations"][k]["translation"], expected.at(k)) << sentences_[k];
  EXPECT_NE(expected, cli("--precision fp32")) << "the deep model is another model";
}

// "constraints" and "avoid" (one list of phrases per sentence, as the lines of --constraints and
// --avoid) give what the CLI gives; a one-sentence request takes one list; other shapes are a 400.
TEST_F(Serve, ConstraintsAndPhrasesToAvoidGiveTheCliTranslations) {
  Server server(*dir_, "-m " + model() + " --precision fp32");
  json constraints = json::array(), avoid = json::array();
  std::string constraints_file, avoid_file;
  for (size_t k = 0; k < sentences_.size(); ++k) {
    constraints.push_back(k % 3 == 0 ? json{"u v"} : k % 3 == 1 ? json::array() : json{"w", "q"});
    avoid.push_back(k % 2 == 0 ? json{"x"} : json::array());
    constraints_file += constraints.back().dump() + "\n";
    avoid_file += avoid.back().dump() + "\n";
  }
  const std::vector<std::string> records =
      cli("--beam-size 3 --format json --precision fp32 --constraints " + dir_->write("constraints.txt", constraints_file) +
          " --avoid " + dir_->write("avoid.txt", avoid_file));
  ASSERT_EQ(records.size(), sentences_.size());
  const Reply reply = post(server, "/translate",
                           json({{"q", sentences_}, {"beam_size", 3}, {"constraints", constraints}, {"avoid", avoid}}).dump());
  expect_the_cli_best(reply, records);
  const Reply one = post(server, "/translate", R"({"q": "a b c", "constraints": ["q w"], "avoid": ["u"]})");
  ASSERT_EQ(one.status, 200) << one.text;
  const auto target = one.body["translations"][0]["hypotheses"][0]["target"].get<std::vector<std::string>>();
  const std::vector<std::string> phrase = {"q", "w"};
  EXPECT_NE(std::search(target.begin(), target.end(), phrase.begin(), phrase.end()), target.end()) << one.text;
  EXPECT_EQ(std::find(target.begin(), target.end(), "u"), target.end()) << one.text;
  for (const char* bad : {R"({"q": "a b", "constraints": "u"})", R"({"q": "a b", "constraints": [["u"]]})",
                          R"({"q": ["a b"], "avoid": ["u"]})", R"({"q": ["a", "b"], "constraints": [["u"]]})",
                          R"({"q": "a", "avoid": [3]})"}) {
    const Reply refused = post(server, "/translate", bad);
    EXPECT_EQ(refused.status, 400) << bad;
    EXPECT_TRUE(refused.text.find("constraints") != std::string::npos || refused.text.find("avoid") != std::string::npos)
        << refused.text;
  }
  EXPECT_EQ(get(server, "/health").status, 200);
}

// "target_prefix" (one per sentence, as --target-prefix's lines) gives what the CLI gives;
// its shape must be q's.
TEST_F(Serve, TargetPrefixesGiveTheCliTranslations) {
  Server server(*dir_, "-m " + model() + " --precision fp32");
  const std::vector<std::string> words = {"u v", "", "w", "x y z", "q"};
  std::vector<std::string> prefixes;
  std::string file;
  for (size_t k = 0; k < sentences_.size(); ++k) {
    prefixes.push_back(words[k % words.size()]);
    file += prefixes.back() + "\n";
  }
  const std::vector<std::string> records =
      cli("--beam-size 3 --format json --precision fp32 --target-prefix " + dir_->write("prefixes.txt", file));
  ASSERT_EQ(records.size(), sentences_.size());
  const Reply reply =
      post(server, "/translate", json({{"q", sentences_}, {"beam_size", 3}, {"target_prefix", prefixes}}).dump());
  expect_the_cli_best(reply, records, [&](size_t k, const json& hypotheses) {
    const std::vector<std::string> prefix = test::words(prefixes[k]);
    const auto target = hypotheses[0]["target"].get<std::vector<std::string>>();
    ASSERT_GE(target.size(), prefix.size());
    EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), target.begin())) << reply.body["translations"][k].dump();
  });
  const Reply one = post(server, "/translate", R"({"q": "a b c", "target_prefix": "z z"})");
  ASSERT_EQ(one.status, 200) << one.text;
  EXPECT_EQ(one.body["translations"][0]["hypotheses"][0]["target"][0], "z");
  for (const char* bad : {R"({"q": "a b", "target_prefix": ["u"]})", R"({"q": ["a b"], "target_prefix": "u"})",
                          R"({"q": ["a", "b"], "target_prefix": ["u"]})", R"({"q": "a", "target_prefix": 3})"}) {
    const Reply refused = post(server, "/translate", bad);
    EXPECT_EQ(refused.status, 400) << bad;
    EXPECT_NE(refused.text.find("target_prefix"), std::string::npos) << refused.text;
  }
}

// `rnnsearch COMMAND --src S --tgt T OPTIONS` of these pairs: its stdout lines.
std::vector<std::string> cli_on_pairs(const TempDir& dir, const std::string& command_and_model,
                                      const std::vector<std::string>& src, const std::vector<std::string>& tgt,
                                      const std::string& options) {
  std::string src_text, tgt_text;
  for (size_t k = 0; k < src.size(); ++k) {
    src_text += src[k] + "\n";
    tgt_text += tgt[k] + "\n";
  }
  const std::string command = std::string(RNNSEARCH_BINARY) + " " + command_and_model + " --src " +
                              dir.write("s.txt", src_text) + " --tgt " + dir.write("t.txt", tgt_text) + " " + options +
                              " >" + dir.path("pairs.txt") + " 2>/dev/null";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return lines_of(dir.read("pairs.txt"));
}

// `rnnsearch score` of these pairs with these options: its stdout lines.
std::vector<std::string> cli_score(const TempDir& dir, const std::string& model, const std::vector<std::string>& src,
                                   const std::vector<std::string>& tgt, const std::string& options) {
  return cli_on_pairs(dir, "score -m " + model, src, tgt, options);
}

const std::vector<std::string> kScoreSources = {"a b c", "d e f g", "", "h i"};
const std::vector<std::string> kScoreTargets = {"u v", "w x y", "u", "v"};

TEST_F(Serve, ScoreEqualsTheCliJson) {
  Server server(*dir_, "-m " + model());
  const std::vector<std::string>& src = kScoreSources;
  const std::vector<std::string>& tgt = kScoreTargets;
  const std::vector<std::string> records = cli_score(*dir_, model(), src, tgt, "--format json");
  // JSON strings must be UTF-8: a request with an invalid target is refused as a whole.
  EXPECT_EQ(post(server, "/score", "{\"src\": \"a\", \"tgt\": \"\xff\"}").status, 400);
  // The same pairs as the command line's, in one batch as there: the same figures.
  const Reply reply = post(server, "/score", json({{"src", src}, {"tgt", tgt}, {"alignment", "soft"}}).dump());
  ASSERT_EQ(reply.status, 200) << reply.text;
  for (size_t k : {0, 1, 3}) {
    const json record = json::parse(records[k]);
    EXPECT_EQ(reply.body["scores"][k]["log_prob"], record["score"]);
    EXPECT_EQ(reply.body["scores"][k]["alignment"], record["alignment"]);
    EXPECT_DOUBLE_EQ(reply.body["scores"][k]["perplexity"].get<double>(),
                     std::exp(-record["score"].get<double>() / (record["target"].size() + 1.0)));
  }
  for (size_t k : {0, 1, 3}) EXPECT_EQ(reply.body["scores"][k]["score"], reply.body["scores"][k]["log_prob"]);
  EXPECT_TRUE(reply.body["scores"][2]["log_prob"].is_null()) << "an empty side is not scored";
  EXPECT_TRUE(reply.body["scores"][2]["score"].is_null());
  EXPECT_TRUE(reply.body["scores"][2].contains("warning"));
  const Reply one = post(server, "/score", R"({"src": "a b c", "tgt": "u v"})");
  ASSERT_EQ(one.status, 200);
  // Alone in its batch: equal to float rounding.
  EXPECT_NEAR(one.body["scores"][0]["log_prob"].get<double>(), json::parse(records[0])["score"].get<double>(), 1e-5);
  EXPECT_FALSE(one.body["scores"][0].contains("alignment"));
}

// POST /align gives `rnnsearch align`'s links with the same method and symmetrization, with
// the reverse model of serve --reverse-model; what needs a reverse model the server lacks is
// 422, a bad name 400.
TEST_F(Serve, AlignEqualsTheCliAlign) {
  const std::string reverse = dir_->path("reverse");
  test::write_model_dir(reverse, {"u", "v", "w", "x", "y", "z", "q", "r"},
                        {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}, -30.0f, 8, 12, 6);
  Server server(*dir_, "-m " + model() + " --reverse-model " + reverse);
  const std::vector<std::pair<json, std::string>> cases = {
      {json::object(), ""},  // argmax, grow-diag-final-and
      {{{"method", "threshold:0.1"}, {"symmetrize", "union"}}, "--method threshold:0.1 --symmetrize union"},
      {{{"method", "average-threshold:0.1"}}, "--method average-threshold:0.1"},
      {{{"method", "average"}, {"symmetrize", "union"}}, "--method average --symmetrize union"}};
  size_t links = 0;
  for (const auto& [fields, options] : cases) {
    SCOPED_TRACE(options);
    const std::vector<std::string> lines = cli_on_pairs(*dir_, "align -m " + model() + " --reverse-model " + reverse,
                                                        kScoreSources, kScoreTargets, options);
    json body = fields;
    body["src"] = kScoreSources;
    body["tgt"] = kScoreTargets;
    const Reply reply = post(server, "/align", body.dump());
    ASSERT_EQ(reply.status, 200) << reply.text;
    ASSERT_EQ(reply.body["alignments"].size(), lines.size());
    for (size_t k = 0; k < lines.size(); ++k) {
      EXPECT_EQ(pharaoh_of(reply.body["alignments"][k]["links"]), lines[k]) << k;
      links += reply.body["alignments"][k]["links"].size();
    }
    EXPECT_TRUE(reply.body["alignments"][2].contains("warning")) << "an empty side is not aligned";
    EXPECT_EQ(reply.body["alignments"][0]["source"], json({"a", "b", "c"}));
  }
  EXPECT_GT(links, 0u) << "no links at all: the comparison would be empty";
  EXPECT_EQ(get(server, "/info").body["reverse_models"].size(), 1u);
  const Reply both =
      post(server, "/align", R"({"src": "a", "tgt": "u", "method": "average-threshold:0.1", "symmetrize": "union"})");
  EXPECT_EQ(both.status, 422) << both.text;
  const Reply bad = post(server, "/align", R"({"src": "a", "tgt": "u", "method": "maximum"})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body["error"].get<std::string>().find("'method': --method must be argmax"), std::string::npos)
      << bad.text;
  EXPECT_EQ(post(server, "/align", R"({"src": "a", "tgt": "u", "symmetrize": 3})").status, 400);
  EXPECT_EQ(post(server, "/align", R"({"src": ["a"], "tgt": ["u", "v"]})").status, 400);
  EXPECT_EQ(post(server, "/align", R"({"src": "a", "tgt": "u", "beam_size": 3})").status, 400);

  Server alone(*dir_, "-m " + model());
  const Reply needs = post(alone, "/align", R"({"src": "a b", "tgt": "u", "method": "average"})");
  EXPECT_EQ(needs.status, 422) << needs.text;
  EXPECT_NE(needs.body["error"].get<std::string>().find("give --reverse-model"), std::string::npos) << needs.text;
  const Reply one = post(alone, "/align", R"({"src": "a b c", "tgt": "u v", "method": "threshold:0.000001"})");
  ASSERT_EQ(one.status, 200) << one.text;
  EXPECT_EQ(one.body["alignments"][0]["links"], json({{0, 0}, {0, 1}, {1, 0}, {1, 1}, {2, 0}, {2, 1}}));
  // one model with "symmetrize": its matrix read both ways, as align -m M --symmetrize
  const std::vector<std::string> both_ways =
      cli_on_pairs(*dir_, "align -m " + model(), kScoreSources, kScoreTargets, "--symmetrize union");
  json body = {{"src", kScoreSources}, {"tgt", kScoreTargets}, {"symmetrize", "union"}};
  const Reply read_both_ways = post(alone, "/align", body.dump());
  ASSERT_EQ(read_both_ways.status, 200) << read_both_ways.text;
  ASSERT_EQ(read_both_ways.body["alignments"].size(), both_ways.size());
  for (size_t k = 0; k < both_ways.size(); ++k)
    EXPECT_EQ(pharaoh_of(read_both_ways.body["alignments"][k]["links"]), both_ways[k]) << k;
  EXPECT_EQ(get(alone, "/info").body["reverse_models"], json::array());
}

// serve --hmm-tables DIR: POST /align with "aligner": "hmm" gives `align --hmm-tables DIR`'s
// links; a server without tables refuses it (422), a bad name is a 400.
TEST_F(Serve, AlignWithHmmTablesEqualsTheCli) {
  const std::string tables = dir_->path("hmm-tables");
  cli_on_pairs(*dir_, "align --hmm --save-hmm " + tables, kScoreSources, kScoreTargets, "");
  Server server(*dir_, "-m " + model() + " --hmm-tables " + tables);
  const std::vector<std::string> lines =
      cli_on_pairs(*dir_, "align --hmm-tables " + tables, kScoreSources, kScoreTargets, "--symmetrize union");
  json body = {{"src", kScoreSources}, {"tgt", kScoreTargets}, {"aligner", "hmm"}, {"symmetrize", "union"}};
  const Reply reply = post(server, "/align", body.dump());
  ASSERT_EQ(reply.status, 200) << reply.text;
  ASSERT_EQ(reply.body["alignments"].size(), lines.size());
  size_t links = 0;
  for (size_t k = 0; k < lines.size(); ++k) {
    EXPECT_EQ(pharaoh_of(reply.body["alignments"][k]["links"]), lines[k]) << k;
    links += reply.body["alignments"][k]["links"].size();
  }
  EXPECT_GT(links, 0u) << "no links at all: the comparison would be empty";
  EXPECT_EQ(get(server, "/info").body["hmm_tables"], true);
  EXPECT_EQ(post(server, "/align", R"({"src": "a", "tgt": "u", "aligner": "giza"})").status, 400);
  Server alone(*dir_, "-m " + model());
  const Reply none = post(alone, "/align", R"({"src": "a", "tgt": "u", "aligner": "hmm"})");
  EXPECT_EQ(none.status, 422) << none.text;
  EXPECT_NE(none.body["error"].get<std::string>().find("serve --hmm-tables DIR"), std::string::npos) << none.text;
  EXPECT_EQ(get(alone, "/info").body["hmm_tables"], false);
}

// The ranking fields of /score give the number score prints with the same options: what
// translate would rank each target by; with both normalize and length_penalty_alpha, a 400.
TEST_F(Serve, ScoreRankingFieldsGiveTheCliScores) {
  Server server(*dir_, "-m " + model());
  const std::vector<std::string> lines =
      cli_score(*dir_, model(), kScoreSources, kScoreTargets, "--length-penalty-alpha 0.6 --coverage-penalty 0.5 --word-penalty 0.3");
  const Reply reply = post(server, "/score",
                           json({{"src", kScoreSources}, {"tgt", kScoreTargets}, {"length_penalty_alpha", 0.6},
                                 {"coverage_penalty", 0.5}, {"word_penalty", 0.3}})
                               .dump());
  ASSERT_EQ(reply.status, 200) << reply.text;
  ASSERT_EQ(lines.size(), kScoreSources.size());
  for (size_t k : {0, 1, 3}) {
    const std::vector<std::string> numbers = test::words(lines[k]);
    ASSERT_EQ(numbers.size(), 3u) << lines[k];
    const double score = reply.body["scores"][k]["score"].get<double>();
    EXPECT_NEAR(score, std::stod(numbers[2]), 2e-5 * std::abs(score)) << lines[k];  // printed to 6 digits
    EXPECT_NE(score, reply.body["scores"][k]["log_prob"].get<double>());
  }
  const Reply both = post(server, "/score", R"({"src": "a", "tgt": "u", "normalize": 1, "length_penalty_alpha": 0.6})");
  EXPECT_EQ(both.status, 400);
  EXPECT_NE(both.text.find("both rank by length"), std::string::npos) << both.text;
}

TEST_F(Serve, BadRequestsGetA4xxJsonError) {
  Server server(*dir_, "-m " + model() + " --max-body-bytes 2000 --max-sentences 4 --max-tokens 10 --max-beam-size 8");
  const std::vector<std::pair<std::string, int>> cases = {
      {"{\"q\": ", 400},                                   // malformed JSON
      {"[\"a b\"]", 400},                                  // not an object
      {"{}", 400},                                         // q missing
      {R"({"q": 5})", 400},                                // wrong types
      {R"({"q": ["a", 5]})", 400},
      {R"({"q": "a", "beam_size": "5"})", 400},
      {R"({"q": "a", "beam_size": 2.5})", 400},
      {R"({"q": "a", "beam_size": 0})", 400},
      {R"({"q": "a", "beam_size": 9})", 400},              // above --max-beam-size
      {R"({"q": "a", "beam_size": 18446744073709551615})", 400},  // above int64 (a uint64 in nlohmann)
      {R"({"q": "a", "beam_size": 2, "n_best": 3})", 400}, // n-best above the beam
      {R"({"q": "a", "normalize": -1})", 400},
      {R"({"q": "a", "max_length_factor": -0.5})", 400},
      {R"({"q": "a", "word_penalty": "much"})", 400},
      {R"({"q": "a", "length_penalty_alpha": -1})", 400},
      {R"({"q": "a", "length_penalty_alpha": 0.6, "normalize": 1.0})", 400},  // two length rankings
      {R"({"q": "a", "coverage_penalty": true})", 400},
      {R"({"q": "a", "alignment": "diagonal"})", 400},
      {R"({"q": "a", "replace_unk": "yes"})", 400},
      {R"({"q": "a", "beam": 5})", 400},                   // unknown field
      {"{\"q\": \"a \xff b\"}", 400},                      // invalid UTF-8
      {R"({"q": "a \ud800 b"})", 400},                     // a lone surrogate
      {R"({"q": ["a", "b", "c", "d", "e"]})", 413},        // above --max-sentences
      {R"({"q": "a b c d e f g h i j a"})", 413},          // above --max-tokens
      {"{\"q\": \"" + std::string(3000, 'a') + "\"}", 413},  // above --max-body-bytes
  };
  for (const auto& [body, status] : cases) {
    const Reply reply = post(server, "/translate", body);
    EXPECT_EQ(reply.status, status) << body.substr(0, 80);
    ASSERT_TRUE(reply.body.is_object()) << body.substr(0, 80) << ": " << reply.text;
    EXPECT_TRUE(reply.body["error"].is_string() && !reply.body["error"].get<std::string>().empty()) << reply.text;
  }
  EXPECT_NE(post(server, "/translate", R"({"q": "a", "beam": 5})").body["error"].get<std::string>().find("'beam'"),
            std::string::npos) << "the error names the field";
  const std::string huge =
      post(server, "/translate", R"({"q": "a", "beam_size": 18446744073709551615})").body.value("error", "");
  EXPECT_EQ(huge.rfind("--beam-size must be at most 2147483647, not 1.8", 0), 0u) << huge << " (it said: not -1)";
  EXPECT_EQ(post(server, "/score", R"({"src": ["a"], "tgt": ["u", "v"]})").status, 400);
  EXPECT_EQ(post(server, "/score", R"({"src": "a"})").status, 400);
  const Reply unknown = get(server, "/nowhere");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_TRUE(unknown.body["error"].is_string());
  EXPECT_EQ(get(server, "/translate").status, 405);
  EXPECT_EQ(post(server, "/translate", R"({"q": ["a b", "c d"]})").status, 200) << "still serving";
  EXPECT_EQ(metric(get(server, "/metrics").text, "rnnsearch_sentences_total"), 2) << "no refused sentence was decoded";
}

// A client that sends one byte at a time, one that stops mid-body, and one that hangs up
// mid-request: others are served meanwhile, the silent one is dropped after --read-timeout.
TEST_F(Serve, SlowAndVanishingClientsNeitherBlockNorCrashTheServer) {
  Server server(*dir_, "-m " + model() + " --read-timeout 1 --http-threads 4");
  std::atomic<bool> stop{false};
  std::vector<std::thread> slow;
  for (int k = 0; k < 2; ++k)  // trickling clients hold 2 of the 4 connection threads
    slow.emplace_back([&] {
      const int fd = connect_to(server.port());
      const std::string request = "POST /translate HTTP/1.1\r\nHost: x\r\nContent-Length: 12\r\n\r\n{\"q\": \"a b\"}";
      for (size_t k = 0; k < request.size() && !stop; ++k) {
        if (send(fd, &request[k], 1, MSG_NOSIGNAL) != 1) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
      }
      close(fd);
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto start = Clock::now();
  for (int k = 0; k < 20; ++k) ASSERT_EQ(post(server, "/translate", R"({"q": "a b c"})").status, 200);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(3)) << "20 small requests next to two trickling clients";

  // Headers and half a body, then silence: closed by the server after about a second.
  const int silent = connect_to(server.port());
  const std::string partial = "POST /translate HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"q\": ";
  ASSERT_EQ(send(silent, partial.data(), partial.size(), MSG_NOSIGNAL), static_cast<ssize_t>(partial.size()));
  const auto silent_start = Clock::now();
  char buffer[512];
  const ssize_t got = recv(silent, buffer, sizeof buffer, 0);  // an error response, or the end
  EXPECT_LT(Clock::now() - silent_start, std::chrono::seconds(4)) << "the silent client was not dropped";
  if (got > 0) {
    EXPECT_EQ(std::string(buffer, 9), "HTTP/1.1 ") << std::string(buffer, got);
  }
  close(silent);

  // Gone mid-request, and gone before reading a response.
  for (int k = 0; k < 10; ++k) {
    const int fd = connect_to(server.port());
    const std::string request = k % 2 ? partial : "POST /translate HTTP/1.1\r\nHost: x\r\nContent-Length: 20\r\n\r\n{\"q\": [\"a b c d e\"]}";
    send(fd, request.data(), request.size(), MSG_NOSIGNAL);
    close(fd);
  }
  stop = true;
  for (std::thread& t : slow) t.join();
  EXPECT_EQ(post(server, "/translate", R"({"q": "a b c"})").status, 200);
  EXPECT_EQ(get(server, "/health").status, 200);
}

// --keep-alive-timeout: a connection that sends nothing, fresh or after a request, is closed
// after that long (not before), freeing the HTTP thread that another client is waiting for.
TEST_F(Serve, IdleConnectionsAreClosedAfterTheKeepAliveTimeout) {
  Server server(*dir_, "-m " + model() + " --keep-alive-timeout 1 --http-threads 1");
  const auto seconds_until_closed = [](int fd) {
    const auto start = Clock::now();
    char buffer[4096];
    while (recv(fd, buffer, sizeof buffer, 0) > 0) {  // a response first, if a request was sent
    }
    close(fd);
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  const int fresh = connect_to(server.port());
  ASSERT_GE(fresh, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the server's one thread takes it
  std::thread other([&] { EXPECT_EQ(post(server, "/translate", R"({"q": "a b c"})").status, 200); });
  const double fresh_idle = seconds_until_closed(fresh);
  other.join();
  EXPECT_GT(fresh_idle, 0.8);
  EXPECT_LT(fresh_idle, 4.0) << "the default is 5 s: the flag did not reach the server";

  const int kept = connect_to(server.port());
  const std::string request = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(send(kept, request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));
  const double kept_idle = seconds_until_closed(kept);
  EXPECT_GT(kept_idle, 0.8);
  EXPECT_LT(kept_idle, 4.0);
  EXPECT_EQ(get(server, "/health").status, 200);
}

// A request past --timeout-ms gets 503 at once, also when its own thread was decoding it (an
// idle server decodes a request on the request's thread): its sentences still queued and
// those in the search are dropped untranslated, and the server goes on.
TEST_F(Serve, ARequestPastItsTimeoutGets503AndItsSentencesAreDropped) {
  // 100 ms: past after the first turns (encoding 32 long sentences), long before the first
  // 32 are decoded (several times that); with 1 ms a slow sanitizer build timed out before any
  // turn.
  Server server(*dir_, "-m " + model() + " --timeout-ms 100 --threads 1 --batch-size 32");
  std::string long_line;
  for (int k = 0; k < 150; ++k) long_line += std::string(1, static_cast<char>('a' + k % 10)) + " ";
  const std::vector<std::string> many(64, long_line);
  const Reply timed_out = post(server, "/translate", json({{"q", many}, {"beam_size", 12}}).dump());
  EXPECT_EQ(timed_out.status, 503) << timed_out.text;
  EXPECT_NE(timed_out.text.find("timed out after 100 ms (--timeout-ms)"), std::string::npos) << timed_out.text;
  std::string metrics;
  double decoding = -1, queued = -1;
  const auto until = Clock::now() + std::chrono::seconds(120);
  while (Clock::now() < until && (decoding != 0 || queued != 0)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    metrics = get(server, "/metrics").text;
    decoding = metric(metrics, "rnnsearch_decoding_sentences");
    queued = metric(metrics, "rnnsearch_queue_sentences");
  }
  EXPECT_EQ(decoding, 0) << metrics;
  EXPECT_EQ(queued, 0) << metrics;
  // Each sentence translated or dropped, once; more than the 32 queued beyond the search
  // were dropped: those in it left it unfinished.
  const double translated = metric(metrics, "rnnsearch_sentences_total"),
               dropped = metric(metrics, "rnnsearch_dropped_sentences_total");
  EXPECT_EQ(translated + dropped, 64) << metrics;
  EXPECT_GT(dropped, 32) << metrics;
  const double steps = metric(metrics, "rnnsearch_steps_total");
  EXPECT_GT(steps, 0);
  EXPECT_NE(metrics.find("rnnsearch_requests_total{path=\"/translate\",code=\"503\"} 1"), std::string::npos) << metrics;
  EXPECT_EQ(get(server, "/health").status, 200);
  EXPECT_EQ(server.stop(SIGTERM), 0) << server.log();
}

// With one search, a request decoding on its own thread holds it; work that arrives meanwhile
// (a score request here) is taken by the search's decoding thread once that request is done,
// not left waiting for its timeout.
TEST_F(Serve, WorkArrivingWhileARequestDecodesOnItsOwnThreadIsTakenAfterIt) {
  Server server(*dir_, "-m " + model() + " --threads 1 --timeout-ms 30000");
  std::string long_line;
  for (int k = 0; k < 150; ++k) long_line += std::string(1, static_cast<char>('a' + k % 10)) + " ";
  Reply translated;
  std::atomic<bool> answered{false};
  std::thread translating([&] {
    translated = post(server, "/translate", json({{"q", std::vector<std::string>(16, long_line)}, {"beam_size", 12}}).dump());
    answered = true;
  });
  bool decoding = false;  // the score request is sent while the translation decodes
  for (const auto until = Clock::now() + std::chrono::seconds(60); !decoding && !answered && Clock::now() < until;)
    decoding = metric(get(server, "/metrics").text, "rnnsearch_decoding_sentences") > 0;
  const Reply scored = post(server, "/score", R"({"src": "a b c", "tgt": "u v"})");
  translating.join();
  EXPECT_TRUE(decoding) << "the translation ended before the score request was sent";
  EXPECT_EQ(translated.status, 200) << translated.text;
  EXPECT_EQ(scored.status, 200) << scored.text;
  EXPECT_EQ(server.stop(SIGTERM), 0) << server.log();
}

// build/serve_bench, the load table's client: the translations it writes are translate's; it
// will not write over its input, and an unreadable input, an unwritable output or a failed
// request each end it with one line on stderr and a non-zero exit.
TEST_F(Serve, ServeBenchWritesTheCliTranslationsAndFailsClearly) {
  Server server(*dir_, "-m " + model());
  const std::string bench = std::string(SERVE_BENCH_BINARY) + " --port " + std::to_string(server.port());
  const std::string err = " >/dev/null 2>" + dir_->path("bench.err");
  const auto run = [&](const std::string& arguments) { return std::system((bench + " " + arguments + err).c_str()); };
  ASSERT_EQ(run("--clients 4 --input " + input_ + " --translations " + dir_->path("bench.txt")), 0)
      << dir_->read("bench.err");
  EXPECT_EQ(lines_of(dir_->read("bench.txt")), cli(""));

  const std::string input_text = dir_->read("input.txt");
  EXPECT_NE(run("--input " + input_ + " --translations " + input_), 0);
  EXPECT_NE(dir_->read("bench.err").find("is also the input"), std::string::npos) << dir_->read("bench.err");
  EXPECT_EQ(dir_->read("input.txt"), input_text) << "the input is left as it was";

  EXPECT_NE(run("--input " + dir_->path("missing.txt")), 0);
  EXPECT_NE(dir_->read("bench.err").find("missing.txt"), std::string::npos) << dir_->read("bench.err");

  const std::string unwritable = dir_->path("no-such-dir/out.txt");
  EXPECT_NE(run("--input " + input_ + " --translations " + unwritable), 0);
  EXPECT_NE(dir_->read("bench.err").find(unwritable), std::string::npos) << dir_->read("bench.err");

  EXPECT_NE(run("--input " + input_ + " --count 2 --beam-size 999"), 0) << "the server refuses beam 999";
  EXPECT_NE(dir_->read("bench.err").find("2 failed (first: line 1: "), std::string::npos) << dir_->read("bench.err");
  EXPECT_EQ(lines_of(dir_->read("bench.err")).size(), 1u) << dir_->read("bench.err");
}

TEST_F(Serve, SigtermFinishesTheRequestsInFlightAndExitsZero) {
  // No --timeout-ms in the way: under AddressSanitizer decoding all this takes a minute.
  Server server(*dir_, "-m " + model() + " --batch-size 2 --max-sentences 512 --timeout-ms 600000");
  // Enough work per request (160 sentences) that the server cannot have answered them all
  // before the eight clients are read, even when ctest runs other tests beside this one.
  std::vector<std::string> many;
  for (int copy = 0; copy < 4; ++copy) many.insert(many.end(), sentences_.begin(), sentences_.begin() + 40);
  const std::string body = json({{"q", many}, {"beam_size", 12}, {"n_best", 12}}).dump();
  std::atomic<int> ok{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 8; ++c)
    clients.emplace_back([&] {
      httplib::Client client = server.client();
      const auto res = client.Post("/translate", body, "application/json");
      if (res && res->status == 200 && json::parse(res->body)["translations"].size() == many.size()) {
        ++ok;
      } else {
        ADD_FAILURE() << (res ? std::to_string(res->status) + " " + res->body : httplib::to_string(res.error()));
      }
    });
  // In flight: all 8 read by the server (queued, or decoded with answers not yet sent).
  std::string metrics;
  for (auto until = Clock::now() + std::chrono::seconds(20); Clock::now() < until;) {
    metrics = get(server, "/metrics").text;
    if (metric(metrics, "rnnsearch_queue_requests") + ok >= 8) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_EQ(server.stop(SIGTERM), 0) << server.log();
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(ok, 8) << "every request in flight was answered";
  EXPECT_GT(metric(metrics, "rnnsearch_queue_sentences"), 0) << "requests were still queued at SIGTERM\n" << metrics;
  EXPECT_NE(server.log().find("SIGTERM"), std::string::npos);
  EXPECT_EQ(connect_to(server.port()), -1) << "no longer accepting";
}

TEST_F(Serve, SigintStopsAnIdleServer) {
  Server server(*dir_, "-m " + model());
  ASSERT_EQ(get(server, "/health").status, 200);
  EXPECT_EQ(server.stop(SIGINT), 0) << server.log();
}

// A second server on a port in use fails with one line, instead of sharing the port with the
// first (httplib's default SO_REUSEPORT let it start and take half the connections).
TEST_F(Serve, APortInUseIsAnErrorAndTheFirstServerKeepsIt) {
  Server first(*dir_, "-m " + model());
  const std::string err = dir_->path("second.err");
  const int status = std::system(("timeout 60 " + std::string(RNNSEARCH_BINARY) + " serve -m " + model() + " --port " +
                                  std::to_string(first.port()) + " 2>" + err).c_str());
  EXPECT_EQ(WEXITSTATUS(status), 1);
  const std::string message = dir_->read("second.err");
  EXPECT_NE(message.find("cannot listen on 127.0.0.1:" + std::to_string(first.port()) + ": Address already in use"),
            std::string::npos)
      << message;
  EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 1) << message;
  for (int k = 0; k < 8; ++k) ASSERT_EQ(get(first, "/health").status, 200);
}

}  // namespace
}  // namespace rnnsearch
