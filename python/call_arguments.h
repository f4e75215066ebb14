#pragma once
// The arguments of the module's calls (docs/python.md) as the library takes them: lists of
// sentences, model directories and the decoding keywords, refused with TypeError (a wrong type)
// or rnnsearch.Error (a bad value, in the command line's words).
#include <pybind11/pybind11.h>

#include <string>
#include <utility>
#include <vector>

#include "rnnsearch/decode/decode_options.h"

namespace rnnsearch::python {

// A list of sentences: each a str or bytes. A str is encoded to UTF-8 keeping lone surrogates
// (as the invalid bytes of their code points), so a str that is not valid Unicode is refused
// as `rnnsearch translate` refuses a line that is not UTF-8: empty output and a warning.
std::vector<std::string> text_lines(const pybind11::handle& items, const char* what);

// The lines of sources and targets, as many of each (else rnnsearch.Error).
std::pair<std::vector<std::string>, std::vector<std::string>> pair_lines(const pybind11::object& sources,
                                                                         const pybind11::object& targets);

// A model directory (str or os.PathLike) or a list of them (an ensemble).
std::vector<std::string> model_dirs(const pybind11::object& model);

// The decoding keywords of a call (decode/decode_options.h: the command line's options,
// spelt beam_size for --beam-size), validated as the command line validates them; None is
// "not given".
DecodeOptions decode_keywords(const pybind11::kwargs& keywords, DecodeUse use);

// The docstring of a method taking the decoding keywords of `use`: `intro`, then one line per
// keyword with its default and help, from the table.
std::string decode_keywords_doc(const std::string& intro, DecodeUse use);

}  // namespace rnnsearch::python
