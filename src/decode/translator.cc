// The inference API of encoder-decoders (see the header).
#include "heed/decode/translator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "heed/decode/forced.h"
#include "heed/decode/greedy.h"
#include "heed/decode/limits.h"
#include "heed/decode/online.h"
#include "heed/decode/replace_unk.h"
#include "heed/kernels/parallel.h"
#include "heed/util/error.h"

namespace heed {

namespace {

// The ids of a source's units, the EOS appended (and named among its units) for a model that
// reads sources ending in </s> (ModelFiles::src_eos: Marian's).
std::vector<int32_t> encode_source(const ModelFiles& m, std::vector<std::string>& source) {
  if (m.src_eos) source.emplace_back("</s>");
  return m.src_vocab.encode(source);
}

// The ids of r.source, cut first at max_input_length (r.truncated); none for a blank source,
// which is not decoded (its translation is empty, as CTranslate2's).
std::vector<int32_t> source_ids(const ModelFiles& m, const TranslationOptions& o,
                                TranslationResult& r) {
  if (o.max_input_length > 0 && static_cast<int64_t>(r.source.size()) > o.max_input_length) {
    r.source.resize(static_cast<size_t>(o.max_input_length));  // bounded time and memory
    r.truncated = true;
  }
  return r.source.empty() ? std::vector<int32_t>{} : encode_source(m, r.source);
}

// What a model reads of an input line: r.input (G2P: the word of a CMUdict entry), its units
// r.source and their ids (source_ids).
std::vector<int32_t> read_source(const ModelFiles& m, const std::string& line,
                                 const TranslationOptions& o, TranslationResult& r) {
  r.input = model_input(m, line);
  r.source = m.src_seg.split(r.input);
  return source_ids(m, o, r);
}

// Syntactic attention's tree over each source, [n + 1][n] in the source's order (none when the
// model has no syntactic attention).
std::vector<std::vector<std::vector<float>>> source_trees(
    const Seq2SeqModel& model, const std::vector<std::vector<int32_t>>& src) {
  std::vector<std::vector<std::vector<float>>> out(src.size());
  Graph g(Mode::Inference);
  const bool reversed = model.reverse_source();
  const std::vector<std::vector<int32_t>> no_targets(src.size());
  const Tensor t = model.source_trees(g, make_batch(src, no_targets, reversed));  // [B, S + 1, S]
  if (t.shape().rank() != 3) return out;
  const int64_t S = t.shape()[2];
  for (size_t b = 0; b < src.size(); ++b) {
    const auto n = static_cast<int64_t>(src[b].size());
    // position p of the batch holds source unit p (reversed: n - 1 - p); the root stays 0
    auto unit = [&](int64_t p) { return reversed ? n - 1 - p : p; };
    auto& tree = out[b];
    tree.assign(static_cast<size_t>(n + 1), std::vector<float>(static_cast<size_t>(n), 0.f));
    for (int64_t h = 0; h <= n; ++h)
      for (int64_t m = 0; m < n; ++m)
        tree[static_cast<size_t>(h == 0 ? 0 : unit(h - 1) + 1)][static_cast<size_t>(unit(m))] =
            t.data()[(static_cast<int64_t>(b) * (S + 1) + h) * S + m];
  }
  return out;
}

}  // namespace

void check_translation_options(const TranslationOptions& o) {
  using namespace limits;
  check_search_options(o.beam_size, o.num_hypotheses, o.length_penalty, o.max_len_ratio,
                       o.max_decoding_length,
                       {.beam = "beam_size (--beam)",
                        .n_best = "num_hypotheses (--n-best)",
                        .beam_short = "beam_size",
                        .length_penalty = "length_penalty (--length-penalty)",
                        .max_len_ratio = "max_len_ratio (--max-len-ratio)",
                        .max_length = "max_decoding_length (--max-length)",
                        .by_ratio = "max_len_ratio"});
  check(o.max_batch_size >= 1 && o.max_batch_size <= kMaxBatch,
        "max_batch_size (--batch) must be in 1..", kMaxBatch, ", got ", o.max_batch_size);
  check(o.max_batch_size * o.beam_size <= kMaxRows, "max_batch_size (--batch) ", o.max_batch_size,
        " times beam_size (--beam) ", o.beam_size, " must be at most ", kMaxRows, " rows");
  check(o.max_input_length >= 0 && o.max_input_length <= kMaxLength,
        "max_input_length (--max-input-length) must be in 0..", kMaxLength, " (0: no limit), got ",
        o.max_input_length);
  check(o.attention_layer >= -1, "attention_layer (--layer) must be >= -1 (-1: the last), got ",
        o.attention_layer);
  check(o.attention_head >= -1, "attention_head (--head) must be >= -1 (-1: the mean), got ",
        o.attention_head);
  check(std::isfinite(o.lm_weight) && std::abs(o.lm_weight) <= kMaxLmWeight,
        "lm_weight (--lm-weight) must be in [-", kMaxLmWeight, ", ", kMaxLmWeight, "], got ",
        o.lm_weight);
  check(std::isfinite(o.lm_bonus) && std::abs(o.lm_bonus) <= kMaxLmWeight,
        "lm_bonus (--lm-bonus) must be in [-", kMaxLmWeight, ", ", kMaxLmWeight, "], got ",
        o.lm_bonus);
}

Translator::Translator(const std::vector<std::string>& model_dirs, const TranslatorOptions& o)
    : files_(load_models(model_dirs, o.load)) {
  check(o.threads >= 0 && o.threads <= kMaxThreads, "threads must be in 0..", kMaxThreads,
        " (0: all cores), got ", o.threads);
  if (o.threads > 0) set_threads(o.threads);
  std::vector<const Seq2SeqModel*> members;
  for (const auto& files : files_) {
    files->params.prepare_for_inference(o.compute_type == ComputeType::Int8);
    members.push_back(files->model.get());
  }
  if (members.size() > 1) ensemble_ = std::make_unique<Ensemble>(members);
  model_ = ensemble_ ? ensemble_.get() : members.front();
  if (!o.lm.empty()) {
    check(model_->frame_labeller() != nullptr, "--lm ", o.lm,
          ": an n-gram LM joins the search of ctc models only");
    lm_ = std::make_unique<NgramLm>(NgramLm::read_arpa(o.lm));
    const Vocab& v = text_format().tgt_vocab;
    size_t known = 0;
    for (int32_t c = 0; c < v.size(); ++c) {
      lm_ids_.push_back(c <= Vocab::kUnk ? NgramLm::kUnk : lm_->id(v.token(c)));
      known += lm_ids_.back() != NgramLm::kUnk ? 1 : 0;
    }
    check(known > 0, "--lm ", o.lm, ": none of the model's output units is among its words");
  }
}

void Translator::translate_each(const std::vector<std::string>& sentences,
                                const TranslationOptions& o, const Sink& sink,
                                const Progress& progress) const {
  const ModelFiles& m = text_format();
  decode_each(
      sentences.size(),
      [&](size_t k, TranslationResult& r) { return read_source(m, sentences[k], o, r); }, o, sink,
      progress);
}

std::vector<TranslationResult> Translator::translate_units(
    const std::vector<std::vector<std::string>>& sources, const TranslationOptions& o) const {
  const ModelFiles& m = text_format();
  std::vector<TranslationResult> out(sources.size());
  decode_each(
      sources.size(),
      [&](size_t k, TranslationResult& r) {
        r.source = sources[k];
        for (const std::string& u : r.source)
          check(!u.empty(), "source ", k,
                ": an empty unit (units are words, characters or "
                "pieces as the model's source side splits them)");
        r.input = m.src_seg.join(r.source);
        return source_ids(m, o, r);
      },
      o, [&](size_t i, TranslationResult&& r) { out[i] = std::move(r); }, {});
  return out;
}

void Translator::decode_each(size_t n, const ReadSource& read, const TranslationOptions& o,
                             const Sink& sink, const Progress& progress) const {
  check_translation_options(o);
  const ModelFiles& m = text_format();
  const AttentionChoice choice{.wanted = o.return_attention || o.replace_unknowns,
                               .layer = o.attention_layer,
                               .head = o.attention_head,
                               .distribution = o.attention_distribution};
  BeamOptions search{.beam = o.beam_size,
                     .length_penalty = o.length_penalty,
                     .max_len_ratio = o.max_len_ratio,
                     .max_length = o.max_decoding_length,
                     .n_best = o.num_hypotheses,
                     .scores = o.return_scores,
                     .stop = o.stop};
  CtcLm lm{.lm = lm_.get(), .ids = lm_ids_, .weight = o.lm_weight, .bonus = o.lm_bonus};
  if (lm_) {
    check(o.beam_size > 1,
          "--lm: the n-gram model joins the prefix search, which needs a beam "
          "of 2 or more (--beam)");
    search.ctc_lm = &lm;
  }
  const size_t per_batch = static_cast<size_t>(o.max_batch_size), window = 50 * per_batch;
  size_t out_tokens = 0;
  for (size_t w0 = 0; w0 < n; w0 += window) {
    const size_t w1 = std::min(n, w0 + window);
    std::vector<TranslationResult> results(w1 - w0);
    std::vector<std::vector<int32_t>> ids(w1 - w0);
    for (size_t k = w0; k < w1; ++k) {
      ids[k - w0] = read(k, results[k - w0]);
    }
    std::vector<size_t> order;  // the window's lines with units, shortest source first
    for (size_t k = 0; k < ids.size(); ++k)
      if (ids[k].empty())
        results[k].hypotheses.emplace_back();  // a blank line: an empty translation
      else
        order.push_back(k);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return ids[a].size() < ids[b].size(); });
    for (size_t b0 = 0; b0 < order.size(); b0 += per_batch) {
      const size_t b1 = std::min(order.size(), b0 + per_batch);
      check_not_stopped(o.stop);  // (CTC's search has no steps to check it in)
      std::vector<std::vector<int32_t>> src;
      for (size_t j = b0; j < b1; ++j) src.push_back(std::move(ids[order[j]]));
      if (o.return_tree) {
        auto trees = source_trees(*model_, src);
        for (size_t j = b0; j < b1; ++j) results[order[j]].tree = std::move(trees[j - b0]);
      }
      auto hyps = decode_n_best(*model_, std::move(src), search, choice);
      for (size_t j = b0; j < b1; ++j) {
        TranslationResult& r = results[order[j]];
        for (Hypothesis& h : hyps[j - b0]) {
          TranslationHypothesis t;
          t.tokens = o.replace_unknowns
                         ? replace_unknowns(h.tokens, h.attention, r.source, m.tgt_vocab)
                         : m.tgt_vocab.decode(h.tokens);
          t.text = m.tgt_seg.join(t.tokens);
          t.log_prob = h.log_prob;
          // CTC ranks labellings by log p itself (its search has no length bias to correct)
          t.score = model_->frame_labeller() ? h.log_prob : normalised_score(h, o.length_penalty);
          t.token_log_probs = std::move(h.token_log_probs);
          if (o.return_attention) {
            t.attention = std::move(h.attention);
            t.path = std::move(h.path);
          }
          out_tokens += h.tokens.size();
          r.hypotheses.push_back(std::move(t));
        }
      }
      if (progress) progress(w1 - order.size() + b1, out_tokens);  // blank lines are done
    }
    if (order.empty() && progress) progress(w1, out_tokens);
    for (size_t k = w0; k < w1; ++k) sink(k, std::move(results[k - w0]));
  }
}

