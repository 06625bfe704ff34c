"""Putting recall on a machine: its own environment, built from a checkout or the plugin's files.

Standard library only and importable by any Python 3.8+, because these modules run before recall's
dependencies exist (`make install`, the plugin's first run) and must be able to say, in one line, that
the Python at hand is too old and which one to use instead.

- `envs.py`: find a Python 3.11+, make a virtual environment, install a source tree into it;
- `install.py`: `make install` / `make uninstall` (uv tool, pipx, or recall's own environment);
- `plugin.py`: the Claude Code plugin's own environment under `${CLAUDE_PLUGIN_DATA}`, built in the
  background on first use (`bin/recall` runs it when no recall is ready).
"""
