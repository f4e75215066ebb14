#include "rnnsearch/serve/http_server.h"

#include <httplib.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <thread>

#include "rnnsearch/error.h"
#include "rnnsearch/serve/page.h"

namespace rnnsearch::serve {

namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kJson = "application/json";
// Requests on one kept-alive connection before it is closed: clients beyond --http-threads
// wait for a connection to close, so not unlimited.
constexpr size_t kKeepAliveRequests = 100;

// When the current thread's request was read (set before routing, read by the logger).
thread_local Clock::time_point request_start;
thread_local bool request_started = false;

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

// The path label of /metrics: the routes by name, anything else as "other" (a scanner
// trying thousands of paths must not make thousands of series).
std::string path_label(const std::string& path) {
  for (const char* route : {"/", "/translate", "/score", "/align", "/health", "/info", "/metrics"})
    if (path == route) return path;
  return "other";
}

// An error answered on a connection that is then closed: the error's body comes from a content
// provider that returns false once it has written it all, which httplib (0.11.4, Debian 12's)
// takes for a failed response: it closes the connection instead of reading the rest of an
// upload left unread as the next request (a handler has no other way to close it there).
void answer_and_close(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_header("Connection", "close");
  const std::string body = error_body(message);
  res.set_content_provider(body.size(), kJson, [body](size_t offset, size_t, httplib::DataSink& sink) {
    sink.write(body.data() + offset, body.size() - offset);
    return false;
  });
}

// The body of a POST, at most max_bytes however it is sent. httplib refuses a Content-Length
// above set_payload_max_length (413) and reads the body it announces; but Debian 12's httplib
// (0.11) stores a chunked body of any size (a 50 MB upload was read into memory and got a
// 200), so the bytes are counted here as they arrive, and the upload is cut at the limit. A
// sender silent for --read-timeout is dropped by httplib (a failed read: 400).
bool read_body(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader,
               size_t max_bytes, std::string& body) {
  if (req.is_multipart_form_data()) {
    answer_and_close(res, 415, "the body must be JSON (Content-Type: application/json), not multipart/form-data");
    return false;
  }
  bool too_large = false;
  const bool read = reader([&](const char* data, size_t size) {
    too_large = size > max_bytes - body.size();
    if (!too_large) body.append(data, size);
    return !too_large;
  });
  if (too_large || res.status == 413) {
    answer_and_close(res, 413, "the body is larger than " + std::to_string(max_bytes) + " bytes (--max-body-bytes)");
    return false;
  }
  if (!read) answer_and_close(res, 400, "the body could not be read (a broken chunked upload, or the client fell silent)");
  return read;
}

// A POST route: the body through parse, run and respond (all the service's), errors as JSON.
template <class Parse, class Run>
httplib::Server::HandlerWithContentReader json_route(size_t max_body_bytes, Parse parse, Run run) {
  return [max_body_bytes, parse, run](const httplib::Request& req, httplib::Response& res,
                                      const httplib::ContentReader& reader) {
    std::string body;
    if (!read_body(req, res, reader, max_body_bytes, body)) return;
    try {
      const auto request = parse(body);
      res.set_content(json_body(run(request)), kJson);
    } catch (const RequestError& e) {
      res.status = e.status;
      res.set_content(error_body(e.what()), kJson);
    } catch (const std::bad_alloc&) {
      res.status = 503;
      res.set_content(error_body("out of memory"), kJson);
    }
  };
}

}  // namespace

void block_stop_signals() {
  const sigset_t set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a client gone mid-response is a failed write, not the end
}

