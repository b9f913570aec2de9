#include "pelab/cli/command_line.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <new>
#include <string>
#include <vector>

#include "pelab/backend/gemm.h"
#include "pelab/config/experiment.h"
#include "pelab/config/yaml_reader.h"
#include "pelab/core/build_info.h"
#include "pelab/core/error.h"
#include "pelab/core/process.h"
#include "pelab/core/strings.h"

#ifndef PELAB_SHIPPED_CONFIGS
#define PELAB_SHIPPED_CONFIGS ""
#endif

namespace pelab::cli {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kGemmBackends = {"auto", "onednn", "openblas", "packed"};

// The configs shipped with pelab: installed beside it (<prefix>/share/pelab/configs for
// <prefix>/bin/pelab), else the source tree's, for a pelab run from its build directory.
std::string shipped_configs_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path().parent_path() / "share" / "pelab" / "configs";
    if (fs::is_directory(installed, ec)) return installed.string();
  }
  const fs::path built = PELAB_SHIPPED_CONFIGS;
  return !built.empty() && fs::is_directory(built, ec) ? built.string() : "";
}

// An empty value names nothing: `--status ''` would reach the command as "not given",
// `--config-path ''` as the current directory, a positional '' as a missing argument, and
// fail later with a message that does not name it. Every option and positional that takes a
// value refuses '' at parse time, naming itself (the message is "NAME: " and this).
void refuse_empty_values(CLI::App* app) {
  for (CLI::Option* option : app->get_options({})) {
    if (option->get_expected_max() == 0) continue;  // a flag
    const bool positional = !option->nonpositional();
    // First, before any check of the option's own that would misname '' (transform()
    // puts it at the front; it changes nothing).
    option->transform(CLI::Validator(
        [positional](const std::string& value) {
          return !value.empty() ? std::string()
                 : positional
                     ? std::string("an empty argument (''); give a value")
                     : std::string("an empty value (''); give one, or leave the option out");
        },
        "", "non-empty"));
  }
  for (CLI::App* sub : app->get_subcommands({})) refuse_empty_values(sub);
}

// The one line an error prints, whatever its message holds: a value a message quotes
// unescaped (a path, a file's text) cannot move the cursor, colour the terminal or break
// the line.
int report_error(const std::string& message, int exit_code = 2) {
  std::string line = message;
  for (char& ch : line)
    if (ch == '\n' || ch == '\r') ch = ' ';
  std::fprintf(stderr, "pelab: error: %s\n", escape_unprintable(line).c_str());
  return exit_code;
}

}  // namespace

void use_gemm_backend(const std::string& option) {
  const char* env = std::getenv("PELAB_GEMM");
  const std::string name = !option.empty() ? option : env && *env ? env : "auto";
  PELAB_CHECK(std::find(kGemmBackends.begin(), kGemmBackends.end(), name) != kGemmBackends.end(),
              "PELAB_GEMM: '{}' is not a GEMM backend (valid: {})", message_text(name),
              join(kGemmBackends));
  set_gemm_backend(parse_gemm_backend(name));
  if (name != "auto" || env) ::setenv("PELAB_GEMM", name.c_str(), 1);
}

void use_config_search_path(const std::vector<std::string>& config_path) {
  // The runs a sweep starts find these directories through PELAB_CONFIG_PATH, where ':'
  // separates them: one holding ':' (or relative to a working directory that does) is
  // refused here, before any command has written anything.
  const auto absolute = [](const std::string& d, const std::string& given_as) {
    std::string a = fs::absolute(d).string();
    PELAB_CHECK(a.find(':') == std::string::npos,
                "{} {}: the directory {} holds ':', which separates the directories of "
                "PELAB_CONFIG_PATH (through which a sweep's runs find it); rename it or give a "
                "link to it",
                given_as, message_text(d), message_text(a));
    return a;
  };
  std::vector<std::string> dirs;
  for (const std::string& d : config_path) dirs.push_back(absolute(d, "--config-path"));
  const char* env = std::getenv("PELAB_CONFIG_PATH");
  for (std::string rest = env ? env : ""; !rest.empty();) {
    const size_t colon = rest.find(':');
    const std::string d = rest.substr(0, colon);
    if (!d.empty()) dirs.push_back(absolute(d, "PELAB_CONFIG_PATH"));
    rest = colon == std::string::npos ? "" : rest.substr(colon + 1);
  }
  // The runs a sweep starts (pelab processes) look where this one looks.
  if (!dirs.empty()) ::setenv("PELAB_CONFIG_PATH", join(dirs, ":").c_str(), 1);
  const std::string shipped = shipped_configs_dir();
  if (!shipped.empty()) dirs.push_back(shipped);
  set_config_search_path(dirs);
}

