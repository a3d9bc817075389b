// heed's Python module (`heed._heed`, wrapped by python/heed/__init__.py): the inference API
// (decode/translator.h, decode/classifier.h) and the command line's training, bound with
// pybind11. Options are keyword arguments parsed here, once, into the library's typed structs;
// compute runs with the GIL released; results come back as small objects whose attention
// matrices are float32 numpy arrays over heed's own buffers.
// Leaves out: iteration over files and iterables, TOML writing (both in __init__.py), models.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "heed/data/text.h"
#include "heed/decode/classifier.h"
#include "heed/decode/recognizer.h"
#include "heed/decode/translator.h"
#include "heed/io/audio.h"
#include "heed/io/files.h"
#include "heed/kernels/parallel.h"
#include "heed/train/train_options.h"
#include "heed/util/error.h"
#include "heed/version.h"

namespace py = pybind11;

// Designated initializers leave the other members at their defaults on purpose (GCC 12 warns
// about each one under -Wextra).
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace heed::python {
namespace {

// rows x cols floats in one buffer that the numpy array views and, through its capsule, owns
py::array_t<float> matrix(const std::vector<std::vector<float>>& rows) {
  const size_t cols = rows.empty() ? 0 : rows.front().size();
  auto* data = new std::vector<float>();
  data->reserve(rows.size() * cols);
  for (const auto& r : rows) {
    check(r.size() == cols, "attention rows of different lengths");  // never: one source
    data->insert(data->end(), r.begin(), r.end());
  }
  py::capsule owner(data, [](void* p) { delete static_cast<std::vector<float>*>(p); });
  const auto n = static_cast<py::ssize_t>(rows.size()), m = static_cast<py::ssize_t>(cols);
  const auto f = static_cast<py::ssize_t>(sizeof(float));
  return py::array_t<float>(std::vector<py::ssize_t>{n, m}, std::vector<py::ssize_t>{m * f, f},
                            data->data(), owner);
}

py::array_t<float> vector(std::vector<float>&& v) {
  auto* data = new std::vector<float>(std::move(v));
  py::capsule owner(data, [](void* p) { delete static_cast<std::vector<float>*>(p); });
  return py::array_t<float>(std::vector<py::ssize_t>{static_cast<py::ssize_t>(data->size())},
                            std::vector<py::ssize_t>{static_cast<py::ssize_t>(sizeof(float))},
                            data->data(), owner);
}

// The sentences as heed reads lines: valid UTF-8 (Python's str already is), no NUL, no line
// break inside; errors name the argument and the 1-based position.
std::vector<std::string> lines(const std::vector<std::string>& in, const char* what) {
  std::vector<std::string> out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    check(in[i].find_first_of("\n\r") == std::string::npos, what, "[", i,
          "]: a line break inside a sentence (one sentence per item)");
    out.push_back(checked_line(in[i], what, i + 1));
  }
  return out;
}

// A missing model directory is Python's FileNotFoundError before any loading starts.
void require_directories(const std::vector<std::string>& dirs) {
  check(!dirs.empty(), "no model directory given");
  for (const auto& d : dirs)
    if (!std::filesystem::exists(d)) throw FileError(d, ENOENT, "no such model directory");
}

// What Translator::translate_batch returns for one source.
struct PyTranslation {
  std::vector<std::string> source;                   // the units the model read
  bool truncated = false;                            // cut at max_input_length
  std::vector<std::vector<std::string>> hypotheses;  // output units, best first
  std::vector<std::string> texts;                    // the units joined as the target side joins
  std::vector<double> scores;                        // log p / (len + 1)^alpha (return_scores)
  std::vector<double> log_probs;                     // log p(hypothesis EOS | source)
  std::vector<py::array_t<float>> attention;         // [rows, len(source)] (return_attention)
};

struct PyScore {
  std::vector<std::string> source, tokens;
  double log_prob = 0;                // log p(tokens EOS | source)
  std::vector<float> log_probs;       // per token, EOS last
  py::object attention = py::none();  // [len(tokens) + 1, len(source)] (return_attention)
};

struct PyPrediction {
  std::vector<std::string> tokens;
  int32_t label = 0;
  py::array_t<float> probabilities;   // [C]
  py::object attention = py::none();  // [r, len(tokens)] (return_attention, self-attention)
  double redundancy = 0;              // ||A A^T - I||_F (return_attention)
};

class PyTranslator {
 public:
  PyTranslator(const std::vector<std::string>& dirs, int threads, const std::string& compute_type,
               int64_t wait_k, bool hard_marginal) {
    require_directories(dirs);
    check(threads >= 0, "threads must be >= 0 (0: all cores), got ", threads);
    check(wait_k >= 0, "wait_k must be >= 0 (0: the model's own), got ", wait_k);
    TranslatorOptions o;
    o.threads = threads;
    o.compute_type = parse_name<ComputeType>(compute_type, "compute_type");
    o.load = {.wait_k = wait_k, .hard_marginal = hard_marginal};
    py::gil_scoped_release release;
    translator_ = std::make_unique<Translator>(dirs, o);
  }

  // sources: sentences (a list of str), or token lists (a list of lists of str: the model's
  // source units, as CTranslate2's translate_batch takes them)
  std::vector<PyTranslation> translate_batch(const py::sequence& sources,
                                             const TranslationOptions& o, bool scores) const {
    const bool units = py::len(sources) > 0 && !py::isinstance<py::str>(sources[0]);
    std::vector<std::string> in;
    std::vector<std::vector<std::string>> in_units;
    try {
      if (units)
        in_units = sources.cast<std::vector<std::vector<std::string>>>();
      else
        in = lines(sources.cast<std::vector<std::string>>(), "sources");
    } catch (const py::cast_error&) {
      throw py::type_error(
          "translate_batch: sources must be a list of sentences (str) or a list of token lists "
          "(lists of str), not a mix");
    }
    std::vector<TranslationResult> results;
    {
      py::gil_scoped_release release;
      results = units ? translator_->translate_units(in_units, o) : translator_->translate(in, o);
    }
    std::vector<PyTranslation> out(results.size());
    for (size_t i = 0; i < results.size(); ++i) {
      TranslationResult& r = results[i];
      PyTranslation& t = out[i];
      t.source = std::move(r.source);
      t.truncated = r.truncated;
      for (TranslationHypothesis& h : r.hypotheses) {
        t.hypotheses.push_back(std::move(h.tokens));
        t.texts.push_back(std::move(h.text));
        t.log_probs.push_back(h.log_prob);
        if (scores) t.scores.push_back(h.score);
        if (o.return_attention) t.attention.push_back(matrix(h.attention));
      }
    }
    return out;
  }

  std::vector<PyScore> score_batch(const std::vector<std::string>& sources,
                                   const std::vector<std::string>& targets,
                                   const TranslationOptions& o) const {
    check(sources.size() == targets.size(), "score_batch: ", sources.size(), " sources but ",
          targets.size(), " targets");
    const std::vector<std::string> src = lines(sources, "sources"), tgt = lines(targets, "targets");
    std::vector<ScoringResult> results;
    {
      py::gil_scoped_release release;
      results = translator_->score(src, tgt, o);
    }
    std::vector<PyScore> out(results.size());
    for (size_t i = 0; i < results.size(); ++i) {
      out[i].source = std::move(results[i].source);
      out[i].tokens = std::move(results[i].tokens);
      out[i].log_prob = results[i].log_prob;
      out[i].log_probs = std::move(results[i].token_log_probs);
      if (o.return_attention) out[i].attention = matrix(results[i].attention);
    }
    return out;
  }

  // The command line's translation of a file: output lines as `heed translate` writes them,
  // the file replaced whole once every line is written.
  py::dict translate_file(const std::string& input, const std::string& output,
                          const TranslationOptions& o) const {
    size_t sentences = 0, tokens = 0;
    double seconds = 0;
    {
      py::gil_scoped_release release;
      const auto t0 = std::chrono::steady_clock::now();
      const std::vector<std::string> in = read_lines(input);
      AtomicFile file(output);
      translator_->translate_each(in, o, [&](size_t i, TranslationResult&& r) {
        for (const TranslationHypothesis& h : r.hypotheses) {
          file.write(translator_->nbest_line(i, r, h, o.num_hypotheses) + "\n");
          tokens += h.tokens.size();
        }
        ++sentences;
      });
      file.commit();
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    py::dict stats;
    stats["sentences"] = sentences;
    stats["tokens"] = tokens;
    stats["seconds"] = seconds;
    return stats;
  }

 private:
  std::unique_ptr<Translator> translator_;
};

class PyClassifier {
 public:
  PyClassifier(const std::vector<std::string>& dirs, int threads) {
    require_directories(dirs);
    check(threads >= 0, "threads must be >= 0 (0: all cores), got ", threads);
    if (threads > 0) set_threads(threads);
    py::gil_scoped_release release;
    classifier_ = std::make_unique<Classifier>(dirs);
  }

  std::vector<PyPrediction> classify(const std::vector<std::string>& sentences, bool attention,
                                     int64_t batch_size) const {
    check(batch_size >= 1, "batch_size must be >= 1, got ", batch_size);
    const std::vector<std::string> in = lines(sentences, "sentences");
    std::vector<Prediction> preds;
    {
      py::gil_scoped_release release;
      preds = classifier_->classify(
          in, {.batch = batch_size, .attention = attention, .name = "sentences"});
    }
    std::vector<PyPrediction> out(preds.size());
    for (size_t i = 0; i < preds.size(); ++i) {
      out[i].tokens = std::move(preds[i].tokens);
      out[i].label = preds[i].label;
      out[i].probabilities = vector(std::move(preds[i].probs));
      if (attention && !preds[i].attention.empty()) out[i].attention = matrix(preds[i].attention);
      out[i].redundancy = preds[i].redundancy;
    }
    return out;
  }

  int64_t num_classes() const { return classifier_->config().classes; }

 private:
  std::unique_ptr<Classifier> classifier_;
};

// A speech recognizer (decode/recognizer.h): audio as file paths (any format libsndfile reads,
// resampled to 16 kHz mono) or float arrays of 16 kHz samples in [-1, 1).
class PyRecognizer {
 public:
  PyRecognizer(const std::string& dir, int threads, const std::string& lm,
               const std::string& compute_type) {
    require_directories({dir});
    check(threads >= 0, "threads must be >= 0 (0: all cores), got ", threads);
    if (threads > 0) set_threads(threads);
    const auto compute = parse_name<ComputeType>(compute_type, "compute_type");
    py::gil_scoped_release release;
    recognizer_ = std::make_unique<Recognizer>(dir, DecodeOverrides{}, compute);
    if (!lm.empty()) recognizer_->load_lm(lm);
  }

  py::list transcribe(const py::list& audio, int beam, int n_best, double lm_weight,
                      double lm_bonus, bool timestamps, int64_t batch_size) const {
    check(beam >= 1 && n_best >= 1 && n_best <= beam, "transcribe: beam ", beam, " and n_best ",
          n_best, " (1 <= n_best <= beam)");
    check(batch_size >= 1, "batch_size must be >= 1, got ", batch_size);
    std::vector<std::vector<float>> samples;
    for (const py::handle& item : audio) {
      if (py::isinstance<py::str>(item) || py::hasattr(item, "__fspath__")) {
        const std::string path = py::str(py::module_::import("os").attr("fspath")(item));
        samples.push_back(read_audio(path).samples);
      } else {
        const auto a = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(item);
        check(a && a.ndim() == 1,
              "transcribe: each audio is a path or a 1-D array of 16 kHz "
              "samples");
        samples.emplace_back(a.data(), a.data() + a.size());
      }
    }
    std::vector<std::vector<Transcript>> out;
    {
      py::gil_scoped_release release;
      out = recognizer_->transcribe({samples.begin(), samples.end()}, {.beam = beam,
                                                                       .n_best = n_best,
                                                                       .lm_weight = lm_weight,
                                                                       .lm_bonus = lm_bonus,
                                                                       .timestamps = timestamps,
                                                                       .batch = batch_size});
    }
    py::list result;
    for (const auto& n : out) {
      py::list hyps;
      for (const Transcript& t : n) {
        py::dict d;
        d["text"] = t.text;
        d["log_prob"] = t.log_prob;
        if (timestamps) {
          py::list words;
          for (const WordTime& w : t.words) {
            py::dict wd;
            wd["word"] = w.word;
            wd["start"] = w.start;
            wd["end"] = w.end;
            words.append(wd);
          }
          d["words"] = words;
        }
        hyps.append(d);
      }
      result.append(hyps);
    }
    return result;
  }

 private:
  std::unique_ptr<Recognizer> recognizer_;
};

// The options a call gave, checked as every caller's are (decode/limits.h; errors name them).
TranslationOptions checked(const TranslationOptions& o) {
  check_translation_options(o);
  return o;
}

// heed.train's keywords onto the options, as the command line's flags set them: a key is a
// flag's name ("d-model" or "d_model"; a switch's negation, "unidirectional", too), its value
// typed as the flag's (an int for an integer, a number for a real, a bool for a switch, a name
// for an enum, a list of ints for a list) and held to the same bounds (train/train_options.h).
struct KeywordSetter {
  std::string key;  // with dashes
  py::handle value;
  bool found = false;

  // Whether `flags` ("--a,!--b") name the key; `negated` if by its "!" name.
  bool names_key(const char* flags, bool& negated) const {
    std::string_view rest(flags);
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      std::string_view name = rest.substr(0, comma);
      negated = name.starts_with('!');
      if (negated) name.remove_prefix(1);
      if (name.substr(2) == key) return true;
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    return false;
  }
  bool matches(const OptionInfo& i, bool& negated) {
    if (found || !names_key(i.flags, negated)) return false;
    check(!i.command_line_only, "heed.train: ", key,
          " is the command line's (heed train --bench, heed bench train)");
    found = true;
    return true;
  }

  template <class T>
  T convert(const OptionInfo& i) const {
    const std::string flag = i.flags;
    if constexpr (std::is_same_v<T, std::string>) {
      py::object path = py::module_::import("os").attr("fspath");
      check(py::isinstance<py::str>(value) || py::hasattr(value, "__fspath__"), "heed.train: ", key,
            " takes a string");
      return py::cast<std::string>(path(value));
    } else if constexpr (std::is_enum_v<T>) {
      check(py::isinstance<py::str>(value), "heed.train: ", key, " takes a name (", choices<T>(),
            ")");
      std::string name = py::cast<std::string>(value);
      for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      return parse_name<T>(name, "--" + key);
    } else if constexpr (std::is_integral_v<T>) {
      check(py::isinstance<py::int_>(value) && !py::isinstance<py::bool_>(value),
            "heed.train: ", key, " takes an int");
      const auto v = py::cast<long long>(value);
      check_bounds("--" + key, i.bounds, static_cast<double>(v));
      return static_cast<T>(v);
    } else if constexpr (std::is_floating_point_v<T>) {
      check((py::isinstance<py::int_>(value) || py::isinstance<py::float_>(value)) &&
                !py::isinstance<py::bool_>(value),
            "heed.train: ", key, " takes a number");
      const auto v = py::cast<double>(value);
      check_bounds("--" + key, i.bounds, v);
      return static_cast<T>(v);
    } else {  // a list of integers: a list, one int, or "1,2,4" as on the command line
      std::vector<int64_t> list;
      if (py::isinstance<py::str>(value)) {
        const std::string text = py::cast<std::string>(value);
        size_t start = 0;
        while (start <= text.size()) {
          const size_t comma = text.find(',', start);
          const std::string item = text.substr(start, comma - start);
          int64_t x = 0;
          const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), x);
          check(ec == std::errc() && end == item.data() + item.size(), "heed.train: ", key, ": '",
                item, "' is not an integer");
          list.push_back(x);
          if (comma == std::string::npos) break;
          start = comma + 1;
        }
      } else if (py::isinstance<py::int_>(value) && !py::isinstance<py::bool_>(value)) {
        list.push_back(py::cast<int64_t>(value));
      } else {
        check(py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value),
              "heed.train: ", key, " takes a list of ints");
        for (py::handle x : value) {
          check(py::isinstance<py::int_>(x) && !py::isinstance<py::bool_>(x), "heed.train: ", key,
                " takes a list of ints");
          list.push_back(py::cast<int64_t>(x));
        }
      }
      for (int64_t x : list) check_bounds("--" + key, i.bounds, static_cast<double>(x));
      return list;
    }
  }

  void group(const char* /*name*/) const {}

  template <class T>
  void option(const OptionInfo& i, T& field) {
    bool negated = false;
    if (!matches(i, negated)) return;
    if constexpr (is_optional_v<T>)
      field = convert<typename T::value_type>(i);
    else
      field = convert<T>(i);
  }

  // A switch's value: True turns it on (off by its negation's name).
  bool switch_value(bool negated) const {
    check(py::isinstance<py::bool_>(value), "heed.train: ", key, " is a switch: True or False");
    return py::cast<bool>(value) != negated;
  }
  void flag(const OptionInfo& i, bool& field) {
    bool negated = false;
    if (matches(i, negated)) field = switch_value(negated);
  }
  template <class E>
  void flag(const OptionInfo& i, E& field, E on, E off) {
    bool negated = false;
    if (matches(i, negated)) field = switch_value(negated) ? on : off;
  }

  void family(const OptionInfo& i, std::optional<std::string>& field) {
    bool negated = false;
    if (matches(i, negated)) field = convert<std::string>(i);
  }
};

