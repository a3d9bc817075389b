// The HTML model report (see report.h): sections Model, Run, Scores, Training, Samples.
// Leaves out: decoding and scoring (decode/, metrics/), layouts (heatmap.cc, plot.cc).
#include "heed/viz/report.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <random>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "heed/data/corpus.h"
#include "heed/data/labeled.h"
#include "heed/data/speech_corpus.h"
#include "heed/data/text.h"
#include "heed/data/transcript.h"
#include "heed/decode/classifier.h"
#include "heed/io/files.h"
#include "heed/io/model_dir.h"
#include "heed/metrics/latency.h"
#include "heed/metrics/metrics.h"
#include "heed/metrics/word_delay.h"
#include "heed/models/registry.h"
#include "heed/models/sentence_classifier.h"
#include "heed/util/error.h"
#include "heed/viz/alignment.h"
#include "heed/viz/dependency_tree.h"
#include "heed/viz/plot.h"
#include "heed/viz/training_log.h"

// Designated initializers leave the other members at their defaults on purpose (GCC 12
// warns about each one under -Wextra).
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace heed::viz {
namespace {

namespace fs = std::filesystem;

// A model of the page: its directory, config.json, train.jsonl and run.json (heed train's
// summary of the run, cli/train.cc; null for a model without one).
struct Member {
  std::string dir;
  nlohmann::json config;
  TrainingLog log;
  nlohmann::ordered_json run;
};

// DIR/run.json, or null when there is none; an Error naming it when it is not JSON.
nlohmann::ordered_json read_run(const std::string& dir) {
  const fs::path path = fs::path(dir) / "run.json";
  if (!fs::exists(path)) return nullptr;
  try {
    return nlohmann::ordered_json::parse(read_file(path.string()));
  } catch (const nlohmann::json::exception& e) {
    fail(path.string(), ": not heed train's run summary (", e.what(), ")");
  }
}

// The Run section: one row per field of any member's run.json, one column per member.
std::string run_html(const std::vector<Member>& members) {
  if (std::all_of(members.begin(), members.end(), [](const Member& m) { return m.run.is_null(); }))
    return "";
  std::ostringstream html;
  html << "<h2 id=\"run\">Run</h2>\n<table>\n";
  if (members.size() > 1) {
    html << "<tr><th></th>";
    for (const Member& m : members) html << "<th>" << xml_escape(m.dir) << "</th>";
    html << "</tr>\n";
  }
  std::vector<std::string> keys;  // in the file's order, the first member's first
  for (const Member& m : members)
    if (m.run.is_object())
      for (const auto& item : m.run.items())
        if (std::find(keys.begin(), keys.end(), item.key()) == keys.end())
          keys.push_back(item.key());
  for (const std::string& key : keys) {
    html << "<tr><th>" << xml_escape(key) << "</th>";
    for (const Member& m : members) {
      if (!m.run.is_object() || !m.run.contains(key)) {
        html << "<td>—</td>";
        continue;
      }
      const nlohmann::ordered_json& v = m.run.at(key);
      std::string text;  // a string as it is, an object as "key value, ...", the rest as JSON
      if (v.is_string()) {
        text = v.get<std::string>();
      } else if (v.is_object()) {
        for (const auto& item : v.items())
          text.append(text.empty() ? "" : ", ")
              .append(item.key())
              .append(" ")
              .append(item.value().is_string() ? item.value().get<std::string>()
                                               : item.value().dump());
      } else {
        text = v.dump();
      }
      html << "<td>" << (key == "command" ? "<code>" : "") << xml_escape(text)
           << (key == "command" ? "</code>" : "") << "</td>";
    }
    html << "</tr>\n";
  }
  html << "</table>\n";
  return html.str();
}

bool lower_is_better(const std::string& metric) {
  return metric == "WER" || metric == "PER" || metric == "CE";
}

std::string fixed(double v, int digits = 2) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(digits);
  os << v;
  return os.str();
}

// The curves: loss and dev metric, against steps and against minutes, and the learning rate
// against steps (when train.jsonl records it); an ensemble's members overlaid, each series
// named by its member's directory.
std::string curves_html(const std::vector<Member>& members) {
  const bool any = std::any_of(members.begin(), members.end(), [](const Member& m) {
    return !m.log.rows.empty() || !m.log.steps.empty();
  });
  if (!any) return "<p>No train.jsonl in the model directory.</p>\n";
  // the category palette of matplotlib ("tab10"): one colour per series
  static const Rgb palette[] = {{31, 119, 180},  {255, 127, 14}, {44, 160, 44},   {214, 39, 40},
                                {148, 103, 189}, {140, 86, 75},  {227, 119, 194}, {127, 127, 127},
                                {188, 189, 34},  {23, 190, 207}};
  auto color = [&](size_t k) { return palette[k % std::size(palette)]; };
  const std::string metric_name = members.front().log.metric;
  std::ostringstream html;
  html << "<div class=\"plots\">\n";
  for (bool by_minutes : {false, true}) {
    std::vector<Series> losses, metrics;
    for (const Member& m : members) {
      const std::string who = members.size() > 1 ? m.dir + ": " : "";
      // member k: train loss in colour 2k, its dev cross-entropy and dev metric in 2k + 1
      const size_t k = metrics.size();
      Series train{.name = who + "train loss", .color = color(2 * k)};
      Series dev{.name = who + "dev CE", .color = color(2 * k + 1)};
      Series metric{.name = who + "dev " + m.log.metric, .color = color(2 * k + 1)};
      // the train loss from the step records when the run wrote them (denser), else from the
      // validations
      for (const StepRow& r : m.log.steps)
        train.points.emplace_back(by_minutes ? r.minutes : r.step, r.train_loss);
      for (const LogRow& r : m.log.rows) {
        const double x = by_minutes ? r.minutes : r.step;
        if (m.log.steps.empty()) train.points.emplace_back(x, r.train_loss);
        dev.points.emplace_back(x, r.dev_ce);
        metric.points.emplace_back(x, r.dev_metric);
      }
      losses.push_back(std::move(train));
      losses.push_back(std::move(dev));
      metrics.push_back(std::move(metric));
    }
    const std::string x_label = by_minutes ? "wall-clock minutes" : "updates";
    html << to_svg(line_plot(losses, {.title = "Loss",
                                      .x_label = x_label,
                                      .y_label = "cross-entropy (nats/token)"}),
                   false)
         << to_svg(line_plot(
                       metrics,
                       {.title = "Dev " + metric_name, .x_label = x_label, .y_label = metric_name}),
                   false);
  }
  std::vector<Series> rates;
  for (const Member& m : members) {
    Series rate{.name = members.size() > 1 ? m.dir : "learning rate",
                .color = color(2 * rates.size())};
    for (const StepRow& r : m.log.steps) rate.points.emplace_back(r.step, r.lr);
    if (m.log.steps.empty())
      for (const LogRow& r : m.log.rows)
        if (r.lr >= 0) rate.points.emplace_back(r.step, r.lr);
    rates.push_back(std::move(rate));
  }
  std::vector<Series> norms;  // the gradient's norm before clipping, from the step records
  for (const Member& m : members) {
    Series norm{.name = members.size() > 1 ? m.dir : "gradient norm",
                .color = color(2 * norms.size())};
    for (const StepRow& r : m.log.steps)
      if (r.grad_norm >= 0) norm.points.emplace_back(r.step, r.grad_norm);
    norms.push_back(std::move(norm));
  }
  if (std::any_of(rates.begin(), rates.end(), [](const Series& r) { return !r.points.empty(); }))
    html << to_svg(line_plot(rates, {.title = "Learning rate",
                                     .x_label = "updates",
                                     .y_label = "rate of the next update"}),
                   false);
  if (std::any_of(norms.begin(), norms.end(), [](const Series& r) { return !r.points.empty(); }))
    html << to_svg(line_plot(norms, {.title = "Gradient norm",
                                     .x_label = "updates",
                                     .y_label = "L2 norm before clipping"}),
                   false);
  html << "</div>\n";
  return html.str();
}

struct Sample {
  std::string input, output, reference;
  std::string score;  // this sample's own: "sentence BLEU 23.5", "PER 25.0", "p(reference) 0.12"
  std::vector<Heatmap> maps;
  // syntactic attention's tree over the input's units (nn/syntactic_attention.h), when had
  std::vector<std::string> units;
  std::vector<std::vector<float>> tree;
};

struct TestResult {
  std::string score;  // the metric line(s)
  std::vector<Sample> samples;
};

std::string sample_caption(const ReportOptions& o) {
  switch (o.sample_choice) {
    case SampleChoice::First:
      return "The first test inputs.";
    case SampleChoice::Random:
      return "Test inputs drawn at random (seed " + std::to_string(o.seed) + ").";
    case SampleChoice::Worst:
      return "The test inputs with the worst scores, worst first.";
    case SampleChoice::Spread:
      break;
  }
  return "Test inputs evenly spaced through the test set.";
}

// The indices of the k samples of n inputs as `choice` picks them; `badness[i]` (higher: worse)
// orders SampleChoice::Worst, ties in input order.
std::vector<size_t> pick_samples(size_t n, int k, SampleChoice choice, uint64_t seed,
                                 const std::vector<double>& badness) {
  const size_t m = std::min(n, static_cast<size_t>(std::max(k, 0)));
  std::vector<size_t> all(n);
  for (size_t i = 0; i < n; ++i) all[i] = i;
  switch (choice) {
    case SampleChoice::Spread: {
      std::vector<size_t> out;
      for (size_t i = 0; i < m; ++i) out.push_back(i * n / m);
      return out;
    }
    case SampleChoice::First:
      break;
    case SampleChoice::Random: {  // a partial Fisher-Yates draw, the same on every platform
      std::mt19937_64 rng(seed);
      for (size_t i = 0; i < m; ++i) std::swap(all[i], all[i + rng() % (n - i)]);
      std::sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(m));  // in file order
      break;
    }
    case SampleChoice::Worst:
      check(badness.size() == n, "report: no per-sample scores to find the worst by");
      std::stable_sort(all.begin(), all.end(),
                       [&](size_t a, size_t b) { return badness[a] > badness[b]; });
      break;
  }
  all.resize(m);
  return all;
}

