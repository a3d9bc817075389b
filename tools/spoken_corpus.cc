// heed-spoken-corpus: a text file read aloud by Debian's speech synthesisers, as a speech
// corpus anyone can rebuild. Each line is one utterance, read by one speaker of the part's
// plan at a random rate and pitch, with white noise at a random SNR on half of them; the
// output is 16 kHz 16-bit mono WAV, a manifest ("wav/ID.wav<TAB>text", the text as given), the
// speaker of each utterance (Kaldi's utt2spk) and each word's and phone's start and end in
// seconds (JSON lines), the synthesiser's own timings:
//   espeak-ng  its library's word and phoneme events (audio positions, ms);
//   flite      the utterance's Word and Segment relations (segment end times);
//   festival   the same relations, printed by a Scheme script festival runs in batch mode.
// The speakers of the parts never meet: training is read by espeak-ng's English accents
// with its m1-m5, f1-f3 and klatt variants and by flite's awb and rms; dev by an accent and
// variants training never hears and flite's slt; test by another such accent and variants
// and by festival's kal, an engine training never hears.
// Deterministic: utterance i's speaker, rate, pitch, level and noise come from a generator
// seeded by (--seed, --part, i), so shards (--shard K/N) and reruns give the same bytes. A
// killed run resumes: an utterance whose WAV and timing file exist is not synthesised again.
// Leaves out: reading the corpus (heed's own data/speech_corpus.h), features, training.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "heed/io/audio.h"
#include "heed/io/files.h"
#include "heed/util/error.h"

extern "C" {
#include <espeak-ng/speak_lib.h>
#include <flite/flite.h>
cst_voice* register_cmu_us_awb(const char* voxdir);
cst_voice* register_cmu_us_rms(const char* voxdir);
cst_voice* register_cmu_us_slt(const char* voxdir);
}

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr int kRate = 16000;

enum class Engine { espeak, flite, festival };

struct Speaker {
  Engine engine;
  std::string voice;  // espeak "accent+variant", flite or festival voice name
  double weight;      // share of the part's utterances
};

// The voices of each part: no speaker (and for test, no engine) of dev or test is in training.
std::vector<Speaker> plan(const std::string& part) {
  std::vector<Speaker> speakers;
  auto espeak = [&](std::initializer_list<const char*> accents,
                    std::initializer_list<const char*> variants, double weight) {
    for (const char* a : accents)
      for (const char* v : variants)
        speakers.push_back({Engine::espeak, std::string(a) + "+" + v,
                            weight / static_cast<double>(accents.size() * variants.size())});
  };
  if (part == "train") {
    espeak({"en-us", "en-gb", "en-gb-scotland", "en-gb-x-rp", "en-029", "en-us-nyc"},
           {"m1", "m2", "m3", "m4", "m5", "f1", "f2", "f3", "klatt"}, 0.86);
    speakers.push_back({Engine::flite, "awb", 0.07});
    speakers.push_back({Engine::flite, "rms", 0.07});
  } else if (part == "dev") {
    espeak({"en-gb-x-gbcwmd"}, {"m6", "f4"}, 0.7);
    speakers.push_back({Engine::flite, "slt", 0.3});
  } else if (part == "test") {
    espeak({"en-gb-x-gbclan"}, {"m7", "f5"}, 0.6);
    speakers.push_back({Engine::festival, "kal_diphone", 0.4});
  } else {
    heed::fail("--part: '", part, "' is none of train, dev, test");
  }
  return speakers;
}

const char* engine_name(Engine e) {
  switch (e) {
    case Engine::espeak:
      return "espeak-ng";
    case Engine::flite:
      return "flite";
    case Engine::festival:
      return "festival";
  }
  return "";
}

// What utterance i gets: a speaker, speed (1 = the engine's default), pitch and noise.
struct Reading {
  const Speaker* speaker = nullptr;
  double speed = 1;   // relative speaking rate
  int pitch = 50;     // espeak-ng's 0-100 base pitch
  int range = 50;     // espeak-ng's pitch range
  double peak = 0.5;  // the loudest sample's level
  double snr_db = 0;  // <= 0: clean
  uint64_t noise_seed = 0;
};

