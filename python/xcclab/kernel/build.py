"""Compiles the BPF objects and the loader for the running kernel.

Needs clang (BPF target), bpftool (to turn /sys/kernel/btf/vmlinux into vmlinux.h), libbpf's
headers and library (libbpf-dev) and a C compiler. Outputs go to ``target/kernel`` beside the
sources (``XCC_KERNEL_BUILD`` overrides), rebuilt when a source is newer than its output.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

# The BPF program and the loader's C source ship inside the package (and so in the wheel).
SOURCE_DIR = Path(__file__).resolve().parent / "src"
# A source checkout (editable install): builds go to its target/kernel, as cargo's do.
_CHECKOUT = Path(__file__).resolve().parents[3]
VMLINUX_BTF = Path("/sys/kernel/btf/vmlinux")
TOOLS = ("clang", "bpftool", "cc")
LIBBPF_HEADER = Path("/usr/include/bpf/libbpf.h")


class KernelUnavailable(RuntimeError):
    """What this machine lacks to run kernel MaxNet, said in one sentence."""


@dataclass(frozen=True)
class Artifacts:
    maxnet_obj: Path
    loader: Path
    build_dir: Path
    #: DCTCP as a struct_ops (src/dctcp.bpf.c) and the loader of a plain congestion control.
    dctcp_obj: Path
    ca_loader: Path


def build_dir() -> Path:
    override = os.environ.get("XCC_KERNEL_BUILD")
    if override:
        return Path(override)
    if (_CHECKOUT / "Cargo.toml").is_file():
        return _CHECKOUT / "target" / "kernel"
    # An installed package: its directory may not be writable; the user's cache is.
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "xcclab" / "kernel"


def missing_prerequisites() -> str | None:
    """Why kernel MaxNet cannot be built or loaded here, or None."""
    if os.geteuid() != 0:
        return "needs root (BPF struct_ops, cgroups and network namespaces)"
    if not VMLINUX_BTF.exists():
        return f"the kernel has no BTF ({VMLINUX_BTF} missing): BPF struct_ops unavailable"
    for tool in TOOLS:
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian: clang, bpftool, gcc)"
    if not LIBBPF_HEADER.exists():
        return f"libbpf headers missing ({LIBBPF_HEADER}; Debian: libbpf-dev)"
    return None


def _newer(output: Path, *inputs: Path) -> bool:
    return output.exists() and all(output.stat().st_mtime >= i.stat().st_mtime for i in inputs)


def _run(cmd: list[str], what: str) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed ({' '.join(cmd)}):\n{proc.stderr.strip()}")


def vmlinux_header(out: Path) -> Path:
    header = out / "vmlinux.h"
    if not _newer(header, VMLINUX_BTF):
        text = subprocess.run(
            ["bpftool", "btf", "dump", "file", str(VMLINUX_BTF), "format", "c"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        header.write_text(text)
    if "struct bpf_struct_ops_tcp_congestion_ops" not in header.read_text():
        raise KernelUnavailable(
            "this kernel cannot take a BPF tcp_congestion_ops (no bpf_struct_ops_tcp_congestion_ops"
            " in its BTF; needs Linux >= 5.6, and >= 6.4 for struct_ops links)"
        )
    return header


def bpf_object(source: str, out: Path, defines: dict[str, str] | None = None) -> Path:
    src = SOURCE_DIR / source
    suffix = "".join(f"-{k}{v}" for k, v in sorted((defines or {}).items()))
    obj = out / (src.name.removesuffix(".c") + suffix + ".o")
    header = vmlinux_header(out)
    if not _newer(obj, src, header):
        flags = [f"-D{k}={v}" for k, v in (defines or {}).items()]
        _run(
            ["clang", "-g", "-O2", "-target", "bpf", "-D__TARGET_ARCH_x86", *flags]
            + ["-I", str(out), "-c", str(src), "-o", str(obj)],
            f"compiling {src.name}",
        )
    return obj


def build() -> Artifacts:
    """Builds what is stale and returns the paths; raises KernelUnavailable with a reason."""
    reason = missing_prerequisites()
    if reason:
        raise KernelUnavailable(reason)
    out = build_dir()
    out.mkdir(parents=True, exist_ok=True)
    obj = bpf_object("maxnet.bpf.c", out)
    loader = out / "maxnet_loader"
    src = SOURCE_DIR / "maxnet_loader.c"
    if not _newer(loader, src):
        _run(["cc", "-O2", "-Wall", "-o", str(loader), str(src), "-lbpf", "-lm"], "building loader")
    ca_loader = out / "ca_loader"
    ca_src = SOURCE_DIR / "ca_loader.c"
    if not _newer(ca_loader, ca_src):
        _run(["cc", "-O2", "-Wall", "-o", str(ca_loader), str(ca_src), "-lbpf"], "building loader")
    return Artifacts(
        maxnet_obj=obj,
        loader=loader,
        build_dir=out,
        dctcp_obj=bpf_object("dctcp.bpf.c", out),
        ca_loader=ca_loader,
    )
