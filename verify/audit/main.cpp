// detred-audit: how wrong and how unreproducible is each way of summing your data? Reads a file (.npy, raw binary,
// text), generates one (--gen, --sweep), or takes its embedded default; runs every detred sum on the CPU (and the GPU:
// --device), and reports errors against the exact sum, a-priori bounds, speed, and how many different bit patterns
// repeated runs, configurations and orders produced. docs/AUDIT.md is the manual.
//
// Exit status: 0 all promises kept; 1 an algorithm documented as deterministic gave more than one result (or an
// exact one missed the correctly rounded sum): usable in CI; 2 the audit could not run (bad input or usage, with a
// one-line message on stderr).
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "audit.hpp"
#include "csv_writer.hpp"
#include "default_input.hpp"
#include "detred/config.hpp"
#include "detred/verify/generators.hpp"
#include "gpu_algorithms.hpp"
#include "input_file.hpp"
#include "json_writer.hpp"
#include "npy_reader.hpp"
#include "npy_writer.hpp"
#include "plugins.hpp"
#include "progress.hpp"
#include "raw_reader.hpp"
#include "registry.hpp"
#include "spread_plot.hpp"
#include "svg_plot.hpp"
#include "table_writer.hpp"
#include "text_reader.hpp"

namespace audit = detred::audit;
namespace verify = detred::verify;

