// Reading model directories (see the header).
#include "heed/models/model_files.h"

#include <filesystem>

#include "heed/io/files.h"
#include "heed/io/model_dir.h"
#include "heed/io/safetensors.h"
#include "heed/models/registry.h"
#include "heed/util/error.h"

namespace fs = std::filesystem;

namespace heed {

Segmenter load_segmenter(Units u, const std::string& spm_file) {
  if (u != Units::Spm) return Segmenter(u);
  return Segmenter::from_spm(read_file(spm_file), spm_file);
}

Segmenter classifier_segmenter(Units u) {
  check(u != Units::Spm, "classify: --units must be word or char");
  return Segmenter(u);
}

namespace {
// A config.json against the typed config read from it: a field the family holds as an integer
// must be a JSON integer there (nlohmann-json reads "ff": 32.5 as 32, a model other than the
// one written). Objects are compared member by member.
void check_integer_fields(const nlohmann::json& given, const nlohmann::json& typed,
                          const std::string& file, const std::string& key = "") {
  if (typed.is_object() && given.is_object()) {
    for (const auto& [k, v] : typed.items())
      if (given.contains(k)) check_integer_fields(given.at(k), v, file, k);
    return;
  }
  check(!typed.is_number_integer() || !given.is_number_float(), file, ": \"", key, "\" is ",
        given.dump(), ", not an integer");
}

// The names and shapes model.safetensors holds, read from its header alone.
ExpectedShapes weights_header(const std::string& dir) {
  ExpectedShapes e;
  e.file = (fs::path(dir) / "model.safetensors").string();
  for (const auto& [name, entry] : read_safetensors_header(e.file).tensors)
    e.shapes.emplace(name, entry.shape);
  return e;
}
}  // namespace

std::unique_ptr<ModelFiles> load_model(const std::string& dir, const DecodeOverrides& o) {
  auto m = std::make_unique<ModelFiles>();
  nlohmann::json j = read_config(dir);
  if (o.wait_k > 0) {
    check(j.value("wait_k", int64_t{0}) > 0, dir, ": --wait-k ", o.wait_k,
          " needs a wait-k model (trained with --wait-k); this one was not");
    j["wait_k"] = o.wait_k;
  }
  if (o.hard_marginal) {
    check(j.value("attention", std::string()) == "hard" &&
              j.value("hard_train", std::string()) == "exact",
          dir,
          ": --hard-marginal needs a model with hard attention trained with --hard-train "
          "exact; this one was not");
    j["hard_marginal"] = true;
  }
  if (o.ctc_weight >= 0.f) {
    check(j.value("ctc_weight", 0.0) > 0.0, dir, ": --ctc-weight ", o.ctc_weight,
          " needs a model trained with --ctc-weight (a CTC head beside its attention); this one "
          "was not");
    check(o.ctc_weight <= 1.f, "--ctc-weight ", o.ctc_weight, ": a weight in [0, 1]");
    j["ctc_decode_weight"] = o.ctc_weight;
  }
  if (o.ctc_lookahead >= 0) {
    const std::string attention = j.value("attention", std::string());
    check(j.value("ctc_weight", 0.0) > 0.0 && (attention == "monotonic" || attention == "mocha"),
          dir,
          ": --ctc-lookahead needs a joint CTC-attention model (trained with --ctc-weight) "
          "whose attention stops (--attention monotonic or mocha); this one is ",
          j.value("ctc_weight", 0.0) > 0.0 ? attention + " attention" : "not joint");
    j["ctc_decode_lookahead"] = o.ctc_lookahead;
  }
  m->config = j;
  const ModelFamily& family = config_family(j, dir, ModelRole::Seq2Seq);
  m->family = family.name;
  int64_t src_vocab = 0, tgt_vocab = 0;
  try {
    src_vocab = j.at("src_vocab").get<int64_t>();
    tgt_vocab = j.at("tgt_vocab").get<int64_t>();
    const fs::path d(dir);
    m->audio = j.at("src_units").get<std::string>() == "audio";
    if (!m->audio)
      m->src_seg = load_segmenter(parse_units(j.at("src_units").get<std::string>()),
                                  (d / "src.spm").string());
    m->tgt_seg =
        load_segmenter(parse_units(j.at("tgt_units").get<std::string>()), (d / "tgt.spm").string());
    m->g2p = j.at("g2p").get<bool>();
    m->src_eos = j.value("src_eos", false);
  } catch (const nlohmann::json::exception& e) {
    fail(dir, "/config.json: ", e.what());
  }
  if (!m->audio) m->src_vocab = Vocab::load((fs::path(dir) / "src.vocab").string());
  m->tgt_vocab = Vocab::load((fs::path(dir) / "tgt.vocab").string());
  check((m->audio ? src_vocab == 0 : m->src_vocab.size() == src_vocab) &&
            m->tgt_vocab.size() == tgt_vocab,
        dir, ": the vocabularies do not match config.json");
  const Seq2SeqConfig config = family.config_from_json(j);
  check_integer_fields(j, to_json(config), (fs::path(dir) / "config.json").string());
  // the model built only as far as the weights file's header agrees with it (names, shapes)
  const ExpectedShapes expected = weights_header(dir);
  try {  // a size no machine holds, or none at all, names the file it came from
    m->model = family.make(config, Scope::for_loading(m->params, &expected));
  } catch (const Error& e) {
    fail(dir, "/config.json: ", e.what());
  }
  load_weights((fs::path(dir) / "model.safetensors").string(), m->params);
  return m;
}

namespace {
void check_same_text_format(const ModelFiles& first, const std::string& first_dir,
                            const ModelFiles& m, const std::string& dir) {
  auto differ = [&](const std::string& what) {
    fail(dir, " and ", first_dir, ": ", what,
         " differ; an ensemble needs models trained with the same vocabularies");
  };
  for (const char* side : {"src", "tgt"}) {
    const std::string key = std::string(side) + "_units";
    if (m.config.at(key) != first.config.at(key)) differ(key);
  }
  if (!(m.src_seg == first.src_seg)) differ("their SentencePiece models (src.spm)");
  if (!(m.tgt_seg == first.tgt_seg)) differ("their SentencePiece models (tgt.spm)");
  if (m.src_vocab.serialize() != first.src_vocab.serialize()) differ("their source vocabularies");
  if (m.tgt_vocab.serialize() != first.tgt_vocab.serialize()) differ("their target vocabularies");
  if (m.g2p != first.g2p) differ("their tasks (G2P or translation)");
}
}  // namespace

std::vector<std::unique_ptr<ModelFiles>> load_models(const std::vector<std::string>& dirs,
                                                     const DecodeOverrides& o) {
  check(!dirs.empty(), "no model directory given");
  std::vector<std::unique_ptr<ModelFiles>> models;
  models.reserve(dirs.size());
  for (const auto& dir : dirs) {
    models.push_back(load_model(dir, o));
    if (models.size() > 1) check_same_text_format(*models[0], dirs[0], *models.back(), dir);
  }
  return models;
}

std::string model_input(const ModelFiles& m, const std::string& line) {
  const size_t sep = line.find("  ");
  return m.g2p && sep != std::string::npos ? line.substr(0, sep) : line;
}

std::unique_ptr<ClassifierFiles> load_classifier(const std::string& dir) {
  auto m = std::make_unique<ClassifierFiles>();
  m->config = read_config(dir);
  config_family(m->config, dir, ModelRole::Classifier);
  ClassifierConfig c = classifier_config(m->config, dir);
  check_integer_fields(m->config, c.to_json(), (fs::path(dir) / "config.json").string());
  try {
    m->seg = classifier_segmenter(parse_units(m->config.at("units").get<std::string>()));
  } catch (const nlohmann::json::exception& e) {
    fail(dir, "/config.json: ", e.what());
  }
  m->vocab = Vocab::load((fs::path(dir) / "src.vocab").string());
  check(m->vocab.size() == c.vocab(), dir, ": the vocabulary does not match config.json");
  const ExpectedShapes expected = weights_header(dir);
  try {
    m->model = make_classifier(c, Scope::for_loading(m->params, &expected));
  } catch (const Error& e) {
    fail(dir, "/config.json: ", e.what());
  }
  load_weights((fs::path(dir) / "model.safetensors").string(), m->params);
  return m;
}

}  // namespace heed
