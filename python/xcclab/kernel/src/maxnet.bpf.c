// SPDX-License-Identifier: GPL-2.0
// MaxNet TCP (seed 000) as BPF: a struct_ops tcp_congestion_ops "maxnet" (the source law of
// Fig. 2 with MaxStart) and a sock_ops program that writes, parses and echoes the MaxNet TCP
// option (Fig. 4). Same equations and 24-bit encoding as crates/xcc-core/src/host/maxnet.rs and
// wire/maxnet.rs; no floats: log-domain values are s64 fixed point with Q_BITS fraction bits and
// exp() is 2^n times a Taylor series. docs/kernel.md explains the choices.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

#define TCP_CONG_NON_RESTRICTED 0x1
#define SOL_TCP 6
#define TCP_CONGESTION 13

// The option on the wire: kind 254 (RFC 6994 experimental) with a 16-bit ExID, then the two
// 24-bit fields of Fig. 4: 10 bytes (Fig. 4's kind-42 form is 8).
#define OPT_KIND 254
#define OPT_LEN 10
#define OPT_EXID 0x4d58 // "MX": unregistered, lab use only (docs/kernel.md)

#define FRAC_BITS 18
#define MAXSTART_FLAG (1u << 23)
#define CODE_MAX (MAXSTART_FLAG - 1)

#define Q_BITS 20
#define Q_ONE (1ll << Q_BITS)
#define LN2_Q 726817ll // ln 2 * 2^20
#define AVG_BUCKETS 8

enum phase { PROBING = 0, MAXSTART = 1, PRICE = 2 };

// Set by the loader (computed in userspace with floats) before attaching.
struct maxnet_config {
	__u32 t_us;		 // demand scale T (400000)
	__u32 maxstart;		 // 1: MaxStart as in the paper
	__s64 alpha_q;		 // alpha in Q_BITS (0.66)
	__s64 ln_xmax_bytes_q;	 // ln(x_max / 8) in Q_BITS: D(q) in bytes/s = exp(this - q/T)
	__u64 alpha_eta_t_ns;	 // alpha * eta * T in ns (15.84 ms): the gain of eq. (10) is this * dt / tau^2
	__u32 fixed_price;	 // test mode: a path "router" at the receiver stamps max(price, this)
	__u32 fixed_spare;	 // test mode: MaxStart equivalent-price code it stamps (0: none)
	__u32 min_cwnd;		 // window floor in segments (2)
	__u32 set_cc;		 // 1: sock_ops makes every socket in the cgroup use maxnet
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct maxnet_config);
} maxnet_cfg SEC(".maps");

// Counters for `xcc kernel status` and the tests.
enum maxnet_stat { ST_OPT_WRITTEN, ST_OPT_PARSED, ST_OPT_NOSPACE, ST_ECHO_PRICE, ST_ECHO_SPARE,
	    ST_CC_ACKS, ST_CC_PRICE_LAW, ST_CC_MAXSTART, ST_MAX };

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ST_MAX);
	__type(key, __u32);
	__type(value, __u64);
} maxnet_stats SEC(".maps");

static __always_inline void count(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&maxnet_stats, &which);
	if (v)
		*v += 1;
}

// The latest values seen by any socket (meaningful with one MaxNet flow, as in the tests).
enum maxnet_gauge { G_ECHO_PRICE, G_CWND, G_TAU_US, G_MAX };

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, G_MAX);
	__type(key, __u32);
	__type(value, __u64);
} maxnet_gauges SEC(".maps");

static __always_inline void gauge(__u32 which, __u64 value)
{
	__u64 *v = bpf_map_lookup_elem(&maxnet_gauges, &which);
	if (v)
		*v = value;
}

