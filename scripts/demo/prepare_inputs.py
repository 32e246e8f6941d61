#!/usr/bin/env python3
"""Real inputs for the four real models, written as NumPy .npy files.

    prepare_inputs.py --out DIR [--check MODELS_DIR]

writes DIR/<model>/<input name>.npy for model in det, rec, cls, vad (input names with every
character outside [A-Za-z0-9._-] replaced by '_', as the outputs of `tessera run`), and
DIR/<model>/args.txt holding the `--input NAME=FILE` arguments for `tessera run` / `bench`
and compare.py, one per line. With --check, onnxruntime runs each model on its inputs.

The picture is scikit-learn's bundled sample photograph `china.jpg` (427 x 640, RGB), a real
photograph (a Chinese palace), with a caption drawn on a white banner (see load_photo_bgr:
the bare photograph holds no text), preprocessed as RapidOCR 1.4.4 (rapidocr_onnxruntime, the wheel the
models come from) does, with PIL's bilinear resize in place of cv2.resize (INTER_LINEAR):
the pixel values differ slightly from cv2's, which does not matter for comparing runtimes.

- det (PP-OCRv4 DBNet), ch_ppocr_det/utils.py DetPreProcess with config.yaml's
  limit_side_len 736, limit_type "min": scale so that the SHORT side is 736 (only if it is
  shorter), then round each side to a multiple of 32; BGR (RapidOCR's LoadImage converts
  RGB to BGR); (x / 255 - 0.5) / 0.5; NCHW float32, batch 1. china.jpg gives 1 x 3 x 736 x 1088.
- cls (MobileNetV3 direction classifier), ch_ppocr_cls/text_cls.py resize_norm_img with
  cls_image_shape [3, 48, 192]: resize to height 48 keeping the aspect ratio (width
  ceil(48 * w / h), at most 192), (x / 255 - 0.5) / 0.5, zero-padded on the right to 192;
  BGR; 1 x 3 x 48 x 192. The whole photograph is the input (72 pixels wide, then padding).
- rec (PP-OCRv4 SVTR), ch_ppocr_rec/text_recognize.py resize_norm_img with rec_img_shape
  [3, 48, 320]: the 60 x 560 crop of the caption, height 48; RapidOCR widens the batch to
  48 * max(320/48, w/h) = 448 columns; same normalization; BGR; 1 x 3 x 48 x 448.
- vad (Silero VAD v5, silero_vad.onnx): one second of audio-like signal at 16 kHz (a fixed
  mix of a 220 Hz tone with harmonics, a frequency sweep, an amplitude envelope and seeded
  noise; float32 in [-1, 1]). Silero v5 at 16 kHz takes chunks of 512 new samples preceded
  by the last 64 samples of the previous chunk (its context; zeros before the first chunk):
  input [batch, 576]. Streaming would run the 31 full chunks of the second one after another,
  passing the LSTM state on; here the 31 chunks form ONE batch, input [31, 576], each row with
  a zero state: state [2, 31, 128] float32 zeros, sr int64 scalar 16000. One run then covers
  the whole second (every chunk with its real context), and every row is what the first
  streaming call on that chunk would compute.
"""
import argparse
import math
import os
import re
import sys

import numpy as np

VAD_SR = 16000
VAD_CHUNK = 512
VAD_CONTEXT = 64


