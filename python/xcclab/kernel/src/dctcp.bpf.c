// SPDX-License-Identifier: GPL-2.0
// DCTCP (Alizadeh et al., SIGCOMM 2010; RFC 8257) as a BPF struct_ops tcp_congestion_ops named
// "xcc_dctcp", for kernels built without the tcp_dctcp module. The law is Linux's
// net/ipv4/tcp_dctcp.c and tcp_dctcp.h (read for this port, as was the kernel selftest
// tools/testing/selftests/bpf/progs/bpf_dctcp.c, the same law as struct_ops): alpha in
// 1/1024 units updated once per window of data from the kernel's delivered / delivered_ce
// packet counters, the window cut by alpha/2 (ssthresh), Reno's growth (the kernel's
// tcp_reno_cong_avoid as a kfunc) and PRR as the kernel applies them (cong_control), and the receiver's RFC 8257 section 3.2 state machine on
// the CA_EVENT_ECN_IS_CE / NO_CE events. TCP_CONG_NEEDS_ECN makes Linux negotiate ECN and set
// ECT on every packet of the socket. docs/kernel.md ("DCTCP") says what differs from the module.
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

// include/net/tcp.h (flags of struct tcp_congestion_ops and of tp->ecn_flags; macros, so not
// in vmlinux.h). TCP_ECN_OK is 6.18's TCP_ECN_MODE_RFC3168, the same bit.
#define TCP_CONG_NON_RESTRICTED 0x1
#define TCP_CONG_NEEDS_ECN 0x2
#define TCP_ECN_OK 0x1
#define TCP_ECN_DEMAND_CWR 0x4

// tcp_dctcp.c: alpha in [0, DCTCP_MAX_ALPHA]; g = 1/2^4 (dctcp_shift_g); alpha starts at 1
// (dctcp_alpha_on_init = DCTCP_MAX_ALPHA).
#define DCTCP_MAX_ALPHA 1024u
#define DCTCP_SHIFT_G 4

extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;

// Per-socket state in icsk_ca_priv (13 u64 of room), tcp_dctcp.c's struct dctcp.
struct dctcp {
	__u32 old_delivered;
	__u32 old_delivered_ce;
	__u32 prior_rcv_nxt;
	__u32 alpha;
	__u32 next_seq;
	__u32 ce_state;
	__u32 loss_cwnd;
	__u32 ecn_ok;
	__u32 last_ssthresh; // what xcc_dctcp_ssthresh last returned (for repair_ssthresh)
	__u32 prr_delivered; // PRR's count since the reduction began (tp->prr_delivered is read-only)
};

// Counters for the tests and `xcc compare --stack kernel` (summed over CPUs by the reader).
enum dctcp_stat {
	ST_INIT,	       // sockets that started DCTCP
	ST_NO_ECN,	       // ... without ECN negotiated (they act as Reno: no marks, halving on loss)
	ST_CE_RECEIVED,	       // CA_EVENT_ECN_IS_CE at a receiver: CE-marked segments (GRO: batches)
	ST_NO_CE_RECEIVED,     // CA_EVENT_ECN_NO_CE
	ST_STATE_ACKS,	       // delayed ACKs sent early on a CE-state change (RFC 8257 3.2)
	ST_WINDOWS,	       // alpha updates at senders (windows of data acknowledged)
	ST_ALPHA_SUM,	       // sum of alpha after each update, 1/1024 units
	ST_DELIVERED,	       // packets delivered over those windows
	ST_DELIVERED_CE,       // ... of which the receiver echoed CE
	ST_CUTS,	       // ssthresh calls: ECE (once per window) or loss
	ST_LOSSES,	       // loss reactions (recovery entered, RTO)
	ST_CWND_AT_CUTS,       // sum of the window (segments) each cut started from
	ST_REPAIRS,	       // ssthresh found above TCP_INFINITE_SSTHRESH and restored (see below)
	ST_MAX
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ST_MAX);
	__type(key, __u32);
	__type(value, __u64);
} dctcp_stats SEC(".maps");

static __always_inline void add(__u32 which, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&dctcp_stats, &which);
	if (v)
		*v += n;
}