std::vector<TranslationResult> Translator::translate(const std::vector<std::string>& sentences,
                                                     const TranslationOptions& o) const {
  std::vector<TranslationResult> out(sentences.size());
  translate_each(sentences, o, [&](size_t i, TranslationResult&& r) { out[i] = std::move(r); });
  return out;
}

Translator::OnlineTranslation Translator::translate_online(const std::string& sentence,
                                                           const TranslationOptions& o,
                                                           const Write& write) const {
  check_translation_options(o);
  check(o.beam_size == 1, "online decoding is greedy (--beam 1), got a beam of ", o.beam_size);
  const ModelFiles& m = text_format();
  OnlineTranslation out;
  TranslationResult& r = out.result;
  const std::vector<int32_t> ids = read_source(m, sentence, o, r);
  if (ids.empty()) {  // a blank line: an empty translation, nothing read or written
    r.hypotheses.emplace_back();
    return out;
  }
  BeamOptions bounds;
  bounds.max_len_ratio = o.max_len_ratio;
  bounds.max_length = o.max_decoding_length;
  OnlineOutput d =
      online_decode(*model_, ids, output_limit(bounds, static_cast<int64_t>(ids.size())),
                    [&](int32_t id, int64_t delay) {
                      if (write) write(m.tgt_vocab.token(id), delay);
                    });
  TranslationHypothesis t;
  t.tokens = m.tgt_vocab.decode(d.tokens);
  t.text = m.tgt_seg.join(t.tokens);
  t.log_prob = d.log_prob;
  t.score = d.log_prob;
  if (o.return_attention) t.attention = std::move(d.attention);
  r.hypotheses.push_back(std::move(t));
  out.delays = std::move(d.delays);
  return out;
}