def sanitize(name):
    """The file-name form of a tensor name: every character outside [A-Za-z0-9._-] -> '_'."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


CAPTION = "Summer Palace, Beijing 2026"
CAPTION_BOX = (330, 390, 40, 600)   # rows 330..389, columns 40..599: the caption's white banner


def load_photo_bgr():
    """scikit-learn's sample photograph with a caption, as an H x W x 3 uint8 BGR array.

    The photograph itself holds no text: on it the detector's output is ~0 everywhere (max
    3.4e-4), and the relative error against onnxruntime then measures onnxruntime's own
    approximate Sigmoid (absolute error ~1e-7) rather than Tessera. So, as a photo an OCR
    app would see, a caption is drawn on a white banner (PIL's bundled font, 40 px): the
    detector finds it and the recognizer reads the crop of it.
    """
    from PIL import Image, ImageDraw, ImageFont
    from sklearn.datasets import load_sample_image
    rgb = load_sample_image("china.jpg")
    im = Image.fromarray(rgb)
    draw = ImageDraw.Draw(im)
    r0, r1, c0, c1 = CAPTION_BOX
    draw.rectangle([c0, r0, c1 - 1, r1 - 1], fill=(255, 255, 255))
    draw.text((c0 + 12, r0 + 8), CAPTION, fill=(0, 0, 0), font=ImageFont.load_default(size=40))
    return np.ascontiguousarray(np.asarray(im)[:, :, ::-1])


def _resize(img, w, h):
    """Bilinear resize of an H x W x 3 uint8 image to h x w (PIL for cv2.resize)."""
    from PIL import Image
    return np.asarray(Image.fromarray(img).resize((int(w), int(h)), Image.BILINEAR))


def _normalize_chw(img):
    """uint8 H x W x C -> float32 C x H x W, (x / 255 - 0.5) / 0.5 as RapidOCR."""
    x = img.astype(np.float32).transpose(2, 0, 1) / 255.0
    x -= 0.5
    x /= 0.5
    return x


def det_input(img, limit_side_len=736, limit_type="min"):
    """DetPreProcess of RapidOCR 1.4.4: 1 x 3 x H' x W' float32."""
    h, w = img.shape[:2]
    if limit_type == "max":
        ratio = float(limit_side_len) / max(h, w) if max(h, w) > limit_side_len else 1.0
    else:
        ratio = float(limit_side_len) / min(h, w) if min(h, w) < limit_side_len else 1.0
    rh = int(round(int(h * ratio) / 32) * 32)
    rw = int(round(int(w * ratio) / 32) * 32)
    resized = _resize(img, rw, rh)
    mean = np.array([0.5, 0.5, 0.5])
    std = np.array([0.5, 0.5, 0.5])
    x = (resized.astype("float32") * (1 / 255.0) - mean) / std   # as DetPreProcess.normalize
    return x.transpose(2, 0, 1)[np.newaxis].astype(np.float32)


def _resize_norm_pad(img, img_h, img_w):
    """The resize_norm_img of RapidOCR's cls and rec: height img_h, padded to img_w."""
    h, w = img.shape[:2]
    ratio = w / float(h)
    resized_w = img_w if math.ceil(img_h * ratio) > img_w else int(math.ceil(img_h * ratio))
    x = _normalize_chw(_resize(img, resized_w, img_h))
    out = np.zeros((3, img_h, img_w), dtype=np.float32)
    out[:, :, :resized_w] = x
    return out


def cls_input(img):
    """TextClassifier.resize_norm_img, cls_image_shape [3, 48, 192]: 1 x 3 x 48 x 192."""
    return _resize_norm_pad(img, 48, 192)[np.newaxis]


REC_CROP = CAPTION_BOX   # the caption (60 x 560 pixels)


def rec_input(img):
    """TextRecognizer.resize_norm_img, rec_img_shape [3, 48, 320], on a crop: 1 x 3 x 48 x 320.

    RapidOCR widens the batch to 48 * max(320/48, w/h); the crop's w/h is 400/60 = 320/48,
    so the width stays 320.
    """
    r0, r1, c0, c1 = REC_CROP
    crop = img[r0:r1, c0:c1]
    max_wh_ratio = max(320 / 48, crop.shape[1] / crop.shape[0])
    return _resize_norm_pad(crop, 48, int(48 * max_wh_ratio))[np.newaxis]


def vad_signal(seconds=1.0, sr=VAD_SR, seed=1234):
    """A deterministic audio-like signal: float32 samples in [-1, 1], length seconds * sr."""
    n = int(seconds * sr)
    t = np.arange(n, dtype=np.float64) / sr
    tone = 0.5 * np.sin(2 * np.pi * 220 * t) + 0.25 * np.sin(2 * np.pi * 440 * t) \
        + 0.12 * np.sin(2 * np.pi * 660 * t)
    sweep = 0.2 * np.sin(2 * np.pi * (300 * t + 1200 * t * t))   # 300 Hz -> 2700 Hz
    envelope = 0.5 + 0.5 * np.sin(2 * np.pi * 3 * t) ** 2         # syllable-like bursts
    noise = np.random.default_rng(seed).normal(0.0, 0.05, n)
    x = envelope * (tone + sweep) + noise
    return (x / np.max(np.abs(x)) * 0.9).astype(np.float32)


def vad_inputs(signal):
    """Silero v5 chunks as one batch (see the module docstring): input [B, 576], state
    [2, B, 128] zeros, sr int64 scalar, with B = number of full 512-sample chunks."""
    b = len(signal) // VAD_CHUNK
    padded = np.concatenate([np.zeros(VAD_CONTEXT, np.float32), signal])
    rows = [padded[i * VAD_CHUNK: i * VAD_CHUNK + VAD_CONTEXT + VAD_CHUNK] for i in range(b)]
    return {
        "input": np.stack(rows).astype(np.float32),
        "state": np.zeros((2, b, 128), np.float32),
        "sr": np.array(VAD_SR, dtype=np.int64),
    }


def model_inputs(model):
    """{ONNX input name: array} for one model short name (det, rec, cls, vad)."""
    if model == "vad":
        return vad_inputs(vad_signal())
    make = {"det": det_input, "rec": rec_input, "cls": cls_input}[model]
    return {"x": make(load_photo_bgr())}


def all_inputs():
    """model short name -> {ONNX input name: array}."""
    return {m: model_inputs(m) for m in ("det", "rec", "cls", "vad")}


def write_inputs(out_dir, inputs=None):
    """Writes out_dir/<model>/<input>.npy and args.txt; returns model -> {name: path}."""
    inputs = inputs if inputs is not None else all_inputs()
    paths = {}
    for model, tensors in inputs.items():
        d = os.path.join(out_dir, model)
        os.makedirs(d, exist_ok=True)
        paths[model] = {}
        for name, arr in tensors.items():
            p = os.path.join(d, sanitize(name) + ".npy")
            tmp = p + ".tmp.npy"
            np.save(tmp, arr)
            os.replace(tmp, p)
            paths[model][name] = p
        with open(os.path.join(d, "args.txt"), "w") as f:
            for name, p in paths[model].items():
                f.write(f"--input\n{name}={p}\n")
    return paths


def check_with_onnxruntime(models_dir, paths):
    """Runs each model in onnxruntime on its inputs; raises if one is not accepted."""
    import onnxruntime as ort
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from real_models import onnx_file
    for model, named in paths.items():
        sess = ort.InferenceSession(os.path.join(models_dir, onnx_file(model)),
                                    providers=["CPUExecutionProvider"])
        feeds = {n: np.load(p) for n, p in named.items()}
        outs = sess.run(None, feeds)
        desc = ", ".join(f"{o.name} {list(v.shape)} {v.dtype}"
                         for o, v in zip(sess.get_outputs(), outs))
        print(f"[prepare_inputs] {model}: onnxruntime accepts the inputs -> {desc}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="folder for <model>/<input>.npy")
    ap.add_argument("--check", metavar="MODELS_DIR",
                    help="run onnxruntime on the inputs with the models in this folder")
    args = ap.parse_args()
    paths = write_inputs(args.out)
    for model, named in paths.items():
        shapes = ", ".join(f"{n} {list(np.load(p).shape)} {np.load(p).dtype}"
                           for n, p in named.items())
        print(f"[prepare_inputs] {model}: {shapes}")
    if args.check:
        check_with_onnxruntime(args.check, paths)


if __name__ == "__main__":
    main()
