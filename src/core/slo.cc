#include "core/slo.h"

namespace gangway {

std::vector<SloClass> default_slo_classes() {
  using std::chrono::milliseconds;
  std::vector<SloClass> classes(3);
  classes[0].id = SloClassId(0);
  classes[0].name = "interactive";
  classes[0].ttft_target = milliseconds(200);
  classes[0].tpot_target = milliseconds(50);
  classes[0].weight = 4.0;
  classes[0].rank = 0;
  classes[0].sheddable = true;
  classes[1].id = SloClassId(1);
  classes[1].name = "standard";
  classes[1].ttft_target = milliseconds(2000);
  classes[1].weight = 2.0;
  classes[1].rank = 1;
  classes[1].downgrade_to = SloClassId(2);
  classes[1].on_predicted_miss = MissAction::kDowngrade;
  classes[2].id = SloClassId(2);
  classes[2].name = "batch";
  classes[2].weight = 1.0;
  classes[2].rank = 2;
  return classes;
}

}  // namespace gangway
