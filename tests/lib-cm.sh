# SPDX-License-Identifier: GPL-2.0
#
# tests/lib-cm.sh: run librdmacm's example programs across lib.sh's
# topology. Sourced after lib.sh.
#
#   cm_pair DIR PORT SERVER-CMD... -- CLIENT-CMD...
#                         run SERVER-CMD in namespace a, wait until it
#                         listens on PORT, then CLIENT-CMD in namespace b;
#                         outputs in DIR/a and DIR/b, exit statuses in
#                         $status_a and $status_b. Each side is given
#                         $CM_LIMIT seconds (120 unless set; times the
#                         kernel's timeout scale), then sent signal
#                         $CM_SIGNAL (TERM unless set). If the client
#                         fails and $CM_CLIENT_FAILED names a command,
#                         it runs before the server is waited for.
#   cm_show DIR           print both outputs, prefixed
#   cm_ucmatose DIR IP    one ucmatose exchange to IP (2 connections, 50
#                         SENDs of 1000 bytes each way); fail unless both
#                         sides end with "return status 0"

cm_show() {
	sed 's/^/  client: /' "$1/b"
	sed 's/^/  server: /' "$1/a"
}

cm_pair() {
	local dir=$1 port=$2 pid limit
	local -a server=() stop

	limit=$(scaled "${CM_LIMIT:-120}")
	stop=(timeout -s "${CM_SIGNAL:-TERM}" "$limit")

	shift 2
	while [[ $1 != -- ]]; do
		server+=("$1")
		shift
	done
	shift
	status_a=0 status_b=0
	na "${stop[@]}" "${server[@]}" >"$dir/a" 2>&1 &
	pid=$!
	if ! wait_server 10 "$pid" cm_listening "$port"; then
		sed 's/^/  server: /' "$dir/a"
		fail "${server[*]}: the server exited before it listened"
	fi
	nb "${stop[@]}" "$@" >"$dir/b" 2>&1 || status_b=$?
	((status_b == 0)) || [[ -z ${CM_CLIENT_FAILED:-} ]] || "$CM_CLIENT_FAILED"
	wait "$pid" || status_a=$?
}

cm_ucmatose() {
	local dir=$1 ip=$2

	cm_pair "$dir" 7471 ucmatose -b "$ip" -c 2 -C 50 -S 1000 -- \
		ucmatose -s "$ip" -c 2 -C 50 -S 1000
	if ((status_a || status_b)) || ! grep -q '^return status 0$' "$dir/a" ||
		! grep -q '^return status 0$' "$dir/b"; then
		cm_show "$dir"
		fail "ucmatose to $ip: exit status $status_a (server) $status_b (client)"
	fi
}
