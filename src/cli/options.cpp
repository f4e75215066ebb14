#include <omp.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "commands.h"
#include "rnnsearch/error.h"
#include "rnnsearch/io/atomic_file.h"
#include "rnnsearch/model/int8.h"

namespace po = boost::program_options;

namespace rnnsearch::cli {
namespace {

// Boost.Program_options formats a message by replacing each placeholder (%value%,
// %canonical_option%, ...) until none is left, so a value or option name that contains its
// own placeholder (`--emb %value%`, found by fuzz_train_config) made what() loop forever.
// The user's text is escaped first: each '%' shows as "%25".
struct EscapedMessage : po::error_with_option_name {
  static std::string of(po::error_with_option_name& e) {
    for (auto& [placeholder, text] : e.*(&EscapedMessage::m_substitutions))
      for (size_t at = text.find('%'); at != std::string::npos; at = text.find('%', at + 3)) text.replace(at, 1, "%25");
    return e.what();
  }
};

std::string message_of(po::error& e) {
  auto* named = dynamic_cast<po::error_with_option_name*>(&e);
  return named ? EscapedMessage::of(*named) : e.what();
}

}  // namespace

bool parse_options(const std::string& command, const std::string& usage, po::options_description& options,
                   const Args& args, po::variables_map& vm) {
  options.add_options()("config", po::value<std::string>(), "read options from FILE (lines 'name = value')")(
      "help,h", "show this help");
  try {
    po::store(po::command_line_parser(args).options(options).run(), vm);
    if (vm.count("help")) {
      std::cout << "Usage: rnnsearch " << command << " " << usage << "\n\n" << options << "\n";
      return true;
    }
    if (vm.count("config")) {
      const std::string path = vm["config"].as<std::string>();
      std::ifstream in(path);
      if (!in || std::filesystem::is_directory(path)) throw Error(located(path, 0, "cannot open config file"));
      try {
        po::store(po::parse_config_file(in, options), vm);  // values already given are kept
      } catch (po::error& e) {
        throw Error(located(path, 0, message_of(e)));
      }
    }
    po::notify(vm);
  } catch (po::error& e) {
    throw Error(message_of(e) + " (see rnnsearch " + command + " --help)");
  }
  return false;
}

int set_threads(int requested) {
  const int threads = requested > 0 ? requested : omp_get_num_procs();
  omp_set_num_threads(threads);
  return threads;
}

Precision precision_option(const std::string& name, PrecisionUse use) {
  // auto: the fastest precision that kept BLEU (docs/design.md §5) among those this CPU runs
  // natively; the int8 projection only in decoding
  if (name == "auto") {
    if (use == PrecisionUse::decoding && int8_supported()) return Precision::int8;
    return bf16_supported() ? Precision::bf16 : Precision::fp32;
  }
  if (name == "int8" && use == PrecisionUse::training)
    throw Error("--precision int8 is for translate: training needs fp32 or bf16 gradients");
  Precision precision;
  try {
    precision = parse_precision(name);
  } catch (const std::invalid_argument&) {
    throw Error("--precision must be auto, fp32, bf16 or int8, not '" + name + "'");
  }
  if (precision == Precision::bf16 && !bf16_supported()) {
    std::cerr << "rnnsearch: --precision bf16 needs a CPU with AVX512_BF16 and a build with oneDNN; computing in fp32\n";
    return Precision::fp32;
  }
  if (precision == Precision::int8 && !int8_supported()) {
    std::cerr << "rnnsearch: --precision int8 needs a CPU with AVX2 and a build with oneDNN; computing in fp32\n";
    return Precision::fp32;
  }
  return precision;
}

namespace {

template <class T>
std::function<void(T)> check(const std::string& option, const std::string& requirement, bool (*ok)(T)) {
  return [option, requirement, ok](T value) {
    if (ok(value)) return;
    std::ostringstream text;
    text << "--" << option << " must be " << requirement << ", not " << value;
    throw Error(text.str());
  };
}

}  // namespace

std::function<void(double)> non_negative(const std::string& option) {
  return check<double>(option, "a number >= 0", [](double v) { return std::isfinite(v) && v >= 0; });
}

std::function<void(double)> below_one(const std::string& option) {
  return check<double>(option, "in [0, 1)", [](double v) { return v >= 0 && v < 1; });
}

std::function<void(long)> at_least(const std::string& option, long minimum) {
  return [option, minimum](long value) {
    if (value < minimum)
      throw Error("--" + option + " must be at least " + std::to_string(minimum) + ", not " + std::to_string(value));
  };
}

po::options_description model_option_group(DecodeArgs& args, const std::string& unit) {
  po::options_description group("model and batching");
  group.add_options()
      ("model,m", po::value(&args.model_dirs)->required()->composing(),
       "model directory (uses model.best.npz when present); repeat for an ensemble, which averages the models' "
       "log-probabilities")
      ("batch-size", po::value(&args.batch_size)->default_value(32)->notifier(at_least("batch-size", 1)),
       (unit + " decoded together").c_str())
      ("threads", po::value(&args.threads)->default_value(1)->notifier(at_least("threads", 0)),
       "batches decoded in parallel (0 = all cores)");
  return group;
}

po::options_description output_option_group(DecodeArgs& args) {
  po::options_description group("output");
  group.add_options()
      ("alignment", po::value(&args.alignment)->default_value("none"),
       "append ' ||| ' and the attention: none, soft (matrix rows of target tokens incl. </s>, "
       "comma-separated weights over source tokens incl. </s>) or hard (Pharaoh src-tgt pairs)")
      ("format", po::value(&args.format)->default_value("text"), "text, or json: one JSON object per line")
      ("alignment-units", po::value(&args.alignment_units)->default_value("words"),
       "words, or pieces: the raw attention matrix of a subword model's pieces (JSON and heatmaps label it "
       "with the pieces)")
      ("heatmaps", po::value(&args.heatmaps), "write attention heatmaps (SVG) and index.html into DIR")
      ("heatmaps-limit", po::value(&args.heatmaps_limit)->default_value(100)->notifier(at_least("heatmaps-limit", 0)),
       "heatmaps for at most this many sentences");
  return group;
}

bool piece_alignments(const DecodeArgs& args) {
  if (args.alignment_units != "words" && args.alignment_units != "pieces")
    throw Error("--alignment-units must be words or pieces, not '" + args.alignment_units + "'");
  return args.alignment_units == "pieces";
}

OutputOptions output_options(const DecodeArgs& args) {
  OutputOptions options;
  options.alignment = parse_alignment_format(args.alignment);
  options.json = parse_format_is_json(args.format);
  return options;
}

OutputFile::OutputFile(const std::string& path, const std::vector<std::string>& inputs) : path_(path) {
  if (path == "-") return;
  check_not_an_input(path, inputs);  // before opening truncates it
  file_.open(path, std::ios::binary);
  if (!file_) throw Error(located(path, 0, "cannot open for writing"));
}

void OutputFile::flush() {
  if (!stream().flush()) throw Error(located(path_ == "-" ? "stdout" : path_, 0, "write failed"));
}

}  // namespace rnnsearch::cli
