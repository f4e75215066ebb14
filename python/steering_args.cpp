#include "steering_args.h"

#include <string>

#include "rnnsearch/error.h"

namespace py = pybind11;

namespace rnnsearch::python {
namespace {

std::string type_name(const py::handle& value) { return py::str(py::type::handle_of(value).attr("__name__")); }

// A str (as UTF-8, lone surrogates kept as the bytes of their code points, so that they are
// refused as translate refuses invalid UTF-8) or bytes; else a TypeError naming `what`.
std::string text_of(const py::handle& item, const std::string& what) {
  if (PyBytes_Check(item.ptr()))
    return std::string(PyBytes_AS_STRING(item.ptr()), static_cast<size_t>(PyBytes_GET_SIZE(item.ptr())));
  if (!PyUnicode_Check(item.ptr())) throw py::type_error(what + " must be str or bytes, not " + type_name(item));
  const auto bytes = py::reinterpret_steal<py::object>(PyUnicode_AsEncodedString(item.ptr(), "utf-8", "surrogatepass"));
  if (!bytes) throw py::error_already_set();
  return std::string(PyBytes_AS_STRING(bytes.ptr()), static_cast<size_t>(PyBytes_GET_SIZE(bytes.ptr())));
}

bool a_text(const py::handle& value) { return py::isinstance<py::str>(value) || py::isinstance<py::bytes>(value); }

// The items of a per-sentence argument: a list (or another sequence) that is not a string.
std::vector<py::handle> items_of(const py::object& value, const std::string& name, const std::string& wants) {
  if (a_text(value) || !py::isinstance<py::sequence>(value))
    throw py::type_error(name + " must be a list with " + wants + ", not " + type_name(value));
  std::vector<py::handle> items;
  for (py::handle item : value) items.push_back(item);
  return items;
}

}  // namespace

std::vector<LineSteering> steering_arguments(size_t sentences, const py::object& target_prefix,
                                             const py::object& constraints, const py::object& avoid,
                                             const BeamOptions& beam) {
  std::vector<LineSteering> steering;
  const auto per_sentence = [&](const py::object& value, const std::string& name, const std::string& wants) {
    std::vector<py::handle> items = items_of(value, name, wants);
    if (items.size() != sentences)
      throw Error("sentences and " + name + " differ in length: " + std::to_string(sentences) + " and " +
                  std::to_string(items.size()) + " sentences");
    steering.resize(sentences);
    return items;
  };
  if (!target_prefix.is_none()) {
    const std::vector<py::handle> items = per_sentence(target_prefix, "target_prefix", "one prefix (str) per sentence");
    for (size_t k = 0; k < sentences; ++k) steering[k].prefix = text_of(items[k], "target_prefix[" + std::to_string(k) + "]");
  }
  for (const auto& [given, name] : {std::pair{&constraints, "constraints"}, std::pair{&avoid, "avoid"}}) {
    if (given->is_none()) continue;
    const std::string wants = "one list of phrases per sentence, e.g. [[\"Hund\"], []]";
    const std::vector<py::handle> items = per_sentence(*given, name, wants);
    for (size_t k = 0; k < sentences; ++k) {
      const std::string where = std::string(name) + "[" + std::to_string(k) + "]";
      if (a_text(items[k]) || !py::isinstance<py::sequence>(items[k]))
        throw py::type_error(where + " must be a list of phrases (str), not " + type_name(items[k]) + " (" + name +
                             " holds " + wants + ")");
      std::vector<std::string>& phrases = given == &constraints ? steering[k].constraints : steering[k].avoid;
      size_t j = 0;
      for (py::handle phrase : items[k]) phrases.push_back(text_of(phrase, where + "[" + std::to_string(j++) + "]"));
    }
  }
  for (size_t k = 0; k < steering.size(); ++k) try {
      check_steering(steering[k]);
      if (!steering[k].constraints.empty()) check_constraints_allowed(beam);
    } catch (const Error& e) {
      throw py::value_error("sentence " + std::to_string(k) + ": " + e.what());
    }
  return steering;
}

}  // namespace rnnsearch::python