CommandLine::CommandLine(const std::vector<CommandGroup>& groups)
    : app_(
          "pelab: how should position enter a transformer? Train encoders with any "
          "positional scheme on toy tasks, evaluate by length, compare.") {
  app_.require_subcommand(1);
  app_.set_version_flag("--version",
                        fmt::format("pelab {} (commit {})", pelab_version(), pelab_git_commit()));
  for (const CommandGroup& group : groups) group.add(app_, action_);
  for (const CommandGroup& group : groups) {
    for (const std::vector<std::string>& path : group.reading_config) {
      CLI::App* reads_config = &app_;
      for (const std::string& name : path) reads_config = reads_config->get_subcommand(name);
      reads_config
          ->add_option("--config-path", config_path_,
                       "also look for config groups in DIR (after the config's own configs/; "
                       "repeatable; then PELAB_CONFIG_PATH, then pelab's shipped configs)")
          ->type_name("DIR")
          ->expected(1)
          ->take_all();
    }
  }
  add_gemm_option(&app_);
  refuse_empty_values(&app_);
}

// --gemm on pelab itself and every command (bench has its own, with the same values).
void CommandLine::add_gemm_option(CLI::App* app) {
  if (app->get_name() == "bench") return;
  app->add_option("--gemm", gemm_,
                  "the GEMM backend of every matmul: auto (the default), onednn, openblas or "
                  "packed (pelab's own kernel); default $PELAB_GEMM, else auto")
      ->check(CLI::IsMember(kGemmBackends));
  for (CLI::App* sub : app->get_subcommands({})) add_gemm_option(sub);
}

std::vector<CommandGroup> framework_commands() {
  return {{add_run_commands, {{"train"}, {"print-config"}}},
          {add_sweep_commands, {{"sweep"}}},
          {add_suite_commands,
           {{"suite", "run"}, {"suite", "report"}, {"suite", "record"}, {"suite", "docs"}}},
          {add_schemes_command},
          {add_data_commands},
          {add_dump_command},
          {add_init_command, {{"init"}}},
          {add_provenance_command}};
}

Action CommandLine::parse(int argc, const char* const* argv) {
  action_ = nullptr;
  config_path_.clear();
  gemm_.clear();
  app_.parse(argc, argv);
  if (!action_) return action_;
  return [action = action_, dirs = config_path_, gemm = gemm_] {
    use_gemm_backend(gemm);
    use_config_search_path(dirs);
    return action();
  };
}

std::string CommandLine::describe(const CLI::ParseError& e, int argc,
                                  const char* const* argv) const {
  // The innermost command given: "pelab analyze encoding --help".
  std::string command = "pelab";
  for (const CLI::App* sub = &app_; !sub->get_subcommands().empty();) {
    sub = sub->get_subcommands().front();
    command += " " + sub->get_name();
  }
  const std::string help = command + " --help";
  if (!app_.get_subcommands().empty() || argc < 2)
    return fmt::format("{} (see {})", e.what(), help);
  // No command was recognised. CLI11 takes a mistyped command for a stray argument and an
  // unknown option before any command for a missing command; name the word instead.
  std::vector<std::string> commands;
  for (const CLI::App* sub : app_.get_subcommands({})) commands.push_back(sub->get_name());
  const std::string word = message_text(argv[1]);
  // pelab's own option (--gemm) with no command after it.
  if (argv[1][0] == '-' && app_.get_option_no_throw(word.substr(0, word.find('='))) != nullptr)
    return fmt::format("a command is required after {} (valid: {}; see {})", word, join(commands),
                       help);
  if (argv[1][0] == '-')
    return fmt::format("unknown option '{}' (pelab takes a command first; valid: {}; see {})", word,
                       join(commands), help);
  const std::string near = nearest_name(argv[1], commands);
  return fmt::format("unknown command '{}' ({}valid: {}; see {})", word,
                     near.empty() ? "" : "did you mean '" + near + "'? ", join(commands), help);
}

// Every exception from the commands is caught below; what could still escape is an allocation
// failing while the error message itself is being built.
int run_command_line(int argc, char** argv,  // NOLINT(bugprone-exception-escape)
                     const std::vector<CommandGroup>& groups) {
  die_with_parent_if_asked();  // a run a sweep started ends with the sweep
  try {
    CommandLine command_line(groups);
    Action action;
    try {
      action = command_line.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      // --help and --version arrive as "errors" that succeed.
      if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success))
        return command_line.exit(e);
      return report_error(command_line.describe(e, argc, argv));
    }
    return action ? action() : 0;
  } catch (const DivergedError& e) {
    return report_error(e.what(), 4);
  } catch (const Error& e) {
    return report_error(e.what());
  } catch (const std::bad_alloc&) {
    return report_error("out of memory");
  } catch (const std::exception& e) {
    return report_error(e.what());
  } catch (...) {
    return report_error("an unknown internal error (please report this)");
  }
}

}  // namespace pelab::cli
