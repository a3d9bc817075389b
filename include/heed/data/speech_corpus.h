// Speech data as the speech toolkits keep it: a Kaldi data directory or a TSV manifest, read into
// utterances (an audio file, optionally a stretch of it, and its transcript).
//   Kaldi (a directory): wav.scp "<recording-id> <path>", text "<utterance-id> <transcript>",
//     optional segments "<utterance-id> <recording-id> <start> <end>" (seconds; end -1: to the
//     recording's end); without segments an utterance is the recording of its own id. wav.scp
//     lines that are commands (Kaldi's "... |" pipes) are refused: heed reads files.
//   Manifest (a file): "<path>\t<transcript>" per line, relative paths from the manifest's folder.
// Every error names the file and line. The audio itself is read later (io/audio.h).
// Leaves out: reading audio, features, splitting.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace heed {

struct Utterance {
  std::string id;     // the utterance id (a manifest's: its line number)
  std::string path;   // the audio file
  double start = 0;   // seconds into it
  double end = -1;    // seconds; -1: the file's end
  std::string text;   // the transcript
  std::string where;  // "FILE:LINE" of its transcript, for errors
};

struct SpeechCorpus {
  std::string source;  // the directory or manifest
  std::vector<Utterance> utterances;
};

SpeechCorpus read_kaldi_dir(const std::string& dir);
SpeechCorpus read_manifest(const std::string& path);
// By what `path` is: a directory is a Kaldi data directory, a file a manifest.
SpeechCorpus read_speech_corpus(const std::string& path);
// Whether a path names an audio file by its extension (.wav, .flac, .ogg, .oga, .opus, .mp3,
// .aiff, .au; any case): how a manifest is told from other TSV files, and an audio argument
// from a list of them.
bool has_audio_extension(const std::string& path);

}  // namespace heed
