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
  SteeringLists lists;  // the shapes read here; the lengths and the checks are the library's
  if (!target_prefix.is_none()) {
    lists.target_prefix.emplace();
    size_t k = 0;
    for (py::handle item : items_of(target_prefix, "target_prefix", "one prefix (str) per sentence"))
      lists.target_prefix->push_back(text_of(item, "target_prefix[" + std::to_string(k++) + "]"));
  }
  for (const auto& [given, name] : {std::pair{&constraints, "constraints"}, std::pair{&avoid, "avoid"}}) {
    if (given->is_none()) continue;
    const std::string wants = "one list of phrases per sentence, e.g. [[\"Hund\"], []]";
    auto& list = (given == &constraints ? lists.constraints : lists.avoid).emplace();
    for (py::handle item : items_of(*given, name, wants)) {
      const std::string where = std::string(name) + "[" + std::to_string(list.size()) + "]";
      if (a_text(item) || !py::isinstance<py::sequence>(item))
        throw py::type_error(where + " must be a list of phrases (str), not " + type_name(item) + " (" + name +
                             " holds " + wants + ")");
      std::vector<std::string>& phrases = list.emplace_back();
      for (py::handle phrase : item) phrases.push_back(text_of(phrase, where + "[" + std::to_string(phrases.size()) + "]"));
    }
  }
  try {
    return sentence_steering(sentences, std::move(lists), beam, "sentences");
  } catch (const SteeringRefused& e) {  // (a list of another length stays rnnsearch.Error, as files of another length)
    throw py::value_error(e.what());
  }
}

}  // namespace rnnsearch::python
