// `heed train`: the option list of train/train_options.h as flags, then the library's train().
// Leaves out: the options themselves and what they mean (train/train_options.h, the families'
// configure), and training (train/).
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <streambuf>
#include <string>
#include <type_traits>

#include "commands.h"
#include "heed/bench/machine.h"
#include "heed/bench/measure.h"
#include "heed/bench/train_bench.h"
#include "heed/dist/communicator.h"
#include "heed/io/files.h"
#include "heed/kernels/parallel.h"
#include "heed/util/error.h"
#include "heed/version.h"

namespace heed::cli {

// --bench: the machine measured before the run (its fields on the speed line), and a
// temporary model directory unless --save names one
struct BenchRun {
  std::optional<TempDir> scratch;
  bench::MachineInfo machine;
  explicit BenchRun(LoopOptions& o) {
    check(o.max_minutes > 0 || o.max_steps > 0,
          "train --bench: give a budget, --max-minutes M or --max-steps N");
    if (o.save_dir.empty()) {
      scratch.emplace("heed-bench");
      o.save_dir = scratch->path();
    }
    machine = bench::measure_machine();
    bench::set_line_fields(bench::machine_fields(machine));
  }
  void report(const LoopResult& r, Precision precision) const {
    bench::write_line(std::cout, bench::training_speed(r, precision, machine));
  }
};

namespace {

// The CLI11 check of a numeric option's bounds (integer: an integer range)
template <class V>
CLI::Validator validator(const Bounds& b) {
  using Kind = Bounds::Kind;
  switch (b.kind) {
    case Kind::Any:
      break;
    case Kind::Size:
      return kSize;
    case Kind::Range: {
      CLI::Validator range =
          std::is_integral_v<V> ? CLI::Range(static_cast<int64_t>(b.lo), static_cast<int64_t>(b.hi))
                                : CLI::Range(b.lo, b.hi);
      return b.finite ? range & kFinite : range;
    }
    case Kind::NonNegative:
      return b.finite ? kNonNegative : CLI::NonNegativeNumber;
    case Kind::Positive:
      return kPositive;
    case Kind::Probability:
      return kProbability;
    case Kind::Fraction:
      return kFraction;
    case Kind::Members:
      return CLI::IsMember({static_cast<int>(b.lo), static_cast<int>(b.hi)});
  }
  return CLI::Validator();
}

// visit_train_options' visitor: each option becomes a flag of `app`, bound to its field.
struct FlagAdder {
  CLI::App& app;

  void group(const char* name) const { app.option_defaults()->group(name); }

  template <class T>
  void option(const OptionInfo& i, T& field) const {
    CLI::Option* opt = nullptr;
    if constexpr (std::is_enum_v<T>) {
      opt = add_enum_option(app, i.flags, field, i.help);
    } else if constexpr (is_optional_v<T>) {
      using V = typename T::value_type;
      if constexpr (std::is_enum_v<V>) {
        opt = add_enum_option(app, i.flags, field, i.help);
      } else {
        opt = app.add_option_function<V>(
            i.flags, [&field](const V& v) { field = v; }, i.help);
        if (i.bounds.kind != Bounds::Kind::Any) opt->check(validator<V>(i.bounds));
      }
    } else {
      opt = app.add_option(i.flags, field, i.help);
      if (i.delimiter != '\0') opt->delimiter(i.delimiter);
      if constexpr (std::is_same_v<T, std::string>) {
        if (i.show_default && !field.empty()) opt->capture_default_str();
      } else {
        if (i.show_default) opt->capture_default_str();
        if constexpr (std::is_arithmetic_v<T>) {
          if (i.bounds.kind != Bounds::Kind::Any) opt->check(validator<T>(i.bounds));
        } else {  // a list of numbers: each element
          if (i.bounds.kind != Bounds::Kind::Any)
            opt->check(validator<typename T::value_type>(i.bounds));
        }
      }
    }
    if (i.group) opt->group(i.group);
  }

  void flag(const OptionInfo& i, bool& field) const {
    CLI::Option* opt = app.add_flag(i.flags, field, i.help);
    if (i.group) opt->group(i.group);
  }

  template <class E>
  void flag(const OptionInfo& i, E& field, E on, E off) const {
    app.add_flag_function(
           i.flags, [&field, on, off](int64_t n) { field = n > 0 ? on : off; }, i.help)
        ->default_str(field == on ? "true" : "false");
  }

  void family(const OptionInfo& i, std::optional<std::string>& field) const {
    app.add_option(i.flags, field, i.help)->check(CLI::IsMember(family_choices()));
  }
};

// Where training reports: stdout (stderr with --bench, whose JSON owns stdout); nowhere on the
// ranks of a data-parallel job other than 0, which speaks for them all.
// The training log's destinations: stderr unless --quiet, and the --log file (appended), each
// write to both. A failed write to the file is an Error once training ends (check()).
class LogSink : public std::streambuf {
 public:
  LogSink(const LoopOptions& o)
      : console_(o.quiet ? nullptr : std::cerr.rdbuf()), path_(o.log_file) {
    if (path_.empty()) return;
    file_.open(path_, std::ios::app);
    check(file_.is_open(), "--log ", path_, ": cannot open for appending (", std::strerror(errno),
          ")");
  }
  void check_written() {
    if (path_.empty()) return;
    file_.flush();
    check(file_.good(), "--log ", path_, ": the log could not be written whole");
  }

