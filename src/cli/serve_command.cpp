// rnnsearch serve: the models behind an HTTP API (docs/serve.md): POST /translate, /score and
// /align, GET /health, /info, /metrics and the translation page at /. Concurrent requests'
// sentences are decoded together, each as `rnnsearch translate` would (serve/service.h).
// In a build without cpp-httplib (RNNSEARCH_HAVE_HTTP undefined) the command says so.
#include <iostream>

#include "commands.h"
#include "rnnsearch/error.h"

#ifdef RNNSEARCH_HAVE_HTTP
#include "rnnsearch/metrics/signature.h"
#include "rnnsearch/serve/http_server.h"

namespace po = boost::program_options;

namespace rnnsearch::cli {

int serve_command(const Args& args) {
  serve::block_stop_signals();  // main did already, before any thread existed
  DecodeArgs decode;
  serve::ServiceOptions sopts;
  serve::HttpOptions hopts;
  std::string precision;
  std::vector<std::string> reverse_dirs;
  long max_body = 0;
  po::options_description options("serve options");
  options.add_options()
      ("host", po::value(&hopts.host)->default_value("127.0.0.1"),
       "address to listen on (0.0.0.0: every interface; the API has no authentication)")
      ("port", po::value(&hopts.port)->default_value(8080)->notifier(at_least("port", 0)),
       "TCP port; 0 = any free port, printed on stderr")
      ("batch-wait-ms", po::value(&sopts.batch_wait_ms)->default_value(5)->notifier(at_least("batch-wait-ms", 0)),
       "when busy, how long the oldest waiting sentence may wait for others to fill its batch")
      ("max-body-bytes", po::value(&max_body)->default_value(1 << 20)->notifier(at_least("max-body-bytes", 1)),
       "larger request bodies are refused (413)")
      ("max-sentences", po::value(&sopts.max_sentences)->default_value(64)->notifier(at_least("max-sentences", 1)),
       "sentences per request")
      ("max-tokens", po::value(&sopts.max_tokens)->default_value(200)->notifier(at_least("max-tokens", 1)),
       "tokens per sentence (as translate's --max-length, but refused with 413 rather than cut)")
      ("max-beam-size", po::value(&sopts.max_beam_size)->default_value(32)->notifier(at_least("max-beam-size", 1)),
       "largest beam_size a request may ask for")
      ("timeout-ms", po::value(&sopts.timeout_ms)->default_value(30000)->notifier(at_least("timeout-ms", 1)),
       "a request not translated this long after it arrived gets 503")
      ("max-queue", po::value(&sopts.max_queue)->default_value(4096)->notifier(at_least("max-queue", 1)),
       "sentences waiting to be decoded; requests beyond get 503")
      ("http-threads", po::value(&hopts.http_threads)->default_value(256)->notifier(at_least("http-threads", 1)),
       "connections served at once (more wait for a free thread)")
      ("read-timeout", po::value(&hopts.read_timeout_s)->default_value(5)->notifier(at_least("read-timeout", 1)),
       "seconds a client may stay silent while sending a request")
      ("write-timeout", po::value(&hopts.write_timeout_s)->default_value(5)->notifier(at_least("write-timeout", 1)),
       "seconds a client may take to accept more of a response")
      ("keep-alive-timeout", po::value(&hopts.keep_alive_s)->default_value(5)->notifier(at_least("keep-alive-timeout", 1)),
       "seconds a connection may stay idle before a request (the first one too) while holding an HTTP thread")
      ("precision", po::value(&precision)->default_value("auto"),
       "of the vocabulary projection, as translate --precision: auto, fp32, bf16 or int8")
      ("reverse-model", po::value(&reverse_dirs)->composing(),
       "a target→source model for POST /align (as align --reverse-model; repeat: an ensemble)")
      ("hmm-tables", po::value(&sopts.hmm_tables),
       "what align --hmm --save-hmm DIR wrote: POST /align with \"aligner\": \"hmm\" aligns with it, without a model");
  options.add(model_option_group(decode, "sentences"));
  po::variables_map vm;
  if (parse_options("serve", "--model DIR [--port N] [--host ADDRESS] [options]", options, args, vm)) return 0;
  hopts.max_body_bytes = static_cast<size_t>(max_body);
  // Each connection served at once is a thread with its own stack: tens of thousands of them
  // exhaust the process's limits before the first request.
  constexpr int kMaxHttpThreads = 4096;
  if (hopts.http_threads > kMaxHttpThreads)
    throw Error("--http-threads must be at most " + std::to_string(kMaxHttpThreads) + ", not " +
                std::to_string(hopts.http_threads));
  sopts.batch_size = decode.batch_size;
  sopts.threads = set_threads(decode.threads);
  sopts.precision = precision_option(precision, PrecisionUse::decoding);
  sopts.version = metric_version();

  const std::vector<Model> models = load_ensemble(decode.model_dirs);
  const std::vector<Model> reverse = reverse_dirs.empty() ? std::vector<Model>() : load_ensemble(reverse_dirs);
  serve::TranslationService service(models, reverse, sopts);
  serve::serve(service, hopts, [&](int port) {
    std::cerr << "rnnsearch serve: listening on http://" << hopts.host << ":" << port << "/ (" << models.front().weights_path
              << (models.size() > 1 ? " and " + std::to_string(models.size() - 1) + " more (ensemble)" : "")
              << ", projection in " << precision_name(sopts.precision) << ")" << std::endl;
  });
  std::cerr << "rnnsearch serve: stopped\n";
  return 0;
}

}  // namespace rnnsearch::cli

#else

namespace rnnsearch::cli {

int serve_command(const Args&) {
  throw Error("this build has no HTTP library (install libcpp-httplib-dev and rebuild)");
}

}  // namespace rnnsearch::cli

#endif
