// Nodes for tests that need a node's classes and models but no hardware: one definition for every
// test file (some test executables compile all their files as one unit, where copies of it would
// collide).
#pragma once

#include "core/node_spec.h"
#include "core/slo.h"

namespace gangway {

// The default SLO classes (interactive 200 ms, standard 2 s, batch) and one model, "m", id 0.
inline NodeSpec node_with_default_classes() {
  NodeSpec node;
  node.slo_classes = default_slo_classes();
  ModelSpec model;
  model.id = ModelId(0);
  model.name = "m";
  node.models.push_back(model);
  return node;
}

}  // namespace gangway
