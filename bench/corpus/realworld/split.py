"""Split the real-world corpus into a tuning half and a held-out half, by cause, deterministically.

Causes are ordered by sha256(cause id) and alternate: even positions are tuning, odd positions held-out
(content-blind, deterministic, balanced); a near miss follows the cause it is near (its learning must be in the same store to be a test at all). The split was written to
split.json and committed before any tuning; the benchmark refuses to run if the files and split.json
disagree (a cause added later gets its half from the same rule, and split.json must be regenerated).

    python bench/corpus/realworld/split.py          # (re)writes split.json
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
SPLIT = HERE / "split.json"


def load() -> tuple[list[dict], list[dict]]:
    """All causes and near misses of the YAML files, each tagged with its ecosystem file."""
    causes: list[dict] = []
    near: list[dict] = []
    for path in sorted(HERE.glob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        for c in data["causes"]:
            causes.append(c | {"file": path.name})
        for n in data.get("near_misses", []):
            near.append(n | {"file": path.name})
    ids = {c["id"] for c in causes}
    for n in near:
        if n["near"] not in ids:
            raise ValueError(f"near miss {n['id']} is near unknown cause {n['near']}")
    return causes, near


def compute() -> dict[str, dict[str, list[str]]]:
    causes, near = load()
    order = sorted((c["id"] for c in causes), key=lambda cid: hashlib.sha256(cid.encode()).hexdigest())
    half = {cid: ("tuning" if i % 2 == 0 else "heldout") for i, cid in enumerate(order)}
    out: dict[str, dict[str, list[str]]] = {
        h: {"causes": [], "near_misses": []} for h in ("tuning", "heldout")
    }
    for c in causes:
        out[half[c["id"]]]["causes"].append(c["id"])
    for n in near:
        out[half[n["near"]]]["near_misses"].append(n["id"])
    return out


if __name__ == "__main__":
    SPLIT.write_text(json.dumps(compute(), indent=1) + "\n")
    split = json.loads(SPLIT.read_text())
    for half, d in split.items():
        print(f"{half}: {len(d['causes'])} causes, {len(d['near_misses'])} near misses")
