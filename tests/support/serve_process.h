#pragma once
// `rnnsearch serve` run as the real binary on a free loopback port, for the server's tests
// (test_serve, test_serve_limits): the process, requests to it and their replies, a raw TCP
// connection for clients that misbehave. Include Eigen (model_dir.h) before this: httplib.h's
// <resolv.h> defines `_res`, a name Eigen uses.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>

#include "temp_dir.h"

namespace rnnsearch::test {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

// `rnnsearch serve ARGS` in the background, its stderr in a file; the port it announces. With
// --threads 1 unless ARGS give --threads or `default_threads` asks for serve's own default (one
// decoding thread per core, OMP_NUM_THREADS unset): the tests that count steps and batches
// were written for one search, and the suite runs two tests at once.
class Server {
 public:
  Server(const TempDir& dir, const std::string& arguments, bool default_threads = false)
      : log_(dir.path("serve-" + std::to_string(++count_) + ".log")) {
    const std::string threads =
        default_threads || arguments.find("--threads") != std::string::npos ? "" : "--threads 1 ";
    const std::string command = "exec " + std::string(default_threads ? "env -u OMP_NUM_THREADS " : "") +
                                std::string(RNNSEARCH_BINARY) + " serve --port 0 " + threads + arguments + " 2>" + log_;
    pid_ = fork();
    if (pid_ == 0) {
      execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    const std::regex listening("listening on http://([0-9.]+):([0-9]+)/");
    for (auto until = Clock::now() + std::chrono::seconds(60); Clock::now() < until;) {
      std::smatch match;
      const std::string text = log();
      if (std::regex_search(text, match, listening)) {
        host_ = match[1];
        port_ = std::stoi(match[2]);
        return;
      }
      if (waitpid(pid_, &status_, WNOHANG) == pid_) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ADD_FAILURE() << "the server did not start: " << log();
  }
  ~Server() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status_, 0);
    }
  }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  const std::string& host() const { return host_; }
  std::string log() const {
    std::ifstream in(log_);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  // Sends signal and returns the exit status (-1 if killed by a signal or still running after
  // 300 s: under AddressSanitizer on a busy machine, finishing the SIGTERM test's requests
  // took longer than 30 s).
  int stop(int signal) {
    kill(pid_, signal);
    for (auto until = Clock::now() + std::chrono::seconds(300); Clock::now() < until;) {
      if (waitpid(pid_, &status_, WNOHANG) == pid_) {
        exited_ = true;
        return WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(60, 0);
    return c;
  }

 private:
  static inline int count_ = 0;
  std::string log_, host_;
  pid_t pid_ = -1;
  int port_ = 0, status_ = 0;
  bool exited_ = false;
};

struct Reply {
  int status = 0;  // 0: no response
  json body;
  std::string text;
};

inline Reply reply_of(const httplib::Result& res) {
  Reply reply;
  if (!res) return reply;
  reply.status = res->status;
  reply.text = res->body;
  reply.body = json::parse(res->body, nullptr, false);
  return reply;
}

inline Reply post(const Server& server, const std::string& path, const std::string& body) {
  return reply_of(server.client().Post(path.c_str(), body, "application/json"));
}

inline Reply get(const Server& server, const std::string& path) { return reply_of(server.client().Get(path.c_str())); }

// A raw TCP connection, for clients that misbehave.
inline int connect_to(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace rnnsearch::test
