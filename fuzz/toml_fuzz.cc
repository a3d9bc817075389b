// Fuzz target: a --config TOML file as the command line reads it (cli/app.cc, CLI11's config
// reader and heed's messages about it), with --dump-config so that nothing runs; the first
// byte chooses the subcommand.
#include <iostream>
#include <sstream>

#include "commands.h"
#include "target.h"

HEED_FUZZ_TARGET(toml) {
  if (size == 0) return;
  static const char* subcommands[] = {"train", "translate", "classify", "attention", "report",
                                      "score", "split",     "average",  "bench",     "demo"};
  const std::string path =
      heed::fuzz::write_scratch("fuzz.toml", {reinterpret_cast<const char*>(data) + 1, size - 1});
  std::string args[] = {"heed", "--dump-config", "--config", path, subcommands[data[0] % 10]};
  char* argv[] = {args[0].data(), args[1].data(), args[2].data(), args[3].data(), args[4].data()};
  // what the app prints (the dump, its messages) is not the point here
  struct Silenced {
    std::ostringstream sink;
    std::streambuf* out = std::cout.rdbuf(sink.rdbuf());
    std::streambuf* err = std::cerr.rdbuf(sink.rdbuf());
    ~Silenced() {
      std::cout.rdbuf(out);
      std::cerr.rdbuf(err);
    }
  } silenced;
  heed::fuzz::expect_error_or_ok([&] { heed::cli::run(5, argv); });
}
