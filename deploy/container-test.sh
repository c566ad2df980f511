#!/usr/bin/env bash
# container-test.sh - build deploy/container/Dockerfile with no container registry at all and
# run the image. The base image is made here: debootstrap (minbase bookworm) from this
# machine's apt mirror, imported into a private podman store. Then, with that store only
# (--pull=never):
#   - the image builds (its build stage compiles this checkout, its runtime stage installs
#     the .deb and Chromium's headless shell from the same apt mirror);
#   - `tabvisor --version` runs and matches the project version; the image's user is 10001,
#     and every process of the running container is that uid;
#   - the container serves its default config (0.0.0.0:8931 inside its own network
#     namespace, published on the host's 127.0.0.1 only), refuses to start without a token,
#     answers /healthz, and does one real browser_navigate over HTTP with the token
#     (deploy/container-navigate.mjs) to a page this script serves on the host's 127.0.0.1;
#   - Chromium's sandbox is on in it (no --no-sandbox), the HEALTHCHECK passes, and SIGTERM
#     stops it with exit code 0;
#   - remote browser: the Chrome image (deploy/container/chrome.Dockerfile) in a pod with a
#     second tabvisor container in --browser-mode cdp --cdp-endpoint http://chrome:9222,
#     which navigates through it.
# Everything it makes (temp dir, podman store, images, containers, mounts) is removed on exit.
# podman's "unable to get systemd connection" for health-check timers (no systemd here) goes
# to a log: the test runs the health check itself (podman healthcheck run).
# Installs what it needs with apt (podman, buildah, debootstrap, runc, slirp4netns,
# catatonit: the pod's pause process).
# Takes several minutes (debootstrap, apt in the build, a compile): `.ci/run --container`.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
t0=$(date +%s)
say() { echo "container-test [$(($(date +%s) - t0))s]: $*"; }
fail() { echo "container-test: FAIL: $*" >&2; exit 1; }

