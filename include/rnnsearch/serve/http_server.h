#pragma once
// The HTTP side of `rnnsearch serve` (docs/serve.md), on cpp-httplib: a pool of threads,
// one per connection being served, each parsing one request at a time; the routes call
// the TranslationService (serve/service.h), whose searches (one per --threads) decode the
// sentences of all of them together, continuously batched.
//
//   POST /translate, POST /score   JSON in, JSON out; errors {"error": "..."} with a 4xx (503
//                                  when busy, stopping or timed out)
//   GET /health, /info, /metrics   liveness, the models and limits, Prometheus text
//   GET /                          the translation page (serve/page.h)
#include <functional>
#include <string>

#include "rnnsearch/serve/service.h"

namespace rnnsearch::serve {

struct HttpOptions {
  std::string host = "127.0.0.1";  // --host
  int port = 8080;                 // --port; 0 = any free port (announced on stderr)
  size_t max_body_bytes = 1 << 20; // --max-body-bytes: larger bodies get 413
  int http_threads = 256;          // --http-threads: connections served at once
  int read_timeout_s = 5;          // --read-timeout: a client silent this long is dropped
  int write_timeout_s = 5;         // --write-timeout: a client that reads nothing this long too
  int keep_alive_s = 5;            // --keep-alive-timeout: a connection idle this long before a request is closed
};

// Blocks SIGINT and SIGTERM in the calling thread and the threads it starts later (call it
// first, before any thread exists), so that serve() alone receives them.
void block_stop_signals();

// Serves until SIGINT or SIGTERM: then stops accepting, finishes the requests in flight and
// the service's queue, and returns. `listening(port)` is called once the socket is bound.
// Throws rnnsearch::Error if the address cannot be bound.
void serve(TranslationService& service, const HttpOptions& options, const std::function<void(int)>& listening);

}  // namespace rnnsearch::serve