std::string one_decimal(const char* what, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s %.1f", what, v);
  return buf;
}

TestResult seq2seq_test(const Translator& translator, const ReportOptions& o, std::ostream& log) {
  const ModelFiles* m = &translator.text_format();  // the same for every member
  TestResult t;
  std::vector<std::string> inputs, refs;  // refs: one line per input ("A | B" for G2P variants)
  std::map<std::string, std::vector<std::string>> g2p_refs;
  if (m->g2p) {
    g2p_refs = group_alternatives(read_cmudict(o.src));
    for (const auto& [word, prons] : g2p_refs) {
      inputs.push_back(word);
      std::string joined;
      for (const auto& p : prons) joined += (joined.empty() ? "" : "  |  ") + p;
      refs.push_back(joined);
    }
  } else {
    check(!o.ref.empty(), "report: --src ", o.src, " needs --ref (the references)");
    Corpus c = read_parallel(o.src, o.ref);
    for (auto& p : c.pairs) inputs.push_back(p.src), refs.push_back(p.tgt);
  }
  // the outputs: decoded here, once (their alignments then also give the samples' heatmaps),
  // or read from --hyp
  const bool decode_here = o.hyp.empty();
  std::vector<Alignment> decoded;  // [inputs] when decode_here
  if (decode_here) {
    log << "heed report: decoding " << inputs.size() << " inputs of " << o.src << " (beam "
        << o.search.beam << ")\n"
        << std::flush;
    decoded = align(translator, inputs, {.search = o.search, .batch = 64});
  }
  std::vector<std::string> outputs;  // [inputs]: what is scored
  std::vector<double> badness;       // [inputs]: each output's own score, higher is worse
  std::vector<std::string> scores;   // [inputs]: that score, as the page shows it
  if (m->g2p) {
    // outputs by word: a --hyp file is read as CMUdict entries (heed translate's output on
    // the test file has one line per entry, so a word may come several times)
    std::map<std::string, std::string> by_word;
    if (decode_here) {
      for (size_t i = 0; i < inputs.size(); ++i) by_word[inputs[i]] = decoded[i].output;
    } else {
      for (const auto& [word, prons] : group_alternatives(read_cmudict(o.hyp)))
        by_word[word] = prons.front();
    }
    t.score = g2p_error_rates(by_word, g2p_refs).str();
    for (const std::string& word : inputs) {  // PER against the closest pronunciation
      outputs.push_back(by_word[word]);
      const G2pScore one = g2p_error_rates({{word, by_word[word]}}, {{word, g2p_refs[word]}});
      badness.push_back(one.per);
      scores.push_back(one_decimal("PER", one.per));
    }
  } else {
    if (decode_here) {
      for (const Alignment& a : decoded) outputs.push_back(a.output);
    } else {
      outputs = read_lines(o.hyp);
      check(outputs.size() == inputs.size(), o.hyp, " has ", outputs.size(), " lines but ", o.src,
            " has ", inputs.size(), " inputs");
    }
    std::vector<std::vector<std::string>> ref_sets = {refs};
    t.score = corpus_bleu(outputs, ref_sets).str() + "\n" + corpus_chrf(outputs, ref_sets).str();
    for (size_t i = 0; i < inputs.size(); ++i) {  // sacreBLEU's sentence BLEU of tokenised text
      const double bleu =
          corpus_bleu({outputs[i]}, {{refs[i]}},
                      {.sacrebleu = true, .tokenize = BleuTokenize::None, .effective_order = true})
              .score;
      badness.push_back(-bleu);
      scores.push_back(one_decimal("sentence BLEU", bleu));
    }
  }
  const std::vector<size_t> idx =
      pick_samples(inputs.size(), o.samples, o.sample_choice, o.seed, badness);
  std::vector<Alignment> shown;  // [idx]
  if (decode_here) {
    shown.reserve(idx.size());
    for (size_t i : idx) shown.push_back(std::move(decoded[i]));
  } else {
    std::vector<std::string> chosen;
    chosen.reserve(idx.size());
    for (size_t i : idx) chosen.push_back(inputs[i]);
    shown = align(translator, chosen, {.search = o.search});
  }
  for (size_t k = 0; k < idx.size(); ++k)
    t.samples.push_back({.input = inputs[idx[k]],
                         .output = outputs[idx[k]],
                         .reference = refs[idx[k]],
                         .score = scores[idx[k]],
                         .maps = std::move(shown[k].maps),
                         .units = std::move(shown[k].units),
                         .tree = std::move(shown[k].tree)});
  return t;
}

