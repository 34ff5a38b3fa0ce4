"""MaxNet TCP in the Linux kernel through BPF (issue 9, docs/kernel.md).

- :mod:`.build` compiles ``src/*.bpf.c`` and the loader (both shipped in the package)
  against the running kernel's BTF;
- :mod:`.loader` starts and stops the loader (``xcc kernel load|unload|status``);
- :mod:`.testbed` builds two network namespaces joined by a veth pair for tests;
- :mod:`.probe` is the bulk TCP sender/receiver that samples the sender's ``tcp_info``.
"""
