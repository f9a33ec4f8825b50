# The run both trees' rows share in the A/B scripts (bench/iperf15_h200.sh, bench/iperf21_h200.sh,
# bench/iperf25_ab.sh), sourced by them after they set A, B and py:
#
#   ab_run T TIMES OUT ERR CACHE [NAME=VALUE...] -- PYTHON_ARGS...
#
# runs `$py PYTHON_ARGS` (`-m stackcheck ...`, or `-c CODE ...`) TIMES times in tree $T (T is A or B: its directory
# the working directory and PYTHONPATH), with STACKCHECK_CACHE_DIR=CACHE and each NAME=VALUE in its environment,
# stdout to OUT and stderr to ERR (each run writes them again: the last run's are kept); its exit status is the last
# run's. (A script that runs a row twice compares the second: it reads what the first kept in the cache.)
ab_run() {
  eval "ab_tree=\$$1"
  ab_times=$2
  ab_out=$3
  ab_err=$4
  ab_cache=$5
  shift 5
  ab_env=
  while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do
    ab_env="$ab_env $1"
    shift
  done
  shift
  ab_i=0
  ab_rc=0
  while [ "$ab_i" -lt "$ab_times" ]; do
    ab_i=$((ab_i + 1))
    # shellcheck disable=SC2086  # (NAME=VALUE words and the interpreter's command, split as the scripts did)
    (cd "$ab_tree" && env PYTHONPATH="$ab_tree" STACKCHECK_CACHE_DIR="$ab_cache" $ab_env $py "$@" >"$ab_out" 2>"$ab_err")
    ab_rc=$?
  done
  return "$ab_rc"
}
