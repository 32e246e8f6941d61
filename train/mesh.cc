#include "train/mesh.h"

#include <cerrno>
#include <cstdlib>

namespace tessera::train {

std::string ParallelSpec::describe() const {
  return "dp=" + std::to_string(dp) + ",tp=" + std::to_string(tp) + ",pp=" + std::to_string(pp);
}

Result<ParallelSpec> parse_parallel(const std::string& text) {
  const std::string what = "--parallel '" + text + "'";
  if (text.empty()) return invalid_argument(what + ": empty; expected e.g. dp=2,tp=2,pp=1");
  ParallelSpec s;
  bool seen[3] = {false, false, false};
  size_t at = 0;
  while (at <= text.size()) {
    size_t end = text.find(',', at);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(at, end - at);
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    int slot = key == "dp" ? 0 : key == "tp" ? 1 : key == "pp" ? 2 : -1;
    if (eq == std::string::npos || slot < 0)
      return invalid_argument(what + ": '" + item + "' is not dp=N, tp=N or pp=N");
    if (seen[slot]) return invalid_argument(what + ": '" + key + "' given twice");
    seen[slot] = true;
    const std::string num = item.substr(eq + 1);
    char* stop = nullptr;
    errno = 0;
    const long v = std::strtol(num.c_str(), &stop, 10);
    if (num.empty() || *stop != '\0' || errno != 0 || v < 1 || v > 65536)
      return invalid_argument(what + ": '" + item + "': N must be an integer from 1 to 65536");
    (slot == 0 ? s.dp : slot == 1 ? s.tp : s.pp) = static_cast<int>(v);
    at = end + 1;
  }
  if (static_cast<long long>(s.dp) * s.tp * s.pp > 65536) return invalid_argument(what + ": more than 65536 ranks");
  return s;
}

Result<Mesh> make_mesh(Communicator& world, const ParallelSpec& spec) {
  if (world.size() != spec.world_size())
    return invalid_argument("--parallel " + spec.describe() + " needs " + std::to_string(spec.world_size()) +
                            " ranks but the job has " + std::to_string(world.size()) + " (launch with mpirun -np " +
                            std::to_string(spec.world_size()) + ")");
  Mesh m;
  m.spec = spec;
  m.rank = world.rank();
  m.tp_index = m.rank % spec.tp;
  m.dp_index = (m.rank / spec.tp) % spec.dp;
  m.pp_index = m.rank / (spec.tp * spec.dp);
  // Every rank calls split three times in the same order (split is collective).
  TSR_ASSIGN_OR_RETURN(m.dp, world.split(m.pp_index * spec.tp + m.tp_index, m.dp_index));
  TSR_ASSIGN_OR_RETURN(m.tp, world.split(m.pp_index * spec.dp + m.dp_index, m.tp_index));
  TSR_ASSIGN_OR_RETURN(m.pp, world.split(m.dp_index * spec.tp + m.tp_index, m.pp_index));
  return m;
}

}  // namespace tessera::train
