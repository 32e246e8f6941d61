#include "pipeline_cmd.h"

#include <cstdio>
#include <iostream>

#include "converter/pipeline_stages.h"
#include "tessera/tsr_file.h"

namespace tessera {

int cmd_pipeline_stages(const std::string& tsr_path, int stages) {
  auto fail = [&](const Status& s) {
    std::cerr << "tessera: error: --pipeline-stages " << stages << ": " << s.message() << "\n";
    std::remove(tsr_path.c_str());
    return 1;
  };
  auto m = read_tsr_file(tsr_path);
  if (!m.is_ok()) return fail(m.status());
  auto model = std::make_shared<Model>(**m);
  auto cut = cut_pipeline(model->graph, stages);
  if (!cut.is_ok()) return fail(cut.status());
  apply_pipeline_cut(model->graph, *cut);
  Status s = write_tsr_file(*model, tsr_path);
  if (!s.is_ok()) return fail(s);
  std::printf("pipeline: %d stages (parameter bytes balanced)\n%s", stages, cut->describe(model->graph).c_str());
  return 0;
}

}  // namespace tessera
