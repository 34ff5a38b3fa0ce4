//! Which stack carries MaxNet flows on real packets.

/// Which hosts carry MaxNet flows: xcclab's transport over UDP, or Linux TCP with the kernel's
/// BPF `maxnet` congestion control and its TCP option (docs/kernel.md; `xcc kernel load` first,
/// and run this process in the cgroup the sock_ops program is attached to).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Stack {
    #[default]
    Udp,
    Kernel,
}
