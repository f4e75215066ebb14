#include <omp.h>

#include <fstream>
#include <iostream>

#include "commands.h"
#include "rnnsearch/error.h"

namespace po = boost::program_options;

namespace rnnsearch::cli {

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
      if (!in) throw Error(located(path, 0, "cannot open config file"));
      po::store(po::parse_config_file(in, options), vm);  // values already given are kept
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw Error("rnnsearch " + command + ": " + e.what() + " (see rnnsearch " + command + " --help)");
  }
  return false;
}

int set_threads(int requested) {
  const int threads = requested > 0 ? requested : omp_get_num_procs();
  omp_set_num_threads(threads);
  return threads;
}

}  // namespace rnnsearch::cli
