#!/usr/bin/env bash
# The newcomer's path on a new Debian bookworm machine, for real:
#   tools/fresh_machine.sh [GOAL...]        (default goals: run test)
# debootstraps a minimal bookworm into build/fresh/root (needs root, the
# debootstrap package and Debian's mirror), installs only make and git in
# it, clones this repository's committed HEAD, and runs `make GOAL` for each
# goal in turn, timing each. Logs: build/fresh/root/root/<goal>.log.
# Nothing is reused between runs: the tree is made anew each time.
set -euo pipefail
root_dir=$(cd "$(dirname "$0")/.." && pwd)
goals=("$@")
[ ${#goals[@]} -gt 0 ] || goals=(run test)
[ "$(id -u)" -eq 0 ] || { echo "fresh_machine: needs root (debootstrap, chroot, mounts)" >&2; exit 1; }
command -v debootstrap >/dev/null || apt-get install -y -qq --no-install-recommends debootstrap
work="$root_dir/build/fresh"
rm -rf "$work"
mkdir -p "$work"
echo "fresh_machine: debootstrap bookworm (minbase) into $work/root"
debootstrap --variant=minbase bookworm "$work/root" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 ||
  { tail -20 "$work/debootstrap.log"; exit 1; }
cp /etc/resolv.conf "$work/root/etc/resolv.conf"
git clone -q --bare "$root_dir" "$work/root/repo.git"
# The mounts live in a private mount namespace, gone when it ends.
unshare -m bash -s "$work/root" "${goals[@]}" <<'EOF'
set -u
R=$1; shift
for m in proc dev dev/pts sys; do mount --bind "/$m" "$R/$m"; done
chroot "$R" /bin/bash -s "$@" <<'IN'
set -u
export DEBIAN_FRONTEND=noninteractive PATH=/usr/sbin:/usr/bin:/sbin:/bin
apt-get update -qq && apt-get install -y -qq --no-install-recommends make git ca-certificates >/dev/null
cd /root && git clone -q /repo.git gmc && cd gmc
rc=0
for g in "$@"; do
  s=$(date +%s)
  make "$g" >"/root/$g.log" 2>&1; r=$?
  echo "fresh_machine: make $g: exit $r in $(( $(date +%s) - s )) s (log: build/fresh/root/root/$g.log)"
  tail -3 "/root/$g.log" | sed 's/^/    /'
  [ $r -eq 0 ] || { rc=1; break; }
done
exit $rc
IN
EOF