// heed.train: the options of a dict (recipe keys and keywords, merged by the package), then
// the library's train(); what the run reached.
py::dict train(const py::dict& keywords, int threads) {
  check(threads >= 0, "threads must be >= 0 (0: all cores), got ", threads);
  TrainOptions options;
  for (const auto& [k, v] : keywords) {
    KeywordSetter setter{.key = py::cast<std::string>(py::str(k)), .value = v};
    std::replace(setter.key.begin(), setter.key.end(), '_', '-');
    visit_train_options(options, setter);
    check(setter.found, "heed.train: unknown option '", setter.key,
          "' (the options are heed train's flags: `heed train --help`)");
  }
  set_threads(threads);
  TrainOutcome r;
  {
    py::gil_scoped_release release;
    r = heed::train(options, std::cerr);  // the progress on stderr, as the command line's
  }
  py::dict out;
  out["metric"] = r.loop.metric_name;
  out["best_metric"] = r.loop.best_metric;
  out["best_step"] = r.loop.best_step;
  out["steps"] = r.loop.steps;
  out["epochs"] = r.loop.epochs;
  out["minutes"] = r.loop.minutes;
  if (r.test_accuracy >= 0) out["test_accuracy"] = r.test_accuracy;
  out["save"] = options.seq2seq.save_dir;
  return out;
}

}  // namespace
}  // namespace heed::python

