#!/usr/bin/python3
"""Images per second of PyTorch's float CapsNet at batch 1, for bench/golden_vs_pytorch.sh.

The model is scripts/train_capsnet.py's CapsNet built from the same network YAML (conv1 9x9 256,
PrimaryCaps 32x8 9x9 stride 2, ClassCaps 10x16, 3 routing iterations for capsnet-mnist), with
its random initial weights: the speed does not depend on the values. Prints one JSON line.
Run with Debian's interpreter (python3-torch): /usr/bin/python3 bench/pytorch_capsnet_bench.py
"""
import argparse
import json
import os
import sys
import time

import torch
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from train_capsnet import CapsNet  # noqa: E402


def images_per_second(model, images):
    with torch.inference_mode():
        model(images[0])  # warm-up
        t0 = time.perf_counter()
        for x in images:
            model(x)
        return len(images) / (time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=os.path.join(ROOT, "models", "capsnet-mnist.yaml"))
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    with open(args.model) as f:
        desc = yaml.safe_load(f)
    model = CapsNet(desc).eval()
    inp = desc["input"]
    images = [torch.rand(1, inp["channels"], inp["height"], inp["width"]) for _ in range(args.runs)]
    print(json.dumps({"torch_version": torch.__version__, "threads": torch.get_num_threads(), "runs": args.runs,
                      "images_per_second": images_per_second(model, images)}))


if __name__ == "__main__":
    main()
