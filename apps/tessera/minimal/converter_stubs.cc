// The converter entry points the CLI calls, for a build without the converter
// (TESSERA_MINIMAL: no ONNX library, no protobuf; e.g. the aarch64 cross build). Each returns
// kUnimplemented saying so, so `tessera convert` and .pb tensor files fail with a clear
// message and a non-zero exit, while run, bench and inspect on .tsr and .npy files work
// (count_nodes, which inspect uses, is implemented for real).
// Convert on a full build (for example on the x86 host) and copy the .tsr file.
#include "converter/converter.h"

namespace tessera {

namespace {
Status no_converter(const std::string& what) {
  return unimplemented(what + ": this tessera was built without the converter (TESSERA_MINIMAL=ON); "
                       "convert with a full build (configure with -DTESSERA_MINIMAL=OFF, the default, in its own "
                       "build folder) and give this one the .tsr file and .npy tensors");
}
}  // namespace

Result<std::shared_ptr<Model>> import_onnx(const std::string& path, const ConvertOptions&, ConvertReport*) {
  return no_converter("convert " + path);
}

Status optimize_model(Model&, const ConvertOptions&, ConvertReport*) { return no_converter("optimize"); }

Result<Tensor> read_onnx_tensor_file(const std::string& path) { return no_converter("read " + path); }

Status write_onnx_tensor_file(const std::string& path, const Tensor&, const std::string&) {
  return no_converter("write " + path);
}

Status export_onnx_file(const Model&, const std::string& onnx_path) { return no_converter("export " + onnx_path); }

// Not a stub: `tessera inspect` counts nodes with it; the same walk as
// converter/onnx_import.cc (nodes of the graph and of every subgraph attribute).
int count_nodes(const Graph& g) {
  int n = static_cast<int>(g.nodes.size());
  for (const Node& node : g.nodes)
    for (const Attribute& a : node.attributes) {
      if (a.g) n += count_nodes(*a.g);
      for (const auto& sg : a.graphs) n += count_nodes(*sg);
    }
  return n;
}

}  // namespace tessera
