"""Split the public-thread corpus into a tuning half and a held-out half, by cause, by a hash rule.

A cause is in the tuning half when the first byte of sha256(cause id) is even, in the held-out half when
it is odd: content-blind, and a cause added later never moves another one. A near miss follows the cause
it is near (its learning must be in the same store to be a test at all). split.json is this rule written
out as data, committed before any fitting; the benchmark and the fitting script refuse a stale one.

    python bench/corpus/public/split.py          # (re)writes split.json
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
SPLIT = HERE / "split.json"


def half_of(cause_id: str) -> str:
    return "tuning" if hashlib.sha256(cause_id.encode()).digest()[0] % 2 == 0 else "heldout"


def load() -> tuple[list[dict], list[dict]]:
    """All causes and near misses of the YAML files, each tagged with its ecosystem file."""
    causes: list[dict] = []
    near: list[dict] = []
    for path in sorted(HERE.glob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        for c in data.get("causes") or []:
            causes.append(c | {"file": path.name, "ecosystem": data["ecosystem"]})
        for n in data.get("near_misses") or []:
            near.append(n | {"file": path.name, "ecosystem": data["ecosystem"]})
    ids = [c["id"] for c in causes] + [n["id"] for n in near]
    dupes = {i for i in ids if ids.count(i) > 1}
    if dupes:
        raise ValueError(f"duplicate ids: {sorted(dupes)}")
    known = {c["id"] for c in causes}
    for n in near:
        if n["near"] not in known:
            raise ValueError(f"near miss {n['id']} is near unknown cause {n['near']}")
    for c in causes:
        if len(c["reports"]) < 3:
            raise ValueError(f"cause {c['id']} has {len(c['reports'])} reports (at least 3)")
    return causes, near


def compute() -> dict[str, dict[str, list[str]]]:
    causes, near = load()
    out: dict[str, dict[str, list[str]]] = {
        h: {"causes": [], "near_misses": []} for h in ("tuning", "heldout")
    }
    for c in causes:
        out[half_of(c["id"])]["causes"].append(c["id"])
    for n in near:
        out[half_of(n["near"])]["near_misses"].append(n["id"])
    return out


if __name__ == "__main__":
    SPLIT.write_text(json.dumps(compute(), indent=1) + "\n")
    split = json.loads(SPLIT.read_text())
    causes, near = load()
    print(
        f"{len(causes)} causes, {len(near)} near misses, {len({c['ecosystem'] for c in causes})} ecosystems"
    )
    for half, d in split.items():
        print(f"{half}: {len(d['causes'])} causes, {len(d['near_misses'])} near misses")