TestResult classifier_test(const ReportOptions& o) {
  const Classifier classifier(o.model_dirs.front());
  const auto classes = static_cast<int32_t>(classifier.config().classes);
  LabeledCorpus c = read_labeled(o.src, classes);
  std::vector<Prediction> preds = classifier.classify(c.texts, {.name = o.src});
  std::vector<int32_t> labels;
  labels.reserve(preds.size());
  for (const auto& p : preds) labels.push_back(p.label);
  TestResult t;
  t.score = accuracy(c.labels, labels).str();
  std::vector<double> badness;  // 1 - p(reference label)
  for (size_t i = 0; i < preds.size(); ++i) {
    const auto y = static_cast<size_t>(c.labels[i]);
    badness.push_back(y < preds[i].probs.size() ? 1.0 - preds[i].probs[y]
                                                : (preds[i].label == c.labels[i] ? 0.0 : 1.0));
  }
  for (size_t i : pick_samples(preds.size(), o.samples, o.sample_choice, o.seed, badness)) {
    Sample s{.input = c.texts[i],
             .output = std::to_string(preds[i].label),
             .reference = std::to_string(c.labels[i])};
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s, p(reference) %.3f",
                  preds[i].label == c.labels[i] ? "right" : "wrong", 1.0 - badness[i]);
    s.score = buf;
    s.units = preds[i].tokens;
    s.tree = preds[i].tree;
    if (!preds[i].attention.empty())
      s.maps.push_back(
          classifier_heatmap(preds[i], std::to_string(preds[i].label), classifier.config()));
    t.samples.push_back(std::move(s));
  }
  return t;
}

