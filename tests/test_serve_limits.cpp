// rnnsearch serve against requests that must not cost it more than their limits, and against
// requests whose steering cannot be decoded (issue 81): a body above --max-body-bytes is a 413
// however it is sent (with a Content-Length or chunked), a sender that falls silent is dropped,
// and constraints the search cannot take (with sampling or alternatives, also a phrase to
// avoid, too many) are a 400 naming the sentence, never a 500 or a decoded request; the server
// keeps serving after each.
// Eigen (model_dir.h) before httplib.h: its <resolv.h> defines `_res`, a name Eigen uses.
#include "support/model_dir.h"
#include "support/serve_process.h"
#include "support/temp_dir.h"

#include <sys/time.h>

#include <fstream>
#include <string>

namespace rnnsearch {
namespace {

using nlohmann::json;
using test::connect_to;
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

// POST /translate of {"q": "a b c", then `padding` spaces, then "}, sent in chunks of 64 KiB
// (Transfer-Encoding: chunked) until it is all sent or the server stops taking it; then the
// answer, up to the server's closing of the connection (or 60 s).
std::string chunked_translate(int port, size_t padding) {
  const int fd = connect_to(port);
  if (fd < 0) return "";
  const timeval timeout{60, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  const auto send_all = [fd](const std::string& data) {
    for (size_t sent = 0; sent < data.size();) {
      const ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  };
  const auto chunk = [](const std::string& data) {
    char size[32];
    snprintf(size, sizeof size, "%zx\r\n", data.size());
    return size + data + "\r\n";
  };
  bool open = send_all(
      "POST /translate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: close\r\n"
      "Transfer-Encoding: chunked\r\n\r\n" + chunk("{\"q\": \"a b c\""));
  const std::string spaces(size_t{1} << 16, ' ');
  for (size_t left = padding; open && left > 0; left -= std::min(left, spaces.size()))
    open = send_all(chunk(spaces.substr(0, std::min(left, spaces.size()))));
  if (open) send_all(chunk("}") + "0\r\n\r\n");
  std::string answer;
  char buffer[4096];
  for (ssize_t n; (n = recv(fd, buffer, sizeof buffer, 0)) > 0;) answer.append(buffer, static_cast<size_t>(n));
  close(fd);
  return answer;
}

// The peak resident memory of a process, in kB (VmHWM).
long peak_rss_kb(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

// Issue 81: Debian 12's cpp-httplib (0.11) applied --max-body-bytes to a Content-Length only; a
// chunked body of 5 or 50 MB was read into memory, parsed and translated (200).
TEST_F(ServeLimits, ChunkedBodiesAboveMaxBodyBytesGet413AndMemoryStaysFlat) {
  Server server(*dir_, "-m " + model());  // --max-body-bytes: 1 MB, the default
  ASSERT_GT(server.port(), 0);
  const std::string small = chunked_translate(server.port(), 1000);
  EXPECT_EQ(small.rfind("HTTP/1.1 200", 0), 0u) << "a chunked body within the limit is read: " << small;
  const long before = peak_rss_kb(server.pid());
  for (const size_t padding : {size_t{5000000}, size_t{50000000}}) {
    const std::string answer = chunked_translate(server.port(), padding);
    EXPECT_EQ(answer.rfind("HTTP/1.1 413", 0), 0u) << padding << " bytes: " << answer.substr(0, 200);
    EXPECT_NE(answer.find("\"error\":\"the body is larger than 1048576 bytes (--max-body-bytes)\""), std::string::npos)
        << answer;
  }
  const long after = peak_rss_kb(server.pid());
  EXPECT_LT(after - before, 20 * 1024) << "peak RSS grew from " << before << " kB to " << after << " kB";
  // The same body with a Content-Length, as before.
  const Reply sized = post(server, "/translate", "{\"q\": \"a b c\"" + std::string(5000000, ' ') + "}");
  EXPECT_EQ(sized.status, 413) << sized.text;
  EXPECT_EQ(get(server, "/health").status, 200);
  EXPECT_EQ(post(server, "/translate", R"({"q": "a b c"})").status, 200) << "still serving";
}

// A chunked upload that stops mid-body is dropped after --read-timeout; the others are served.
TEST_F(ServeLimits, AChunkedUploadThatFallsSilentIsDroppedAfterTheReadTimeout) {
  Server server(*dir_, "-m " + model() + " --read-timeout 1 --http-threads 2");
  const int fd = connect_to(server.port());
  ASSERT_GE(fd, 0);
  const std::string start =
      "POST /translate HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"q\":";
  ASSERT_EQ(send(fd, start.data(), start.size(), MSG_NOSIGNAL), static_cast<ssize_t>(start.size()));
  const timeval timeout{30, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  const auto began = test::Clock::now();
  std::string answer;
  char buffer[4096];
  for (ssize_t n; (n = recv(fd, buffer, sizeof buffer, 0)) > 0;) answer.append(buffer, static_cast<size_t>(n));
  close(fd);
  EXPECT_LT(test::Clock::now() - began, std::chrono::seconds(20)) << "the connection was not closed";
  EXPECT_TRUE(answer.empty() || answer.rfind("HTTP/1.1 400", 0) == 0) << answer;
  EXPECT_EQ(post(server, "/translate", R"({"q": "a b c"})").status, 200) << "still serving";
}

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
       "constraints need beam search: not with sampling (--sampling-topk other than 1) or --alternatives"},
      {R"({"q": "a b c", "constraints": ["u"], "sampling_topk": 0, "sampling_topp": 0.9})", 400,
       "constraints need beam search"},
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
