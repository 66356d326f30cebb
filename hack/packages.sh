#!/usr/bin/env bash
# Lists the module's packages by the tests they hold:
#   hack/packages.sh unit     packages whose tests need no control plane
#   hack/packages.sh cluster  packages whose tests start one (envtest or the
#                             sandbox)
# A package is "cluster" when one of its test files starts a control plane
# (envtest, the sandbox, or a bench run on it).
set -euo pipefail
cd "$(dirname "$0")/.."
module=$(go list -m)
cluster=$(grep -rlE --include='*_test.go' 'testenv\.(RunMain|Start)|sandbox\.(Start|New)\(|bench\.Run\(' . |
	xargs -r -n1 dirname | sed "s|^\.|$module|" | sort -u)
case ${1:-} in
cluster) echo "$cluster" ;;
unit) go list ./... | grep -vxF -f <(echo "$cluster") ;;
*) echo "usage: $0 unit|cluster" >&2; exit 2 ;;
esac
