// rnnsearch average: checkpoint averaging, the element-wise mean of several weight files of
// one model (e.g. model.npz of a run at different updates, or model.best.npz of runs with
// different seeds from one --init-from), written as a new weight file.
#include <iostream>

#include "commands.h"
#include "rnnsearch/model/model_io.h"

namespace po = boost::program_options;

namespace rnnsearch::cli {

int average_command(const Args& args) {
  std::vector<std::string> inputs;
  std::string output;
  po::options_description options("average options");
  options.add_options()
      ("input,i", po::value(&inputs)->multitoken()->required(), "weight files (.npz) of the same model")
      ("output,o", po::value(&output)->required(), "the averaged weights (.npz)");
  po::variables_map vm;
  if (parse_options("average", "--input A.npz B.npz ... --output OUT.npz", options, args, vm)) return 0;
  average_weight_files(inputs, output);
  std::cerr << "rnnsearch average: " << inputs.size() << " files averaged into " << output << "\n";
  return 0;
}

}  // namespace rnnsearch::cli
