// Kaldi data directories and TSV manifests (see the header).
#include "heed/data/speech_corpus.h"

#include <cctype>

#include <charconv>
#include <filesystem>
#include <map>
#include <set>
#include <string_view>

#include "heed/data/text.h"
#include "heed/util/error.h"

namespace fs = std::filesystem;

namespace heed {
namespace {

// "<key> <rest>": the first field, and the rest with its leading blanks dropped
std::pair<std::string, std::string> key_and_rest(const std::string& line) {
  const size_t end = line.find_first_of(" \t");
  if (end == std::string::npos) return {line, ""};
  const size_t rest = line.find_first_not_of(" \t", end);
  return {line.substr(0, end), rest == std::string::npos ? "" : line.substr(rest)};
}

double seconds(std::string_view s, const std::string& where) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  check(ec == std::errc() && end == s.data() + s.size(), where, ": '", s,
        "' is not a number of seconds");
  return v;
}

// The non-blank lines of a file with their numbers.
std::vector<std::pair<int64_t, std::string>> numbered_lines(const std::string& path) {
  std::vector<std::pair<int64_t, std::string>> out;
  const std::vector<std::string> lines = read_lines(path);
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].find_first_not_of(" \t") != std::string::npos)
      out.emplace_back(static_cast<int64_t>(i) + 1, lines[i]);
  return out;
}

}  // namespace

SpeechCorpus read_kaldi_dir(const std::string& dir) {
  const fs::path d(dir);
  const std::string scp = (d / "wav.scp").string(), text = (d / "text").string(),
                    segments = (d / "segments").string();
  check(fs::exists(scp) && fs::exists(text), dir,
        ": a Kaldi data directory needs wav.scp and text");
  std::map<std::string, std::string> recordings;  // id -> path
  for (const auto& [n, line] : numbered_lines(scp)) {
    const std::string where = scp + ":" + std::to_string(n);
    auto [id, path] = key_and_rest(line);
    check(!path.empty(), where, ": expected \"<recording-id> <path>\"");
    check(path.back() != '|', where,
          ": a command (Kaldi's pipe, ending in '|'); heed reads audio files: write the "
          "audio out and list the files");
    const fs::path p(path);  // relative: from the data directory
    check(recordings.emplace(id, p.is_absolute() ? path : (d / p).string()).second, where,
          ": recording ", id, " is listed twice");
  }
  // segments: utterance -> (recording, start, end)
  struct Segment {
    std::string recording;
    double start, end;
  };
  std::map<std::string, Segment> segs;
  const bool has_segments = fs::exists(segments);
  if (has_segments)
    for (const auto& [n, line] : numbered_lines(segments)) {
      const std::string where = segments + ":" + std::to_string(n);
      const std::vector<std::string> f = split_words(line);
      check(f.size() == 4, where, ": expected \"<utterance-id> <recording-id> <start> <end>\"");
      check(recordings.contains(f[1]), where, ": recording ", f[1], " is not in wav.scp");
      const Segment s{f[1], seconds(f[2], where), seconds(f[3], where)};
      check(s.start >= 0 && (s.end == -1 || s.end > s.start), where, ": the segment [", s.start,
            ", ", s.end, "] s is empty or negative");
      check(segs.emplace(f[0], s).second, where, ": utterance ", f[0], " is listed twice");
    }
  SpeechCorpus c{.source = dir, .utterances = {}};
  std::set<std::string> seen;
  for (const auto& [n, line] : numbered_lines(text)) {
    const std::string where = text + ":" + std::to_string(n);
    auto [id, transcript] = key_and_rest(line);
    check(seen.insert(id).second, where, ": utterance ", id, " is listed twice");
    Utterance u;
    u.id = id;
    u.text = transcript;
    u.where = where;
    if (has_segments) {
      const auto it = segs.find(id);
      check(it != segs.end(), where, ": utterance ", id, " has no line in ", segments);
      u.path = recordings.at(it->second.recording);
      u.start = it->second.start;
      u.end = it->second.end;
    } else {
      const auto it = recordings.find(id);
      check(it != recordings.end(), where, ": utterance ", id,
            " has no recording in wav.scp (and there is no segments file)");
      u.path = it->second;
    }
    c.utterances.push_back(std::move(u));
  }
  check(!c.utterances.empty(), text, ": no utterances");
  return c;
}

SpeechCorpus read_manifest(const std::string& path) {
  const fs::path folder = fs::path(path).parent_path();
  SpeechCorpus c{.source = path, .utterances = {}};
  for (const auto& [n, line] : numbered_lines(path)) {
    const std::string where = path + ":" + std::to_string(n);
    const size_t tab = line.find('\t');
    check(tab != std::string::npos && tab > 0, where, ": expected \"<audio path>\\t<transcript>\"");
    const fs::path audio(line.substr(0, tab));
    c.utterances.push_back(
        {.id = std::to_string(n),
         .path = audio.is_absolute() ? audio.string() : (folder / audio).string(),
         .text = line.substr(tab + 1),
         .where = where});
  }
  check(!c.utterances.empty(), path, ": no utterances");
  return c;
}

SpeechCorpus read_speech_corpus(const std::string& path) {
  return fs::is_directory(path) ? read_kaldi_dir(path) : read_manifest(path);
}

bool has_audio_extension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* audio : {".wav", ".flac", ".ogg", ".oga", ".opus", ".mp3", ".aiff", ".au"})
    if (ext == audio) return true;
  return false;
}

}  // namespace heed
