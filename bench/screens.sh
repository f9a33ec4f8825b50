#!/bin/sh
# Screens of the write-up's box (8x RTX PRO 6000, SGLang 0.5.9) as a user sees them in a terminal of 80 and of
# 200 columns: each command runs in a detached tmux session of that size (a real terminal: colour on, the
# width read from it), and the whole pane (scrollback included) is captured as text into docs/screens/.
# With Pillow and a monospace font (bench/screens_png.py), each capture is also rendered as a PNG.
#
#   sh bench/screens.sh            (from the repository root; needs tmux; uses .venv/bin/python if present)
set -eu
cd "$(dirname "$0")/.."
out=docs/screens
mkdir -p "$out"
py=.venv/bin/python
[ -x "$py" ] || py=python3
root=$(pwd)

shot() {  # shot NAME WIDTH COMMAND...
    name=$1 width=$2
    shift 2
    session="stackcheck-screens-$$-$name"
    tmux kill-session -t "$session" 2>/dev/null || true
    tmux new-session -d -s "$session" -x "$width" -y 50 \
        "cd '$root' && unset COLUMNS && PYTHONPATH='$root' '$py' -m stackcheck $*; echo \"[exit \$?]\"; sleep 60"
    tmux set-option -t "$session" history-limit 10000 >/dev/null
    i=0
    until tmux capture-pane -p -t "$session" -S - | grep -q '^\[exit [0-9]*\]$'; do
        i=$((i + 1))
        [ "$i" -lt 300 ] || { echo "timed out: $name" >&2; break; }
        sleep 0.1
    done
    tmux capture-pane -p -t "$session" -S - | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' >"$out/$name.txt"
    tmux kill-session -t "$session"
    echo "$width columns: stackcheck $*" >>"$out/index.txt"
    "$py" bench/screens_png.py "$out/$name.txt" "$width" >/dev/null 2>&1 || echo "no PNG for $name (needs Pillow)" >&2
    echo "$out/$name.txt: $(wc -l <"$out/$name.txt") lines"
}

: >"$out/index.txt"
after=tests/cases/writeup-after/facts.json
before=tests/cases/writeup-before/facts.json
shot audit-80 80 audit --facts $after
shot audit-200 200 audit --facts $after
shot plan-80 80 plan --facts $before
shot plan-200 200 plan --facts $before
shot explain-80 80 explain torch-symm-mem --facts $after
shot gate-80 80 gate --facts tests/cases/no-driver/facts.json --dry-run -- python -m sglang.launch_server --tp 2 --enable-torch-symm-mem
