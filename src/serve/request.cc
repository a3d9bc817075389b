// The request decoder of heed serve (see the header).
#include "heed/serve/request.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <type_traits>

#include "heed/util/nearest.h"

namespace heed::serve {

using json = nlohmann::json;

namespace {

// A field of the request object, checked: absent (or null) gives `fallback`, a wrong type is a
// 400 naming the field and what it must be.
template <class T>
T field(const json& j, const char* key, T fallback, const char* expected) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  bool typed = false;
  if constexpr (std::is_same_v<T, bool>)
    typed = it->is_boolean();
  else if constexpr (std::is_integral_v<T>)
    typed = it->is_number_integer();
  else
    typed = it->is_number();
  if (!typed) throw HttpError{400, std::string("\"") + key + "\" must be " + expected};
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {  // in range, then narrowed
    const bool fits =
        it->is_number_unsigned()
            ? it->template get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max())
            : it->template get<int64_t>() >= std::numeric_limits<T>::min() &&
                  it->template get<int64_t>() <= std::numeric_limits<T>::max();
    if (!fits) throw HttpError{400, std::string("\"") + key + "\" must be " + expected};
  }
  return it->get<T>();
}

// An integer field in [lo, hi]: a 400 "\"key\" must be an integer in lo..hi" otherwise.
int int_field(const json& j, const char* key, int fallback, int lo, int hi) {
  const std::string expected = "an integer in " + std::to_string(lo) + ".." + std::to_string(hi);
  const int v = field<int>(j, key, fallback, expected.c_str());
  if (v < lo || v > hi) throw HttpError{400, std::string("\"") + key + "\" must be " + expected};
  return v;
}

}  // namespace

nlohmann::json query_object(const Query& query) {
  json j = json::object();
  for (const auto& [k, v] : query)
    if (!j.contains(k)) j[k] = v;
  return j;
}

int query_int(const Query& query, const char* key, int fallback, int lo, int hi) {
  const auto it = query.find(key);
  if (it == query.end()) return fallback;
  const std::string& v = it->second;
  int out = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || end != v.data() + v.size() || out < lo || out > hi)
    throw HttpError{400, std::string(key) + " must be an integer in " + std::to_string(lo) + ".." +
                             std::to_string(hi) + ", got '" + v + "'"};
  return out;
}

json json_body(const std::string& body) {
  json j;
  try {
    j = json::parse(body);
  } catch (const json::exception& e) {
    throw HttpError{400, std::string("the body is not valid JSON: ") + e.what()};
  }
  return j;
}

nlohmann::json object_body(const std::string& body) {
  json j = json_body(body);
  if (!j.is_object()) throw HttpError{400, "the body must be a JSON object"};
  return j;
}

void check_keys(const json& j, const std::vector<std::string>& known, const std::string& what) {
  for (const auto& [key, value] : j.items()) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string message = "unknown ";
    message.append(what).append(" \"").append(key).append("\"");
    if (const std::string near = nearest_name(key, known); !near.empty())
      message.append(" (did you mean \"").append(near).append("\"?)");
    message += "; known: ";
    for (size_t i = 0; i < known.size(); ++i) message.append(i ? ", " : "").append(known[i]);
    throw HttpError{400, message};
  }
}

bool flag_field(const json& j, const char* key) {
  return field<bool>(j, key, false, "true or false");
}

std::vector<std::string> request_sentences(const json& j, const RequestLimits& limits) {
  const auto it = j.find("src");
  if (it == j.end()) throw HttpError{400, "\"src\" is required: a list of sentences"};
  std::vector<std::string> out;
  if (it->is_string()) {
    out.push_back(it->get<std::string>());
  } else if (it->is_array()) {
    if (static_cast<int64_t>(it->size()) > limits.max_sentences)
      throw HttpError{400, std::to_string(it->size()) + " sentences in one request (at most " +
                               std::to_string(limits.max_sentences) + ")"};
    for (const json& s : *it) {
      if (!s.is_string()) throw HttpError{400, "\"src\" must hold strings only"};
      out.push_back(s.get<std::string>());
    }
  } else {
    throw HttpError{400, "\"src\" must be a list of sentences"};
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].size() > limits.max_sentence_bytes)
      throw HttpError{400, "sentence " + std::to_string(i) + " has " +
                               std::to_string(out[i].size()) + " bytes (at most " +
                               std::to_string(limits.max_sentence_bytes) + ")"};
    if (out[i].find_first_of(std::string("\n\r\0", 3)) != std::string::npos)
      throw HttpError{400, "sentence " + std::to_string(i) + " holds a line break or NUL"};
  }
  return out;
}

TranslationOptions request_options(const json& j, const RequestLimits& limits,
                                   const ModelShape& m) {
  TranslationOptions t;
  t.beam_size = int_field(j, "beam", 1, 1, limits.max_beam);
  t.num_hypotheses = int_field(j, "n_best", 1, 1, t.beam_size);
  t.length_penalty = field<double>(j, "length_penalty", 1.0, "a number in [0, 10]");
  if (!(t.length_penalty >= 0 && t.length_penalty <= 10))
    throw HttpError{400, "\"length_penalty\" must be a number in [0, 10]"};
  // -1: the last layer, the mean over heads (what a model without layers and heads reports)
  if (field<int>(j, "layer", -1, "an integer") != -1 ||
      field<int>(j, "head", -1, "an integer") != -1) {
    if (m.heads == 0)
      throw HttpError{400,
                      "\"layer\" and \"head\" are a Transformer's; " + m.name + " is " + m.family};
    t.attention_layer = int_field(j, "layer", -1, -1, m.layers - 1);
    if (t.attention_layer >= 0 && t.attention_layer < m.first_layer)
      throw HttpError{400, "\"layer\": layers 0.." + std::to_string(m.first_layer - 1) + " of " +
                               m.name + " do not attend to the source"};
    t.attention_head = int_field(j, "head", -1, -1, m.heads - 1);
  }
  return t;
}

json onmt_request(const json& j) {
  if (!j.is_array()) throw HttpError{400, "the body must be a list of {\"src\": ..., \"id\": ...}"};
  json sel = json::object(), src = json::array();
  for (const json& item : j) {
    if (!item.is_object() || !item.contains("src") || !item["src"].is_string())
      throw HttpError{400, "each item must be an object with a \"src\" string"};
    check_keys(item, {"src", "id"});
    if (item.contains("id")) {
      const json id = item["id"].is_string() ? item["id"] : json(item["id"].dump());
      if (sel.contains("model") && sel["model"] != id)
        throw HttpError{400, "one model per request: the items name different ids"};
      sel["model"] = id;
    }
    src.push_back(item["src"]);
  }
  sel["src"] = std::move(src);
  return sel;
}

}  // namespace heed::serve
