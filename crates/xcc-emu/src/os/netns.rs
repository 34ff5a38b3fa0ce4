//! Network namespaces for the hosts of a scenario: created with `ip` (iproute2), configured
//! through `/proc/sys` from a thread inside each namespace, and removed by name prefix, so a
//! crashed run's leftovers can be found and deleted later (`xcc-emu cleanup`).

use std::io;
use std::path::PathBuf;
use std::process::Command;

use crate::os::sys;

/// Every namespace xcclab makes starts with this.
pub const PREFIX: &str = "xccemu";
/// The TUN device inside each host namespace.
pub const TUN_DEV: &str = "xcc0";
/// The TUN devices' MTU: the largest IP packet a host may hand the router. Larger than
/// Ethernet's so that the packets of xcclab's transport, which carry the simulator's segment
/// (MSS + 20 B of TCP-sized header) plus the UDP encoding's extra (shim, 32-byte segment
/// header, UDP), fit with any default MSS (1460 B + XCP's 78 B = 1538 B), and so do session
/// datagrams of the simulator's default 2000 B. It stays within the router's 2048-byte packet
/// buffers (`fabric::BUF_LEN`). The UDP sockets that use it opt out of the route's MTU
/// (`IP_PMTUDISC_PROBE`, `udp_transport::use_device_mtu`).
pub const TUN_MTU: u32 = 2000;
/// The MTU of the route between the hosts: what Linux TCP (and plain UDP) sees, Ethernet's,
/// so a Linux TCP flow sends 1500-byte packets (MSS 1460) as on a real network.
pub const ROUTE_MTU: u32 = 1500;

/// One host's namespace and its address.
#[derive(Clone, Debug)]
pub struct HostNs {
    pub name: String,
    pub addr: [u8; 4],
    /// TCP congestion control for the namespace (`net.ipv4.tcp_congestion_control`).
    pub tcp_cc: String,
    /// `net.ipv4.tcp_ecn`: 1 requests ECN on outgoing connections, 2 only accepts it.
    pub tcp_ecn: u8,
    /// `net.ipv4.tcp_sack`: off when a Linux TCP flow of this host asks for `sack = false`.
    pub tcp_sack: bool,
    /// The route's `initcwnd` (segments): a NewReno flow's `initial_window` (Linux: 10).
    pub initcwnd: Option<u32>,
    /// The route's `quickack`: every segment acknowledged at once, for NewReno flows received
    /// here with `delayed_ack = false` (Linux delays ACKs otherwise).
    pub quickack: bool,
}

impl HostNs {
    pub fn path(&self) -> PathBuf {
        netns_path(&self.name)
    }
}

pub fn netns_path(name: &str) -> PathBuf {
    PathBuf::from("/run/netns").join(name)
}

/// A unique prefix for this run: `xccemu<pid>x`.
pub fn run_prefix() -> String {
    format!("{PREFIX}{}x", std::process::id())
}

fn ip(args: &[&str]) -> io::Result<()> {
    let out = Command::new("ip").args(args).output().map_err(|e| io::Error::new(e.kind(), format!("ip: {e}")))?;
    if !out.status.success() {
        return Err(io::Error::other(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}

/// `tcp_wmem` and `tcp_rmem` of every host: minimum, initial and largest buffer (bytes).
pub const TCP_BUFFERS: &str = "4096 131072 67108864";

fn write_sysctl(key: &str, value: &str) -> io::Result<()> {
    let path = format!("/proc/sys/{}", key.replace('.', "/"));
    std::fs::write(&path, value).map_err(|e| io::Error::new(e.kind(), format!("{key} = {value}: {e}")))
}

/// Checks what the emulator needs before touching anything: root and `/dev/net/tun`.
pub fn check_environment() -> io::Result<()> {
    if !sys::is_root() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "xcc emu needs root (network namespaces and TUN devices); run it with sudo",
        ));
    }
    if !std::path::Path::new("/dev/net/tun").exists() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            "/dev/net/tun is missing: load the tun module (modprobe tun) or run where CONFIG_TUN is available",
        ));
    }
    Ok(())
}

/// The namespaces of one run; dropping it deletes them (and with them their devices).
pub struct Topology {
    pub hosts: Vec<HostNs>,
}