need=()
for p in podman buildah debootstrap runc slirp4netns uidmap catatonit; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
if ((${#need[@]})); then
  say "installing ${need[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
[ "$(id -u)" -eq 0 ] || fail "run as root (debootstrap and a rootful podman store)"

# TV_CONTAINER_REUSE=DIR keeps the store in DIR between runs (base image and build layers
# are reused; containers are still removed): for iterating on this script, never in CI.
reuse=${TV_CONTAINER_REUSE:-}
if [ -n "$reuse" ]; then
  work=$(realpath -m "$reuse") && mkdir -p "$work"
else
  work=$(mktemp -d /tmp/tv-container-XXXXXX)
fi
# A private store: nothing outside $work is touched, and removing it removes every image.
# runc and cgroupfs: they work on cgroup v1/hybrid hosts where crun and systemd do not.
P=(podman --root "$work/storage" --runroot "$work/run" --cgroup-manager cgroupfs
  --runtime runc --tmpdir "$work/tmp")
# Limits at or below the host's hard limits: podman's defaults (1048576 files) would need
# CAP_SYS_RESOURCE, which a CI container may lack.
lim=$(($(ulimit -Hn) < 65536 ? $(ulimit -Hn) : 65536))
RUNOPTS=(--ulimit "nofile=$lim:$lim" --ulimit nproc=8192:8192)
# The same for containers podman makes itself (a pod's pause container).
mkdir -p "$work"
printf '[containers]\ndefault_ulimits = ["nofile=%s:%s", "nproc=8192:8192"]\n' "$lim" "$lim" >"$work/containers.conf"
export CONTAINERS_CONF="$work/containers.conf"
# A free port on the host's loopback (a small race with other users of ports; fine here).
free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
cleanup() {
  set +e
  "${P[@]}" pod rm -f -a >/dev/null 2>&1
  "${P[@]}" rm -f -a -t 2 >/dev/null 2>&1
  [ -n "$reuse" ] && return
  "${P[@]}" rmi -f -a >/dev/null 2>&1
  "${P[@]}" system reset -f >/dev/null 2>&1
  # Whatever mount is still under $work (an overlay podman left): lazily detach it.
  grep -o " $work[^ ]*" /proc/mounts | sort -r | while read -r m; do umount -l "$m"; done
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/tmp"

# --- the base image, from the machine's apt mirror ---
mirror=$(sed -n 's/^URIs: *\([^ ]*debian\/\?\) *$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $3 == "bookworm" {print $2; exit}' /etc/apt/sources.list 2>/dev/null)
mirror=${mirror:-http://deb.debian.org/debian}
base=localhost/tv-test-base:bookworm
if [ -n "$reuse" ] && "${P[@]}" image exists "$base"; then
  say "reusing $base"
else
  say "debootstrap --variant=minbase bookworm from $mirror"
  rm -rf "$work/rootfs"
  debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log"; fail "debootstrap"; }
  # The machine's own apt sources (updates and security too: Debian 12's Chromium comes from
  # bookworm-security), so the image gets the versions this machine gets.
  if ls /etc/apt/sources.list.d/*.sources >/dev/null 2>&1; then
    : >"$work/rootfs/etc/apt/sources.list"
    cp /etc/apt/sources.list.d/*.sources "$work/rootfs/etc/apt/sources.list.d/"
  elif [ -s /etc/apt/sources.list ]; then
    cp /etc/apt/sources.list "$work/rootfs/etc/apt/sources.list"
  fi
  rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/lib/apt/lists/"*
  tar -C "$work/rootfs" -c . | "${P[@]}" import - "$base" >/dev/null
  rm -rf "$work/rootfs"
  say "base image $base imported"
fi

# --- the image, with no registry: --pull=never, BASE from the local store ---
# --format docker: the OCI image format has no HEALTHCHECK (buildah drops it with a warning).
img=localhost/tv-test-tabvisor:test
tb=$(date +%s)
"${P[@]}" build --pull=never --format docker --isolation chroot --build-arg BASE="$base" \
  -f deploy/container/Dockerfile -t "$img" . >"$work/build.log" 2>&1 ||
  { tail -40 "$work/build.log"; fail "image build"; }
say "image built in $(($(date +%s) - tb)) s; size $("${P[@]}" image inspect --format '{{.Size}}' "$img" | awk '{printf "%.0f MB", $1/1e6}')"

want="tabvisor $(sed -n 's/^project(tabvisor VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)"
got=$("${P[@]}" run --rm "${RUNOPTS[@]}" "$img" --version)
[ "$got" = "$want" ] || fail "--version says '$got', want '$want'"
say "$got"
user=$("${P[@]}" image inspect --format '{{.Config.User}}' "$img")
[ "$user" = "10001:10001" ] || fail "image user is '$user'"
hc=$("${P[@]}" image inspect --format '{{json .HealthCheck}}' "$img")
grep -q /healthz <<<"$hc" || fail "image has no HEALTHCHECK on /healthz: $hc"
uid=$("${P[@]}" run --rm "${RUNOPTS[@]}" --entrypoint id "$img" -u)
[ "$uid" = 10001 ] || fail "runs as uid $uid"

# Without a token it must refuse to listen on 0.0.0.0 (exit 2, before starting anything).
set +e
out=$("${P[@]}" run --rm "${RUNOPTS[@]}" "$img" 2>&1)
rc=$?
set -e
[ $rc -eq 2 ] && grep -q "without a token" <<<"$out" || fail "started without a token (rc $rc): $out"
say "no token: refused (exit 2)"

# --- run it: its own network namespace (slirp4netns), published on 127.0.0.1 only ---
# allow_host_loopback: the container reaches the host's 127.0.0.1 as 10.0.2.2, where the
# test page is served; nothing here listens beyond the host's loopback.
token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
hp=$(free_port)
# The client's Host header is 127.0.0.1:$hp, the HEALTHCHECK's 127.0.0.1:8931: both must
# be allowed (an operator's equivalent is the name clients or the proxy use).
# Confined as deploy/k8s/statefulset.yaml confines it: read-only root with writable tmpfs
# where the manifest has emptyDir volumes, no privilege gain, the seccomp profile the
# manifest names (Debian's containers-common profile, which lets Chromium make the user
# namespaces of its sandbox), and every capability dropped but SYS_CHROOT: that profile
# (like Docker's) allows chroot(2) only to containers that have it, and Chromium's zygote
# chroots into an empty directory (without it: "Check failed: sys_chroot(...)" and every
# renderer fails).
cid=$("${P[@]}" run -d "${RUNOPTS[@]}" --name tv-test \
  --network slirp4netns:allow_host_loopback=true -p "127.0.0.1:$hp:8931" \
  --read-only --read-only-tmpfs=false --cap-drop ALL --cap-add SYS_CHROOT \
  --security-opt no-new-privileges \
  --security-opt seccomp=/usr/share/containers/seccomp.json \
  --tmpfs /tmp:mode=1777 --tmpfs /run/tabvisor:rw,mode=0700,U \
  --tmpfs /var/lib/tabvisor/output:rw,mode=0700,U --shm-size 256m \
  -e TABVISOR_AUTH_TOKEN="$token" -e TABVISOR_ALLOWED_HOST="127.0.0.1:8931,127.0.0.1:$hp" "$img" 2>>"$work/run.log")
say "container ${cid:0:12} on 127.0.0.1:$hp"
ok=""
for _ in $(seq 1 100); do
  "${P[@]}" healthcheck run tv-test >/dev/null 2>&1 && { ok=1; break; }
  sleep 0.2
done
[ -n "$ok" ] || { "${P[@]}" logs tv-test | tail -30; fail "HEALTHCHECK never passed"; }
say "HEALTHCHECK passes"
TV_TOKEN="$token" node deploy/container-navigate.mjs "http://127.0.0.1:$hp" 10.0.2.2 ||
  { "${P[@]}" logs tv-test | tail -40; fail "navigate over HTTP"; }

# Every process of the container runs as 10001 (real, effective, saved and file system uid,
# read from the host's /proc: podman top shows "?" for a process caught mid-start), and
# Chromium keeps its sandbox.
procs=$("${P[@]}" top tv-test hpid args)
echo "$procs" | cut -c1-160 | head -12
n=0
for pid in $(echo "$procs" | awk 'NR > 1 {print $1}'); do
  uids=$(awk '/^Uid:/ {print $2, $3, $4, $5}' "/proc/$pid/status" 2>/dev/null) || continue
  [ -z "$uids" ] && continue # gone since
  [ "$uids" = "10001 10001 10001 10001" ] || fail "pid $pid runs as uids $uids: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
  n=$((n + 1))
done
((n >= 4)) || fail "only $n processes seen in the container"
grep -q chromium <<<"$procs" || fail "no Chromium in the container"
if grep -q -- --no-sandbox <<<"$procs"; then fail "Chromium runs with --no-sandbox"; fi
say "all $n processes uid 10001; Chromium without --no-sandbox"

"${P[@]}" stop -t 10 tv-test >/dev/null
code=$("${P[@]}" inspect --format '{{.State.ExitCode}}' tv-test)
[ "$code" = 0 ] || { "${P[@]}" logs tv-test | tail -20; fail "exit code $code after SIGTERM"; }
"${P[@]}" rm tv-test >/dev/null
say "SIGTERM: exit 0"

# --- remote browser: a Chrome container, and tabvisor in cdp mode beside it in one pod ---
chrome=localhost/tv-test-chrome:test
"${P[@]}" build --pull=never --format docker --isolation chroot --build-arg BASE="$base" \
  -f deploy/container/chrome.Dockerfile -t "$chrome" deploy/container >"$work/chrome.log" 2>&1 ||
  { tail -30 "$work/chrome.log"; fail "chrome image build"; }
say "chrome image built"
hp=$(free_port)
# The endpoint is a name, as a real deployment's would be ("chrome", here the pod's own
# loopback): Chromium refuses DevTools requests whose Host is a name, so this also checks
# that tabvisor sends the address the name resolved to.
"${P[@]}" pod create --name tv-test-pod --network slirp4netns:allow_host_loopback=true \
  --add-host chrome:127.0.0.1 -p "127.0.0.1:$hp:8931" >/dev/null
"${P[@]}" run -d "${RUNOPTS[@]}" --pod tv-test-pod --name tv-test-chrome "$chrome" >/dev/null 2>>"$work/run.log"
"${P[@]}" run -d "${RUNOPTS[@]}" --pod tv-test-pod --name tv-test-cdp \
  -e TABVISOR_AUTH_TOKEN="$token" -e TABVISOR_ALLOWED_HOST="127.0.0.1:8931,127.0.0.1:$hp" \
  "$img" --browser-mode cdp --cdp-endpoint http://chrome:9222 >/dev/null 2>>"$work/run.log"
ok=""
for _ in $(seq 1 100); do
  "${P[@]}" healthcheck run tv-test-cdp >/dev/null 2>&1 && { ok=1; break; }
  sleep 0.2
done
[ -n "$ok" ] || { "${P[@]}" logs tv-test-cdp | tail -30; fail "cdp tabvisor not healthy"; }
TV_TOKEN="$token" node deploy/container-navigate.mjs "http://127.0.0.1:$hp" 10.0.2.2 ||
  { "${P[@]}" logs tv-test-cdp | tail -30; "${P[@]}" logs tv-test-chrome | tail -30; fail "cdp navigate"; }
# The page was rendered by the Chrome container: tabvisor's container has no Chromium.
# (Whole outputs first: grep -q closing the pipe early would fail the pipeline.)
tvprocs=$("${P[@]}" top tv-test-cdp args)
chprocs=$("${P[@]}" top tv-test-chrome args)
if grep -q /usr/lib/chromium <<<"$tvprocs"; then fail "tabvisor started its own Chromium in cdp mode"; fi
grep -q -- --remote-debugging-port=9222 <<<"$chprocs" || fail "no Chrome in the chrome container"
say "cdp mode: navigated through the Chrome container"

say "ok (total $(($(date +%s) - t0)) s)"
