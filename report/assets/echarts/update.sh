#!/bin/sh
# update.sh re-creates the vendored echarts bundle from the npm registry:
#   cd report && go generate   (or: sh report/assets/echarts/update.sh)
# It downloads the pinned packages with `npm pack`, checks their sha256 against
# VERSIONS, and writes echarts.common.min.js.gz (gzip -9 -n, so the output is
# reproducible) plus the licence texts. Only the compressed file is committed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
npm pack --silent echarts@5.4.3 zrender@5.4.4 >/dev/null
check() { # file expected-sha256
	got=$(sha256sum "$1" | cut -d' ' -f1)
	if [ "$got" != "$2" ]; then
		echo "update.sh: $1: sha256 $got, want $2" >&2
		exit 1
	fi
}
want() { awk -v f="$1" '$1 == f { print $4 }' "$here/VERSIONS"; }
check echarts-5.4.3.tgz "$(want echarts-5.4.3.tgz)"
check zrender-5.4.4.tgz "$(want zrender-5.4.4.tgz)"
mkdir e z
tar xzf echarts-5.4.3.tgz -C e
tar xzf zrender-5.4.4.tgz -C z
check e/package/dist/echarts.common.min.js "$(want echarts.common.min.js)"
gzip -9 -n -c e/package/dist/echarts.common.min.js >"$here/echarts.common.min.js.gz"
cp e/package/LICENSE "$here/LICENSE"
cp e/package/NOTICE "$here/NOTICE"
cp e/package/licenses/LICENSE-d3 "$here/LICENSE-d3"
cp z/package/LICENSE "$here/LICENSE-zrender"
echo "update.sh: wrote $here/echarts.common.min.js.gz"
