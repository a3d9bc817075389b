// The `heed` executable: heed::cli::run (app.cc), with every exception ending in one message.
// Leaves out: any model logic (that lives in libheed) and the options (app.cc, commands.h).
#include <exception>
#include <iostream>

#include "commands.h"
#include "heed/dist/communicator.h"

// heed::Error (bad input, with file/line/shape) and any other exception end in one message.
int main(int argc, char** argv) {
  try {
    return heed::cli::run(argc, argv);
  } catch (const heed::cli::UsageError& e) {
    std::cerr << "heed: error: " << e.what() << "\n"
              << (e.help_hint ? "Run with --help for more information.\n" : "");
    return 2;
  } catch (const std::exception& e) {
    // a rank of a data-parallel job names itself, and ends the job: the others would wait for
    // it in their next collective forever
    std::cerr << "heed: error" << heed::dist::where(heed::dist::world()) << ": " << e.what()
              << "\n";
    heed::dist::world().abort(2);
    return 2;
  }
}