impl Topology {
    /// Creates one namespace per host: loopback up, IPv6 off, ECN on, the TCP congestion
    /// control asked for, and a persistent TUN device `xcc0` with the host's /32 address and a
    /// route to 10.0.0.0/8 through it (the router attaches to the device later).
    pub fn create(hosts: Vec<HostNs>) -> io::Result<Topology> {
        check_environment()?;
        let mut topo = Topology { hosts: Vec::new() };
        for h in hosts {
            if crate::os::signals::STOP.load(std::sync::atomic::Ordering::Relaxed) {
                // Stopped while setting up: what exists goes with `topo` (dropped).
                return Err(io::Error::new(io::ErrorKind::Interrupted, "interrupted"));
            }
            ip(&["netns", "add", &h.name])?;
            topo.hosts.push(h.clone());
            let n = h.name.as_str();
            ip(&["-n", n, "link", "set", "lo", "up"])?;
            sys::in_netns(&h.path(), || {
                write_sysctl("net.ipv6.conf.all.disable_ipv6", "1")?;
                write_sysctl("net.ipv6.conf.default.disable_ipv6", "1")?;
                write_sysctl("net.ipv4.tcp_ecn", &h.tcp_ecn.to_string())?;
                if !h.tcp_sack {
                    write_sysctl("net.ipv4.tcp_sack", "0")?;
                }
                write_sysctl("net.ipv4.tcp_congestion_control", &h.tcp_cc)?;
                // Linux TCP's socket buffers may grow to 64 MiB (autotuning; the defaults stop
                // at 4 MiB to send, 32 MiB to receive): a 4 MiB send buffer held kernel MaxNet
                // to 72 % of a 1 Gbit/s, 29 ms path (3.6 MB in flight), and seed 000's paths
                // reach 179 ms at 400 Mbit/s (9 MB). docs/emu.md, "Linux hosts".
                write_sysctl("net.ipv4.tcp_wmem", TCP_BUFFERS)?;
                write_sysctl("net.ipv4.tcp_rmem", TCP_BUFFERS)?;
                // A clean start for every flow: no metrics cached from an earlier connection.
                write_sysctl("net.ipv4.tcp_no_metrics_save", "1")
            })?;
            ip(&["-n", n, "tuntap", "add", "dev", TUN_DEV, "mode", "tun"])?;
            // A long transmit queue: the router reads in batches and must never make it overflow.
            let (tun_mtu, route_mtu) = (TUN_MTU.to_string(), ROUTE_MTU.to_string());
            ip(&["-n", n, "link", "set", TUN_DEV, "mtu", &tun_mtu, "txqueuelen", "10000", "up"])?;
            let a = h.addr;
            let addr = format!("{}.{}.{}.{}/32", a[0], a[1], a[2], a[3]);
            ip(&["-n", n, "addr", "add", &addr, "dev", TUN_DEV])?;
            // Linux TCP takes its MSS from the route (1460 B), so its packets are Ethernet's.
            let mut route = vec!["-n", n, "route", "add", "10.0.0.0/8", "dev", TUN_DEV, "mtu", &route_mtu];
            let initcwnd = h.initcwnd.map(|w| w.to_string());
            if let Some(w) = &initcwnd {
                route.extend(["initcwnd", w.as_str()]);
            }
            if h.quickack {
                route.extend(["quickack", "1"]);
            }
            ip(&route)?;
        }
        Ok(topo)
    }

