"""Push, not pull: what recall tells an agent before anything failed (issue 35).

- `pitfalls`: at session start, this repository's known pitfalls (causes met in two or more sessions, and
  environment lessons: a changed command, a folder, an install), self-checked against the checkout.
- `task`: at task start (a prompt that reads as a task), the code area the task is about, only above a
  confidence fitted on labelled SWE-bench tasks (`task_weights.json`, `bench/fit_push.py`).
- `settings`: either one on or off (`$RECALL_HOME/config.json`, environment overrides).
- `ledger`: what was injected (count, tokens, per kind) for `recall stats` and `recall doctor`.

Standard library only on the hooks' path; stored text goes through `recall_agent.safety`'s renderer.
"""
