# SPDX-License-Identifier: MIT
# Sourced by the cross tier: apt-get for another architecture, with a state of its own under a
# directory (its package lists, its downloads), so that nothing of the system's apt configuration
# or dpkg database changes. Installing another architecture's packages through apt is not
# practical (they would replace the host's), but their files are enough for what the tier needs.
# shellcheck shell=bash

# apt_private DIR DEB_ARCH ARGS...: apt-get ARGS with its state in DIR, for DEB_ARCH; the first
# call updates DIR's package lists. Its output goes to DIR/apt.log.
apt_private() {
	local dir=$1 deb_arch=$2
	shift 2
	local opts=(-q -o "APT::Architecture=$deb_arch" -o "APT::Architectures::=$deb_arch"
		-o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir"
		-o "Dir::Cache::archives=$dir/archives" -o Dir::State::status=/dev/null
		-o "APT::Sandbox::User=$(id -un)" -o Debug::NoLocking=1)
	mkdir -p "$dir/lists/partial" "$dir/archives/partial"
	if [ ! -e "$dir/lists/updated" ]; then
		# An index that fails to update (a mirror in sync) matters only if it was needed.
		apt-get "${opts[@]}" update >>"$dir/apt.log" 2>&1
		: >"$dir/lists/updated"
	fi
	apt-get "${opts[@]}" "$@" >>"$dir/apt.log" 2>&1
}

# Why the last apt_private call in DIR failed, in one line.
apt_private_why() { # dir
	grep -E '^(E|W):' "$1/apt.log" | tail -n 1
}
