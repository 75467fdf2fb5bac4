// The gangway command line: one binary, one subcommand per way of running the scheduler.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/capacity_command.h"
#include "cli/engine_command.h"
#include "cli/load_command.h"
#include "cli/serve_command.h"
#include "cli/simulate_command.h"

int main(int argc, char** argv) {
  CLI::App app{
      "gangway: a node-level inference scheduler for one 8-GPU server that runs a tensor-parallel "
      "large model beside single-GPU small models"};
  app.set_version_flag("--version", std::string("gangway ") + GANGWAY_VERSION);
  app.require_subcommand(1);
  app.footer(
      "Examples (each subcommand's --help has more):\n"
      "  gangway simulate examples/peak-mixed.yaml --policy gangway --policy fcfs\n"
      "  gangway capacity examples/peak-mixed.yaml\n"
      "  gangway serve examples/serve.yaml\n"
      "  gangway engine --model llama-3-8b --port 8100\n"
      "Guide: docs/guide.md");

  gangway::SimulateOptions simulate_options;
  CLI::App* simulate = gangway::add_simulate_command(app, simulate_options);
  gangway::ServeOptions serve_options;
  CLI::App* serve = gangway::add_serve_command(app, serve_options);
  gangway::LoadCommandOptions load_options;
  CLI::App* load = gangway::add_load_command(app, load_options);
  gangway::CapacityOptions capacity_options;
  CLI::App* capacity = gangway::add_capacity_command(app, capacity_options);
  gangway::EngineCommandOptions engine_options;
  CLI::App* engine = gangway::add_engine_command(app, engine_options);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;  // usage errors: a bad command line
  }
  if (simulate->parsed()) return gangway::run_simulate(simulate_options, std::cout, std::cerr);
  if (serve->parsed()) return gangway::run_serve(serve_options, std::cerr);
  if (load->parsed()) return gangway::run_load(load_options, std::cout, std::cerr);
  if (engine->parsed()) return gangway::run_engine(engine_options, std::cerr);
  if (capacity->parsed()) {
    return gangway::run_capacity(capacity_options, std::cout, std::cerr, isatty(STDERR_FILENO));
  }
  return 2;
}