// Quality against latency: each --latency file (online decodings of --src) scored against the
// references (BLEU; G2P: WER, a file's line i being the word of --src's line i) and by AL, AP
// and DAL; the points as a curve ordered by AL, and a table.
std::string latency_html(const Translator& translator, const ReportOptions& o) {
  const ModelFiles& m = translator.text_format();
  std::vector<std::string> lines, refs;  // the inputs' words (G2P) or references, line by line
  std::map<std::string, std::vector<std::string>> g2p_refs;
  if (m.g2p) {
    const Corpus entries = read_cmudict(o.src);
    for (const auto& pair : entries.pairs) lines.push_back(pair.src);
    g2p_refs = group_alternatives(entries);
  } else {
    check(!o.ref.empty(), "report: --latency needs --ref (the references of --src)");
    refs = read_lines(o.ref);
  }
  const size_t n = m.g2p ? lines.size() : refs.size();
  struct Point {
    std::string name;
    LatencyScore latency;
    double quality = 0;
  };
  std::vector<Point> points;
  for (const std::string& path : o.latency) {
    const std::vector<Delays> d = read_delays(path);
    std::vector<std::string> hyps;  // each line's output text
    hyps.reserve(d.size());
    for (const Delays& line : d) hyps.push_back(m.tgt_seg.join(line.out));
    check(hyps.size() == n, "report: ", path, " has ", hyps.size(), " lines but ",
          m.g2p ? o.src : o.ref, " has ", n);
    Point p{.name = fs::path(path).stem().string(), .latency = corpus_latency(d)};
    if (m.g2p) {
      std::map<std::string, std::string> by_word;
      for (size_t i = 0; i < n; ++i) by_word[lines[i]] = hyps[i];
      p.quality = g2p_error_rates(by_word, g2p_refs).wer;
    } else {
      p.quality = corpus_bleu(hyps, {refs}).score;
    }
    points.push_back(std::move(p));
  }
  std::sort(points.begin(), points.end(),
            [](const Point& a, const Point& b) { return a.latency.al < b.latency.al; });
  const std::string metric = m.g2p ? "WER" : "BLEU";
  Series curve{.name = metric + " against AL"};
  for (const Point& p : points) curve.points.emplace_back(p.latency.al, p.quality);
  std::ostringstream html;
  html << "<h2 id=\"latency\">Quality against latency</h2>\n<p>Online decodings of "
       << xml_escape(fs::path(o.src).filename().string())
       << " (heed translate --online --latency-out), by average lagging in source units.</p>\n"
       << "<div class=\"plots\">"
       << to_svg(line_plot({curve}, {.title = metric + " against latency",
                                     .x_label = "AL (source units)",
                                     .y_label = metric}))
       << "</div>\n<table>\n<tr><th>decoding</th><th>" << metric
       << "</th><th>AL</th><th>AP</th><th>DAL</th></tr>\n";
  for (const Point& p : points)
    html << "<tr><td>" << xml_escape(p.name) << "</td><td>" << fixed(p.quality) << "</td><td>"
         << fixed(p.latency.al) << "</td><td>" << fixed(p.latency.ap, 3) << "</td><td>"
         << fixed(p.latency.dal) << "</td></tr>\n";
  html << "</table>\n";
  return html.str();
}

