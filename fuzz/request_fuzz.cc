// Fuzz target: a heed serve request body (serve/request.h), as /translate, /classify and
// OpenNMT-py's /translator/translate decode it: JSON, then every field checked into the
// sentences, the search options (for a Transformer of 2 layers x 4 heads whose layer 0 does not
// attend) and the flags, each answer a 4xx HttpError or a request the Translator accepts.
#include <cstdlib>

#include "heed/serve/request.h"
#include "target.h"

HEED_FUZZ_TARGET(request) {
  using namespace heed::serve;
  const std::string body(reinterpret_cast<const char*>(data), size);
  const RequestLimits limits{.max_sentences = 64, .max_sentence_bytes = 256, .max_beam = 16};
  const ModelShape model{
      .name = "tf", .family = "transformer", .layers = 2, .heads = 4, .first_layer = 1};
  heed::fuzz::expect_error_or_ok([&] {
    const nlohmann::json j = json_body(body);
    const nlohmann::json request = j.is_array() ? onmt_request(j) : object_body(body);
    const std::vector<std::string> src = request_sentences(request, limits);
    heed::TranslationOptions o = request_options(request, limits, model);
    o.return_attention = flag_field(request, "attention") || flag_field(request, "svg");
    // what the server hands the Translator: within the library's own bounds (any other Error
    // here is a check the decoder missed)
    try {
      heed::check_translation_options(o);
    } catch (const heed::Error&) {
      std::abort();
    }
    if (src.size() > 64) std::abort();
  });
}