    /// Deletes every namespace of this run now (also done on drop).
    pub fn destroy(&mut self) -> io::Result<()> {
        let mut first_err = None;
        for h in self.hosts.drain(..) {
            if let Err(e) = delete_netns(&h.name) {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }
}

impl Drop for Topology {
    fn drop(&mut self) {
        let _ = self.destroy();
    }
}

/// Steers the receive processing of packets written into `dev` of namespace `name` to the
/// CPUs of `mask` (Receive Packet Steering, `rps_cpus` of its one receive queue). Without it,
/// the receiving host's whole stack (IP, TCP, waking the reader, sending the ACK) runs inside
/// the router's `write`, on the router's CPU. `rps_cpus` is only in sysfs, which shows the
/// devices of the namespace it was mounted in: `ip netns exec` mounts the right one.
pub fn steer_receive(name: &str, dev: &str, mask: u64) -> io::Result<()> {
    let script = format!("echo {mask:x} > /sys/class/net/{dev}/queues/rx-0/rps_cpus");
    let out = Command::new("ip")
        .args(["netns", "exec", name, "sh", "-c", &script])
        .output()
        .map_err(|e| io::Error::new(e.kind(), format!("ip netns exec: {e}")))?;
    if !out.status.success() {
        return Err(io::Error::other(format!("{script} in {name}: {}", String::from_utf8_lossy(&out.stderr).trim())));
    }
    Ok(())
}

/// Kills the processes still inside namespace `name` (all started by xcclab) and deletes it.
pub fn delete_netns(name: &str) -> io::Result<()> {
    if let Ok(out) = Command::new("ip").args(["netns", "pids", name]).output() {
        for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
            if let Ok(pid) = pid.parse::<i32>() {
                // SAFETY: plain kill of a process id found inside our own namespace.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
    }
    ip(&["netns", "delete", name])
}

/// Names of the namespaces whose name starts with `prefix`.
pub fn list_with_prefix(prefix: &str) -> io::Result<Vec<String>> {
    let mut names = Vec::new();
    match std::fs::read_dir("/run/netns") {
        Ok(dir) => {
            for e in dir.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with(prefix) {
                    names.push(name);
                }
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    names.sort();
    Ok(names)
}

/// Deletes every namespace whose name starts with `prefix`; returns their names.
pub fn cleanup(prefix: &str) -> io::Result<Vec<String>> {
    let names = list_with_prefix(prefix)?;
    for n in &names {
        delete_netns(n)?;
    }
    Ok(names)
}

/// The process id in a run's namespace name `xccemu<pid>x<i>` (see [`run_prefix`]).
pub fn owner_pid(name: &str) -> Option<i32> {
    let rest = name.strip_prefix(PREFIX)?;
    let (pid, host) = rest.split_once('x')?;
    host.parse::<u32>().ok()?;
    pid.parse().ok()
}

/// Namespaces of runs whose process is gone (killed before it could clean up): a live run's
/// namespaces are never among them.
pub fn stale() -> io::Result<Vec<String>> {
    Ok(list_with_prefix(PREFIX)?.into_iter().filter(|n| owner_pid(n).is_some_and(|p| !sys::process_alive(p))).collect())
}

/// Deletes the namespaces of dead runs ([`stale`]); returns their names.
pub fn cleanup_stale() -> io::Result<Vec<String>> {
    let names = stale()?;
    for n in &names {
        delete_netns(n)?;
    }
    Ok(names)
}

/// Kernel-side counters of a host namespace: its TUN device (`/proc/net/dev`) and, with
/// [`host_counters`], its UDP sockets (`/proc/net/snmp`), each read inside the namespace.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct DevCounters {
    pub rx_packets: u64,
    pub rx_dropped: u64,
    pub tx_packets: u64,
    pub tx_dropped: u64,
    /// UDP datagrams the kernel dropped because a socket's receive buffer was full
    /// (`Udp: RcvbufErrors`): the receiving application did not read fast enough.
    pub udp_rcvbuf_errors: u64,
    /// UDP sends refused for lack of buffer space (`Udp: SndbufErrors`).
    pub udp_sndbuf_errors: u64,
}

impl DevCounters {
    /// What the counters grew by since `before`.
    pub fn since(&self, before: &DevCounters) -> DevCounters {
        DevCounters {
            rx_packets: self.rx_packets.saturating_sub(before.rx_packets),
            rx_dropped: self.rx_dropped.saturating_sub(before.rx_dropped),
            tx_packets: self.tx_packets.saturating_sub(before.tx_packets),
            tx_dropped: self.tx_dropped.saturating_sub(before.tx_dropped),
            udp_rcvbuf_errors: self.udp_rcvbuf_errors.saturating_sub(before.udp_rcvbuf_errors),
            udp_sndbuf_errors: self.udp_sndbuf_errors.saturating_sub(before.udp_sndbuf_errors),
        }
    }

    /// Packets the kernel dropped outside the modelled links.
    pub fn drops(&self) -> u64 {
        self.tx_dropped + self.rx_dropped + self.udp_rcvbuf_errors + self.udp_sndbuf_errors
    }
}

/// Waits, at most `limit`, until every host's TUN device runs. The kernel turns a TUN's carrier
/// on when the router attaches but activates its queue a moment later (link watch): what a host
/// sends in between is dropped and counted as a TX drop, so a run counts drops only from here.
pub fn wait_until_running(hosts: &[HostNs], limit: std::time::Duration) {
    let ready_by = std::time::Instant::now() + limit;
    for h in hosts {
        while !sys::in_netns(&h.path(), || sys::if_running(TUN_DEV)).unwrap_or(true)
            && std::time::Instant::now() < ready_by
            && !crate::os::signals::STOP.load(std::sync::atomic::Ordering::Relaxed)
        {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
}

/// [`dev_counters`] plus the namespace's UDP drop counters.
pub fn host_counters(ns: &std::path::Path, dev: &str) -> io::Result<DevCounters> {
    let mut c = dev_counters(ns, dev)?;
    let text = sys::in_netns(ns, || std::fs::read_to_string("/proc/thread-self/net/snmp"))?;
    let (rcvbuf, sndbuf) = parse_udp_drops(&text).ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidData, format!("no Udp counters in /proc/net/snmp of {}", ns.display()))
    })?;
    c.udp_rcvbuf_errors = rcvbuf;
    c.udp_sndbuf_errors = sndbuf;
    Ok(c)
}

/// `(RcvbufErrors, SndbufErrors)` from the two `Udp:` lines (names, then values) of
/// `/proc/net/snmp`.
fn parse_udp_drops(text: &str) -> Option<(u64, u64)> {
    let mut lines = text.lines().filter(|l| l.starts_with("Udp:"));
    let names: Vec<&str> = lines.next()?.split_whitespace().collect();
    let values: Vec<&str> = lines.next()?.split_whitespace().collect();
    let get = |name: &str| names.iter().position(|n| *n == name).and_then(|i| values.get(i)?.parse().ok());
    Some((get("RcvbufErrors")?, get("SndbufErrors")?))
}

/// Reads `dev`'s counters in namespace `ns`. TX is what the host sent into the TUN (the router
/// reads it): `tx_dropped` counts packets the kernel discarded because the router did not read
/// fast enough. RX is what the router wrote to the host.
pub fn dev_counters(ns: &std::path::Path, dev: &str) -> io::Result<DevCounters> {
    let text = sys::in_netns(ns, || std::fs::read_to_string("/proc/thread-self/net/dev"))?;
    parse_dev_counters(&text, dev).ok_or_else(|| {
        io::Error::new(io::ErrorKind::NotFound, format!("{dev} not in /proc/net/dev of {}", ns.display()))
    })
}

fn parse_dev_counters(text: &str, dev: &str) -> Option<DevCounters> {
    for line in text.lines() {
        let Some((name, rest)) = line.split_once(':') else { continue };
        if name.trim() != dev {
            continue;
        }
        let v: Vec<u64> = rest.split_whitespace().filter_map(|x| x.parse().ok()).collect();
        if v.len() < 12 {
            return None;
        }
        return Some(DevCounters {
            rx_packets: v[1],
            rx_dropped: v[3],
            tx_packets: v[9],
            tx_dropped: v[11],
            ..DevCounters::default()
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_pid_of_run_namespaces() {
        assert_eq!(owner_pid("xccemu1234x0"), Some(1234));
        assert_eq!(owner_pid("xccemu1234x17"), Some(1234));
        assert_eq!(owner_pid("xccemu1234"), None);
        assert_eq!(owner_pid("xccemuabcx0"), None);
        assert_eq!(owner_pid("xcck99-a"), None);
    }

    #[test]
    fn reads_proc_net_dev() {
        let text = "Inter-|   Receive                                                |  Transmit\n \
             face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n \
             lo: 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n  \
             xcc0: 1000 10 0 2 0 0 0 0 3000 30 0 7 0 0 0 0\n";
        let c = parse_dev_counters(text, "xcc0").unwrap();
        assert_eq!(
            c,
            DevCounters { rx_packets: 10, rx_dropped: 2, tx_packets: 30, tx_dropped: 7, ..DevCounters::default() }
        );
        assert_eq!(parse_dev_counters(text, "eth0"), None);
    }

    #[test]
    fn reads_udp_drops_from_proc_net_snmp() {
        let text = "Tcp: RtoAlgorithm RtoMin\nTcp: 1 200\n\
             Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\n\
             Udp: 100 0 5 90 4 3 1 0 0\n\
             UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\n\
             UdpLite: 0 0 0 0 0 0 0 0 0\n";
        assert_eq!(parse_udp_drops(text), Some((4, 3)));
        assert_eq!(parse_udp_drops("Udp: InDatagrams\nUdp: 1\n"), None);
        assert_eq!(parse_udp_drops(""), None);
    }
}