// Per-socket state shared by the sock_ops program (option I/O) and the congestion control.
struct maxnet_sk {
	// Receiver side: time-weighted price average over ~one RTT in AVG_BUCKETS buckets.
	__u64 rx_last_ns;
	__u64 rx_bucket;
	__u64 sum[AVG_BUCKETS];
	__u64 weight[AVG_BUCKETS];
	__u32 rx_latest;
	__u32 rx_have;
	__u32 pending_maxstart; // a flagged field to echo at once (0: none)
	// Sender side: what came back in the echo field.
	__u32 echo_price;	// latest echoed price code (0: none yet)
	__u32 echo_spare;	// echoed MaxStart code, flag cleared
	__u32 echo_spare_seen;	// 1 once a MaxStart echo arrived
	__u32 is_maxnet;	// the socket's congestion control is maxnet
	__u32 sent_maxstart;	// the MaxStart request went out
	// Congestion control.
	__u32 phase;
	__u32 pad;
	__s64 xi;		// Q_BITS
	__u64 rate_Bps;		// MaxStart's rate
	__u64 start_Bps;	// MaxStart's spare capacity S
	__u64 last_us;		// last update (tcp_mstamp)
	__u64 updates;
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct maxnet_sk);
} maxnet_sk_map SEC(".maps");

static __always_inline struct maxnet_config *maxnet_config_get(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&maxnet_cfg, &zero);
}

// exp(z) for z in Q_BITS fixed point, as an integer, saturating at 2^40 (0 for z < 0).
// exp(z) = 2^n e^r with r in [0, ln 2): Taylor to r^8/8! (error < 2e-7).
static __always_inline __u64 exp_q(__s64 z)
{
	if (z < 0)
		return 0;
	if (z >= 40 * LN2_Q)
		return 1ull << 40;
	__u64 n = (__u64)z / LN2_Q;
	__u64 r = (__u64)z - n * LN2_Q;
	__u64 term = Q_ONE, sum = Q_ONE;
#pragma unroll
	for (int k = 1; k <= 8; k++) {
		term = (term * r >> Q_BITS) / k;
		sum += term;
	}
	return n >= Q_BITS ? sum << (n - Q_BITS) : sum >> (Q_BITS - n);
}

// A 23-bit price code (18 fraction bits) in Q_BITS seconds.
static __always_inline __s64 code_to_q(__u32 code)
{
	return (__s64)(code & CODE_MAX) << (Q_BITS - FRAC_BITS);
}

// D(q) = x_max exp(-q/T) in bytes per second.
static __always_inline __u64 demand_Bps(struct maxnet_config *c, __s64 q)
{
	__s64 q_over_t = (__s64)((__u64)q * 1000000ull / c->t_us);
	return exp_q(c->ln_xmax_bytes_q - q_over_t);
}

// alpha q / tau in Q_BITS (tau in microseconds).
static __always_inline __s64 alpha_q_over_tau(struct maxnet_config *c, __s64 q, __u32 tau_us)
{
	__u64 aq = ((__u64)c->alpha_q * (__u64)q) >> Q_BITS;
	return (__s64)(aq * 1000000ull / tau_us);
}

// xi*(q) = alpha q / tau - q / T.
static __always_inline __s64 xi_star(struct maxnet_config *c, __s64 q, __u32 tau_us)
{
	return alpha_q_over_tau(c, q, tau_us) - (__s64)((__u64)q * 1000000ull / c->t_us);
}

// ---------------------------------------------------------------------------------------------
// Congestion control.

