// The HTML model report (see report.h): sections Model, Scores, Training, Samples.
// Leaves out: decoding and scoring (decode/, metrics/), layouts (heatmap.cc, plot.cc).
#include "heed/viz/report.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "heed/data/corpus.h"
#include "heed/data/labeled.h"
#include "heed/data/text.h"
#include "heed/io/checkpoint.h"
#include "heed/io/files.h"
#include "heed/metrics/metrics.h"
#include "heed/models/sentence_classifier.h"
#include "heed/util/error.h"
#include "heed/viz/alignment.h"
#include "heed/viz/plot.h"

// Designated initializers leave the other members at their defaults on purpose (GCC 12
// warns about each one under -Wextra).
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace heed::viz {
namespace {

namespace fs = std::filesystem;

// One validation record of train.jsonl (train/loop.cc writes one per epoch).
struct LogRow {
  double step = 0, minutes = 0, train_loss = 0, dev_ce = 0, dev_metric = 0;
  int epoch = 0;
};

struct TrainingLog {
  std::string metric = "metric";  // BLEU, WER, acc, ...
  std::vector<LogRow> rows;
};

TrainingLog read_training_log(const std::string& path) {
  TrainingLog log;
  if (!fs::exists(path)) return log;
  const std::vector<std::string> lines = read_lines(path);
  for (size_t i = 0; i < lines.size(); ++i) {
    try {
      const auto j = nlohmann::json::parse(lines[i]);
      log.metric = j.value("metric", log.metric);
      log.rows.push_back({.step = j.at("step").get<double>(),
                          .minutes = j.at("minutes").get<double>(),
                          .train_loss = j.at("train_loss").get<double>(),
                          .dev_ce = j.at("dev_ce").get<double>(),
                          .dev_metric = j.at("dev_metric").get<double>(),
                          .epoch = j.at("epoch").get<int>()});
    } catch (const nlohmann::json::exception& e) {
      fail(path, ":", i + 1, ": not a training record: ", e.what());
    }
  }
  return log;
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

// The four curves: loss and dev metric, against steps and against minutes.
std::string curves_html(const TrainingLog& log) {
  if (log.rows.empty()) return "<p>No train.jsonl in the model directory.</p>\n";
  const Rgb blue{31, 119, 180}, orange{255, 127, 14}, green{44, 160, 44};
  std::ostringstream html;
  html << "<div class=\"plots\">\n";
  for (bool by_minutes : {false, true}) {
    Series train{.name = "train loss", .color = blue}, dev{.name = "dev CE", .color = orange},
        metric{.name = "dev " + log.metric, .color = green};
    for (const LogRow& r : log.rows) {
      const double x = by_minutes ? r.minutes : r.step;
      train.points.emplace_back(x, r.train_loss);
      dev.points.emplace_back(x, r.dev_ce);
      metric.points.emplace_back(x, r.dev_metric);
    }
    const std::string x_label = by_minutes ? "wall-clock minutes" : "updates";
    html << to_svg(line_plot({train, dev}, {.title = "Loss",
                                            .x_label = x_label,
                                            .y_label = "cross-entropy (nats/token)"}),
                   false)
         << to_svg(line_plot(
                       {metric},
                       {.title = "Dev " + log.metric, .x_label = x_label, .y_label = log.metric}),
                   false);
  }
  html << "</div>\n";
  return html.str();
}

struct Sample {
  std::string input, output, reference;
  std::vector<Heatmap> maps;
};

struct TestResult {
  std::string score;  // the metric line(s)
  std::vector<Sample> samples;
};

std::vector<size_t> spread(size_t n, int k) {  // k indices evenly spaced through 0..n-1
  std::vector<size_t> out;
  const size_t m = std::min(n, static_cast<size_t>(std::max(k, 0)));
  for (size_t i = 0; i < m; ++i) out.push_back(i * n / m);
  return out;
}

TestResult seq2seq_test(const ReportOptions& o, std::ostream& log) {
  auto m = load_model(o.model_dir);
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
    decoded = align(*m, inputs, {.search = o.search, .batch = 64});
  }
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
  } else {
    std::vector<std::string> hyps;  // [inputs]
    if (decode_here) {
      for (const Alignment& a : decoded) hyps.push_back(a.output);
    } else {
      hyps = read_lines(o.hyp);
      check(hyps.size() == inputs.size(), o.hyp, " has ", hyps.size(), " lines but ", o.src,
            " has ", inputs.size(), " inputs");
    }
    std::vector<std::vector<std::string>> ref_sets = {refs};
    t.score = corpus_bleu(hyps, ref_sets).str() + "\n" + corpus_chrf(hyps, ref_sets).str();
  }
  const std::vector<size_t> idx = spread(inputs.size(), o.samples);
  std::vector<Alignment> shown;  // [idx]
  if (decode_here) {
    shown.reserve(idx.size());
    for (size_t i : idx) shown.push_back(std::move(decoded[i]));
  } else {
    std::vector<std::string> chosen;
    chosen.reserve(idx.size());
    for (size_t i : idx) chosen.push_back(inputs[i]);
    shown = align(*m, chosen, {.search = o.search});
  }
  for (size_t k = 0; k < idx.size(); ++k)
    t.samples.push_back({.input = inputs[idx[k]],
                         .output = shown[k].output,
                         .reference = refs[idx[k]],
                         .maps = std::move(shown[k].maps)});
  return t;
}

TestResult classifier_test(const ReportOptions& o) {
  auto m = load_classifier(o.model_dir);
  const auto classes = static_cast<int32_t>(m->model->config().classes);
  LabeledCorpus c = read_labeled(o.src, classes);
  std::vector<Prediction> preds = classify(*m, c.texts, o.src);
  std::vector<int32_t> labels;
  labels.reserve(preds.size());
  for (const auto& p : preds) labels.push_back(p.label);
  TestResult t;
  t.score = accuracy(c.labels, labels).str();
  for (size_t i : spread(preds.size(), o.samples)) {
    Sample s{.input = c.texts[i],
             .output = std::to_string(preds[i].label),
             .reference = std::to_string(c.labels[i])};
    if (!preds[i].attention.empty())
      s.maps.push_back(
          classifier_heatmap(preds[i], std::to_string(preds[i].label), m->model->config()));
    t.samples.push_back(std::move(s));
  }
  return t;
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

void write_report(const ReportOptions& o, const std::string& out, std::ostream& log) {
  const nlohmann::json config = read_config(o.model_dir);
  const bool classifier = is_classifier_config(config);
  const TrainingLog tlog = read_training_log((fs::path(o.model_dir) / "train.jsonl").string());
  std::ostringstream html;
  const std::string title = o.title.empty() ? "heed report: " + o.model_dir : o.title;
  html << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"
       << xml_escape(title) << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n<h1>"
       << xml_escape(title) << "</h1>\n";
  // Model
  html << "<h2 id=\"model\">Model</h2>\n<table>\n";
  for (const auto& [key, value] : config.items())
    html << "<tr><th>" << xml_escape(key) << "</th><td>" << xml_escape(value.dump())
         << "</td></tr>\n";
  html << "</table>\n";
  // Scores
  html << "<h2 id=\"scores\">Scores</h2>\n<table>\n";
  if (!tlog.rows.empty()) {
    const bool lower = lower_is_better(tlog.metric);
    const LogRow* best = &tlog.rows.front();
    for (const LogRow& r : tlog.rows)
      if (lower ? r.dev_metric < best->dev_metric : r.dev_metric > best->dev_metric) best = &r;
    html << "<tr><th>best dev " << xml_escape(tlog.metric) << "</th><td>" << fixed(best->dev_metric)
         << " (epoch " << best->epoch << ", update " << static_cast<int64_t>(best->step) << ", "
         << fixed(best->minutes, 1) << " min; greedy)</td></tr>\n";
  }
  TestResult test;
  if (!o.src.empty()) {
    test = classifier ? classifier_test(o) : seq2seq_test(o, log);
    html << "<tr><th>test (" << xml_escape(fs::path(o.src).filename().string()) << ")</th><td><pre>"
         << xml_escape(test.score) << "</pre></td></tr>\n";
  }
  html << "</table>\n";
  // Training
  html << "<h2 id=\"training\">Training</h2>\n" << curves_html(tlog);
  // Samples
  if (!test.samples.empty()) {
    html << "<h2 id=\"samples\">Samples</h2>\n";
    const HeatmapStyle style{.cell = 16, .font = 11};
    for (const Sample& s : test.samples) {
      html << "<div class=\"sample\">\n<table>\n<tr><td class=\"label\">input</td><td>"
           << xml_escape(s.input) << "</td></tr>\n<tr><td class=\"label\">output</td><td>"
           << xml_escape(s.output) << "</td></tr>\n<tr><td class=\"label\">reference</td><td>"
           << xml_escape(s.reference) << "</td></tr>\n</table>\n";
      for (const Heatmap& h : s.maps) html << to_svg(heatmap_figure(h, style), false);
      html << "</div>\n";
    }
  }
  html << "<p style=\"color:#999\">Written by heed report. Heatmaps: rows are output tokens "
          "(classifier: attention hops), columns source tokens, brightness the attention "
          "weight.</p>\n</body>\n</html>\n";
  write_file_atomic(out, html.str());
}

}  // namespace heed::viz
