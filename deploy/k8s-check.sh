#!/usr/bin/env bash
# k8s-check.sh [TABVISOR] - validate deploy/k8s/ without a cluster (deploy/k8s/check.mjs:
# schemas, names, probes, security, the memory formula, tabvisor reading the ConfigMap).
# Installs its two npm packages (yaml, kubernetes-models; pinned by deploy/k8s/
# package-lock.json) when the lock file changed. A couple of seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-build/tabvisor}")
if ! cmp -s deploy/k8s/package-lock.json deploy/k8s/node_modules/.tabvisor-lock 2>/dev/null; then
  (cd deploy/k8s && npm ci --no-audit --no-fund --loglevel=error &&
    cp package-lock.json node_modules/.tabvisor-lock)
fi
node deploy/k8s/check.mjs "$bin"
