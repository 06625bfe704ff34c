"""Fit the last-resort judge (recall_agent/redact/entropy_model.json): a logistic regression over the
character statistics of tokens that no structure and no known format explains.

Data: every candidate run (recall_agent.redact.entropy.CANDIDATE, 20+ characters; ordinary shapes too,
which the judge never sees, because what remains of real sessions without them is too little to fit on)
 - positives: the secret values of the secret corpora (team, public, gitleaks samples, Nosey Parker examples);
 - negatives: the candidate runs in every line (commands, tool output, the agent's prose) of the real
   transcripts of that half (not only the corpus' sample of them), and in the team's ordinary lines.
Fitted on the tuning half only. The threshold is set where the judge works, on the tuning tokens that are
not an ordinary shape: the lowest (at least 0.5) at which the ordinary tokens judged secret stay within a
tenth of the issue's budget (0.1% of the tuning half's ordinary lines). The curve is printed and saved for
the held-out half, on those tokens (what the judge sees).

    python bench/redaction/fit_entropy.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_redaction import load  # noqa: E402

from recall_agent.redact import entropy  # noqa: E402
from recall_agent.redact.ordinary import is_ordinary  # noqa: E402


def candidates(text: str, *, ordinary_too: bool = True) -> list[str]:
    """Runs of 20+ token characters; the model learns from ordinary shapes too (it only ever judges the
    rest, but the rest alone is a few dozen tokens in 300 sessions: too few to fit on)."""
    out = []
    for m in entropy.CANDIDATE.finditer(text):
        token = m.group().rstrip(".").rstrip("=")
        if len(token) >= entropy.MIN_LENGTH and (ordinary_too or not is_ordinary(token)):
            out.append(token)
    return out


GUARDED: dict[str, list[bool]] = {"tuning": [], "heldout": []}  # per row: a token the judge would see


def dataset(split: str) -> tuple[np.ndarray, np.ndarray]:
    secrets, ordinary, _ = load()
    xs, ys = [], []
    seen = GUARDED[split]
    for case in secrets:
        if case["split"] != split:
            continue
        for piece in case["secrets"]:
            for token in candidates(piece):
                xs.append(entropy.features(token))
                ys.append(1)
                seen.append(not is_ordinary(token))
    for row in ordinary:
        if row["split"] != split or row["corpus"] not in ("team", "public"):
            continue
        for token in candidates(row["text"]):
            xs.append(entropy.features(token))
            ys.append(0)
            seen.append(not is_ordinary(token))
    labelled = {piece for case in secrets if case["corpus"] == "transcripts" for piece in case["secrets"]}
    for token in dict.fromkeys(session_tokens(split)):
        if not any(piece in token or token in piece for piece in labelled):
            xs.append(entropy.features(token))
            ys.append(0)
            seen.append(not is_ordinary(token))
    return np.array(xs, dtype=float), np.array(ys, dtype=float)


def session_tokens(split: str) -> list[str]:
    from redaction.sources import SWECB, _blocks, split_of

    out: list[str] = []
    for path in sorted(SWECB.glob("*.jsonl")):
        if split_of(f"swecb:{path.name}") != split:
            continue
        for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                entry = json.loads(raw)
            except ValueError:
                continue
            for _, text in _blocks(entry):
                out.extend(candidates(text))
    return out


def fit(x: np.ndarray, y: np.ndarray, l2: float = 1e-2, steps: int = 4000) -> tuple[np.ndarray, float]:
    """Logistic regression by gradient descent on standardized features, classes weighted equally."""
    w, b = np.zeros(x.shape[1]), 0.0
    weight = np.where(y == 1, 0.5 / max(y.sum(), 1), 0.5 / max((1 - y).sum(), 1))
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(x @ w + b)))
        g = (p - y) * weight
        w -= 1.0 * (x.T @ g + l2 * w)
        b -= 1.0 * g.sum()
    return w, b


LINE_BUDGET = 0.001  # a tenth of the 1% of ordinary lines


def tuning_lines() -> int:
    _, ordinary, _ = load()
    return sum(r["split"] == "tuning" and r["corpus"] in ("transcripts", "team", "public") for r in ordinary)


def within_budget(p: np.ndarray, y: np.ndarray, budget: float) -> float:
    """The lowest threshold (at least 0.5) at which the distinct ordinary tokens judged secret stay within
    `budget` (each stands for at least one ordinary line redacted)."""
    for t in sorted({0.5, *map(float, p)}):
        if t >= 0.5 and ((p >= t) & (y == 0)).sum() <= budget:
            return t
    return 1.0


def curve(p: np.ndarray, y: np.ndarray) -> list[dict]:
    rows = []
    for t in (0.5, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999):
        tp = int(((p >= t) & (y == 1)).sum())
        fp = int(((p >= t) & (y == 0)).sum())
        rows.append(
            {
                "threshold": t,
                "recall": tp / max(int(y.sum()), 1),
                "false_positives": fp,
                "false_positive_rate": fp / max(int((1 - y).sum()), 1),
            }
        )
    return rows


def main() -> int:
    x_tune, y_tune = dataset("tuning")
    x_held, y_held = dataset("heldout")
    mean, scale = x_tune.mean(axis=0), x_tune.std(axis=0) + 1e-9
    w, b = fit((x_tune - mean) / scale, y_tune)
    p_tune = 1 / (1 + np.exp(-(((x_tune - mean) / scale) @ w + b)))
    seen_tune = np.array(GUARDED["tuning"], dtype=bool)
    threshold = within_budget(p_tune[seen_tune], y_tune[seen_tune], LINE_BUDGET * tuning_lines())
    p_held = 1 / (1 + np.exp(-(((x_held - mean) / scale) @ w + b)))
    seen_held = np.array(GUARDED["heldout"], dtype=bool)
    held_curve = curve(p_held[seen_held], y_held[seen_held])
    print("held-out, every token (ordinary shapes too):", curve(p_held, y_held)[0])
    model = {
        "about": "fitted by bench/redaction/fit_entropy.py on the tuning half; see its docstring",
        "features": list(entropy.FEATURES),
        "weights": [round(float(v), 6) for v in w],
        "bias": round(float(b), 6),
        "mean": [round(float(v), 6) for v in mean],
        "scale": [round(float(v), 6) for v in scale],
        "threshold": round(threshold, 6),
        "tuning": {"positives": int(y_tune.sum()), "negatives": int((1 - y_tune).sum())},
        "heldout": {
            "positives": int(y_held.sum()),
            "negatives": int((1 - y_held).sum()),
            "curve": held_curve,
        },
    }
    entropy.MODEL.write_text(json.dumps(model, indent=1) + "\n")
    print(f"tuning: {model['tuning']}; threshold {threshold:.4f}")
    print(f"held-out: {model['heldout']['positives']} positives, {model['heldout']['negatives']} negatives")
    print("| threshold | recall | false positives | rate |\n|---|---|---|---|")
    for r in held_curve:
        mark = " (chosen)" if abs(r["threshold"] - threshold) < 1e-9 else ""
        print(
            f"| {r['threshold']}{mark} | {r['recall']:.3f} | {r['false_positives']} | {r['false_positive_rate']:.4f} |"
        )
    tp = int(((p_held >= threshold) & (y_held == 1) & seen_held).sum())
    fp = int(((p_held >= threshold) & (y_held == 0) & seen_held).sum())
    judged = int((y_held[seen_held] == 1).sum())
    print(
        f"held-out tokens the judge sees: {judged} secret, {int((y_held[seen_held] == 0).sum())} ordinary; "
        f"at the chosen threshold: recall {tp / max(judged, 1):.3f}, {fp} false positives"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
