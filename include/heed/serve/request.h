// The request decoder of heed serve: a body's bytes to JSON, and its fields checked one by one
// into what the routes run (the sentences, the search options, the flags) before any model sees
// them. Anything a client can get wrong is an HttpError with a 4xx status naming the field and
// what it must be; fuzz/request_fuzz.cc feeds it arbitrary bytes.
// Leaves out: choosing the model (the server knows its models) and answering (server.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "heed/decode/translator.h"
#include "heed/util/error.h"

namespace heed::serve {

// A request the server refuses: its status and the message of {"error": ...} (what()).
class HttpError : public Error {
 public:
  HttpError(int status, const std::string& message) : Error(message), status(status) {}
  int status;
};

// What a request may ask for, at most (ServeOptions' limits).
struct RequestLimits {
  int64_t max_sentences = 256;
  size_t max_sentence_bytes = 4096;
  int max_beam = 16;
};

// What a request may ask of a model's attention: a Transformer's decoder layers and heads.
struct ModelShape {
  std::string name, family;
  int layers = 0, heads = 0;  // 0: no layer or head to choose
  int first_layer = 0;        // the lowest layer with cross-attention
};

// A request's query string, as cpp-httplib parses it (a key may repeat; the first counts).
using Query = std::multimap<std::string, std::string>;
// The query as a JSON object of strings, for check_keys.
nlohmann::json query_object(const Query& query);
// The integer of query parameter `key` in lo..hi, `fallback` when absent, or a 400 naming it.
int query_int(const Query& query, const char* key, int fallback, int lo, int hi);

// The body parsed as JSON (any value: OpenNMT-py's route takes a list), or a 400.
nlohmann::json json_body(const std::string& body);
// The body as a JSON object (/translate, /classify), or a 400.
nlohmann::json object_body(const std::string& body);
// A 400 for the first key of the object j that is not among `known` ("beam_size": the request
// would otherwise decode as if it had not asked), naming it, the nearest known key and them all.
void check_keys(const nlohmann::json& j, const std::vector<std::string>& known,
                const std::string& what = "key");
// A true/false field ("attention", "svg"); absent or null: false.
bool flag_field(const nlohmann::json& j, const char* key);
// The sentences of "src" (a string or a list of them), checked against the limits.
std::vector<std::string> request_sentences(const nlohmann::json& j, const RequestLimits& limits);
// The search options of a request: "beam", "n_best", "length_penalty", and "layer"/"head" of a
// Transformer's attention (the caller sets return_attention).
TranslationOptions request_options(const nlohmann::json& j, const RequestLimits& limits,
                                   const ModelShape& model);
// OpenNMT-py's request, [{"src": "...", "id": MODEL}, ...], as a /translate object
// {"src": [...], "model": ...} (an integer id read as its digits).
nlohmann::json onmt_request(const nlohmann::json& list);

}  // namespace heed::serve
