"""The reader's random resized crop boxes equal torchvision's RandomResizedCrop.get_params given the same
uniform draws. torchvision itself is not needed: get_params is transcribed below from torchvision's
source (transforms.py), with its three random calls replaced by the draws the reader used:
  torch.empty(1).uniform_(a, b) -> u * (b - a) + a in float32, u = top 24 bits of the next draw / 2^24
  torch.randint(lo, hi, (1,))   -> lo + ((next draw >> 32) * (hi - lo) >> 32)
log and exp run through torch on float32 tensors, exactly as get_params calls them; sqrt and round are
Python's (double precision, round half to even).
Usage: check_rrc_torchvision.py DUMP_RRC_PROGRAM"""
import json
import math
import subprocess
import sys

try:
    import numpy as np
    import torch
except ImportError as e:  # pragma: no cover
    print(f"skipped: {e}")
    sys.exit(77)


def get_params(height, width, scale, ratio, draws):
    it = iter(draws)

    def uniform_(a, b):
        u = np.float32((next(it) >> 40) * 2.0 ** -24)
        a32, b32 = np.float32(a), np.float32(b)
        return float(u * (b32 - a32) + a32)

    def randint(lo, hi):
        return lo + (((next(it) >> 32) * (hi - lo)) >> 32)

    # --- torchvision.transforms.RandomResizedCrop.get_params, random calls replaced as described ---
    area = height * width
    log_ratio = torch.log(torch.tensor(ratio))
    for _ in range(10):
        target_area = area * uniform_(scale[0], scale[1])
        aspect_ratio = torch.exp(torch.tensor(uniform_(log_ratio[0].item(), log_ratio[1].item()),
                                              dtype=torch.float32)).item()
        w = int(round(math.sqrt(target_area * aspect_ratio)))
        h = int(round(math.sqrt(target_area / aspect_ratio)))
        if 0 < w <= width and 0 < h <= height:
            i = randint(0, height - h + 1)
            j = randint(0, width - w + 1)
            return i, j, h, w
    in_ratio = float(width) / float(height)
    if in_ratio < min(ratio):
        w = width
        h = int(round(w / min(ratio)))
    elif in_ratio > max(ratio):
        h = height
        w = int(round(h * max(ratio)))
    else:
        w = width
        h = height
    i = (height - h) // 2
    j = (width - w) // 2
    return i, j, h, w


def main():
    out = subprocess.run([sys.argv[1]], check=True, capture_output=True, text=True).stdout
    cases = [json.loads(line) for line in out.splitlines()]
    fallbacks = 0
    for c in cases:
        draws = [int(d, 16) for d in c["draws"]]
        want = get_params(c["H"], c["W"], tuple(c["scale"]), tuple(c["ratio"]), draws)
        if tuple(c["box"]) != want:
            sys.exit(f"box {c['box']} != torchvision's {list(want)} for {c}")
        fallbacks += c["scale"][0] > 1
    print(f"check_rrc_torchvision: {len(cases)} boxes equal torchvision's get_params "
          f"({fallbacks} through the central fallback)")


if __name__ == "__main__":
    main()
