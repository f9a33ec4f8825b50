#!/usr/bin/env bash
# Audit a container image before it is pushed: will it serve on the fleet it is built for?
#
#   image-audit.sh IMAGE.tar          # a `docker save` tarball, an OCI layout (directory or tar)
#   image-audit.sh IMAGE[:TAG]        # an image in the local Docker: saved first with `docker save`
#
# The image is read without running it and without Docker (stackcheck --image); the driver and GPUs are the
# fleet's, given here because a CI runner has none:
#   STACKCHECK_ASSUME_GPU=12.0x8  STACKCHECK_ASSUME_DRIVER=580.95.05   (compute capability x count, driver)
#   or STACKCHECK_HOST_FACTS=h200.json                                  (a report saved on a fleet host)
# What must work:
#   STACKCHECK_REQUIRE=torch-symm-mem,cuda-graph   (features; `stackcheck audit` lists the ids). Without it the
#   gate checks the launch in the image's own Entrypoint + Cmd. Either way every SGLang launch's needs are
#   checked (torch and the kernels built for the GPU, the driver against torch's CUDA, SGLang's pins) and the
#   image's NVIDIA_REQUIRE_CUDA against the driver (the container would not start).
# Also: STACKCHECK (the command, default "stackcheck"), OUT_DIR (default ./stackcheck-out: audit.json, the full
# report; decision.json, the gate's decision), STACKCHECK_PLATFORM (linux/arm64, for a multi-platform file).
#
# Exit status (the job fails on anything but 0): 0 every required feature is ok; 1 refused (a required
# feature or an every-launch check is blocked, or unknown); 2 bad input (not an image, a truncated tarball,
# an unknown feature id, missing settings); 3 and up: stackcheck itself failed.
set -euo pipefail

die() { echo "image-audit: $*" >&2; exit 2; }

[ "$#" -eq 1 ] || die "usage: image-audit.sh IMAGE.tar|IMAGE[:TAG]"
read -r -a stackcheck <<< "${STACKCHECK:-stackcheck}"
out_dir=${OUT_DIR:-stackcheck-out}
mkdir -p -- "$out_dir"

image=$1
if [ ! -e "$image" ]; then
  command -v docker > /dev/null || die "$image: no such file, and no docker to save it from"
  echo "image-audit: docker save $image" >&2
  docker save -o "$out_dir/image.tar" -- "$image" || die "docker save $image failed"
  image=$out_dir/image.tar
fi

host=()
if [ -n "${STACKCHECK_HOST_FACTS:-}" ]; then
  host=(--host-facts "$STACKCHECK_HOST_FACTS")
elif [ -n "${STACKCHECK_ASSUME_GPU:-}" ] && [ -n "${STACKCHECK_ASSUME_DRIVER:-}" ]; then
  host=(--assume-gpu "$STACKCHECK_ASSUME_GPU" --assume-driver "$STACKCHECK_ASSUME_DRIVER")
else
  die "say which fleet: STACKCHECK_ASSUME_GPU and STACKCHECK_ASSUME_DRIVER, or STACKCHECK_HOST_FACTS"
fi
if [ -n "${STACKCHECK_PLATFORM:-}" ]; then
  host+=(--platform "$STACKCHECK_PLATFORM")
fi
require=()
if [ -n "${STACKCHECK_REQUIRE:-}" ]; then
  require=(--require "$STACKCHECK_REQUIRE")
fi

# 1. The whole report, kept as an artifact (exit 1 here means a stack check failed: the gate decides below).
audit_rc=0
"${stackcheck[@]}" audit --image "$image" "${host[@]}" --format json --output "$out_dir/audit.json" || audit_rc=$?
if [ "$audit_rc" -ge 2 ]; then
  echo "image-audit: stackcheck audit failed (exit $audit_rc)" >&2
  exit "$audit_rc"
fi
if command -v jq > /dev/null; then
  jq -r '"image: \(.facts.image.reference // .facts.image.path) (\(.facts.image.layers | length) layers); "
         + "packages from \(.facts.python.prefix) (Python \(.facts.python.version))",
         (.features[] | select(.status == "blocked") | "blocked: \(.id) (\(.effect // "?"))"),
         (.checks[] | select(.status == "failed") | "failed check: \(.id)")' "$out_dir/audit.json" >&2
fi

# 2. The decision: the required features and every launch's needs, in a container on that fleet.
gate_rc=0
"${stackcheck[@]}" gate --image "$image" "${host[@]}" ${require[@]+"${require[@]}"} --format json \
  > "$out_dir/decision.json" || gate_rc=$?
if command -v jq > /dev/null && [ -s "$out_dir/decision.json" ]; then
  jq -r '"decision: \(.decision)",
         (.reasons[] | "REFUSE \(.feature): \(.status)\(if .effect then " (" + .effect + ")" else "" end)")' \
    "$out_dir/decision.json" >&2
fi
case "$gate_rc" in
  0) echo "image-audit: ok: every required feature works on that fleet" >&2 ;;
  1) echo "image-audit: refused: see $out_dir/decision.json and $out_dir/audit.json" >&2 ;;
  *) echo "image-audit: stackcheck gate failed (exit $gate_rc)" >&2 ;;
esac
exit "$gate_rc"
