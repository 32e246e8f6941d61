"""The four real trained models of the demo and the end-to-end tests: one list, used by
scripts/fetch_models.sh (through `python real_models.py fetch-spec`), prepare_inputs.py,
scripts/demo.sh and tests/e2e/real_models_test.py.

Each entry: short name -> (ONNX file name in the models folder, wheel, path of the file in
the wheel, sha256 of the file, description).
"""
import sys

MODELS = {
    "det": ("ch_PP-OCRv4_det_infer.onnx", "rapidocr-onnxruntime==1.4.4",
            "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx",
            "d2a7720d45a54257208b1e13e36a8479894cb74155a5efe29462512d42f49da9",
            "PP-OCRv4 text detection (DBNet)"),
    "rec": ("ch_PP-OCRv4_rec_infer.onnx", "rapidocr-onnxruntime==1.4.4",
            "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx",
            "48fc40f24f6d2a207a2b1091d3437eb3cc3eb6b676dc3ef9c37384005483683b",
            "PP-OCRv4 text recognition (SVTR, CTC)"),
    "cls": ("ch_ppocr_mobile_v2.0_cls_infer.onnx", "rapidocr-onnxruntime==1.4.4",
            "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx",
            "e47acedf663230f8863ff1ab0e64dd2d82b838fceb5957146dab185a89d6215c",
            "PP-OCR text direction classifier (MobileNetV3)"),
    "vad": ("silero_vad.onnx", "silero-vad==6.2.3",
            "silero_vad/data/silero_vad.onnx",
            "1a153a22f4509e292a94e67d6f9b85e8deb25b4988682b7e174c65279d8788e3",
            "Silero VAD v5 (LSTM, If)"),
}

ORDER = ["det", "rec", "cls", "vad"]


def onnx_file(name):
    return MODELS[name][0]


if __name__ == "__main__":
    # `real_models.py fetch-spec`: one line per model, "file wheel member sha256", for the
    # shell script that downloads them. `real_models.py names`: the short names in order.
    if sys.argv[1:] == ["fetch-spec"]:
        for n in ORDER:
            f, wheel, member, sha, _ = MODELS[n]
            print(f, wheel, member, sha)
    elif sys.argv[1:] == ["names"]:
        print(" ".join(ORDER))
    else:
        sys.exit("usage: real_models.py fetch-spec|names")
