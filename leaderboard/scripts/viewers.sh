#!/usr/bin/env bash
# The shipped viewers (leaderboard/viewers/): one `phybench view` folder per lite reference
# baseline results file (leaderboard/results/fundamental/lite/), linked from its board row by
# `leaderboard build --prebuilt-viewers leaderboard/viewers` (docs/leaderboard.md, "Viewers and
# indistinguishable neighbours").  Small: media for 4 videos each, at most 0.15 MB.
# Data only (issue 50): each folder keeps viewer-data.json, viewer-record.json, media/ and its
# marker; the site build writes the page and the application (viewer.js, viewer.css) once.
# Usage: bash leaderboard/scripts/viewers.sh SUBS_DIR DATA_DIR   (from the repo root)
#   SUBS_DIR: the kept lite submissions (fundamental.sh's WORK_DIR/lite/submissions)
#   DATA_DIR: their splits (WORK_DIR/lite/data)
# Deterministic: a re-run gives the same bytes.  Re-run after re-scoring any of those files
# (tests/test_board_viewers.py fails until then).
set -euo pipefail
SUBS=${1:?usage: viewers.sh SUBS_DIR DATA_DIR}
DATA=${2:?usage: viewers.sh SUBS_DIR DATA_DIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
phybench leaderboard build leaderboard/results --out "$work/site" --viewers "$SUBS" --viewer-data "$DATA" \
  --viewer-max-videos 4 --viewer-max-mb 0.15
mkdir "$work/viewers"
cp -r "$work"/site/viewers/fundamental-lite-* "$work/viewers/"
# the site keeps each viewer's data inline in its page only (issue 50): the shipped data folders
# get it back as viewer-data.json, read from that page
python - "$work/viewers" <<'PY'
import sys
from pathlib import Path

from phybench.leaderboard.viewer.app import DATA, data_bytes, read_data

for folder in sorted(Path(sys.argv[1]).iterdir()):
    (folder / DATA).write_bytes(data_bytes(read_data(folder)))
PY
rm -f "$work"/viewers/*/index.html "$work"/viewers/*/viewer.js "$work"/viewers/*/viewer.css  # the site's, not data
rm -rf leaderboard/viewers
cp -r "$work/viewers" leaderboard/viewers
du -sb leaderboard/viewers
