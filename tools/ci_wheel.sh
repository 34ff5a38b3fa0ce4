#!/usr/bin/env bash
# Installable (issue 19): build the wheel, install it alone into a fresh venv, and run from
# outside the checkout `xcc kernel status` (and `xcc kernel build` where the BPF toolchain is
# there) and, as root, a 2-host `xcc emu` scenario, so the router and the kernel sources are
# proven to come from the wheel. Called by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

start=$(date +%s)
.venv/bin/maturin build --release --quiet -o "$work/dist"
python3 -m venv "$work/venv"
# The dependencies come from the pip cache `make venv` filled.
"$work/venv/bin/pip" install --quiet "$work"/dist/xcclab-*.whl
cd "$work"
# Nothing of the checkout may be used: the package, the router and the kernel sources are the
# installed ones.
"$work/venv/bin/python" - <<'PY'
import xcclab, xcclab._native, xcclab.kernel.build as b
assert "site-packages" in xcclab.__file__, xcclab.__file__
assert hasattr(xcclab._native, "emu_main")
assert sorted(p.name for p in b.SOURCE_DIR.glob("*.c")) == ["ca_loader.c", "dctcp.bpf.c", "maxnet.bpf.c", "maxnet_loader.c"]
import xcclab.view.assets as view_assets
assert "window.xccReady" in view_assets.own("view.js") and view_assets.plotly_js()
from xcclab.reproduce.common.templates import environment
assert {"claims.md.j2", "index.html.j2"} <= set(environment().list_templates())
print("wheel: package, router, kernel sources, the view page's scripts and report templates installed")
PY
"$work/venv/bin/xcc" kernel status
# Kernel MaxNet builds from the installed sources where this machine can (root, clang,
# bpftool, libbpf-dev, BTF: .ci/run installs them); otherwise `status` said what is missing.
if "$work/venv/bin/python" -c "from xcclab.kernel.build import missing_prerequisites as m; raise SystemExit(m() is not None)"; then
    XCC_KERNEL_BUILD="$work/kernel" "$work/venv/bin/xcc" kernel build
fi
if [ "$(id -u)" = 0 ] && [ -e /dev/net/tun ]; then
    "$work/venv/bin/xcc" emu "$repo/scenarios/emu-2host.toml" --out "$work/emu-2host"
    test -f "$work/emu-2host/run.json"
else
    echo "ci_wheel: not root or no /dev/net/tun: the wheel's xcc emu run is skipped" >&2
fi
echo "ci_wheel: done in $(( $(date +%s) - start )) s"
