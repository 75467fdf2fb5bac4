// The gangway command line: one binary, one subcommand per way of running the scheduler.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/simulate_command.h"

int main(int argc, char** argv) {
  CLI::App app{
      "gangway: a node-level inference scheduler for one 8-GPU server that runs a tensor-parallel "
      "large model beside single-GPU small models"};
  app.set_version_flag("--version", std::string("gangway ") + GANGWAY_VERSION);
  app.require_subcommand(1);

  gangway::SimulateOptions simulate_options;
  CLI::App* simulate = gangway::add_simulate_command(app, simulate_options);

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
  return 2;
}
