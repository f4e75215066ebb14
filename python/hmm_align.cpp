#include "hmm_align.h"

#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "call_arguments.h"
#include "results.h"
#include "rnnsearch/align/hmm_tables.h"
#include "rnnsearch/error.h"
#include "rnnsearch/util/cpu.h"

namespace py = pybind11;

namespace rnnsearch::python {

void def_hmm_align(py::module_& m) {
  const align::HmmOptions hmm;  // the defaults of `rnnsearch align --hmm`
  m.def("hmm_align",
        [](const py::object& sources, const py::object& targets, const std::string& method,
           const std::optional<std::string>& symmetrize, int stem, double prior, double null_probability,
           int ibm1_iterations, int hmm_iterations, bool agreement, int threads, int max_length,
           const std::optional<std::string>& save_tables, const std::optional<std::string>& tables) {
          if (tables && save_tables)
            throw Error("tables= aligns with saved tables, save_tables= saves what training learns: give one");
          align::HmmOptions options;
          options.stem = stem;
          options.prior = prior;
          options.null_probability = null_probability;
          options.ibm1_iterations = ibm1_iterations;
          options.hmm_iterations = hmm_iterations;
          options.agreement = agreement;
          options.max_length = max_length;
          align::check_hmm_options(options);
          const align::AlignMethod parsed_method = align::parse_align_method(method);
          std::optional<align::Symmetrization> parsed_symmetrize;
          if (symmetrize) parsed_symmetrize = align::parse_symmetrization(*symmetrize);
          align::resolved_symmetrization(true, parsed_method, parsed_symmetrize);  // refused before training
          const auto [src_lines, tgt_lines] = pair_lines(sources, targets);
          std::vector<align::AlignedPair> pairs;
          {
            py::gil_scoped_release release;
            options.threads = set_threads(threads);
            const align::HmmTables learnt = tables ? align::HmmTables(*tables) : align::HmmTables(src_lines, tgt_lines, options);
            if (save_tables) learnt.save(*save_tables);
            pairs = learnt.align(src_lines, tgt_lines, parsed_method, parsed_symmetrize, max_length, options.threads);
          }
          return aligned_links(pairs);
        },
        py::arg("sources"), py::arg("targets"), py::kw_only(), py::arg("method") = "argmax",
        py::arg("symmetrize") = py::none(), py::arg("stem") = hmm.stem, py::arg("prior") = hmm.prior,
        py::arg("null_probability") = hmm.null_probability, py::arg("ibm1_iterations") = hmm.ibm1_iterations,
        py::arg("hmm_iterations") = hmm.hmm_iterations, py::arg("agreement") = hmm.agreement, py::arg("threads") = 0,
        py::arg("max_length") = hmm.max_length, py::arg("save_tables") = py::none(), py::arg("tables") = py::none(),
        "Word alignments of a parallel corpus without a model, as `rnnsearch align --hmm`: IBM model 1 then "
        "an HMM aligner each way, trained by EM on these pairs; per pair the 0-based (source, target) word "
        "positions, sorted ([] and an InputWarning for a pair with an empty side, invalid UTF-8 or a side longer "
        "than max_length words). The keywords are align's "
        "options of the same names (agreement=False is --no-agreement; symmetrize None is grow-diag-final-and); "
        "threads 0 = OMP_NUM_THREADS when set, else all cores. save_tables=DIR also writes what training learnt "
        "(--save-hmm); tables=DIR aligns "
        "with tables saved earlier, without training (--hmm-tables; the training keywords are then unused).");
}

}  // namespace rnnsearch::python
