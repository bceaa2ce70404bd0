# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by scripts that fetch from Debian's archive (fetch-rdma-core,
# kernel-trixie). No host name lives in the repository: the mirror is the
# one the system's own apt sources name, read at run time.

# system_mirror: the first URI of the system's deb822 source stanzas that
# serves Debian's main archive (not the security one), else the first such
# one-line entry.
system_mirror() {
	local f=/etc/apt/sources.list.d/debian.sources
	if [[ -r $f ]]; then
		awk '
			/^[ \t]*$/ { if (uri != "" && suites !~ /-security/) { print uri; exit }
				     uri = ""; suites = ""; next }
			/^URIs:/    { uri = $2 }
			/^Suites:/  { suites = $0 }
			END        { if (uri != "" && suites !~ /-security/) print uri }
		' "$f" | head -n 1
	elif [[ -r /etc/apt/sources.list ]]; then
		awk '$1 == "deb" && $0 !~ /-security/ {
			sub(/\[[^]]*\]/, ""); $0 = $0; print $2; exit
		}' /etc/apt/sources.list
	fi
}
