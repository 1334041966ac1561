#!/bin/sh
# Install the Debian packages named as arguments that are missing. Needs root and apt-get;
# otherwise it says what to install and fails.
set -eu
missing=""
for pkg in "$@"; do
	status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
	case "$status" in
	*"install ok installed"*) ;;
	*) missing="$missing $pkg" ;;
	esac
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
	echo "missing Debian packages:$missing" >&2
	echo "install them as root: apt-get install$missing" >&2
	exit 1
fi
echo "installing Debian packages:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing >/dev/null