namespace {

constexpr int exit_broken_promise = 1;
constexpr int exit_cannot_run = 2;

// An error that ends the run with exit status 2 and its one-line message.
struct usage_error {
  std::string message;
};

struct cli_options {
  std::string file;
  std::string format = "auto";
  std::string dtype;  // "" = the format's own (npy), f64 (text, generators); required for raw
  std::string endian = "little";
  std::string gen;
  std::string n;  // parsed by parse_count: CLI11 would wrap "-5" around
  double cond = 1e16;
  std::uint64_t seed = 1;
  bool sweep = false;
  std::string plot;
  std::string device = "cpu";
  std::vector<std::string> algorithms;
  std::vector<std::string> plugins;  // --plugin libmine.so (plugins.hpp)
  bool list_algorithms = false;
  unsigned repeat = 5;
  unsigned permute = 10;
  bool configs = true;
  std::vector<unsigned> threads{1, 2, 3, 4, 8};
  std::string json;
  std::string csv;
  std::string save;
  bool quiet = false;
  bool strict = false;
  std::uint64_t stream_limit = audit::default_stream_limit;
  // Which options the command line gave (for the options that apply only with others).
  bool gave_cond = false, gave_n = false, gave_endian = false;
};

// The most values --gen and --sweep generate: 2^28 (2 GiB as f64).
constexpr std::uint64_t max_generated = std::uint64_t(1) << 28;

// --n: a decimal count in 1 .. max_generated, or `fallback` when not given.
std::uint64_t parse_count(const cli_options& o, std::uint64_t fallback) {
  if (!o.gave_n) return fallback;
  std::uint64_t n = 0;
  bool ok = !o.n.empty() && o.n.size() <= 12;
  for (char c : o.n) ok = ok && c >= '0' && c <= '9';
  if (ok) n = std::stoull(o.n);
  if (!ok || n < 1 || n > max_generated)
    throw usage_error{"--n " + o.n + ": expected a whole number from 1 to " + std::to_string(max_generated)};
  return n;
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

audit::element_type dtype_or(const cli_options& o, audit::element_type fallback) {
  if (o.dtype.empty()) return fallback;
  return *audit::parse_element_type(o.dtype);
}

audit::dataset take(audit::read_result result) {
  if (auto* error = std::get_if<audit::input_error>(&result)) throw usage_error{error->message};
  return std::get<audit::dataset>(std::move(result));
}

// The file, read in the format its name or its first bytes say (or --format). What can be checked from the first bytes
// (the .npy magic) is checked before the rest is read.
audit::dataset load_file(const cli_options& o) {
  audit::input_file file(o.file, o.stream_limit);
  const std::span<const std::byte> first = file.head(audit::npy_magic.size());
  const std::string_view head(reinterpret_cast<const char*>(first.data()), first.size());
  std::string format = o.format;
  if (format == "auto") {
    if (ends_with(o.file, ".npy") || head == audit::npy_magic)
      format = "npy";
    else if (ends_with(o.file, ".bin") || ends_with(o.file, ".raw") || ends_with(o.file, ".dat"))
      format = "raw";
    else
      format = "text";
  }
  if (o.gave_endian && format != "raw")
    throw usage_error{"--endian applies to raw binary input only (" + format +
                      " input says its own byte order, or has none)"};
  if (format == "npy" && !first.empty() && head != audit::npy_magic.substr(0, head.size()))
    take(audit::parse_npy(first, o.file));  // the wrong-magic error, before reading the rest of a stream
  const std::span<const std::byte> bytes = file.all();
  if (format == "npy") {
    audit::dataset data = take(audit::parse_npy(bytes, o.file));
    if (!o.dtype.empty() && audit::to_string(data.type()) != o.dtype)
      throw usage_error{o.file + ": holds " + std::string(audit::to_string(data.type())) + " values, not --dtype " +
                        o.dtype + " (omit --dtype for .npy files)"};
    return data;
  }
  if (format == "raw") {
    if (o.dtype.empty()) throw usage_error{o.file + ": raw binary input needs --dtype f16|bf16|f32|f64"};
    const auto order = o.endian == "big" ? audit::byte_order::big : audit::byte_order::little;
    return take(audit::parse_raw(bytes, dtype_or(o, audit::element_type::f64), order, o.file));
  }
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return take(audit::parse_text(text, dtype_or(o, audit::element_type::f64), o.file));
}

template <detred::floating_input T>
audit::dataset generated_as(const verify::generator_options& g, std::string name) {
  audit::dataset data;
  data.source = std::move(name);
  data.shape = {g.n};
  data.values = verify::generate<T>(g);
  return data;
}

audit::dataset generate(const verify::generator_options& g, audit::element_type type) {
  std::ostringstream name;
  name << "<generated: " << verify::to_string(g.kind) << ", n=" << g.n << ", seed " << g.seed;
  if (g.kind == verify::distribution::ill) name << ", condition " << g.condition;
  name << ", " << audit::to_string(type) << ">";
  switch (type) {
    case audit::element_type::f16:
      return generated_as<detred::half>(g, name.str());
    case audit::element_type::bf16:
      return generated_as<detred::bfloat16>(g, name.str());
    case audit::element_type::f32:
      return generated_as<float>(g, name.str());
    case audit::element_type::f64:
      break;
  }
  return generated_as<double>(g, name.str());
}

// The condition numbers of a sweep: 1, 1e2, ..., 1e30.
std::vector<double> sweep_conditions() {
  std::vector<double> c;
  for (int d = 0; d <= 30; d += 2) c.push_back(std::stod("1e" + std::to_string(d)));
  return c;
}

// Opens `path` for an output option ("-" is stdout) and calls write(stream); any failure (open, write, flush, close)
// is a usage_error, so that a full disk or a closed pipe gives exit status 2.
template <class Write>
void write_output(const std::string& option, const std::string& path, Write write) {
  if (path == "-") {
    write(std::cout);
    std::cout.flush();
    if (!std::cout)
      throw usage_error{option + (option == "the table" ? "" : " -") + ": cannot write to standard output"};
    return;
  }
  std::ofstream out(path, std::ios::binary);
  if (!out) throw usage_error{option + " " + path + ": cannot open the file for writing"};
  write(out);
  out.flush();
  const bool written = bool(out);
  out.close();
  if (!written || !out) throw usage_error{option + " " + path + ": write error (disk full?)"};
}

void save_npy(const audit::dataset& data, const std::string& path) {
  std::string bytes;
  try {
    bytes = audit::npy_bytes(data);
  } catch (const std::exception& e) {
    throw usage_error{"--save " + path + ": " + e.what()};
  }
  write_output("--save", path, [&](std::ostream& out) { out.write(bytes.data(), std::streamsize(bytes.size())); });
}

// The output options: each names a file that can be written, none is the input file, at most one is stdout.
void check_outputs(const cli_options& o) {
  const std::vector<std::pair<std::string, const std::string*>> outputs = {
      {"--json", &o.json}, {"--csv", &o.csv}, {"--plot", &o.plot}, {"--save", &o.save}};
  const auto input = o.file.empty() ? std::nullopt : audit::identity_of(o.file);
  int to_stdout = 0;
  for (const auto& [option, path] : outputs) {
    if (path->empty()) continue;
    if (*path == "-") {
      if (option == "--save") throw usage_error{"--save -: .npy is binary; give a file name"};
      ++to_stdout;
      continue;
    }
    if (input && audit::identity_of(*path) == input)
      throw usage_error{option + " " + *path + ": is the input file " + o.file + " (refusing to overwrite it)"};
    try {
      audit::check_writable(option, *path);
    } catch (const audit::file_error& e) {
      throw usage_error{e.message};
    }
  }
  if (to_stdout > 1) throw usage_error{"--json -, --csv - and --plot -: give standard output to one of them"};
}

// Checks a run that selects no algorithm, before any work: exit status 2, not an empty table that "keeps" every
// promise.
void check_selection(const audit::registry_options& registry, const cli_options& o) {
  const std::size_t rows = audit::make_registry<detred::half>(registry).size() +
                           audit::make_registry<detred::bfloat16>(registry).size() +
                           audit::make_registry<float>(registry).size() + audit::make_registry<double>(registry).size();
  if (rows == 0)
    throw usage_error{"no algorithm to run: --algorithms selects none for --device " + o.device +
                      (o.device == "cpu" ? " (GPU algorithms need --device gpu or all)" : "")};
}

void list_algorithms() {
  for (const auto& name : audit::all_algorithm_names()) std::cout << name << '\n';
}

int run(const cli_options& o, const std::string& command_line) {
  try {
    audit::load_plugins(o.plugins);  // first: --list-algorithms and --algorithms see their rows
    audit::check_plugin_twins(audit::all_algorithm_names());
  } catch (const audit::plugin_error& e) {
    throw usage_error{e.what()};
  }
  if (o.list_algorithms) {
    list_algorithms();
    return 0;
  }
  // Checks that need no data first, so that a mistake costs nothing.
  const auto known = audit::all_algorithm_names();
  for (const auto& a : o.algorithms) {
    bool found = false;
    for (const auto& name : known) found = found || audit::selects(a, name);
    if (!found) throw usage_error{"--algorithms: unknown algorithm '" + a + "' (--list-algorithms shows them)"};
  }
  if (o.sweep && !o.file.empty()) throw usage_error{"--sweep generates its inputs: give no file"};
  if (!o.gen.empty() && !o.file.empty()) throw usage_error{"give a file or --gen, not both"};
  if (o.gave_n && o.gen.empty() && !o.sweep) throw usage_error{"--n applies to --gen and --sweep only"};
  if (o.gave_cond && o.gen != "ill")
    throw usage_error{"--cond applies to --gen ill only" +
                      std::string(o.sweep ? " (--sweep sets its own condition numbers)" : "")};
  if (o.gave_endian && (!o.gen.empty() || o.sweep || o.file.empty()))
    throw usage_error{"--endian applies to raw binary input files only"};
  check_outputs(o);
  std::string gpu_name;
  audit::registry_options registry;
  registry.cpu = o.device != "gpu";
  registry.gpu = o.device != "cpu";
  registry.thread_counts = o.threads;
  registry.selection = o.algorithms;
  if (registry.gpu) {
    std::string why;
    if (!audit::has_gpu_backend(&why)) throw usage_error{"--device " + o.device + ": " + why};
    if (audit::gpu_device_count() == 0)
      throw usage_error{"--device " + o.device + ": no CUDA device is visible (driver missing or no GPU)"};
    gpu_name = audit::gpu_description();
  }
  check_selection(registry, o);

  // The inputs.
  std::vector<audit::dataset> inputs;
  std::vector<std::optional<double>> targets;
  if (o.sweep) {
    verify::generator_options g{.kind = verify::distribution::ill, .n = parse_count(o, 10000), .seed = o.seed};
    for (double c : sweep_conditions()) {
      g.condition = c;
      inputs.push_back(generate(g, dtype_or(o, audit::element_type::f64)));
      targets.push_back(c);
    }
  } else if (!o.gen.empty()) {
    const auto kind = verify::parse_distribution(o.gen);
    if (!kind) throw usage_error{"--gen: unknown generator '" + o.gen + "'"};
    verify::generator_options g{.kind = *kind, .n = parse_count(o, 100000), .seed = o.seed, .condition = o.cond};
    inputs.push_back(generate(g, dtype_or(o, audit::element_type::f64)));
    targets.push_back(*kind == verify::distribution::ill ? std::optional<double>(o.cond) : std::nullopt);
  } else if (!o.file.empty()) {
    inputs.push_back(load_file(o));
    targets.push_back(std::nullopt);
    if (!inputs.back().warning.empty()) {
      if (o.strict) throw usage_error{inputs.back().warning + " (--strict)"};
      std::cerr << "detred-audit: warning: " << audit::printable(inputs.back().warning) << '\n';
    }
  } else {
    audit::dataset data = take(audit::parse_npy(audit::default_input_bytes(), audit::default_input_name));
    inputs.push_back(std::move(data));
    targets.push_back(std::nullopt);
  }
  if (!o.save.empty()) {
    if (inputs.size() != 1) throw usage_error{"--save writes one input; a sweep has many"};
    save_npy(inputs.front(), o.save);
  }

  // The audit.
  audit::audit_options options{.repeat = o.repeat, .permute = o.permute, .configs = o.configs, .permute_seed = o.seed};
  audit::progress_indicator progress(!o.quiet);
  std::vector<audit::input_report> reports;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string phase =
        inputs.size() > 1 ? "input " + std::to_string(i + 1) + "/" + std::to_string(inputs.size()) : "audit";
    reports.push_back(audit::audit_dataset(inputs[i], registry, options,
                                           [&](std::uint64_t done, std::uint64_t total, const std::string& what) {
                                             progress.update(phase, done, total, what);
                                           }));
    reports.back().target_condition = targets[i];
    if (reports.back().results.empty())
      throw usage_error{"no algorithm ran on " + inputs[i].source + " (--algorithms selects none for its dtype " +
                        std::string(audit::to_string(inputs[i].type())) + ")"};
  }
  progress.clear();

  // The reports.
  const int status = audit::any_failure(reports) ? exit_broken_promise : 0;
  if (o.json != "-" && o.csv != "-" && o.plot != "-") {
    write_output("the table", "-", [&](std::ostream& out) {
      if (o.sweep)
        audit::write_sweep_table(out, reports);
      else
        audit::write_table(out, reports);
    });
  }
  if (!o.json.empty()) {
    const audit::run_description run{.version = DETRED_AUDIT_VERSION,
                                     .command_line = command_line,
                                     .gpu = gpu_name,
                                     .sweep = o.sweep,
                                     .exit_status = status};
    write_output("--json", o.json, [&](std::ostream& out) { audit::write_json(out, reports, run); });
  }
  if (!o.csv.empty()) write_output("--csv", o.csv, [&](std::ostream& out) { audit::write_csv(out, reports); });
  if (!o.plot.empty())
    write_output("--plot", o.plot, [&](std::ostream& out) {
      o.sweep ? audit::write_svg_plot(out, reports) : audit::write_spread_plot(out, reports);
    });
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  cli_options o;
  CLI::App app{
      "detred-audit: the error and reproducibility of every detred sum on your data.\n"
      "With no input, audits an embedded ill-conditioned data set. Exit status: 0 every promise kept, 1 a "
      "deterministic algorithm gave more than one result (or an exact one missed), 2 the audit could not run.",
      "detred-audit"};
  app.add_option("file", o.file, "Data file: .npy (f2/f4/f8, any shape, C order), raw binary (needs --dtype), or text");
  app.add_option("--format", o.format,
                 "How to read the file (auto: .npy name or magic -> npy, .bin/.raw/.dat -> raw, "
                 "else text)")
      ->check(CLI::IsMember({"auto", "npy", "raw", "text"}));
  app.add_option("--dtype", o.dtype, "Element type for raw, text and generated inputs (default f64)")
      ->check(CLI::IsMember({"f16", "bf16", "f32", "f64"}));
  app.add_option("--endian", o.endian, "Byte order of raw input")->check(CLI::IsMember({"little", "big"}));
  app.add_option("--gen", o.gen, "Generate the input: uniform, normal, lognormal, cancel, ill (verify's generators)");
  app.add_option("--n", o.n, "Values to generate, 1 .. 2^28 (default 100000; 10000 per point for --sweep)");
  app.add_option("--cond", o.cond, "Condition number for --gen ill (1 .. 1e30)")
      ->check(CLI::Validator(
          [](std::string& text) {
            const double c = std::strtod(text.c_str(), nullptr);
            return c >= 1.0 && c <= 1e30 ? std::string() : "Value " + text + " not in range 1 to 1e30";
          },
          "1..1e30", "condition"));
  app.add_option("--seed", o.seed, "Seed of the generator and of the random orders");
  app.add_flag("--sweep", o.sweep, "Audit generated 'ill' inputs of condition number 1, 1e2, ..., 1e30");
  app.add_option(
      "--plot", o.plot,
      "Write an SVG: with --sweep, relative error vs condition number; else every distinct result per algorithm");
  app.add_option("--device", o.device, "Where to run: cpu, gpu (the CUDA kernels), all")
      ->check(CLI::IsMember({"cpu", "gpu", "all"}));
  app.add_option("--algorithms", o.algorithms, "Comma-separated subset, e.g. cpu/tree,kahan (--list-algorithms)")
      ->delimiter(',');
  app.add_option("--plugin", o.plugins,
                 "Also audit the algorithms of a shared library (include/detred/audit_plugin.h); repeatable")
      ->allow_extra_args(false);
  app.add_flag("--list-algorithms", o.list_algorithms, "Print the stable algorithm names and exit");
  app.add_option("--repeat", o.repeat, "Runs per algorithm in its default configuration (timing median)")
      ->check(CLI::Range(1u, 1000000u));
  app.add_option("--permute", o.permute, "Random orders of the input to run every algorithm on (0: none)");
  app.add_flag("--configs,!--no-configs", o.configs,
               "Run every configuration: CPU thread counts, GPU launch configurations (default on)");
  app.add_option("--threads", o.threads, "CPU thread counts for --configs (default 1,2,3,4,8)")
      ->delimiter(',')
      ->check(CLI::Range(1u, 4096u));
  app.add_option("--json", o.json, "Write the audit as JSON to FILE, or - for stdout");
  app.add_option("--csv", o.csv, "Write the audit as CSV to FILE, or - for stdout");
  app.add_option("--save", o.save, "Also write the input (e.g. a generated one) as a .npy file");
  app.add_flag("-q,--quiet", o.quiet, "No progress indicator on stderr");
  app.add_flag("--strict", o.strict, "Make warnings about the input (text overflowing to Inf) errors: exit status 2");
  app.add_option("--stream-limit", o.stream_limit,
                 "Most bytes read from a pipe or device (default 1 GiB; regular files have no limit)")
      ->check(CLI::Range(std::uint64_t(1), std::uint64_t(1) << 40));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::string message = e.what();
    for (char& c : message)
      if (c == '\n' || c == '\r') c = ' ';
    std::cerr << "detred-audit: " << audit::printable(message) << '\n';
    return exit_cannot_run;
  }
  o.gave_n = app.count("--n") > 0;
  o.gave_cond = app.count("--cond") > 0;
  o.gave_endian = app.count("--endian") > 0;
  for (const auto& [name, path] :
       {std::pair{"--json", &o.json}, {"--csv", &o.csv}, {"--save", &o.save}, {"--plot", &o.plot}})
    if (app.count(name) && path->empty()) {
      std::cerr << "detred-audit: " << name << ": empty file name (- is standard output)\n";
      return exit_cannot_run;
    }
  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);
  try {
    const int status = run(o, command_line);
    std::cout.flush();
    if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout))
      throw usage_error{"cannot write to standard output"};
    return status;
  } catch (const usage_error& e) {
    std::cerr << "detred-audit: " << audit::printable(e.message) << '\n';
  } catch (const audit::file_error& e) {
    std::cerr << "detred-audit: " << audit::printable(e.message) << '\n';
  } catch (const std::exception& e) {
    std::cerr << "detred-audit: error: " << audit::printable(e.what()) << '\n';
  }
  return exit_cannot_run;
}