static __always_inline struct dctcp *ca_of(struct sock *sk)
{
	return (struct dctcp *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

static __always_inline int seq_before(__u32 a, __u32 b)
{
	return (__s32)(a - b) < 0;
}

// A new window of data starts at SND.NXT (RFC 8257 3.3 "WindowEnd"), counting from here.
static __always_inline void window_reset(const struct tcp_sock *tp, struct dctcp *ca)
{
	ca->next_seq = tp->snd_nxt;
	ca->old_delivered = tp->delivered;
	ca->old_delivered_ce = tp->delivered_ce;
}

SEC("struct_ops/xcc_dctcp_init")
void BPF_PROG(xcc_dctcp_init, struct sock *sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct dctcp *ca = ca_of(sk);

	ca->prior_rcv_nxt = tp->rcv_nxt;
	ca->alpha = DCTCP_MAX_ALPHA;
	ca->loss_cwnd = 0;
	ca->ce_state = 0;
	ca->last_ssthresh = 0;
	// tcp_dctcp.c falls back to Reno without ECN (it swaps the socket's ops, which BPF
	// cannot): here the cut on loss is Reno's half instead (xcc_dctcp_ssthresh).
	ca->ecn_ok = (tp->ecn_flags & TCP_ECN_OK) != 0;
	window_reset(tp, ca);
	add(ST_INIT, 1);
	if (!ca->ecn_ok)
		add(ST_NO_ECN, 1);
}

// On Linux 6.18 (the kernel this was written on) a DCTCP sender's snd_ssthresh is now and then
// found, on the ACK after a cut, to hold 0x82205665 (the low half of srso_return_thunk + 5,
// a return address a `ret` through the SRSO thunk leaves on the stack) although the value this
// program returned was sane and it was not called again; PRR then computes a window of 10^8+
// segments. Cause not established (docs/kernel.md "DCTCP"). No legitimate ssthresh exceeds
// TCP_INFINITE_SSTHRESH, so such a value is put back to what xcc_dctcp_ssthresh returned, the
// window capped at it, and counted. Called first thing on every ACK (in_ack_event).
static __always_inline void repair_ssthresh(struct tcp_sock *tp, struct dctcp *ca)
{
	if (tp->snd_ssthresh <= 0x7fffffff)
		return;
	__u32 target = ca->last_ssthresh ? ca->last_ssthresh : 2;
	tp->snd_ssthresh = target;
	if (tp->snd_cwnd > target)
		tp->snd_cwnd = target;
	add(ST_REPAIRS, 1);
}

// Once per window (when SND.UNA passes WindowEnd): alpha = (1 - g) alpha + g F, with F the
// fraction of packets delivered in the window that the receiver echoed CE.
SEC("struct_ops/xcc_dctcp_update_alpha")
void BPF_PROG(xcc_dctcp_update_alpha, struct sock *sk, __u32 flags)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct dctcp *ca = ca_of(sk);

	repair_ssthresh(tp, ca);
	if (seq_before(tp->snd_una, ca->next_seq))
		return;
	__u32 delivered = tp->delivered - ca->old_delivered;
	__u32 delivered_ce = tp->delivered_ce - ca->old_delivered_ce;
	__u32 alpha = ca->alpha;
	__u32 decay = alpha >> DCTCP_SHIFT_G;
	// alpha -= alpha g, and to 0 once that rounds to 0 (tcp_dctcp.c's min_not_zero).
	alpha -= decay ? decay : alpha;
	if (delivered_ce) {
		// g F in 1/1024 units: delivered_ce << (10 - shift_g) / delivered.
		__u32 gf = (delivered_ce << (10 - DCTCP_SHIFT_G)) / (delivered ? delivered : 1);
		alpha += gf;
		if (alpha > DCTCP_MAX_ALPHA)
			alpha = DCTCP_MAX_ALPHA;
	}
	ca->alpha = alpha;
	// Counted for senders only: a receiver's every ACK-carrying segment "ends a window" with
	// nothing delivered (it sends no data), and its alpha means nothing.
	if (delivered) {
		add(ST_WINDOWS, 1);
		add(ST_ALPHA_SUM, alpha);
		add(ST_DELIVERED, delivered);
		add(ST_DELIVERED_CE, delivered_ce);
	}
	window_reset(tp, ca);
}

// The cut on ECE (the kernel calls this once per window, entering CWR) and on loss:
// cwnd (1 - alpha/2), at least 2 segments.
SEC("struct_ops/xcc_dctcp_ssthresh")
__u32 BPF_PROG(xcc_dctcp_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct dctcp *ca = ca_of(sk);
	__u32 cwnd = tp->snd_cwnd;
	__u32 cut = ca->ecn_ok ? (cwnd * ca->alpha) >> 11 : cwnd >> 1;

	ca->loss_cwnd = cwnd;
	add(ST_CUTS, 1);
	add(ST_CWND_AT_CUTS, cwnd);
	return cwnd - cut > 2 ? cwnd - cut : 2;
}

// A loss halves the window whatever alpha is (tcp_dctcp.c dctcp_react_to_loss).
static __always_inline void react_to_loss(struct sock *sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct dctcp *ca = ca_of(sk);
	__u32 half = tp->snd_cwnd >> 1;

	ca->loss_cwnd = tp->snd_cwnd;
	tp->snd_ssthresh = half > 2 ? half : 2;
	ca->last_ssthresh = tp->snd_ssthresh;
	add(ST_LOSSES, 1);
}

SEC("struct_ops/xcc_dctcp_set_state")
void BPF_PROG(xcc_dctcp_set_state, struct sock *sk, __u8 new_state)
{
	struct inet_connection_sock *icsk = (struct inet_connection_sock *)sk;
	// Entering recovery; an RTO comes as CA_EVENT_LOSS (one adjustment per RTT).
	if (new_state == TCP_CA_Recovery && new_state != BPF_CORE_READ_BITFIELD(icsk, icsk_ca_state))
		react_to_loss(sk);
}

// The receiver's ECE: set while the last segment was CE (TCP_ECN_DEMAND_CWR makes the next
// ACKs carry ECE), clear otherwise.
static __always_inline void echo_state(struct tcp_sock *tp, __u32 ce_state)
{
	if (ce_state)
		tp->ecn_flags |= TCP_ECN_DEMAND_CWR;
	else
		tp->ecn_flags &= ~TCP_ECN_DEMAND_CWR;
}

// RFC 8257 section 3.2 (tcp_dctcp.h dctcp_ece_ack_update): on a change of CE state, a delayed
// ACK is sent first with the old state (for the segments before), and the new segment is
// acknowledged at once with the new state.
static __always_inline void ce_state_update(struct sock *sk, __u32 new_state)
{
	struct inet_connection_sock *icsk = (struct inet_connection_sock *)sk;
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct dctcp *ca = ca_of(sk);

	if (ca->ce_state != new_state) {
		if (icsk->icsk_ack.pending & ICSK_ACK_TIMER) {
			echo_state(tp, ca->ce_state);
			bpf_tcp_send_ack(tp, ca->prior_rcv_nxt);
			add(ST_STATE_ACKS, 1);
		}
		icsk->icsk_ack.pending |= ICSK_ACK_NOW;
	}
	ca->prior_rcv_nxt = tp->rcv_nxt;
	ca->ce_state = new_state;
	echo_state(tp, new_state);
}

SEC("struct_ops/xcc_dctcp_cwnd_event")
void BPF_PROG(xcc_dctcp_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	switch (ev) {
	case CA_EVENT_ECN_IS_CE:
		add(ST_CE_RECEIVED, 1);
		ce_state_update(sk, 1);
		break;
	case CA_EVENT_ECN_NO_CE:
		add(ST_NO_CE_RECEIVED, 1);
		ce_state_update(sk, 0);
		break;
	case CA_EVENT_LOSS:
		react_to_loss(sk);
		break;
	default:
		break;
	}
}

SEC("struct_ops/xcc_dctcp_undo_cwnd")
__u32 BPF_PROG(xcc_dctcp_undo_cwnd, struct sock *sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	__u32 loss_cwnd = ca_of(sk)->loss_cwnd;
	return tp->snd_cwnd > loss_cwnd ? tp->snd_cwnd : loss_cwnd;
}

// tcp_input.c's flags of an ACK (macros there, so not in vmlinux.h).
#define FLAG_DATA_ACKED 0x04
#define FLAG_SND_UNA_ADVANCED 0x400
#define TCPF_CA_CWR (1 << TCP_CA_CWR)
#define TCPF_CA_RECOVERY (1 << TCP_CA_Recovery)

static __always_inline __u32 packets_in_flight(const struct tcp_sock *tp)
{
	return tp->packets_out - (tp->sacked_out + tp->lost_out) + tp->retrans_out;
}

// Proportional rate reduction (RFC 6937) towards ssthresh while in CWR or recovery, as the
// kernel's tcp_cwnd_reduction() does for congestion controls without cong_control.
static __always_inline void prr(struct tcp_sock *tp, struct dctcp *ca, __u32 acked_sacked,
				int losses, int flag)
{
	if (!acked_sacked || !tp->prior_cwnd)
		return;
	ca->prr_delivered += acked_sacked;
	__s32 delta = (__s32)(tp->snd_ssthresh - packets_in_flight(tp));
	__s32 sndcnt;
	if (delta < 0) {
		__u64 dividend = (__u64)tp->snd_ssthresh * ca->prr_delivered + tp->prior_cwnd - 1;
		sndcnt = (__s32)(dividend / tp->prior_cwnd) - (__s32)tp->prr_out;
	} else {
		sndcnt = (__s32)(ca->prr_delivered - tp->prr_out);
		if (sndcnt < (__s32)acked_sacked)
			sndcnt = acked_sacked;
		if ((flag & FLAG_SND_UNA_ADVANCED) && !losses)
			sndcnt++;
		if (sndcnt > delta)
			sndcnt = delta;
	}
	// A fast retransmit upon entering recovery.
	if (sndcnt < (tp->prr_out ? 0 : 1))
		sndcnt = tp->prr_out ? 0 : 1;
	tp->snd_cwnd = packets_in_flight(tp) + sndcnt;
}

// The kernel's pacing rate (tcp_update_pacing_rate(), default sysctls): cwnd / srtt at 200 %
// in slow start, 120 % after; Linux sizes its TSO bursts from it even without a pacing qdisc.
static __always_inline void pacing_rate(struct sock *sk, struct tcp_sock *tp)
{
	__u64 rate = (__u64)tp->mss_cache * ((1000000 / 100) << 3);
	__u32 cwnd = tp->snd_cwnd;
	rate *= cwnd < tp->snd_ssthresh / 2 ? 200 : 120;
	rate *= cwnd > tp->packets_out ? cwnd : tp->packets_out;
	if (tp->srtt_us)
		rate /= tp->srtt_us;
	if (rate > sk->sk_max_pacing_rate)
		rate = sk->sk_max_pacing_rate;
	sk->sk_pacing_rate = rate;
}

// What the kernel's tcp_cong_control() does for a module with cong_avoid (tcp_dctcp.c):
// PRR while reducing, else Reno's growth (the kernel's tcp_reno_cong_avoid as a kfunc) on
// in-order delivery, then the pacing rate. Done here rather than through .cong_avoid so that
// a corrupted ssthresh (repair_ssthresh) is put right before PRR uses it on the same ACK.
SEC("struct_ops/xcc_dctcp_cong_avoid")
void BPF_PROG(xcc_dctcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	repair_ssthresh((struct tcp_sock *)sk, ca_of(sk));
	tcp_reno_cong_avoid(sk, ack, acked);
}

// Called by tcp_write_xmit() before it sends (tcp_tso_segs()): the last point to put a
// corrupted ssthresh and the window PRR computed from it right (repair_ssthresh) before they
// release a burst. Returns the kernel's default (net.ipv4.tcp_min_tso_segs = 2).
SEC("struct_ops/xcc_dctcp_min_tso_segs")
__u32 BPF_PROG(xcc_dctcp_min_tso_segs, struct sock *sk)
{
	repair_ssthresh((struct tcp_sock *)sk, ca_of(sk));
	return 2;
}

SEC(".struct_ops")
struct tcp_congestion_ops xcc_dctcp = {
	.init = (void *)xcc_dctcp_init,
	.in_ack_event = (void *)xcc_dctcp_update_alpha,
	.cwnd_event = (void *)xcc_dctcp_cwnd_event,
	.ssthresh = (void *)xcc_dctcp_ssthresh,
	.cong_avoid = (void *)xcc_dctcp_cong_avoid,
	.undo_cwnd = (void *)xcc_dctcp_undo_cwnd,
	.set_state = (void *)xcc_dctcp_set_state,
	.min_tso_segs = (void *)xcc_dctcp_min_tso_segs,
	// NEEDS_ECN: ECN negotiated and ECT on every packet; NON_RESTRICTED: as maxnet.bpf.c says,
	// without it a failed non-root setsockopt leaks a reference that pins the map.
	.flags = TCP_CONG_NON_RESTRICTED | TCP_CONG_NEEDS_ECN,
	.name = "xcc_dctcp",
};
