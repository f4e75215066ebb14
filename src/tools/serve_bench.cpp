// serve_bench: the load generator behind docs/benchmarks.md's serving tables
// (scripts/serve_load.py runs it; it stops by itself). Its clients are C++ threads on
// cpp-httplib's client, so that on a 2-core machine the load costs the server little CPU (the
// Python client it replaces, one GIL for all its threads, took a core's share of it), and a
// request's latency carries little client time (far less than Python's http.client added;
// docs/benchmarks.md, Serving, The HTTP layer).
//
//   serve_bench --port P --input FILE [--clients C] [--beam-size 5] [--count N] [--translations OUT]
//     C threads, each with one kept-alive connection, send the first N lines of FILE (all by
//     default), one per POST /translate {"q": line, "beam_size": B}, each line once. Prints
//     one JSON line {"seconds": wall time, "latencies": [s, per line], "errors": [...]} and
//     writes the translations to OUT, one per line (atomically; OUT must not be FILE).
//   Bad arguments, an unreadable FILE, an unwritable OUT or any failed request or mismatch:
//   one line on stderr, exit 1 (the JSON is still printed after a failed request).
//
//   serve_bench --port P --input FILE --alone MODEL [--threads T] [--block 20] [--count N] [--beam-size 5]
//     The 1-client yardstick: the same lines sent to the server one at a time and translated
//     one at a time in this process by the library call the server decodes with
//     (Translator::translate; T threads, as the server's --threads), in turns of a block of
//     lines on each side (each side's block after one untimed warm-up request or call, which
//     side goes first alternating), so that the host's drift, tens of percent within seconds
//     here, hits both alike; each line is timed once on each side. Prints {"served": [s, per
//     line], "alone": [s, per line], "errors": [...]}; a translation that differs between
//     the two is an error. --block 1: each line twice on each side, back to back, the second
//     timed (the two processes' weights then evict each other from the cache every line).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "rnnsearch/decode/translator.h"
#include "rnnsearch/output/output.h"
#include "rnnsearch/io/atomic_file.h"
#include "rnnsearch/model/model_io.h"
#include "rnnsearch/kernels/precision.h"
#include "rnnsearch/text/line_reader.h"
#include "rnnsearch/util/cpu.h"

// After Eigen (through the headers above): httplib includes <resolv.h>, whose _res macro
// breaks Eigen's parameters of that name.
#include <httplib.h>

namespace po = boost::program_options;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// One kept-alive connection to the server.
class Client {
 public:
  Client(const std::string& host, int port, int beam_size) : http_(host, port), beam_size_(beam_size) {
    http_.set_keep_alive(true);
    http_.set_tcp_nodelay(true);
    http_.set_read_timeout(120, 0);
  }
  // POST /translate of one sentence: its translation; throws std::runtime_error on failure.
  std::string translate(const std::string& sentence) {
    const auto response = http_.Post("/translate", json{{"q", sentence}, {"beam_size", beam_size_}}.dump(),
                                     "application/json");
    if (!response) throw std::runtime_error("no response: " + httplib::to_string(response.error()));
    if (response->status != 200) throw std::runtime_error(response->body);
    return json::parse(response->body)["translations"][0]["translation"].get<std::string>();
  }

 private:
  httplib::Client http_;
  int beam_size_;
};

json load(const std::string& host, int port, int clients, int beam_size, const std::vector<std::string>& lines,
          std::vector<std::string>& translations) {
  std::vector<double> latencies(lines.size(), -1.0);
  std::vector<std::string> errors;
  std::mutex errors_mutex;
  std::atomic<size_t> next{0};
  const auto start = Clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c)
    threads.emplace_back([&] {
      Client client(host, port, beam_size);
      for (size_t k; (k = next++) < lines.size();) {
        const auto sent = Clock::now();
        try {
          translations[k] = client.translate(lines[k]);
          latencies[k] = seconds_since(sent);
        } catch (const std::exception& e) {
          std::lock_guard<std::mutex> lock(errors_mutex);
          errors.push_back("line " + std::to_string(k + 1) + ": " + e.what());
        }
      }
    });
  for (std::thread& t : threads) t.join();
  const double seconds = seconds_since(start);
  latencies.erase(std::remove(latencies.begin(), latencies.end(), -1.0), latencies.end());
  return {{"seconds", seconds}, {"latencies", latencies}, {"errors", errors}};
}

