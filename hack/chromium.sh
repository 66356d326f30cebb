#!/usr/bin/env bash
# Installs Debian's Chromium, pinned, for the console's browser tests, and
# links it as bin/chromium. Reused when bin/chromium already runs the
# pinned version.
#   hack/chromium.sh VERSION BIN_DIR
# Debian's security archive serves one Chromium at a time: when the pinned
# version is no longer served, the one that is gets installed, with a
# warning naming both (update CHROMIUM_VERSION in the Makefile).
set -euo pipefail
want=$1
bin=$2
link=$bin/chromium
version_of() { "$1" --version 2>/dev/null | awk '{print $2}'; }
upstream=${want%%-*}
if [[ -x $link && $(version_of "$link") == "$upstream" ]]; then
	exit 0
fi
mkdir -p "$bin"
if [[ ! -x /usr/bin/chromium || $(version_of /usr/bin/chromium) != "$upstream" ]]; then
	sudo=""
	if [[ $(id -u) != 0 ]]; then sudo=sudo; fi
	export DEBIAN_FRONTEND=noninteractive
	echo "installing Debian's chromium $want (about 100 MB)"
	if ! $sudo apt-get install -y --no-install-recommends "chromium=$want" >/dev/null 2>&1; then
		$sudo apt-get update -qq
		if ! $sudo apt-get install -y --no-install-recommends "chromium=$want" >/dev/null; then
			echo "warning: chromium $want is not served by this machine's Debian archive; installing the version it serves" >&2
			$sudo apt-get install -y --no-install-recommends chromium >/dev/null
		fi
	fi
fi
ln -sf /usr/bin/chromium "$link"
echo "bin/chromium: $(/usr/bin/chromium --version)"