Reading draw(const std::vector<Speaker>& speakers, const std::string& part, uint64_t seed,
             size_t i) {
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                    static_cast<uint32_t>(std::hash<std::string>{}(part)), static_cast<uint32_t>(i),
                    static_cast<uint32_t>(i >> 32)};
  std::mt19937_64 rng(seq);
  std::uniform_real_distribution<double> u(0, 1);
  Reading r;
  double pick = u(rng), acc = 0;
  r.speaker = &speakers.back();
  for (const Speaker& s : speakers) {
    acc += s.weight;
    if (pick < acc) {
      r.speaker = &s;
      break;
    }
  }
  r.speed = 0.85 + 0.3 * u(rng);
  r.pitch = 30 + static_cast<int>(40 * u(rng));
  r.range = 30 + static_cast<int>(50 * u(rng));
  r.peak = 0.2 + 0.7 * u(rng);
  r.snr_db = u(rng) < 0.5 ? 10 + 20 * u(rng) : 0;
  r.noise_seed = rng();
  return r;
}

struct Timed {
  std::string name;
  double start, end;
};

struct Spoken {
  std::vector<float> samples;  // kRate
  std::vector<Timed> words, phones;
};

// ---------------------------------------------------------------------------- espeak-ng
struct EspeakSink {
  std::vector<float> samples;                             // at the library's rate
  std::vector<std::pair<int, std::string>> word_events;   // (ms, word)
  std::vector<std::pair<int, std::string>> phone_events;  // (ms, phoneme)
  int end_ms = -1;
  const std::string* text = nullptr;
};
EspeakSink* g_sink = nullptr;
int g_espeak_rate = 0;

int espeak_callback(short* wav, int n, espeak_EVENT* events) {
  for (int k = 0; k < n; ++k) g_sink->samples.push_back(static_cast<float>(wav[k]) / 32768.f);
  for (espeak_EVENT* e = events; e->type != espeakEVENT_LIST_TERMINATED; ++e) {
    if (e->type == espeakEVENT_WORD) {
      // text_position counts characters from 1; the text is ASCII/UTF-8 bytes here
      size_t at = e->text_position > 0 ? static_cast<size_t>(e->text_position - 1) : 0;
      g_sink->word_events.emplace_back(e->audio_position,
                                       g_sink->text->substr(at, static_cast<size_t>(e->length)));
    } else if (e->type == espeakEVENT_PHONEME) {
      g_sink->phone_events.emplace_back(e->audio_position,
                                        std::string(e->id.string, strnlen(e->id.string, 8)));
    } else if (e->type == espeakEVENT_END || e->type == espeakEVENT_MSG_TERMINATED) {
      g_sink->end_ms = std::max(g_sink->end_ms, e->audio_position);
    }
  }
  return 0;
}

void espeak_start() {
  g_espeak_rate = espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, nullptr, 1 /*phoneme events*/);
  if (g_espeak_rate <= 0) heed::fail("espeak-ng: espeak_Initialize failed");
  espeak_SetSynthCallback(espeak_callback);
}

// Phone timings from events: a phone ends where the next one starts; pauses are "sil".
std::vector<Timed> spans(const std::vector<std::pair<int, std::string>>& events, int end_ms) {
  std::vector<Timed> out;
  for (size_t k = 0; k < events.size(); ++k) {
    double end = (k + 1 < events.size() ? events[k + 1].first : end_ms) / 1000.0;
    const std::string& name = events[k].second;
    bool pause = name.empty() || name[0] == '_';
    out.push_back({pause ? "sil" : name, events[k].first / 1000.0, end});
  }
  return out;
}