static __always_inline struct maxnet_sk *sk_state(struct sock *sk)
{
	return bpf_sk_storage_get(&maxnet_sk_map, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
}

static __always_inline void set_cwnd_from_rate(struct maxnet_config *c, struct tcp_sock *tp,
					       __u64 rate_Bps, __u32 tau_us)
{
	__u32 mss = tp->mss_cache ? tp->mss_cache : 1460;
	if (rate_Bps > (1ull << 40))
		rate_Bps = 1ull << 40;
	if (tau_us > (1u << 23))
		tau_us = 1u << 23;
	__u64 den = 1000000ull * mss;
	__u64 cwnd = (rate_Bps * tau_us + den / 2) / den;
	if (cwnd < c->min_cwnd)
		cwnd = c->min_cwnd;
	if (cwnd > tp->snd_cwnd_clamp)
		cwnd = tp->snd_cwnd_clamp;
	tp->snd_cwnd = cwnd;
	gauge(G_CWND, cwnd);
	gauge(G_TAU_US, tau_us);
}

// Eq. (10) and the window W = tau x_max exp(xi - q alpha / tau). The step
// (alpha eta dt / tau^2) ((T alpha / tau - 1) q - T xi) equals g (xi*(q) - xi) with
// g = alpha eta T dt / tau^2, so the paper's clip at xi* is g = min(g, 1).
static __always_inline void price_law(struct maxnet_config *c, struct tcp_sock *tp,
				      struct maxnet_sk *s, __s64 q, __u32 tau_us, __u64 now_us)
{
	__u64 dt_us = now_us - s->last_us;
	if (dt_us > 10000000)
		dt_us = 10000000;
	__u64 g = ((c->alpha_eta_t_ns * dt_us / 1000) << Q_BITS) / tau_us / tau_us;
	if (g > Q_ONE)
		g = Q_ONE;
	__s64 star = xi_star(c, q, tau_us);
	s->xi += ((__s64)g * (star - s->xi)) >> Q_BITS;
	s->last_us = now_us;
	s->updates++;
	count(ST_CC_PRICE_LAW);
	__s64 z = s->xi - alpha_q_over_tau(c, q, tau_us) + c->ln_xmax_bytes_q;
	set_cwnd_from_rate(c, tp, exp_q(z), tau_us);
}

static __always_inline void enter_price_law(struct maxnet_config *c, struct tcp_sock *tp,
					    struct maxnet_sk *s, __s64 q, __u32 tau_us,
					    __u64 now_us)
{
	// protocols.md 1.7 P4: start at the equilibrium of the current price.
	s->xi = xi_star(c, q, tau_us);
	s->last_us = now_us;
	s->phase = PRICE;
	price_law(c, tp, s, q, tau_us, now_us);
}

SEC("struct_ops/maxnet_init")
void BPF_PROG(maxnet_init, struct sock *sk)
{
	struct maxnet_config *c = maxnet_config_get();
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct maxnet_sk *s = sk_state(sk);
	if (!s || !c)
		return;
	s->is_maxnet = 1;
	s->phase = PROBING;
	s->xi = 0;
	// Until the first echo the window is small (one segment in the paper; our floor).
	tp->snd_cwnd = c->min_cwnd;
	tp->snd_ssthresh = 0x7fffffff;
}

SEC("struct_ops/maxnet_cong_control")
void BPF_PROG(maxnet_cong_control, struct sock *sk, __u32 ack, int flag,
	      const struct rate_sample *rs)
{
	struct maxnet_config *c = maxnet_config_get();
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct maxnet_sk *s = sk_state(sk);
	if (!s || !c || !c->t_us)
		return;
	count(ST_CC_ACKS);
	__u32 tau_us = tp->rtt_min.s[0].v;
	if (tau_us == 0 || tau_us == ~0u)
		return;
	__u64 now_us = tp->tcp_mstamp;
	__s64 q = code_to_q(s->echo_price);
	int have_q = s->echo_price != 0;

	if (s->phase == PROBING) {
		if (c->maxstart && s->echo_spare_seen && s->echo_spare != 0) {
			__u64 spare = demand_Bps(c, code_to_q(s->echo_spare));
			s->rate_Bps = spare;
			s->start_Bps = spare;
			s->last_us = now_us;
			s->phase = MAXSTART;
			set_cwnd_from_rate(c, tp, spare, tau_us);
		} else if (have_q && (!c->maxstart || s->echo_spare_seen || ++s->updates > 8)) {
			// No MaxStart, or no router on the path answered it (a zero spare code), or
			// its echo was lost while prices keep coming.
			enter_price_law(c, tp, s, q, tau_us, now_us);
		} else {
			tp->snd_cwnd = c->min_cwnd;
		}
		return;
	}
	if (s->phase == MAXSTART) {
		if (!have_q) {
			set_cwnd_from_rate(c, tp, s->rate_Bps, tau_us);
			return;
		}
		__u64 price_rate = demand_Bps(c, q);
		if (s->rate_Bps > price_rate) {
			enter_price_law(c, tp, s, q, tau_us, now_us);
			return;
		}
		__u64 dt_us = now_us - s->last_us;
		if (dt_us * 16 >= tau_us) {
			// r += (D(q) - S) dt / (2 tau); D(q) >= r >= S here.
			__u64 delta = price_rate > s->start_Bps ? price_rate - s->start_Bps : 0;
			if (dt_us > 10000000)
				dt_us = 10000000;
			s->rate_Bps += delta / (2 * tau_us) * dt_us;
			s->last_us = now_us;
		}
		count(ST_CC_MAXSTART);
		set_cwnd_from_rate(c, tp, s->rate_Bps, tau_us);
		return;
	}
	if (have_q && now_us > s->last_us)
		price_law(c, tp, s, q, tau_us, now_us);
	else
		set_cwnd_from_rate(c, tp, exp_q(s->xi - alpha_q_over_tau(c, q, tau_us) +
						c->ln_xmax_bytes_q),
				   tau_us);
}

// Losses do not change the window (seed 000 Section VI): keep ssthresh out of the way and
// give back the current window on undo; cong_control rewrites cwnd on the next ACK anyway.
SEC("struct_ops/maxnet_ssthresh")
__u32 BPF_PROG(maxnet_ssthresh, struct sock *sk)
{
	return 0x7fffffff;
}

SEC("struct_ops/maxnet_undo_cwnd")
__u32 BPF_PROG(maxnet_undo_cwnd, struct sock *sk)
{
	return ((struct tcp_sock *)sk)->snd_cwnd;
}

SEC(".struct_ops")
struct tcp_congestion_ops maxnet = {
	.init = (void *)maxnet_init,
	.cong_control = (void *)maxnet_cong_control,
	.ssthresh = (void *)maxnet_ssthresh,
	.undo_cwnd = (void *)maxnet_undo_cwnd,
	// Without it a failed setsockopt/sysctl leaks a reference that pins the map until reboot.
	.flags = TCP_CONG_NON_RESTRICTED,
	.name = "maxnet",
};

// ---------------------------------------------------------------------------------------------
// The option: sock_ops header callbacks.

static __always_inline __u32 be24(const __u8 *b)
{
	return ((__u32)b[0] << 16) | ((__u32)b[1] << 8) | b[2];
}

// Weighted average of the prices seen over the last AVG_BUCKETS buckets of srtt/AVG_BUCKETS:
// each sample weighs the time since the previous one (seed 000 Section VI).
static __always_inline void rx_price(struct maxnet_sk *s, __u32 code, __u32 srtt_us)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 width = (__u64)srtt_us * 1000 / AVG_BUCKETS;
	if (width < 1000)
		width = 1000;
	__u64 b = now / width;
	__u64 w = s->rx_have ? now - s->rx_last_ns : 0;
	if (b != s->rx_bucket) {
		__u64 gap = b - s->rx_bucket;
#pragma unroll
		for (int k = 1; k <= AVG_BUCKETS; k++) {
			if (k <= gap) {
				__u32 i = (s->rx_bucket + k) & (AVG_BUCKETS - 1);
				s->sum[i] = 0;
				s->weight[i] = 0;
			}
		}
		s->rx_bucket = b;
	}
	__u32 i = b & (AVG_BUCKETS - 1);
	if (w > 1000000000)
		w = 1000000000;
	s->sum[i] += (__u64)code * w;
	s->weight[i] += w;
	s->rx_last_ns = now;
	s->rx_latest = code;
	s->rx_have = 1;
}