PYBIND11_MODULE(_heed, m) {
  using namespace heed::python;
  using heed::TranslationOptions;
  m.doc() = "heed's C++ core; use the `heed` package, which wraps it.";
  m.attr("__version__") = HEED_VERSION;

  // heed's errors: a missing file is FileNotFoundError (another failed open OSError), bad
  // input or options ValueError, with heed's message (file, line, option) as the text
  // (pybind11 hands the exception_ptr over by value)
  // NOLINTNEXTLINE(performance-unnecessary-value-param)
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const heed::FileError& e) {
      py::object err = py::module_::import("builtins")
                           .attr(e.error() == ENOENT ? "FileNotFoundError" : "OSError")(
                               e.error(), e.what(), e.path());
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(err.ptr())), err.ptr());
    } catch (const heed::Error& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });

  py::class_<PyTranslation>(m, "TranslationResult", "The translations of one source, best first.")
      .def_readonly("source", &PyTranslation::source, "The source units the model read.")
      .def_readonly("truncated", &PyTranslation::truncated,
                    "Whether the source had more than max_input_length units.")
      .def_readonly("hypotheses", &PyTranslation::hypotheses,
                    "Output units of each hypothesis (EOS excluded), best first.")
      .def_readonly("texts", &PyTranslation::texts,
                    "Each hypothesis as text (units joined as the model's target side joins).")
      .def_readonly("scores", &PyTranslation::scores,
                    "With return_scores: log p / (len + 1)^length_penalty, which ranks them.")
      .def_readonly("log_probs", &PyTranslation::log_probs, "log p(hypothesis EOS | source).")
      .def_readonly("attention", &PyTranslation::attention,
                    "With return_attention: per hypothesis a float32 array [rows, len(source)], "
                    "one row per output unit and the EOS row last.")
      .def("__repr__", [](const PyTranslation& t) {
        return "TranslationResult(hypotheses=" +
               py::repr(py::cast(t.hypotheses)).cast<std::string>() + ")";
      });

  py::class_<PyScore>(m, "ScoringResult", "The log-probabilities of a given output.")
      .def_readonly("source", &PyScore::source)
      .def_readonly("tokens", &PyScore::tokens, "The target's units (EOS excluded).")
      .def_readonly("log_prob", &PyScore::log_prob, "log p(tokens EOS | source).")
      .def_readonly("log_probs", &PyScore::log_probs,
                    "Per-token log-probabilities, len(tokens) + 1 (EOS last).")
      .def_readonly("attention", &PyScore::attention,
                    "With return_attention: float32 [len(tokens) + 1, len(source)].");

  py::class_<PyPrediction>(m, "Prediction", "A classifier's label for one sentence.")
      .def_readonly("tokens", &PyPrediction::tokens)
      .def_readonly("label", &PyPrediction::label, "The most probable class.")
      .def_readonly("probabilities", &PyPrediction::probabilities, "float32 [classes].")
      .def_readonly("attention", &PyPrediction::attention,
                    "With return_attention (self-attention models): float32 [hops, len(tokens)].")
      .def_readonly("redundancy", &PyPrediction::redundancy,
                    "With return_attention: ||A A^T - I||_F of the hops (Lin et al. 2017).");

  py::class_<PyTranslator>(m, "Translator")
      .def(py::init<const std::vector<std::string>&, int, const std::string&, int64_t, bool>(),
           py::arg("model_dirs"), py::kw_only(), py::arg("threads") = 0,
           py::arg("compute_type") = "float32", py::arg("wait_k") = 0,
           py::arg("hard_marginal") = false)
      .def(
          "translate_batch",
          [](const PyTranslator& t, const py::sequence& sources, int beam_size, int num_hypotheses,
             double length_penalty, int64_t max_decoding_length, double max_len_ratio,
             int64_t max_batch_size, int64_t max_input_length, bool return_scores,
             bool return_attention, int attention_layer, int attention_head,
             bool replace_unknowns) {
            return t.translate_batch(sources,
                                     checked({.beam_size = beam_size,
                                              .num_hypotheses = num_hypotheses,
                                              .length_penalty = length_penalty,
                                              .max_len_ratio = max_len_ratio,
                                              .max_decoding_length = max_decoding_length,
                                              .max_batch_size = max_batch_size,
                                              .max_input_length = max_input_length,
                                              .return_attention = return_attention,
                                              .attention_layer = attention_layer,
                                              .attention_head = attention_head,
                                              .replace_unknowns = replace_unknowns}),
                                     return_scores);
          },
          py::arg("sources"), py::kw_only(), py::arg("beam_size") = 1,
          py::arg("num_hypotheses") = 1, py::arg("length_penalty") = 1.0,
          py::arg("max_decoding_length") = 0, py::arg("max_len_ratio") = 2.0,
          py::arg("max_batch_size") = 32, py::arg("max_input_length") = 1024,
          py::arg("return_scores") = false, py::arg("return_attention") = false,
          py::arg("attention_layer") = -1, py::arg("attention_head") = -1,
          py::arg("replace_unknowns") = false,
          "Translates a list of sentences (greedy at beam_size 1), returning results in input "
          "order; or a list of token lists (the model's source units, as CTranslate2 takes "
          "them: no segmentation, a unit the model does not know is <unk>). Each output stops at "
          "max_len_ratio x its own source length + 10 units, and "
          "at max_decoding_length units when > 0; sources beyond max_input_length units are cut "
          "(the result says truncated). attention_layer / attention_head choose a Transformer's "
          "reported attention (-1: the last layer, the mean over heads); replace_unknowns "
          "replaces each <unk> by the source unit it attends to most.")
      .def(
          "score_batch",
          [](const PyTranslator& t, const std::vector<std::string>& sources,
             const std::vector<std::string>& targets, int64_t max_batch_size,
             int64_t max_input_length, bool return_attention, int attention_layer,
             int attention_head) {
            return t.score_batch(sources, targets,
                                 checked({.max_batch_size = max_batch_size,
                                          .max_input_length = max_input_length,
                                          .return_attention = return_attention,
                                          .attention_layer = attention_layer,
                                          .attention_head = attention_head}));
          },
          py::arg("sources"), py::arg("targets"), py::kw_only(), py::arg("max_batch_size") = 32,
          py::arg("max_input_length") = 1024, py::arg("return_attention") = false,
          py::arg("attention_layer") = -1, py::arg("attention_head") = -1,
          "The log-probability of each target given its source, token by token (EOS last), "
          "as `heed translate --score-target F --word-scores`.")
      .def(
          "translate_file",
          [](const PyTranslator& t, const std::string& input, const std::string& output,
             int beam_size, int num_hypotheses, double length_penalty, int64_t max_decoding_length,
             double max_len_ratio, int64_t max_batch_size, int64_t max_input_length,
             bool replace_unknowns) {
            return t.translate_file(
                input, output,
                checked({.beam_size = beam_size,
                         .num_hypotheses = num_hypotheses,
                         .length_penalty = length_penalty,
                         .max_len_ratio = max_len_ratio,
                         .max_decoding_length = max_decoding_length,
                         .max_batch_size = max_batch_size,
                         .max_input_length = max_input_length,
                         .return_scores = heed::nbest_lines_have_scores(num_hypotheses),
                         .replace_unknowns = replace_unknowns}));
          },
          py::arg("input_path"), py::arg("output_path"), py::kw_only(), py::arg("beam_size") = 1,
          py::arg("num_hypotheses") = 1, py::arg("length_penalty") = 1.0,
          py::arg("max_decoding_length") = 0, py::arg("max_len_ratio") = 2.0,
          py::arg("max_batch_size") = 32, py::arg("max_input_length") = 1024,
          py::arg("replace_unknowns") = false,
          "Translates a text file line by line into output_path, the lines as `heed translate` "
          "writes them (G2P models: CMUdict entries), the file put in place whole at the end. "
          "Returns {'sentences', 'tokens', 'seconds'}.");

  py::class_<PyClassifier>(m, "Classifier")
      .def(py::init<const std::vector<std::string>&, int>(), py::arg("model_dirs"), py::kw_only(),
           py::arg("threads") = 0)
      .def("classify", &PyClassifier::classify, py::arg("sentences"), py::kw_only(),
           py::arg("return_attention") = false, py::arg("batch_size") = 64,
           "Labels, class probabilities and, with return_attention, the hops' attention of "
           "each sentence, in input order.")
      .def_property_readonly("num_classes", &PyClassifier::num_classes);

  py::class_<PyRecognizer>(m, "Recognizer")
      .def(py::init<const std::string&, int, const std::string&, const std::string&>(),
           py::arg("model_dir"), py::kw_only(), py::arg("threads") = 0, py::arg("lm") = "",
           py::arg("compute_type") = "float32")
      .def("transcribe", &PyRecognizer::transcribe, py::arg("audio"), py::kw_only(),
           py::arg("beam") = 1, py::arg("n_best") = 1, py::arg("lm_weight") = 0.5,
           py::arg("lm_bonus") = 0.0, py::arg("timestamps") = false, py::arg("batch_size") = 16,
           "Per audio (a file path, or a 1-D float array of 16 kHz samples in [-1, 1)), its "
           "n_best transcripts, best first: dicts of text, log_prob and, with timestamps, words "
           "[{word, start, end}] in seconds. The same as `heed transcribe`.");

  m.def("train", &heed::python::train, py::arg("options"), py::arg("threads") = 0,
        "Trains as `heed train` does on a dict of its options (flag names, without dashes); "
        "returns what the run reached (metric, best_metric, best_step, steps, epochs, minutes, "
        "test_accuracy with a test file, save).");
}