void serve(TranslationService& service, const HttpOptions& options, const std::function<void(int)>& listening) {
  httplib::Server server;
  const size_t threads = static_cast<size_t>(std::max(1, options.http_threads));
  server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server.set_payload_max_length(options.max_body_bytes);
  server.set_read_timeout(options.read_timeout_s, 0);
  server.set_write_timeout(options.write_timeout_s, 0);
  server.set_keep_alive_timeout(options.keep_alive_s);
  // (httplib's default, 5, made a busy client reconnect every 5th request)
  server.set_keep_alive_max_count(kKeepAliveRequests);
  // httplib's default options set SO_REUSEPORT, with which a second server on the same port
  // starts without an error and the kernel shares the connections between the two. Only
  // SO_REUSEADDR here (a restarted server may bind while old connections are in TIME_WAIT);
  // the socket is kept to raise its backlog after bind.
  int listening_socket = -1;
  server.set_socket_options([&listening_socket](int sock) {
    const int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    listening_socket = sock;
  });
  // Headers and body go out in two writes: with Nagle's algorithm the body waited for the
  // client's delayed ACK of the headers, 40 ms a response on Linux.
  server.set_tcp_nodelay(true);

  const size_t max_body = options.max_body_bytes;
  server.Post("/translate",
              json_route(max_body, [&](const std::string& body) { return service.parse_translate_request(body); },
                         [&](const TranslateRequest& request) {
                           return service.translate_json(request, service.translate(request));
                         }));
  server.Post("/score", json_route(max_body, [&](const std::string& body) { return service.parse_score_request(body); },
                                   [&](const ScoreRequest& request) {
                                     return service.score_json(request, service.score(request));
                                   }));
  server.Post("/align", json_route(max_body, [&](const std::string& body) { return service.parse_align_request(body); },
                                   [&](const AlignRequest& request) { return service.align_json(service.align(request)); }));
  for (const char* route : {"/translate", "/score", "/align"})
    server.Get(route, [](const httplib::Request& req, httplib::Response& res) {
      res.status = 405;
      res.set_header("Allow", "POST");
      res.set_content(error_body(req.path + " takes POST with a JSON body (docs/serve.md)"), kJson);
    });
  server.Get("/health", [&](const httplib::Request&, httplib::Response& res) {
    if (service.stopping()) res.status = 503;
    res.set_content(json_body({{"status", service.stopping() ? "stopping" : "ok"}}), kJson);
  });
  server.Get("/info", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(json_body(service.info()), kJson);
  });
  server.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(service.metrics_text(), "text/plain; version=0.0.4");
  });
  server.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(page_html(), "text/html; charset=utf-8");
  });

  // Every error, including those httplib answers itself (413, 400, 404), as JSON.
  server.set_error_handler(httplib::Server::HandlerWithResponse([&options](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty() || res.content_provider_) return httplib::Server::HandlerResponse::Unhandled;
    std::string message;
    switch (res.status) {
      case 404:
        message = "no such endpoint: " + req.method + " " + req.path;
        break;
      case 413:
        message = "the body is larger than " + std::to_string(options.max_body_bytes) + " bytes (--max-body-bytes)";
        break;
      case 400:
        message = "malformed HTTP request";
        break;
      case 414:
        message = "the request line is too long";
        break;
      default:
        message = "HTTP status " + std::to_string(res.status);
    }
    res.set_content(error_body(message), kJson);
    return httplib::Server::HandlerResponse::Handled;
  }));
  server.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr error) {
    res.status = 500;
    std::string message = "internal error";
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      message += std::string(": ") + e.what();
    } catch (...) {
    }
    res.set_content(error_body(message), kJson);
  });
  server.set_pre_routing_handler([](const httplib::Request&, httplib::Response&) {
    request_start = Clock::now();
    request_started = true;
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // Counted before the response is written (the logger runs after), so that a client that
  // reads /metrics right after its answer sees its own request counted.
  server.set_post_routing_handler([&service](const httplib::Request& req, httplib::Response& res) {
    const double seconds =
        request_started ? std::chrono::duration<double>(Clock::now() - request_start).count() : 0.0;
    request_started = false;
    service.metrics().request(path_label(req.path), res.status, seconds);
  });

  int port = options.port;
  errno = 0;
  if (port == 0) {
    port = server.bind_to_any_port(options.host);
    if (port < 0) throw Error("cannot listen on " + options.host + " (--host)");
  } else if (!server.bind_to_port(options.host, port)) {
    throw Error("cannot listen on " + options.host + ":" + std::to_string(port) + (errno ? ": " + std::string(std::strerror(errno)) : std::string()) +
                " (--host, --port)");
  }
  // httplib listens with a backlog of 5: connections beyond it that arrive while the accept
  // thread waits for a core were refused or reset (16 clients connecting at once lost
  // requests). listen() again on a listening socket sets the new backlog.
  if (listening_socket >= 0) ::listen(listening_socket, SOMAXCONN);

  // SIGINT/SIGTERM (blocked in every thread: block_stop_signals) are taken here; stop()
  // closes the listening socket, and listen_after_bind returns once the connection threads
  // have answered what they had read.
  std::atomic<bool> done{false};
  std::thread signals([&] {
    const sigset_t set = stop_signals();
    const timespec interval{0, 200 * 1000 * 1000};
    while (!done) {
      const int received = sigtimedwait(&set, nullptr, &interval);
      if (received != SIGINT && received != SIGTERM) continue;
      std::cerr << "rnnsearch serve: " << (received == SIGINT ? "SIGINT" : "SIGTERM")
                << ": finishing the requests in flight\n";
      // (stop() does nothing before listen_after_bind has started)
      while (!server.is_running() && !done) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      server.stop();
      return;
    }
  });
  listening(port);
  server.listen_after_bind();
  done = true;
  signals.join();
  service.stop();
}

}  // namespace rnnsearch::serve