static __always_inline __u32 rx_average(struct maxnet_sk *s)
{
	__u64 sum = 0, weight = 0;
#pragma unroll
	for (int i = 0; i < AVG_BUCKETS; i++) {
		sum += s->sum[i];
		weight += s->weight[i];
	}
	if (weight == 0)
		return s->rx_latest;
	return (sum + weight / 2) / weight;
}

static __always_inline void parse_option(struct bpf_sock_ops *skops, struct maxnet_config *c)
{
	// Search by kind 254 and our 2-byte ExID: the length byte says how long the magic is (4).
	__u8 opt[OPT_LEN] = { OPT_KIND, 4, OPT_EXID >> 8, OPT_EXID & 0xff };
	if (bpf_load_hdr_opt(skops, opt, sizeof(opt), 0) != OPT_LEN || opt[1] != OPT_LEN)
		return;
	struct bpf_sock *sk = skops->sk;
	if (!sk)
		return;
	struct maxnet_sk *s = bpf_sk_storage_get(&maxnet_sk_map, sk, 0,
						 BPF_SK_STORAGE_GET_F_CREATE);
	if (!s)
		return;
	count(ST_OPT_PARSED);
	__u32 echo = be24(&opt[4]);
	__u32 price = be24(&opt[7]);
	if (echo & MAXSTART_FLAG) {
		s->echo_spare = echo & CODE_MAX;
		s->echo_spare_seen = 1;
		count(ST_ECHO_SPARE);
	} else if (echo) {
		s->echo_price = echo;
		count(ST_ECHO_PRICE);
		gauge(G_ECHO_PRICE, echo);
	}
	if (price & MAXSTART_FLAG) {
		if (c->fixed_spare && (price & CODE_MAX) < c->fixed_spare)
			price = MAXSTART_FLAG | c->fixed_spare;
		s->pending_maxstart = price;
	} else {
		if (price < c->fixed_price)
			price = c->fixed_price;
		rx_price(s, price, skops->srtt_us >> 3);
	}
}

