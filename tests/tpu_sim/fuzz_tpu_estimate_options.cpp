// libFuzzer target: any command line after `accel tpu estimate` (the input's
// bytes split at white space into at most 24 arguments) either runs, or is
// refused by CLI11's parser, or is refused by the command with one message
// that starts "accel tpu estimate: " and names what the user gave that was
// wrong: an option, a positional argument, the preset or an override. Never a
// crash, a hang, an escaping exception of another type, a sanitizer report,
// or a message from deep inside the timing model that names nothing the user
// typed. Built and run by run_estimate_options_fuzzer.sh (ctest label "fuzz").
#include <CLI/CLI.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "tpu_estimate_command.hpp"

namespace {

constexpr std::size_t kMostArguments = 24;

std::vector<std::string> split_arguments(std::string_view text) {
  std::vector<std::string> arguments;
  std::string current;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\0') {
      if (!current.empty()) arguments.push_back(std::move(current));
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) arguments.push_back(std::move(current));
  return arguments;
}

// What a refusal must name: something the user wrote, so that they can find
// and fix it: an option or a positional argument by the name the command's
// usage prints, the preset or an override, one of the arguments quoted, or a
// file given as the place of the error.
bool names_what_the_user_gave(std::string_view message, const std::vector<std::string>& arguments) {
  static constexpr std::array<std::string_view, 8> kNames = {"--",    "M N K",   "N H W C K R S", "ELEMENTS",
                                                             "BYTES", "KIND", "preset",        "override"};
  for (std::string_view name : kNames) {
    if (message.find(name) != std::string_view::npos) return true;
  }
  for (const std::string& argument : arguments) {
    if (message.find("'" + argument + "'") != std::string_view::npos) return true;
    // A file named as the place of the error: "PATH: not a readable file", "PATH:3:7: ...".
    if (argument.size() >= 4 && message.find(argument + ":") != std::string_view::npos) return true;
  }
  return false;
}

// Swaps a stream's buffer for a string's for one call, so that the fuzzer
// neither prints every estimate nor loses the refusal it checks.
class CapturedStream {
 public:
  explicit CapturedStream(std::ostream& stream) : stream_(stream), saved_(stream.rdbuf(buffer_.rdbuf())) {}
  ~CapturedStream() { stream_.rdbuf(saved_); }
  std::string text() const { return buffer_.str(); }

 private:
  std::ostream& stream_;
  std::ostringstream buffer_;
  std::streambuf* saved_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> arguments =
      split_arguments(std::string_view(reinterpret_cast<const char*>(data), size));
  if (arguments.size() > kMostArguments) return 0;
  arguments.insert(arguments.begin(), {"accel", "tpu", "estimate"});
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());

  CLI::App app{"accel"};
  app.require_subcommand(1);
  accel::cli::add_tpu_command(app);
  CapturedStream out(std::cout);
  CapturedStream err(std::cerr);
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::RuntimeError& refused) {
    const std::string message = err.text();
    if (message.rfind("accel tpu estimate: ", 0) != 0 || !names_what_the_user_gave(message, arguments)) {
      std::fprintf(stderr, "refusal that names nothing the user gave: '%s'\n", message.c_str());
      std::abort();
    }
  } catch (const CLI::ParseError& refused) {
    if (std::string_view(refused.what()).empty() && refused.get_exit_code() != 0) {
      std::fprintf(stderr, "a parse error without a message\n");
      std::abort();
    }
  }
  return 0;
}