 protected:
  int overflow(int c) override {
    if (c == traits_type::eof()) return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    return xsputn(&ch, 1) == 1 ? c : traits_type::eof();
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (console_) console_->sputn(s, n);
    if (file_.is_open()) file_.write(s, n);
    return n;
  }
  int sync() override {
    if (console_) console_->pubsync();
    if (file_.is_open()) file_.flush();
    return 0;
  }

 private:
  std::streambuf* console_;
  std::string path_;
  std::ofstream file_;
};

// The command line as CLI11 parsed it: "heed train --flag value ..." (each option given, in the
// order of the option list, values quoted when they hold a space).
std::string command_line(const CLI::App& app) {
  std::string out = "heed " + app.get_name();
  for (const CLI::Option* o : app.get_options()) {
    if (o->count() == 0 || o->get_lnames().empty()) continue;
    const std::string flag = "--" + o->get_lnames().front();
    const std::vector<std::string>& values = o->results();
    if (o->get_type_size_max() == 0 || (values.size() == 1 && values[0] == "true")) {  // a flag
      out.append(" ").append(flag);
      continue;
    }
    for (const std::string& v : values)
      out.append(" ").append(flag).append(" ").append(
          v.find_first_of(" \t\"'") == std::string::npos ? v : nlohmann::json(v).dump());
  }
  return out;
}

// DIR/run.json once training ends: what `heed report` shows of the run — the command, heed's
// version, the parameters, the steps, minutes and training throughput, the best validation, the
// machine.
void write_run_summary(const std::string& dir, const CLI::App& app, const LoopResult& r) {
  const bench::CpuId cpu = bench::read_cpu();
  const std::time_t now = std::time(nullptr);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  const nlohmann::ordered_json run = {
      {"heed", HEED_VERSION},
      {"command", command_line(app)},
      {"parameters", r.params},
      {"steps", r.steps},
      {"minutes", r.minutes},
      {"best_step", r.best_step},
      {"best_dev", {{"metric", r.metric_name}, {"value", r.best_metric}}},
      {"train_tokens_per_s",
       r.step_seconds > 0 ? static_cast<double>(r.run_tokens) / r.step_seconds : 0.0},
      {"tokens", r.token_name},
      {"cpu", cpu.name},
      {"cpu_family", cpu.family},
      {"cpu_model", cpu.model},
      {"threads", threads()},
      {"finished", when}};
  write_file_atomic((std::filesystem::path(dir) / "run.json").string(), run.dump(2) + "\n");
}

}  // namespace

void TrainCommand::add(CLI::App& parent, int& threads) {
  app = parent.add_subcommand(
      "train", "Train a sequence-to-sequence model (translation, G2P) or a sentence classifier");
  app->footer(
      "Data-parallel on MPI: `mpirun -np N heed --threads T train ...` trains one model on N "
      "processes, each step on N times --batch (--batch-tokens), split across them; rank 0 "
      "validates and writes the model directory, which every rank must see (docs/"
      "DISTRIBUTED.md)." +
      std::string(dist::mpi_built() ? "" : " This heed was built without MPI.") + "\n\n" +
      family_defaults());
  FlagAdder adder{*app};
  visit_train_options(options, adder);
  app->add_option("--threads", threads, "Threads (0 = all cores)");
}

int TrainCommand::run() {
  dist::join_world();  // under mpirun: this process is one rank of a data-parallel job
  std::optional<BenchRun> bench;
  if (options.seq2seq.measure) {
    // --bench validates nothing: without --valid-src the training data stand in for the dev set
    // the trainers read (its first 16 entries), so that measuring needs no dev files
    TrainConfig& c = options.seq2seq;
    if (options.task == Task::Translate && c.valid_src.empty()) {
      c.valid_src = c.train_src;
      c.valid_tgt = c.train_tgt;
      if (c.valid_max == 0) c.valid_max = 16;
    }
    bench.emplace(c);
  }
  if (!dist::world().root()) {  // the others say nothing: rank 0 logs the job
    std::ostream nowhere(nullptr);
    train(options, nowhere);
    return 0;
  }
  LogSink sink(options.seq2seq);
  std::ostream log(&sink);
  const TrainOutcome r = train(options, log);
  log.flush();
  sink.check_written();
  if (!bench) write_run_summary(options.seq2seq.save_dir, *app, r.loop);
  if (bench) {
    bench->report(r.loop, options.seq2seq.precision);
    return 0;
  }
  if (options.task == Task::Classify) {
    std::cout << "best dev acc " << r.loop.best_metric << " at step " << r.loop.best_step << " of "
              << r.loop.steps << ", " << r.loop.minutes << " min";
    if (r.test_accuracy >= 0) std::cout << "; test acc " << r.test_accuracy;
  } else {
    std::cout << "best dev " << r.loop.metric_name << " " << r.loop.best_metric << " at step "
              << r.loop.best_step << " of " << r.loop.steps << ", " << r.loop.minutes << " min";
  }
  std::cout << "; model in " << options.seq2seq.save_dir << "\n";
  return 0;
}

}  // namespace heed::cli