static __always_inline int segment_has_payload(struct bpf_sock_ops *skops)
{
	struct tcphdr *th = skops->skb_data;
	if ((void *)(th + 1) > skops->skb_data_end)
		return 0;
	return skops->skb_len > (__u32)th->doff * 4;
}

static __always_inline void write_option(struct bpf_sock_ops *skops, struct maxnet_config *c)
{
	struct bpf_sock *sk = skops->sk;
	if (!sk)
		return;
	struct maxnet_sk *s = bpf_sk_storage_get(&maxnet_sk_map, sk, 0,
						 BPF_SK_STORAGE_GET_F_CREATE);
	if (!s)
		return;
	__u32 echo;
	if (s->pending_maxstart) {
		echo = s->pending_maxstart;
		s->pending_maxstart = 0;
	} else {
		echo = s->rx_have ? rx_average(s) : 0;
	}
	__u32 price = 0;
	// The first data segment a MaxNet sender sends asks the path for its spare capacity
	// (routers stamp data only). skb_data covers the TCP header here: payload = len - doff.
	if (s->is_maxnet && c->maxstart && !s->sent_maxstart && segment_has_payload(skops)) {
		price = MAXSTART_FLAG;
		s->sent_maxstart = 1;
	}
	__u8 opt[OPT_LEN] = {
		OPT_KIND, OPT_LEN, OPT_EXID >> 8, OPT_EXID & 0xff,
		echo >> 16, echo >> 8, echo, price >> 16, price >> 8, price,
	};
	if (bpf_store_hdr_opt(skops, opt, sizeof(opt), 0) == 0)
		count(ST_OPT_WRITTEN);
}

SEC("sockops")
int maxnet_sockops(struct bpf_sock_ops *skops)
{
	struct maxnet_config *c = maxnet_config_get();
	if (!c)
		return 1;
	switch (skops->op) {
	case BPF_SOCK_OPS_TCP_CONNECT_CB:
	case BPF_SOCK_OPS_TCP_LISTEN_CB:
		if (c->set_cc) {
			char name[] = "maxnet";
			bpf_setsockopt(skops, SOL_TCP, TCP_CONGESTION, name, sizeof(name));
		}
		break;
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags |
						 BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG |
						 BPF_SOCK_OPS_PARSE_ALL_HDR_OPT_CB_FLAG);
		break;
	case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
		if (bpf_reserve_hdr_opt(skops, OPT_LEN, 0))
			count(ST_OPT_NOSPACE);
		break;
	case BPF_SOCK_OPS_WRITE_HDR_OPT_CB:
		write_option(skops, c);
		break;
	case BPF_SOCK_OPS_PARSE_HDR_OPT_CB:
		parse_option(skops, c);
		break;
	}
	return 1;
}
