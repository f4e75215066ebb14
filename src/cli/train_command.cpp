#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "commands.h"
#include "rnnsearch/train/train_option_values.h"
#include "rnnsearch/train/trainer.h"
#include "rnnsearch/util/profile.h"

namespace po = boost::program_options;

namespace rnnsearch::cli {
namespace {

// The table's options as Boost options of the value type each is parsed as, with its help,
// default and range check.
template <class T>
po::typed_value<T>* value_of(const TrainOptionSpec& spec) {
  po::typed_value<T>* value = po::value<T>();
  if (spec.default_text) value->default_value(std::get<T>(spec.default_value()), spec.default_text);
  if (spec.required) value->required();
  if (spec.check_kind != TrainCheck::none) value->notifier([&spec](const T& v) { spec.check(v); });
  return value;
}

po::value_semantic* option_value(const TrainOptionSpec& spec) {
  switch (spec.type) {
    case TrainOptionType::flag: return po::bool_switch();
    case TrainOptionType::integer: return value_of<int>(spec);
    case TrainOptionType::long_integer: return value_of<long>(spec);
    case TrainOptionType::unsigned_integer: return value_of<unsigned long>(spec);
    case TrainOptionType::real: return value_of<double>(spec);
    case TrainOptionType::text: return value_of<std::string>(spec);
  }
  throw std::logic_error("option_value: no such type");
}

// What vm holds of the table's options, as TrainOptionValues (a flag only when set).
TrainOptionValue value_in(const TrainOptionSpec& spec, const po::variable_value& value) {
  switch (spec.type) {
    case TrainOptionType::flag: return value.as<bool>();
    case TrainOptionType::integer: return value.as<int>();
    case TrainOptionType::long_integer: return value.as<long>();
    case TrainOptionType::unsigned_integer: return value.as<unsigned long>();
    case TrainOptionType::real: return value.as<double>();
    case TrainOptionType::text: return value.as<std::string>();
  }
  throw std::logic_error("value_in: no such type");
}

// Training's buffers of 1 MB and more (workspaces, logits, weights) get their own mappings,
// returned to the system when freed. glibc's default raises that threshold to the size of each
// large buffer freed, so once the workspaces had grown for a longer batch, later ones came from
// the heap and the old ones left holes in it that stayed resident, a part of a training run's
// peak memory; the speed is unchanged, as training maps few buffers in all. Not for decoding:
// oneDNN's int8 product allocates and frees a buffer just over 1 MB at every decoder step,
// which then got a fresh mapping, page faults and all, each time, slowing a lone sentence in
// the server. Both measured: docs/benchmarks.md, Memory.
void return_large_buffers_to_the_system() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
}

}  // namespace

std::optional<TrainOptions> parse_train_options(const Args& args) {
  po::options_description options("train options");
  for (const TrainOptionSpec& spec : train_option_specs()) {
    const std::string name = spec.short_name ? std::string(spec.name) + "," + spec.short_name : spec.name;
    options.add_options()(name.c_str(), option_value(spec), spec.help);
  }
  ProgressOptions progress;
  options.add(progress_option_group(progress));
  po::variables_map vm;
  if (parse_options("train", "--train-src F --train-tgt F --valid-src F --valid-tgt F --model DIR [options]",
                    options, args, vm))
    return std::nullopt;
  TrainOptionValues values;
  for (const TrainOptionSpec& spec : train_option_specs())
    if (vm.count(spec.name) && !(spec.type == TrainOptionType::flag && vm[spec.name].defaulted()))
      values.set(spec.name, value_in(spec, vm[spec.name]), !vm[spec.name].defaulted());
  TrainOptions o = read_train_options(values);
  o.progress = progress;
  return o;
}

int train_command(const Args& args) {
  std::optional<TrainOptions> o = parse_train_options(args);
  if (!o) return 0;  // --help
  o->threads = set_threads(o->threads);
  return_large_buffers_to_the_system();
  profile::enable(o->profile);
  return train(*o);
}

}  // namespace rnnsearch::cli
