#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# docs/lbctl.md is generated: it is what `lb-control --markdown` prints,
# the command registry's own reference.
#
#   lbctl_doc.sh LB_CONTROL DOC BUILD_DIR          writes DOC
#   lbctl_doc.sh --check LB_CONTROL DOC BUILD_DIR  fails when DOC differs
#
# meson: `meson compile -C BUILD lbctl-doc` writes it; the test lbctl_doc
# (suite docs) checks it.
set -eu

check=no
if [ "${1:-}" = --check ]; then
	check=yes
	shift
fi
if [ $# -ne 3 ]; then
	echo "usage: $0 [--check] LB_CONTROL DOC BUILD_DIR" >&2
	exit 2
fi
ctl=$1 doc=$2 build=$3
regen="meson compile -C $build lbctl-doc"

tmp=$(mktemp "${TMPDIR:-/tmp}/lbctl-doc.XXXXXX")
trap 'rm -f "$tmp"' EXIT
rc=0
"$ctl" --markdown >"$tmp" || rc=$?
if [ "$rc" -ne 0 ] || [ ! -s "$tmp" ]; then
	echo "lbctl_doc: '$ctl --markdown' failed (status $rc) or printed" \
		"nothing" >&2
	exit 1
fi

if [ "$check" = no ]; then
	if cmp -s "$tmp" "$doc"; then
		echo "lbctl_doc: $doc is up to date"
	else
		cp "$tmp" "$doc"
		echo "lbctl_doc: wrote $doc"
	fi
	exit 0
fi

if [ ! -f "$doc" ]; then
	echo "lbctl_doc: $doc is missing; generate it with: $regen"
	exit 1
fi
if ! cmp -s "$doc" "$tmp"; then
	echo "lbctl_doc: $doc differs from what lb-control's commands say" \
		"(first differences below, - $doc, + generated)"
	diff -u "$doc" "$tmp" | head -n 40 || true
	echo "lbctl_doc: $doc is out of date; regenerate it with: $regen"
	exit 1
fi
echo "lbctl_doc: $doc matches lb-control --markdown"
