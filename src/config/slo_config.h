// Reads a scenario's `slo_classes:` list (latency targets, weight, rank, shedding and downgrade of
// each service class) and its `tenants:` list. Classes and tenants are referred to by name
// elsewhere in the file (streams, trace mapping rules, downgrade_to) and by index at run time.
#pragma once

#include <string>
#include <vector>

#include "config/yaml_reader.h"
#include "core/slo.h"

namespace gangway {

// Ids in list order. A class's rank defaults to its position in the list; downgrade_to names a
// class of higher rank (less important), so downgrades always end.
std::vector<SloClass> read_slo_classes(const YamlValue& value);

// At least one, unique, indexed by TenantId value.
std::vector<std::string> read_tenants(const YamlValue& value);

}  // namespace gangway
