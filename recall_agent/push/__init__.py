"""Push, not pull: what recall tells an agent before anything failed (issue 35).

- `pitfalls`: at session start, this repository's known pitfalls: the causes a model fitted on replayed real
  sessions expects the next session to meet (`pitfall_weights.json`, `bench/fit_pitfalls.py`), self-checked
  against the checkout.
- `task`: at task start (a prompt that reads as a task), the code area the task is about: files the prompt's
  cues point at (`cues`), ranked and gated by models fitted on labelled SWE-bench tasks
  (`task_weights.json`, `bench/fit_push.py`).
- `settings`: either one on or off (`$RECALL_HOME/config.json`, environment overrides).
- `ledger`: what was injected (count, tokens, per kind) for `recall stats` and `recall doctor`.

Standard library only on the hooks' path; stored text goes through `recall_agent.safety`'s renderer.
"""
