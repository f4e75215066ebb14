#pragma once
// Translator.translate's target_prefix, constraints and avoid (docs/python.md): Python objects
// → the lists of decode/steering.h's SteeringLists, which sentence_steering makes into one
// checked LineSteering per sentence, as the server's fields. What is Python's is here: a wrong
// shape is a TypeError saying what the argument wants. The library's refusals: a bad phrase
// (invalid UTF-8, a constraint also to avoid, constraints with sampling) a ValueError naming
// the sentence's index ("sentences[1]: ..."), and a count other than the sentences'
// rnnsearch.Error, as the command line's files of another length.
#include <pybind11/pybind11.h>

#include <vector>

#include "rnnsearch/decode/beam_search.h"
#include "rnnsearch/decode/steering.h"

namespace rnnsearch::python {

// Empty when all three are None.
std::vector<LineSteering> steering_arguments(size_t sentences, const pybind11::object& target_prefix,
                                             const pybind11::object& constraints, const pybind11::object& avoid,
                                             const BeamOptions& beam);

}  // namespace rnnsearch::python
