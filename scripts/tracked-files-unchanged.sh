#!/usr/bin/env bash
# Fails, naming them, when tracked files differ from the commit: run after each step of a CI run
# (install, build, tests), it catches a step that rewrites a committed file, which a newcomer would
# find changed in a fresh clone after `npm install && npm start`. Usage: tracked-files-unchanged.sh STEP
set -euo pipefail
changed="$(git status --porcelain --untracked-files=no)"
if [ -n "$changed" ]; then
  echo "$1 changed tracked files; a fresh clone must stay as committed:" >&2
  echo "$changed" >&2
  exit 1
fi
