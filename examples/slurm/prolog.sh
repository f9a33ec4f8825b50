#!/bin/bash
# Slurm prolog: audit the node before a job starts; a failed stack check drains it.
#
# Install as the Prolog= script in slurm.conf (runs as root on each allocated node). The report is kept in
# $STACKCHECK_REPORT_DIR/<job id>.json, so `stackcheck fleet $STACKCHECK_REPORT_DIR` summarises the cluster.
#
# Exit codes of `stackcheck audit`: 0 consistent, 1 a stack check failed, 2 bad input, 3 a probe failed
# (with --strict), 4 a bug in stackcheck. Only 1 fails the prolog (Slurm then drains the node and requeues
# the job); anything else is logged and lets the job run, so a broken stackcheck never drains the cluster.
# For a job that needs particular features, `stackcheck gate` (see `stackcheck gate --help`) can wrap the
# job's own command in its batch script instead.
set -u

STACKCHECK=${STACKCHECK:-stackcheck}
REPORT_DIR=${STACKCHECK_REPORT_DIR:-/var/lib/stackcheck/reports}
JOB=${SLURM_JOB_ID:-manual}

# The report goes under a directory only root can write (the prolog runs as root): never a predictable
# path in /tmp, where another user could plant a link to a file root would then overwrite. If the report
# directory cannot be made, or is not a root-owned directory, a private one is made with mktemp -d.
umask 022
if ! mkdir -p -m 0755 "$REPORT_DIR" 2>/dev/null || [ -L "$REPORT_DIR" ] || [ ! -d "$REPORT_DIR" ] \
   || [ "$(stat -c %u "$REPORT_DIR" 2>/dev/null)" != "$(id -u)" ]; then
    REPORT_DIR=$(mktemp -d "${TMPDIR:-/tmp}/stackcheck-prolog.XXXXXXXX") || exit 0
fi
report="$REPORT_DIR/$JOB.json"

"$STACKCHECK" audit --format json --output "$report" --timeout 20
rc=$?

case "$rc" in
    0)
        exit 0
        ;;
    1)
        echo "stackcheck: node $(hostname) failed a stack check; report in $report" >&2
        # the first line of the table format says why, for the drain reason in `sinfo -R`
        "$STACKCHECK" audit --facts "$report" --format text 2>/dev/null | grep -m1 -E '✗ .* failed' >&2
        exit 1
        ;;
    *)
        echo "stackcheck: audit could not run (exit code $rc); not draining $(hostname)" >&2
        exit 0
        ;;
esac
