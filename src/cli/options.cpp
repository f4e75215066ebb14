#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "rnnsearch/error.h"
#include "rnnsearch/io/atomic_file.h"
#include "rnnsearch/util/checks.h"
#include "rnnsearch/util/mpi.h"

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

std::function<void(double)> non_negative(const std::string& option) {
  return [option](double value) { check_non_negative(option, value); };
}

std::function<void(double)> below_one(const std::string& option) {
  return [option](double value) { check_below_one(option, value); };
}

std::function<void(long)> at_least(const std::string& option, long minimum) {
  return [option, minimum](long value) { check_at_least(option, value, minimum); };
}

std::function<void(long)> between(const std::string& option, long minimum, long maximum) {
  return [option, minimum, maximum](long value) { check_between(option, value, minimum, maximum); };
}

po::options_description model_option_group(DecodeArgs& args, const std::string& unit, bool model_required) {
  po::options_description group("model and batching");
  auto* model = po::value(&args.model_dirs)->composing();
  if (model_required) model->required();
  group.add_options()
      ("model,m", model,
       "model directory (uses model.best.npz when present); repeat for an ensemble, which averages the models' "
       "log-probabilities")
      ("batch-size", po::value(&args.batch_size)->default_value(32)->notifier(at_least("batch-size", 1)),
       (unit + " decoded together").c_str())
      ("threads", po::value(&args.threads)->default_value(0)->notifier(at_least("threads", 0)),
       "threads: batches decoded in parallel (0, every command's default: OMP_NUM_THREADS when set, else one "
       "per core this process may run on)");
  return group;
}

po::options_description progress_option_group(ProgressOptions& progress) {
  po::options_description group("progress");
  group.add_options()
      ("log-every", po::value(&progress.every)->default_value(30)->notifier(non_negative("log-every")),
       "when stderr is not a terminal, a progress line every this many seconds (0 = after every step); on a "
       "terminal the line is live")
      ("quiet", po::bool_switch(&progress.quiet), "no progress on stderr (warnings and errors still go there)");
  return group;
}

po::options_description output_option_group(DecodeArgs& args) {
  po::options_description group("output");
  group.add_options()
      ("alignment", po::value(&args.alignment)->default_value("none"),
       "append ' ||| ' and the alignment: none, soft (matrix rows of target tokens incl. </s>, "
       "comma-separated weights over source tokens incl. </s>) or hard (Pharaoh src-tgt pairs). It is the model's "
       "alignment output when it has one (train --alignment-output), which aligns nearly as well as align --hmm, "
       "else the attention, a poor aligner (docs/aligning.md has the figures)")
      ("format", po::value(&args.format)->default_value("text"), "text, or json: one JSON object per line")
      ("alignment-units", po::value(&args.alignment_units)->default_value("words"),
       "words, or pieces: the raw attention matrix of a subword model's pieces (JSON and heatmaps label it "
       "with the pieces)")
      ("heatmaps", po::value(&args.heatmaps), "write attention heatmaps (SVG) and index.html into DIR")
      ("heatmaps-limit", po::value(&args.heatmaps_limit)->default_value(100)->notifier(at_least("heatmaps-limit", 0)),
       "heatmaps for at most this many sentences");
  return group;
}

bool piece_alignments(const DecodeArgs& args) { return parse_alignment_units(args.alignment_units); }

po::options_description decode_option_group(DecodeUse use) {
  po::options_description group(use == DecodeUse::translate
                                    ? "decoding (score = log p / lp − W × length + B × coverage)"
                                    : "ranking, as translate's (score = log p / lp − W × length + B × coverage)");
  for (const DecodeOptionSpec& spec : decode_option_specs()) {
    if (!spec.takes(use)) continue;
    const std::string name = spec.short_name ? std::string(spec.name) + "," + spec.short_name : spec.name;
    auto* value = po::value<double>();
    if (!spec.optional) {
      std::ostringstream text;  // as the value would be typed: 5, 0.5
      text << spec.default_value(use);
      value->default_value(spec.default_value(use), text.str());
    }
    if (spec.integer && spec.minimum == 0 && spec.maximum == 1) value->implicit_value(1, "1");  // a switch
    group.add_options()(name.c_str(), value, spec.help);
  }
  return group;
}

DecodeOptions decode_options(const po::variables_map& vm, DecodeUse use) {
  return given_decode_options(use, [&](const DecodeOptionSpec& spec) -> std::optional<double> {
    if (!vm.count(spec.name) || vm[spec.name].defaulted()) return std::nullopt;
    return vm[spec.name].as<double>();
  });
}

OutputOptions output_options(const DecodeArgs& args) {
  OutputOptions options;
  options.alignment = parse_alignment_format(args.alignment);
  options.json = parse_format_is_json(args.format);
  return options;
}

OutputFile::OutputFile(const std::string& path, const std::vector<std::string>& inputs) : path_(path) {
  if (path == "-") return;
  check_not_an_input(path, inputs);  // (renaming over an input would lose it, as truncating did)
  file_ = std::make_unique<AtomicOutputStream>(path);
}

void OutputFile::flush() {
  if (!stream().flush()) throw Error(located(path_ == "-" ? "stdout" : path_, 0, "write failed"));
}

void OutputFile::close() {
  flush();
  if (file_) file_->commit();
}

}  // namespace rnnsearch::cli