// Streaming recognition's quality against its latency: each --latency file (heed transcribe
// --online's JSON lines of the corpus --src, by one model, chunk size, lookahead or policy)
// scored by WER (normalised) against the corpus's transcripts and by word delay against its
// timings (--timings); the points as a curve ordered by mean delay, and a table.
std::string speech_latency_html(const ReportOptions& o) {
  check(!o.src.empty(),
        "report: --latency of a recognizer needs --src, the corpus the files "
        "transcribed (a manifest or Kaldi data directory)");
  check(!o.timings.empty(),
        "report: --latency of a recognizer needs --timings, the corpus's word "
        "timings (*.align.jsonl)");
  const SpeechCorpus corpus = read_speech_corpus(o.src);
  std::vector<std::string> refs;
  for (const Utterance& u : corpus.utterances) refs.push_back(normalise_transcript(u.text));
  const std::vector<TimedUtterance> timings = read_word_timings(o.timings);
  struct Point {
    std::string name;
    WordDelayScore delay;
    double wer = 0;
  };
  std::vector<Point> points;
  for (const std::string& path : o.latency) {
    check(is_stream_output(path), "report: ", path,
          " is not heed transcribe --online's JSON lines (a recognizer's --latency files are)");
    const std::vector<TimedUtterance> hyps = read_stream_words(path);
    check(hyps.size() == refs.size(), "report: ", path, " has ", hyps.size(), " utterances but ",
          o.src, " has ", refs.size());
    std::vector<std::string> texts;
    for (size_t i = 0; i < hyps.size(); ++i) {
      check(hyps[i].id == corpus.utterances[i].id, "report: ", path, "'s utterance ", i + 1,
            " is '", hyps[i].id, "', ", o.src, "'s '", corpus.utterances[i].id, "'");
      std::string text;
      for (const TimedWord& w : hyps[i].words) text += (text.empty() ? "" : " ") + w.word;
      texts.push_back(normalise_transcript(text));
    }
    points.push_back({.name = fs::path(path).stem().string(),
                      .delay = word_delays(timings, hyps),
                      .wer = word_error_rate(texts, refs).percent()});
  }
  std::sort(points.begin(), points.end(),
            [](const Point& a, const Point& b) { return a.delay.mean < b.delay.mean; });
  // a point per file, in its own colour (the files may be different models: no line joins them)
  static constexpr Rgb kColors[] = {
      {31, 119, 180}, {255, 127, 14},  {44, 160, 44},   {214, 39, 40},  {148, 103, 189},
      {140, 86, 75},  {227, 119, 194}, {127, 127, 127}, {188, 189, 34}, {23, 190, 207}};
  std::vector<Series> series;
  series.reserve(points.size());
  for (const Point& p : points)
    series.push_back({.name = p.name,
                      .points = {{p.delay.mean, p.wer}},
                      .color = kColors[series.size() % std::size(kColors)],
                      .width = 0});
  std::ostringstream html;
  html << "<h2 id=\"latency\">Quality against latency</h2>\n<p>Streaming recognitions of "
       << xml_escape(fs::path(o.src).filename().string())
       << " (heed transcribe --online): WER against each recognised word's delay from its end "
          "in the audio to its emission.</p>\n<div class=\"plots\">"
       << to_svg(line_plot(series, {.title = "WER against word delay",
                                    .x_label = "mean word delay (s)",
                                    .y_label = "WER",
                                    .width = 560,
                                    .height = 320}))
       << "</div>\n<table>\n<tr><th>decoding</th><th>WER</th><th>delay mean (s)</th><th>p50</th>"
          "<th>p90</th><th>AL (ms)</th></tr>\n";
  for (const Point& p : points)
    html << "<tr><td>" << xml_escape(p.name) << "</td><td>" << fixed(p.wer) << "</td><td>"
         << fixed(p.delay.mean, 3) << "</td><td>" << fixed(p.delay.p50, 3) << "</td><td>"
         << fixed(p.delay.p90, 3) << "</td><td>" << fixed(p.delay.al_ms, 0) << "</td></tr>\n";
  html << "</table>\n";
  return html.str();
}