Spoken speak_espeak(const std::string& text, const Reading& r) {
  EspeakSink sink;
  sink.text = &text;
  g_sink = &sink;
  // as espeak-ng's command line: a voice's name, else a language (both may carry "+variant")
  if (espeak_SetVoiceByName(r.speaker->voice.c_str()) != EE_OK) {
    espeak_VOICE select{};
    select.languages = r.speaker->voice.c_str();
    if (espeak_SetVoiceByProperties(&select) != EE_OK)
      heed::fail("espeak-ng: no voice '", r.speaker->voice, "'");
  }
  espeak_SetParameter(espeakRATE, static_cast<int>(std::lround(175 * r.speed)), 0);
  espeak_SetParameter(espeakPITCH, r.pitch, 0);
  espeak_SetParameter(espeakRANGE, r.range, 0);
  sink.text = &text;
  if (espeak_Synth(text.c_str(), text.size() + 1, 0, POS_CHARACTER, 0, espeakCHARS_UTF8, nullptr,
                   nullptr) != EE_OK)
    heed::fail("espeak-ng: synthesis failed on '", text, "'");
  espeak_Synchronize();
  g_sink = nullptr;
  int end_ms =
      sink.end_ms >= 0
          ? sink.end_ms
          : static_cast<int>(1000.0 * static_cast<double>(sink.samples.size()) / g_espeak_rate);
  Spoken s;
  s.phones = spans(sink.phone_events, end_ms);
  // a word runs from its event to the end of its last sounding phone before the next word
  for (size_t k = 0; k < sink.word_events.size(); ++k) {
    double start = sink.word_events[k].first / 1000.0;
    double next =
        (k + 1 < sink.word_events.size() ? sink.word_events[k + 1].first : end_ms) / 1000.0;
    double end = next;
    bool sounded = false;
    for (const Timed& p : s.phones)
      if (p.start >= start && p.start < next && p.name != "sil") {
        end = sounded ? std::max(end, p.end) : p.end;
        sounded = true;
      }
    s.words.push_back({sink.word_events[k].second, start, std::min(end, next)});
  }
  s.samples = heed::resample(std::move(sink.samples), g_espeak_rate, kRate, "espeak-ng",
                             heed::ResampleQuality::medium);
  return s;
}

// ---------------------------------------------------------------------------- flite
cst_voice* flite_voice(const std::string& name) {
  static std::vector<std::pair<std::string, cst_voice*>> voices;
  for (auto& [n, v] : voices)
    if (n == name) return v;
  cst_voice* v = name == "awb"   ? register_cmu_us_awb(nullptr)
                 : name == "rms" ? register_cmu_us_rms(nullptr)
                 : name == "slt" ? register_cmu_us_slt(nullptr)
                                 : nullptr;
  if (v == nullptr) heed::fail("flite: no voice '", name, "'");
  voices.emplace_back(name, v);
  return v;
}

Spoken speak_flite(const std::string& text, const Reading& r) {
  cst_voice* voice = flite_voice(r.speaker->voice);
  feat_set_float(voice->features, "duration_stretch", static_cast<float>(1.0 / r.speed));
  cst_utterance* utt = flite_synth_text(text.c_str(), voice);
  if (utt == nullptr) heed::fail("flite: synthesis failed on '", text, "'");
  cst_wave* w = utt_wave(utt);
  Spoken s;
  std::vector<float> samples(static_cast<size_t>(w->num_samples));
  for (int k = 0; k < w->num_samples; ++k) samples[k] = static_cast<float>(w->samples[k]) / 32768.f;
  for (cst_item* it = utt_rel_head(utt, "Word"); it != nullptr; it = item_next(it))
    s.words.push_back({ffeature_string(it, "name"),
                       ffeature_float(it, "R:SylStructure.daughter1.daughter1.R:Segment.p.end"),
                       ffeature_float(it, "R:SylStructure.daughtern.daughtern.R:Segment.end")});
  double start = 0;
  for (cst_item* it = utt_rel_head(utt, "Segment"); it != nullptr; it = item_next(it)) {
    double end = ffeature_float(it, "end");
    s.phones.push_back({ffeature_string(it, "name"), start, end});
    start = end;
  }
  s.samples = heed::resample(std::move(samples), w->sample_rate, kRate, "flite",
                             heed::ResampleQuality::medium);
  delete_utterance(utt);
  return s;
}

