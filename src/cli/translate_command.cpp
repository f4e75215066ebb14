// rnnsearch translate: beam search over a stream of lines, one output line per input line
// (K with --n-best K), written and flushed chunk by chunk so a pipeline sees output while
// the input is still being read.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <utility>

#include "commands.h"
#include "rnnsearch/decode/call_options.h"
#include "rnnsearch/decode/steering.h"
#include "rnnsearch/decode/translator.h"
#include "rnnsearch/error.h"
#include "rnnsearch/util/cpu.h"
#include "rnnsearch/text/line_reader.h"
#include "rnnsearch/util/checks.h"
#include "rnnsearch/util/mpi.h"

namespace po = boost::program_options;

namespace rnnsearch::cli {
namespace {

// A file whose line k steers input line k: --target-prefix (the words), --constraints and
// --avoid (a JSON list of phrases, or an empty line). Rank 0 reads it.
struct SteeringFile {
  const char* option;
  std::vector<std::string> LineSteering::*phrases;  // where its lines go; null: the prefix
  std::string path;
  std::unique_ptr<LineReader> reader;  // rank 0's
  std::vector<std::string> lines;      // of the chunk
};

// Rank 0 reads the next chunk (input is null on the other ranks), and the same lines of each
// steering file; in an MPI job every rank receives them and translates its share of the
// chunk's batches.
bool read_chunk(LineReader* input, std::vector<SteeringFile>& files, size_t count, std::vector<std::string>& lines) {
  lines.clear();
  for (SteeringFile& file : files) file.lines.clear();
  std::string line;
  const auto mismatch = [&](const SteeringFile& file, const std::string& detail) {
    return Error(input->path() + " and " + file.path + " (--" + file.option + ") differ in length: " + file.path +
                 " has " + detail);
  };
  if (input) {
    while (lines.size() < count && input->next(line)) {
      lines.push_back(line);
      for (SteeringFile& file : files) {
        if (!file.reader->next(line))
          throw mismatch(file, "fewer lines (" + std::to_string(file.reader->line_number()) + ")");
        file.lines.push_back(line);
      }
    }
    for (SteeringFile& file : files)
      if (lines.size() < count && file.reader->next(line))
        throw mismatch(file, "more lines (line " + std::to_string(file.reader->line_number()) + ")");
  }
  mpi::broadcast(lines);
  for (SteeringFile& file : files) mpi::broadcast(file.lines);
  return !lines.empty();
}

// A line of --constraints or --avoid: a JSON list of strings, or an empty line (none).
std::vector<std::string> phrases_of(const SteeringFile& file, size_t line_number, const std::string& text) {
  try {
    return parse_phrase_line(text, file.option);
  } catch (const Error& e) {
    throw Error(located(file.path, line_number, e.what()));
  }
}

// The chunk's steering, line by line, from the files' lines (first: the chunk's first line,
// 0-based), each line's checked (check_steering, as every shell checks a sentence's) and its
// errors located in the last phrase file.
std::vector<LineSteering> steering_of(const std::vector<SteeringFile>& files, size_t first, size_t count,
                                      const BeamOptions& beam) {
  std::vector<LineSteering> steering(files.empty() ? 0 : count);
  for (const SteeringFile& file : files)
    for (size_t k = 0; k < count; ++k)
      if (file.phrases)
        steering[k].*file.phrases = phrases_of(file, first + k + 1, file.lines[k]);
      else
        steering[k].prefix = file.lines[k];
  for (size_t k = 0; k < steering.size(); ++k) try {
      check_steering(steering[k], beam);
    } catch (const Error& e) {
      throw Error(located(files.back().path, first + k + 1, e.what()));
    }
  return steering;
}

// --shortlist FILE FIRST BEST: the two sizes (0, 0 without the option).
std::pair<int, int> parse_shortlist_sizes(const std::vector<std::string>& values) {
  if (values.empty()) return {0, 0};
  if (values.size() != 3) throw Error("--shortlist takes three values: FILE FIRST BEST");
  const auto size = [](const std::string& text, const char* name) {
    size_t used = 0;
    int value = -1;
    try {
      value = std::stoi(text, &used);
    } catch (const std::exception&) {
    }
    if (used != text.size() || value < 0)
      throw Error(std::string("--shortlist: ") + name + " must be a whole number >= 0, not '" + text + "'");
    return value;
  };
  return {size(values[1], "FIRST"), size(values[2], "BEST")};
}

}  // namespace

int translate_command(const Args& args) {
  DecodeArgs decode;
  std::string input, output, target_prefix, constraints, avoid;
  CallOptions call;
  int maxi_batch = 10;
  bool detokenize = false, json_input = false;
  std::string unk_dictionary;
  std::vector<std::string> shortlist;
  std::string precision;
  po::options_description options("translate options");
  options.add_options()
      ("input,i", po::value(&input)->default_value("-"),
       "sentences to translate, one per line (a FILE may be gzipped; - = stdin, plain text)")
      ("output,o", po::value(&output)->default_value("-"), "where to write translations (- = stdout)")
      ("target-prefix", po::value(&target_prefix),
       "FILE with one line per input line: the words each translation must start with, forced before the "
       "search goes on (an empty line: none)")
      ("constraints", po::value(&constraints),
       "FILE with one line per input line: a JSON list of words or phrases its translation must contain, each as "
       "given, e.g. [\"ein Hund\", \"rot\"] (an empty line: none); beam search only")
      ("avoid", po::value(&avoid),
       "FILE with one line per input line: a JSON list of words or phrases its translation must not contain "
       "(an empty line: none)")
      ("json-input", po::bool_switch(&json_input),
       "input lines are JSON objects, as Sockeye's --json-input: {\"text\": SENTENCE} with optionally "
       "\"constraints\" and \"avoid\" (lists of phrases, as the lines of those files) and \"target_prefix\"")
      ("maxi-batch", po::value(&maxi_batch)->default_value(10)->notifier(at_least("maxi-batch", 1)),
       "batches read, length-sorted and translated before output is written and flushed")
      ("max-length", po::value(&call.max_length)->default_value(200)->notifier(at_least("max-length", 1)),
       "source tokens per line; longer lines are cut with a warning")
      ("detokenize", po::bool_switch(&detokenize),
       "join output tokens into readable text (raw-text models write raw text anyway)")
      ("replace-unk", po::bool_switch(&call.replace_unk),
       "replace each <unk> in the output with the source word it attends to most")
      ("unk-dictionary", po::value(&unk_dictionary),
       "with --replace-unk: lines 'source target' giving the replacement of a source word")
      ("shortlist", po::value(&shortlist)->multitoken(),
       "FILE FIRST BEST: compute the output layer only for the FIRST most frequent target tokens and the "
       "BEST translations of each source token in the lexical table FILE (rnnsearch shortlist writes "
       "MODEL/lex.s2t); faster, approximate")
      ("precision", po::value(&precision)->default_value("auto"),
       "of the vocabulary projection's products: fp32; bf16 with fp32 sums (CPUs with AVX512_BF16); int8 "
       "with int32 sums (CPUs with AVX2; VNNI keeps 8-bit weights, AVX2 alone 7-bit); elsewhere fp32. auto = int8, else bf16, else "
       "fp32, as the CPU allows; fp32 with --shortlist");
  ProgressOptions progress_options;
  options.add(decode_option_group(DecodeUse::translate))
      .add(model_option_group(decode, "sentences"))
      .add(output_option_group(decode))
      .add(progress_option_group(progress_options));
  po::variables_map vm;
  if (parse_options("translate", "--model DIR [--input FILE] [--output FILE] [options]", options, args, vm))
    return 0;
  const BeamOptions beam = decode_options(vm, DecodeUse::translate).beam;  // checked before a model is loaded
  OutputOptions oopts = output_options(decode);
  oopts.n_best = beam.alternatives > 0 ? beam.alternatives : beam.n_best;
  oopts.detokenize = detokenize;
  call.batch_size = decode.batch_size;
  call.piece_alignments = piece_alignments(decode);
  call.shows_attention = oopts.needs_alignment() || vm.count("heatmaps");
  UnkReplacement unk_replacement;
  if (vm.count("unk-dictionary")) {
    if (!call.replace_unk) throw Error("--unk-dictionary goes with --replace-unk");
    unk_replacement = UnkReplacement::load(unk_dictionary);
  }
  call.threads = set_threads(decode.threads);
  // The combination is refused whatever the CPU, before a CPU without bf16 or int8 would warn
  // that it computes in fp32 instead.
  if (!shortlist.empty() && (precision == "bf16" || precision == "int8"))
    throw Error("--precision " + precision + " and --shortlist do not combine (a shortlist's projection is fp32): give one");
  const Precision requested = precision_option(precision, PrecisionUse::decoding);
  call.precision = shortlist.empty() ? requested : Precision::fp32;
  TranslatorOptions topts = translator_options(beam, call);
  topts.unk_replacement = std::move(unk_replacement);
  std::vector<SteeringFile> steering_files;
  const auto steering_file = [&](const char* option, std::vector<std::string> LineSteering::*phrases,
                                 const std::string& path) {
    if (path.empty()) return;
    if (path == "-" && input == "-") throw Error(std::string("--") + option + " and --input cannot both be stdin");
    steering_files.push_back({option, phrases, path, nullptr, {}});
  };
  steering_file("target-prefix", nullptr, target_prefix);
  steering_file("constraints", &LineSteering::constraints, constraints);
  steering_file("avoid", &LineSteering::avoid, avoid);
  if (json_input && !steering_files.empty())
    throw Error("--json-input lines hold their own steering: not with --target-prefix, --constraints or --avoid");
  if (!constraints.empty()) check_constraints_allowed(topts.beam);
  const std::pair<int, int> shortlist_sizes = parse_shortlist_sizes(shortlist);

  const std::vector<Model> models = load_ensemble(decode.model_dirs);
  const Model& model = models.front();
  if (!shortlist.empty())
    topts.shortlist = std::make_shared<Shortlist>(read_lexical_table(shortlist[0], model.src_vocab, model.tgt_vocab),
                                                  static_cast<int>(model.tgt_vocab.size()), shortlist_sizes.first,
                                                  shortlist_sizes.second);
  oopts.tokenizer = model.tokenizer;
  Translator translator(model, ensemble_weights(models), topts);
  const OutputPrinter printer(oopts);
  // Rank 0 alone reads the input and writes the output (and the heatmaps).
  const bool root = mpi::is_root();
  std::optional<LineReader> reader;
  std::optional<OutputFile> out;
  if (root) {
    reader.emplace(input);
    std::vector<std::string> read{input};
    for (SteeringFile& file : steering_files) {
      file.reader = std::make_unique<LineReader>(file.path);
      read.push_back(file.path);
    }
    out.emplace(output, read);
  }
  const std::string input_name = input == "-" ? "stdin" : input;
  HeatmapCollector heatmap_records(vm.count("heatmaps") ? decode.heatmaps_limit : 0);
  ProgressMeter progress("rnnsearch translate", progress_options);
  // The total (for the ETA) of a file that can be read twice; a pipe's is unknown.
  progress.start("translating", "lines", progress_options.quiet || !root ? 0 : count_lines_of_file(input));
  const bool stdout_shares_the_terminal = output == "-" && ::isatty(STDOUT_FILENO) == 1;

  const auto start = std::chrono::steady_clock::now();
  size_t lines_done = 0, lines_read = 0;
  translate_chunks(
      translator, static_cast<size_t>(topts.batch_size) * maxi_batch,
      [&](size_t count, std::vector<std::string>& lines, std::vector<LineSteering>& steering) {
        const bool more = read_chunk(reader ? &*reader : nullptr, steering_files, count, lines);
        steering = json_input ? json_input_lines(lines, input_name, lines_read, topts.beam)
                              : steering_of(steering_files, lines_read, lines.size(), topts.beam);
        lines_read += lines.size();
        return more;
      },
      [&](std::vector<LineTranslation>& translations) {
        lines_done += translations.size();
        if (!root) return;
        if (stdout_shares_the_terminal) progress.clear();
        for (const LineTranslation& t : translations) {
          if (!t.warning.empty())
            progress.message("rnnsearch translate: " + located(input_name, t.line + 1, "warning: " + t.warning));
          printer.print(out->stream(), t);
          if (!t.hypotheses.empty() && !heatmap_records.full())
            heatmap_records.offer(OutputPrinter::record(t, t.hypotheses.front()));
        }
        out->flush();
        progress.add(translations.size());
      });
  progress.finish();
  if (!root) return 0;
  out->close();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!progress_options.quiet)
    std::cerr << "rnnsearch translate: " << lines_done << " lines in " << seconds << " s ("
            << (seconds > 0 ? lines_done / seconds : 0.0) << " lines/s), beam " << topts.beam.beam_size
            << ", batch " << topts.batch_size << ", "
            << (mpi::size() > 1 ? std::to_string(mpi::size()) + " MPI ranks × " : "") << topts.threads
            << " thread(s), projection in " << precision_name(topts.precision) << " (CPU " << describe(cpu_features())
            << "), " << model.weights_path
            << (models.size() > 1 ? " and " + std::to_string(models.size() - 1) + " more (ensemble)" : "") << "\n";
  if (vm.count("heatmaps"))
    std::cerr << "rnnsearch translate: heatmaps: " << heatmap_records.write(decode.heatmaps) << "\n";
  return 0;
}

}  // namespace rnnsearch::cli