std::vector<ScoringResult> Translator::score(const std::vector<std::string>& sources,
                                             const std::vector<std::string>& targets,
                                             const TranslationOptions& o) const {
  check(sources.size() == targets.size(), "score: ", sources.size(), " sources but ",
        targets.size(), " targets");
  check_translation_options(o);
  const ModelFiles& m = text_format();
  const AttentionChoice choice{.wanted = o.return_attention,
                               .layer = o.attention_layer,
                               .head = o.attention_head,
                               .distribution = o.attention_distribution};
  std::vector<ScoringResult> out(sources.size());
  const auto per_batch = static_cast<size_t>(o.max_batch_size);
  for (size_t b0 = 0; b0 < sources.size(); b0 += per_batch) {
    const size_t b1 = std::min(sources.size(), b0 + per_batch);
    std::vector<std::vector<int32_t>> src, tgt;
    for (size_t k = b0; k < b1; ++k) {
      ScoringResult& r = out[k];
      r.source = m.src_seg.split(model_input(m, sources[k]));
      r.tokens = m.tgt_seg.split(targets[k]);
      // a cut pair would get a score that is not its own: refused instead (bounded memory)
      const auto longest = static_cast<int64_t>(std::max(r.source.size(), r.tokens.size()));
      check(o.max_input_length <= 0 || longest <= o.max_input_length, "score: pair ", k + 1,
            " has ", longest, " units on one side, more than the input length limit of ",
            o.max_input_length, " (--max-input-length)");
      src.push_back(encode_source(m, r.source));
      tgt.push_back(m.tgt_vocab.encode(r.tokens));
    }
    auto forced = force_decode(*model_, std::move(src), tgt, choice);
    for (size_t k = b0; k < b1; ++k) {
      Hypothesis& h = forced[k - b0];
      out[k].log_prob = h.log_prob;
      out[k].token_log_probs = std::move(h.token_log_probs);
      out[k].attention = std::move(h.attention);
      out[k].path = std::move(h.path);
    }
  }
  return out;
}

std::string Translator::output_line(const TranslationResult& r,
                                    const TranslationHypothesis& h) const {
  // G2P: a CMUdict entry, "WORD  PH PH"; a blank line stays blank
  const bool blank = r.input.find_first_not_of(" \t") == std::string::npos;
  return text_format().g2p && !blank ? r.input + "  " + h.text : h.text;
}

std::string score_text(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.5f", x);
  return buf;
}

std::string Translator::nbest_line(size_t index, const TranslationResult& r,
                                   const TranslationHypothesis& h, int num_hypotheses) const {
  if (!nbest_lines_have_scores(num_hypotheses)) return output_line(r, h);
  return std::to_string(index) + " ||| " + output_line(r, h) +
         " ||| F0= " + score_text(h.log_prob) + " ||| " + score_text(h.score);
}

}  // namespace heed