// ---------------------------------------------------------------------------- festival
std::string scheme_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// Festival runs as a program: one batch script synthesises every utterance it is given into
// DIR/ID.wav with DIR/ID.align ("w WORD START END" and "p PHONE END" lines).
void run_festival(const std::string& voice, const std::vector<std::string>& texts,
                  const std::vector<Reading>& readings, const std::vector<std::string>& ids,
                  const fs::path& dir) {
  fs::path script = dir / "festival.scm";
  std::ostringstream scm;
  scm << "(voice_" << voice << ")\n"
      << "(define (heed-say text stretch wav align)\n"
         "  (Parameter.set 'Duration_Stretch stretch)\n"
         "  (let ((utt (SynthText text)) (fd (fopen align \"w\")))\n"
         "    (utt.save.wave utt wav 'riff)\n"
         "    (mapcar (lambda (w) (format fd \"w\\t%s\\t%f\\t%f\\n\" (item.name w)\n"
         "      (item.feat w \"R:SylStructure.daughter1.daughter1.R:Segment.p.end\")\n"
         "      (item.feat w \"R:SylStructure.daughtern.daughtern.R:Segment.end\")))\n"
         "      (utt.relation.items utt 'Word))\n"
         "    (mapcar (lambda (s) (format fd \"p\\t%s\\t%f\\n\" (item.name s) (item.feat s "
         "\"end\")))\n"
         "      (utt.relation.items utt 'Segment))\n"
         "    (fclose fd)))\n";
  for (size_t k = 0; k < texts.size(); ++k)
    scm << "(heed-say " << scheme_string(texts[k]) << " " << 1.0 / readings[k].speed << " "
        << scheme_string((dir / (ids[k] + ".wav")).string()) << " "
        << scheme_string((dir / (ids[k] + ".align")).string()) << ")\n";
  heed::write_file_atomic(script.string(), scm.str());
  std::string command = "festival --batch " + scheme_string(script.string()) + " >" +
                        scheme_string((dir / "festival.log").string()) + " 2>&1";
  if (std::system(command.c_str()) != 0)
    heed::fail("festival failed (", command, "); see ", (dir / "festival.log").string());
}

Spoken read_festival(const fs::path& dir, const std::string& id) {
  Spoken s;
  heed::Audio audio = heed::read_audio((dir / (id + ".wav")).string());
  s.samples = std::move(audio.samples);
  std::istringstream in(heed::read_file((dir / (id + ".align")).string()));
  std::string line;
  double start = 0;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string kind, name;
    double a = 0, b = 0;
    fields >> kind >> name >> a;
    if (kind == "w") {
      fields >> b;
      s.words.push_back({name, a, b});
    } else if (kind == "p") {
      s.phones.push_back({name, start, a});
      start = a;
    }
  }
  return s;
}

// ---------------------------------------------------------------------------- output
// Level and noise: the peak scaled to r.peak, then white noise at r.snr_db (if > 0).
void finish(std::vector<float>& x, const Reading& r) {
  float peak = 0;
  for (float v : x) peak = std::max(peak, std::fabs(v));
  if (peak > 0)
    for (float& v : x) v *= static_cast<float>(r.peak / peak);
  if (r.snr_db <= 0) return;
  double power = 0;
  for (float v : x) power += static_cast<double>(v) * v;
  power /= static_cast<double>(std::max<size_t>(x.size(), 1));
  std::mt19937_64 rng(r.noise_seed);
  std::normal_distribution<double> n(0, std::sqrt(power / std::pow(10.0, r.snr_db / 10)));
  for (float& v : x) v = std::clamp(static_cast<float>(v + n(rng)), -1.f, 32767.f / 32768.f);
}