constexpr const char* kStyle = R"(
body { font-family: "DejaVu Sans", Verdana, sans-serif; margin: 2em auto; max-width: 1100px;
       color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ddd; padding-bottom: .2em; }
table { border-collapse: collapse; } td, th { padding: .2em .8em; text-align: left;
        border-bottom: 1px solid #eee; vertical-align: top; }
pre { background: #f6f6f6; padding: .6em; overflow-x: auto; }
.plots svg { margin: 0 1em 1em 0; } .sample { margin-bottom: 2em; }
.sample svg { display: block; margin-top: .5em; max-width: 100%; height: auto; }
.label { color: #777; width: 7em; }
)";

}  // namespace

std::span<const Named<SampleChoice>> names(SampleChoice) {
  static constexpr Named<SampleChoice> kNames[] = {{SampleChoice::Spread, "spread"},
                                                   {SampleChoice::First, "first"},
                                                   {SampleChoice::Random, "random"},
                                                   {SampleChoice::Worst, "worst"}};
  return kNames;
}

void write_report(const ReportOptions& o, const std::string& out, std::ostream& log) {
  check(!o.model_dirs.empty(), "report: no model directory");
  std::vector<Member> members;  // [models]
  for (const std::string& dir : o.model_dirs)
    members.push_back({.dir = dir,
                       .config = read_config(dir),
                       .log = read_training_log((fs::path(dir) / "train.jsonl").string(), log),
                       .run = read_run(dir)});
  const bool classifier =
      config_family(members.front().config, o.model_dirs.front()).role == ModelRole::Classifier;
  check(!classifier || members.size() == 1,
        "report: an ensemble is for sequence-to-sequence models; ", o.model_dirs.front(),
        " is a classifier");
  std::string dirs;
  for (const Member& m : members) dirs += (dirs.empty() ? "" : " + ") + m.dir;
  std::ostringstream html;
  const std::string title = o.title.empty() ? "heed report: " + dirs : o.title;
  html << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"
       << xml_escape(title) << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n<h1>"
       << xml_escape(title) << "</h1>\n";
  // Model: one column per member, a row per config key any of them has
  html << "<h2 id=\"model\">Model</h2>\n";
  if (members.size() > 1)
    html << "<p>An ensemble of " << members.size()
         << " models, decoded as one (the mean of their next-token probabilities); its heatmaps "
            "show the mean of their attention.</p>\n";
  html << "<table>\n";
  if (members.size() > 1) {
    html << "<tr><th></th>";
    for (const Member& m : members) html << "<th>" << xml_escape(m.dir) << "</th>";
    html << "</tr>\n";
  }
  std::set<std::string> keys;
  for (const Member& m : members)
    for (const auto& item : m.config.items()) keys.insert(item.key());
  for (const std::string& key : keys) {
    html << "<tr><th>" << xml_escape(key) << "</th>";
    for (const Member& m : members)
      html << "<td>" << (m.config.contains(key) ? xml_escape(m.config.at(key).dump()) : "—")
           << "</td>";
    html << "</tr>\n";
  }
  html << "</table>\n" << run_html(members);
  // Scores
  html << "<h2 id=\"scores\">Scores</h2>\n<table>\n";
  for (const Member& m : members) {
    if (m.log.rows.empty()) continue;
    const bool lower = lower_is_better(m.log.metric);
    const LogRow* best = &m.log.rows.front();
    for (const LogRow& r : m.log.rows)
      if (lower ? r.dev_metric < best->dev_metric : r.dev_metric > best->dev_metric) best = &r;
    html << "<tr><th>best dev " << xml_escape(m.log.metric)
         << (members.size() > 1 ? " (" + xml_escape(m.dir) + ")" : "") << "</th><td>"
         << fixed(best->dev_metric) << " (epoch " << best->epoch << ", update "
         << static_cast<int64_t>(best->step) << ", " << fixed(best->minutes, 1)
         << " min; greedy)</td></tr>\n";
  }
  if (members.front().config.value("src_units", std::string()) == "audio") {
    // a recognizer: the page's test part is its streaming runs' curve (if any)
    check(o.src.empty() || !o.latency.empty(),
          "report: a recognizer's page scores its streaming runs (--latency with --src and "
          "--timings); score a transcription with heed score --metric wer");
    html << "</table>\n";
    if (!o.latency.empty()) html << speech_latency_html(o);
    html << "<h2 id=\"training\">Training</h2>\n" << curves_html(members) << "</body>\n</html>\n";
    write_file_atomic(out, html.str());
    return;
  }
  check(o.latency.empty() || !o.src.empty(),
        "report: --latency needs --src (the inputs the files decoded)");
  check(o.latency.empty() || !classifier, "report: --latency is for sequence-to-sequence models");
  // a sequence-to-sequence model is loaded once, for the test section and the latency one
  std::optional<Translator> translator;  // one model, or an ensemble
  if (!classifier && !o.src.empty()) translator.emplace(o.model_dirs);
  TestResult test;
  if (!o.src.empty()) {
    test = classifier ? classifier_test(o) : seq2seq_test(*translator, o, log);
    html << "<tr><th>" << (members.size() > 1 ? "ensemble test (" : "test (")
         << xml_escape(fs::path(o.src).filename().string()) << ")</th><td><pre>"
         << xml_escape(test.score) << "</pre></td></tr>\n";
  }
  html << "</table>\n";
  if (!o.latency.empty()) html << latency_html(*translator, o);
  // Training
  html << "<h2 id=\"training\">Training</h2>\n" << curves_html(members);
  // Samples
  if (!test.samples.empty()) {
    html << "<h2 id=\"samples\">Samples</h2>\n<p>" << sample_caption(o) << "</p>\n";
    const HeatmapStyle style{.cell = 16, .font = 11};
    for (const Sample& s : test.samples) {
      html << "<div class=\"sample\">\n<table>\n<tr><td class=\"label\">input</td><td>"
           << xml_escape(s.input) << "</td></tr>\n<tr><td class=\"label\">output</td><td>"
           << xml_escape(s.output) << "</td></tr>\n<tr><td class=\"label\">reference</td><td>"
           << xml_escape(s.reference) << "</td></tr>\n<tr><td class=\"label\">score</td><td>"
           << xml_escape(s.score) << "</td></tr>\n</table>\n";
      for (const Heatmap& h : s.maps) html << to_svg(heatmap_figure(h, style), false);
      if (!s.tree.empty())  // syntactic attention: the tree it induces over the input
        html << "<p class=\"label\">syntactic attention: each unit's parent</p>\n"
             << to_svg(dependency_tree_figure(s.units, s.tree, style), false);
      html << "</div>\n";
    }
  }
  html << "<p style=\"color:#999\">Written by heed report. Heatmaps: rows are output tokens "
          "(classifier: attention hops), columns source tokens, brightness the attention "
          "weight.</p>\n</body>\n</html>\n";
  write_file_atomic(out, html.str());
}

}  // namespace heed::viz
