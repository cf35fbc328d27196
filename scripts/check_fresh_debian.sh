#!/usr/bin/env bash
# Proves the README's two commands on a clean Debian 12: builds a minimal bookworm root
# with debootstrap, puts a `git clone` of this checkout in it (what is committed, no
# build trees, no .venv), and runs `bash scripts/demo.sh` then `bash scripts/test.sh -q`
# inside it with chroot. Prints the wall time of each step. Root only (debootstrap,
# chroot and mount need it); a release check, not a CI step (it takes tens of minutes).
#
#   bash scripts/check_fresh_debian.sh [DIR]    DIR: where the root goes (made anew;
#                                               default /var/tmp/heapscope-fresh-debian)
#
# The root (about 3 GB) stays for a look after the run (chroot DIR); the next run
# removes it first.
#
# What the root gets from this machine, and why: the site's network settings (DNS, the
# apt options and proxies, the CA bundle and PIP_* settings that reaching the package
# registries may need here), none of which is Debian's or heapscope's to provide.
set -euo pipefail
# (all in main: bash reads it whole before it runs, so editing this file during a run
# cannot derail the run)
main() {
  SRC=$(cd "$(dirname "$0")/.." && pwd)
  ROOT=${1:-/var/tmp/heapscope-fresh-debian}
  SUITE=bookworm

  fail() { echo "check_fresh_debian: $*" >&2; exit 1; }
  step_start=0
  step() { step_start=$(date +%s); echo "check_fresh_debian: $*"; }
  step_done() { echo "check_fresh_debian: ... $(( $(date +%s) - step_start )) s"; }

  [ "$(id -u)" -eq 0 ] || fail "run as root: debootstrap, chroot and mount need it"
  case "$ROOT" in /*) ;; *) ROOT=$PWD/$ROOT ;; esac
  [ "$ROOT" != / ] || fail "DIR must not be /"
  if grep -q " $ROOT/" /proc/mounts; then
    fail "something is still mounted under $ROOT (an earlier run killed hard?): umount it first"
  fi

  if ! command -v debootstrap >/dev/null; then
    step "installing debootstrap"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null ||
      fail "apt-get install debootstrap failed"
  fi

  # The mirror this machine's apt uses (deb822 sources, else the one-line format)
  MIRROR=$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)\/\?$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
  [ -n "$MIRROR" ] ||
    MIRROR=$(awk '$1 == "deb" && $2 ~ /\/debian\/?$/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
  MIRROR=${MIRROR:-http://deb.debian.org/debian}
  /usr/bin/python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=30)' \
    "$MIRROR/dists/$SUITE/Release" 2>/dev/null || fail "mirror $MIRROR unreachable"

  cleanup() {
    # the daemons the tests started in the root (test.sh's single-node Slurm: munged,
    # slurmctld, slurmd), which would otherwise outlive the check and hold Slurm's ports
    for p in /proc/[0-9]*; do
      [ "$(readlink "$p/root" 2>/dev/null)" = "$ROOT" ] && kill "${p#/proc/}" 2>/dev/null
    done
    # innermost first; lazily when a process left behind (an MPI daemon) still holds one
    for m in dev/shm dev/pts dev sys proc tmp; do
      if mountpoint -q "$ROOT/$m" 2>/dev/null; then umount -R "$ROOT/$m" 2>/dev/null || umount -R -l "$ROOT/$m"; fi
    done
  }
  trap cleanup EXIT
  trap 'exit 130' INT TERM

  rm -rf "$ROOT"    # an earlier run's root (not timed: minutes on a slow disk)
  mkdir -p "$ROOT"
  total_start=$(date +%s)
  step "debootstrap --variant=minbase $SUITE $ROOT $MIRROR"
  debootstrap --variant=minbase "$SUITE" "$ROOT" "$MIRROR" >"$ROOT.debootstrap.log" 2>&1 ||
    fail "debootstrap failed: $(tail -1 "$ROOT.debootstrap.log") (log: $ROOT.debootstrap.log)"
  step_done

  # Site settings (see the header)
  cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
  apt-config dump | grep -E '^Acquire::(Check-Valid-Until|Check-Date|https?::Proxy) ' \
    >"$ROOT/etc/apt/apt.conf.d/99site" || true
  if [ -d /usr/local/share/ca-certificates ]; then
    mkdir -p "$ROOT/usr/local/share/ca-certificates"
    cp -r /usr/local/share/ca-certificates/. "$ROOT/usr/local/share/ca-certificates/"
  fi
  if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
    mkdir -p "$ROOT/etc/ssl/certs"
    cp /etc/ssl/certs/ca-certificates.crt "$ROOT/etc/ssl/certs/"
  fi
  SITE_ENV=()
  for var in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY \
             PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_TRUSTED_HOST PIP_CERT PIP_DEFAULT_TIMEOUT; do
    [ -z "${!var:-}" ] || SITE_ENV+=("$var=${!var}")
  done

  step "git clone $SRC (HEAD: $(git -C "$SRC" rev-parse --short HEAD)) into $ROOT/root/heapscope"
  git clone --quiet "$SRC" "$ROOT/root/heapscope"

  mount -t proc proc "$ROOT/proc"
  # /sys with its submounts: slurmd reads the cgroup mounts at start
  mount --rbind /sys "$ROOT/sys"
  mount --make-rslave "$ROOT/sys"
  mount --bind /dev "$ROOT/dev"
  mount --bind /dev/pts "$ROOT/dev/pts"
  mount -t tmpfs -o mode=1777 tmpfs "$ROOT/dev/shm"   # MPI's shared memory
  mount -t tmpfs -o mode=1777 tmpfs "$ROOT/tmp"

  in_root() {
    chroot "$ROOT" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "${SITE_ENV[@]}" \
      /bin/bash -c "cd /root/heapscope && $1"
  }

  step "bash scripts/demo.sh (set-up from nothing, then the demo)"
  in_root "bash scripts/demo.sh" || fail "scripts/demo.sh failed in the fresh root"
  step_done
  step "bash scripts/test.sh -q"
  in_root "bash scripts/test.sh -q" || fail "scripts/test.sh failed in the fresh root"
  step_done
  echo "check_fresh_debian: both commands passed on a fresh Debian 12 in $(( $(date +%s) - total_start )) s"
}

main "$@"