double round3(double v) {
  return std::round(v * 1000) / 1000;
}

json timing(const std::string& id, const std::string& text, const Reading& r, const Spoken& s) {
  auto list = [](const std::vector<Timed>& items, const char* key) {
    json a = json::array();
    for (const Timed& t : items)
      a.push_back({{key, t.name}, {"start", round3(t.start)}, {"end", round3(t.end)}});
    return a;
  };
  return {{"id", id},
          {"text", text},
          {"speaker", std::string(engine_name(r.speaker->engine)) + ":" + r.speaker->voice},
          {"seconds", round3(static_cast<double>(s.samples.size()) / kRate)},
          {"speed", round3(r.speed)},
          {"snr_db", r.snr_db > 0 ? json(round3(r.snr_db)) : json(nullptr)},
          {"words", list(s.words, "word")},
          {"phones", list(s.phones, "phone")}};
}

std::vector<std::string> read_lines(const std::string& path) {
  std::istringstream in(heed::read_file(path));
  std::vector<std::string> lines;
  std::string line;
  size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos)
      heed::fail(path, ":", n, ": an empty line (every line is an utterance)");
    lines.push_back(line);
  }
  return lines;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Reads a text file aloud with Debian's speech synthesisers (espeak-ng, flite, festival) "
      "into a speech corpus: OUT/wav/ID.wav (16 kHz mono), OUT/NAME.tsv "
      "(wav/ID.wav<TAB>text), OUT/NAME.utt2spk and OUT/NAME.align.jsonl (word and phone "
      "timings). Deterministic; a killed run resumes; shards may run side by side."};
  std::string text_path, out, part, name, shard = "0/1";
  uint64_t seed = 1;
  size_t limit = 0;
  bool merge_only = false;
  app.add_option("--text", text_path, "One utterance per line")->required();
  app.add_option("--out", out, "The corpus folder (created)")->required();
  app.add_option("--part", part,
                 "Whose voices read it: train, dev or test (no speaker of dev "
                 "or test reads training; test adds an engine training never hears)")
      ->required()
      ->check(CLI::IsMember({"train", "dev", "test"}));
  app.add_option("--name", name, "The manifest's name (default: the part)");
  app.add_option("--seed", seed, "Seeds every choice")->capture_default_str();
  app.add_option("--limit", limit, "Read only the first N lines (0: all)")->capture_default_str();
  app.add_option("--shard", shard,
                 "K/N: synthesise utterances i with i mod N = K (run N shards side by side, "
                 "then once more with --merge)")
      ->capture_default_str();
  app.add_flag("--merge", merge_only,
               "Only write the manifest, utt2spk and timings (every "
               "utterance must have been synthesised)");
  CLI11_PARSE(app, argc, argv);
  if (name.empty()) name = part;
  try {
    size_t k = 0, n = 1;
    if (std::sscanf(shard.c_str(), "%zu/%zu", &k, &n) != 2 || n == 0 || k >= n)
      heed::fail("--shard: '", shard, "' is not K/N with 0 <= K < N");
    std::vector<std::string> texts = read_lines(text_path);
    if (limit > 0 && texts.size() > limit) texts.resize(limit);
    std::vector<Speaker> speakers = plan(part);
    fs::path dir = fs::path(out) / "wav";
    fs::create_directories(dir);
    auto id_of = [&](size_t i) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%06zu", i + 1);
      return name + "-" + buf;
    };
    if (!merge_only) {
      std::vector<std::string> fest_text, fest_ids;
      std::vector<Reading> fest_readings;
      bool espeak_up = false;
      size_t done = 0, todo = 0;
      for (size_t i = k; i < texts.size(); i += n) ++todo;
      for (size_t i = k; i < texts.size(); i += n) {
        std::string id = id_of(i);
        fs::path wav = dir / (id + ".wav"), js = dir / (id + ".json");
        if (fs::exists(wav) && fs::exists(js)) {
          ++done;
          continue;
        }
        Reading r = draw(speakers, part, seed, i);
        Spoken s;
        switch (r.speaker->engine) {
          case Engine::espeak: {
            // espeak-ng keeps state from one synthesis to the next (an utterance read after
            // another comes out a few ms longer): each is read by a child of the process as
            // the library was initialised, so that shards, reruns and resumed runs give the
            // same bytes
            if (!espeak_up) espeak_start();
            espeak_up = true;
            const pid_t child = fork();
            heed::check(child >= 0, "fork failed: ", std::strerror(errno));
            if (child == 0) {
              int status = 0;
              try {
                Spoken one = speak_espeak(texts[i], r);
                finish(one.samples, r);
                heed::write_file_atomic(wav.string(), heed::wav_bytes(one.samples, kRate));
                heed::write_file_atomic(js.string(), timing(id, texts[i], r, one).dump() + "\n");
              } catch (const std::exception& e) {
                std::cerr << "heed-spoken-corpus: " << id << ": " << e.what() << "\n";
                status = 1;
              }
              std::_Exit(status);
            }
            int status = 0;
            heed::check(waitpid(child, &status, 0) == child && WIFEXITED(status) &&
                            WEXITSTATUS(status) == 0,
                        id, ": espeak-ng's reading failed");
            if (++done % 500 == 0)
              std::cerr << name << " " << shard << ": " << done << "/" << todo << "\n";
            continue;
          }
          case Engine::flite:
            s = speak_flite(texts[i], r);
            break;
          case Engine::festival:
            fest_text.push_back(texts[i]);
            fest_ids.push_back(id);
            fest_readings.push_back(r);
            continue;
        }
        finish(s.samples, r);
        heed::write_file_atomic(wav.string(), heed::wav_bytes(s.samples, kRate));
        heed::write_file_atomic(js.string(), timing(id, texts[i], r, s).dump() + "\n");
        if (++done % 500 == 0)
          std::cerr << name << " " << shard << ": " << done << "/" << todo << "\n";
      }
      if (!fest_text.empty()) {
        fs::path raw = fs::path(out) / ("festival-" + name + "-" + std::to_string(k));
        fs::create_directories(raw);
        // one festival voice per part (the plan's)
        run_festival(fest_readings[0].speaker->voice, fest_text, fest_readings, fest_ids, raw);
        for (size_t j = 0; j < fest_text.size(); ++j) {
          Spoken s = read_festival(raw, fest_ids[j]);
          finish(s.samples, fest_readings[j]);
          heed::write_file_atomic((dir / (fest_ids[j] + ".wav")).string(),
                                  heed::wav_bytes(s.samples, kRate));
          heed::write_file_atomic(
              (dir / (fest_ids[j] + ".json")).string(),
              timing(fest_ids[j], fest_text[j], fest_readings[j], s).dump() + "\n");
        }
        fs::remove_all(raw);
      }
      if (n > 1) return 0;
    }
    std::string manifest, utt2spk, align;
    for (size_t i = 0; i < texts.size(); ++i) {
      std::string id = id_of(i);
      fs::path js = dir / (id + ".json");
      if (!fs::exists(js) || !fs::exists(dir / (id + ".wav")))
        heed::fail(id, " has not been synthesised (run its shard first)");
      std::string line = heed::read_file(js.string());
      json j = json::parse(line);
      manifest += "wav/" + id + ".wav\t" + texts[i] + "\n";
      utt2spk += id + " " + j.at("speaker").get<std::string>() + "\n";
      align += line;
    }
    heed::write_file_atomic((fs::path(out) / (name + ".tsv")).string(), manifest);
    heed::write_file_atomic((fs::path(out) / (name + ".utt2spk")).string(), utt2spk);
    heed::write_file_atomic((fs::path(out) / (name + ".align.jsonl")).string(), align);
    std::cerr << name << ": " << texts.size() << " utterances in " << out << "\n";
  } catch (const std::exception& e) {
    std::cerr << "heed-spoken-corpus: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
