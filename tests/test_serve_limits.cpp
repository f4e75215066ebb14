// rnnsearch serve against requests whose steering cannot be decoded (issue 81): constraints the
// search cannot take (with sampling or alternatives, also a phrase to avoid, too many) are a 400
// naming the sentence, never a 500 or a decoded request; the server keeps serving after each.
// Eigen (model_dir.h) before httplib.h: its <resolv.h> defines `_res`, a name Eigen uses.
#include "support/model_dir.h"
#include "support/serve_process.h"
#include "support/temp_dir.h"

#include <string>

namespace rnnsearch {
namespace {

using nlohmann::json;
using test::get;
using test::post;
using test::Reply;
using test::Server;
using test::TempDir;

class ServeLimits : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    test::write_model_dir(model(), {"a", "b", "c", "d"}, {"u", "v", "w", "x"}, -30.0f, 8, 12, 6);
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string model() { return dir_->path("model"); }
  inline static TempDir* dir_ = nullptr;
};

// Issue 81: constraints with sampling or alternatives were a 500 ("internal error: constraints
// need beam search"); a constraint that is also a phrase to avoid was decoded (its output a
// phrase repeated up to the length cap); 65 constraints were a 500; any number of phrases to
// avoid was taken. Each is now refused before anything is decoded.
TEST_F(ServeLimits, SteeringTheSearchCannotTakeIsRefusedNamingTheSentence) {
  Server server(*dir_, "-m " + model() + " --max-tokens 100");
  std::vector<std::string> many(65, "u");
  const std::string avoid_many = json(std::vector<std::string>(101, "v")).dump();
  const std::vector<std::tuple<std::string, int, std::string>> cases = {
      {R"({"q": "a b c", "constraints": ["u"], "sampling_topk": 5})", 400,
       "constraints need beam search: not with sampling (--sampling-topk, --sampling-topp) or --alternatives"},
      {R"({"q": "a b c", "constraints": ["u"], "sampling_topp": 0.9})", 400, "constraints need beam search"},
      {R"({"q": "a b c", "constraints": ["u"], "alternatives": 2})", 400, "constraints need beam search"},
      {R"({"q": "a b c", "constraints": ["u"], "avoid": ["u"]})", 400,
       "\"u\" is both a constraint and a phrase to avoid"},
      {R"({"q": ["a", "b c"], "constraints": [[], ["w  u v"]], "avoid": [["x"], [" u v"]]})", 400,
       "q[1]: the constraint \"w  u v\" holds the phrase to avoid \" u v\""},
      {json({{"q", "a b"}, {"constraints", many}}).dump(), 400, "65 constraints; the limit is 64 per sentence"},
      {R"({"q": "a b", "avoid": )" + avoid_many + "}", 413, "avoid has 101 tokens; the limit is 100 (--max-tokens)"},
  };
  for (const auto& [body, status, message] : cases) {
    const Reply reply = post(server, "/translate", body);
    EXPECT_EQ(reply.status, status) << body << ": " << reply.text;
    EXPECT_NE(reply.body.value("error", "").find(message), std::string::npos) << body << ": " << reply.text;
  }
  // Phrases to avoid with sampling are fine, as are constraints in a beam search.
  EXPECT_EQ(post(server, "/translate", R"({"q": "a b c", "avoid": ["u"], "sampling_topk": 5})").status, 200);
  EXPECT_EQ(post(server, "/translate", R"({"q": "a b c", "constraints": ["u v"], "avoid": ["w"]})").status, 200);
  const std::string metrics = get(server, "/metrics").text;
  EXPECT_EQ(metrics.find("code=\"500\""), std::string::npos) << metrics;
}

}  // namespace
}  // namespace rnnsearch