json alone(const std::string& host, int port, int beam_size, const std::vector<std::string>& lines,
           const std::string& model_dir, int threads, size_t block) {
  const std::vector<rnnsearch::Model> models = rnnsearch::load_ensemble({model_dir});
  rnnsearch::TranslatorOptions options;  // as the server's for {"beam_size": B}
  options.beam.beam_size = beam_size;
  options.threads = rnnsearch::set_threads(threads);
  options.precision = rnnsearch::precision_option("auto", rnnsearch::PrecisionUse::decoding);
  rnnsearch::Translator translator(models.front(), rnnsearch::ensemble_weights(models), options);
  rnnsearch::OutputOptions text;  // the translation's text, as the server gives it
  text.tokenizer = models.front().tokenizer;
  const rnnsearch::OutputPrinter printer(text);
  Client client(host, port, beam_size);
  std::vector<double> served, in_process;
  std::vector<std::string> errors, by_server(lines.size()), by_library(lines.size());
  const auto request = [&](size_t k) { by_server[k] = client.translate(lines[k]); };
  const auto call = [&](size_t k) {
    std::ostringstream out;
    printer.print(out, translator.translate({lines[k]}, 0).front());
    by_library[k] = out.str();
    by_library[k].pop_back();  // '\n'
  };
  // Lines first .. end, once each, timed, after the first once untimed (the warm-up).
  const auto timed = [&](const auto& run, size_t first, size_t end, std::vector<double>& times) {
    run(first);
    for (size_t k = first; k < end; ++k) {
      const auto start = Clock::now();
      run(k);
      times.push_back(seconds_since(start));
    }
  };
  for (size_t first = 0; first < lines.size(); first += block) {
    const size_t end = std::min(lines.size(), first + block);
    try {
      if (first / block % 2 == 0) {
        timed(request, first, end, served);
        timed(call, first, end, in_process);
      } else {
        timed(call, first, end, in_process);
        timed(request, first, end, served);
      }
    } catch (const std::exception& e) {
      errors.push_back("lines " + std::to_string(first + 1) + "-" + std::to_string(end) + ": " + e.what());
    }
  }
  for (size_t k = 0; k < lines.size(); ++k)
    if (by_server[k] != by_library[k])
      errors.push_back("line " + std::to_string(k + 1) + ": the server's \"" + by_server[k] + "\", the library's \"" +
                       by_library[k] + "\"");
  return {{"served", served}, {"alone", in_process}, {"errors", errors}};
}

}  // namespace

int main(int argc, char** argv) {
  std::string host, input, translations_path, model_dir;
  int port = 0, clients = 1, beam_size = 5, threads = 1;
  size_t count = 0, block = 20;
  po::options_description options("serve_bench (docs/serve.md)");
  options.add_options()("help", "this text")("host", po::value(&host)->default_value("127.0.0.1"))(
      "port", po::value(&port)->required())("input", po::value(&input)->required(), "sentences, one per line")(
      "clients", po::value(&clients)->default_value(1))("beam-size", po::value(&beam_size)->default_value(5))(
      "count", po::value(&count)->default_value(0), "the first N lines (0: all)")(
      "translations", po::value(&translations_path), "write the server's translations here")(
      "alone", po::value(&model_dir), "the 1-client yardstick against this model in-process")(
      "threads", po::value(&threads)->default_value(0),
      "with --alone: the in-process Translator's threads (0: OMP_NUM_THREADS when set, else all cores, as serve's)")(
      "block", po::value(&block)->default_value(20), "with --alone: lines in turn on each side");
  try {
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, options), vm);
    if (vm.count("help")) {
      std::cout << options;
      return 0;
    }
    po::notify(vm);
    if (!translations_path.empty()) rnnsearch::check_not_an_input(translations_path, {input});
    std::vector<std::string> lines = rnnsearch::read_lines(input);
    if (count > 0 && count < lines.size()) lines.resize(count);
    json result;
    if (!model_dir.empty()) {
      result = alone(host, port, beam_size, lines, model_dir, threads, std::max<size_t>(1, block));
    } else {
      std::vector<std::string> translations(lines.size());
      result = load(host, port, std::max(1, clients), beam_size, lines, translations);
      if (!translations_path.empty()) {
        std::string text;
        for (const std::string& t : translations) text += t + '\n';
        rnnsearch::write_file_atomically(translations_path, text);
      }
    }
    std::cout << result.dump() << '\n';
    const json& errors = result["errors"];
    if (errors.empty()) return 0;
    std::cerr << "serve_bench: " << errors.size() << " failed (first: " << errors[0].get<std::string>() << ")\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "serve_bench: " << e.what() << '\n';
    return 1;
  }
}
