// SPDX-License-Identifier: GPL-2.0
// Loads maxnet.bpf.o, registers the "maxnet" congestion control through a struct_ops *link* and
// attaches the sock_ops program to one child cgroup through a cgroup link, prints "ready", then
// waits for SIGINT/SIGTERM/SIGHUP (or its parent's death with --die-with-parent) and detaches
// everything. Both attachments are file-descriptor links, so even SIGKILL leaves nothing
// registered: the kernel drops them when the process's descriptors close.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

// Not in older uapi headers (Linux 6.4+).
#define XCC_BPF_STRUCT_OPS_ATTACH 44
#define XCC_BPF_F_LINK (1U << 13)

struct maxnet_config {
	__u32 t_us;
	__u32 maxstart;
	__s64 alpha_q;
	__s64 ln_xmax_bytes_q;
	__u64 alpha_eta_t_ns;
	__u32 fixed_price;
	__u32 fixed_spare;
	__u32 min_cwnd;
	__u32 set_cc;
};

#define Q_BITS 20

static void usage(void)
{
	fprintf(stderr,
		"usage: maxnet_loader --obj FILE --cgroup DIR [--t S] [--alpha A] [--eta E]\n"
		"       [--x-max BPS] [--no-maxstart] [--fixed-price CODE] [--fixed-spare CODE]\n"
		"       [--min-cwnd N] [--set-cc] [--pin-dir DIR] [--die-with-parent]\n");
}

// A child cgroup: DIR is a cgroup v2 directory whose parent is one too (never the root).
static int check_child_cgroup(const char *dir)
{
	char path[PATH_MAX + 32], real[PATH_MAX];
	if (!realpath(dir, real)) {
		fprintf(stderr, "maxnet_loader: cgroup %s: %s\n", dir, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/cgroup.procs", real);
	if (access(path, F_OK) != 0) {
		fprintf(stderr, "maxnet_loader: %s is not a cgroup v2 directory\n", real);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/../cgroup.procs", real);
	if (access(path, F_OK) != 0) {
		fprintf(stderr, "maxnet_loader: %s is a cgroup root; use a child cgroup\n", real);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *obj_path = NULL, *cgroup = NULL, *pin = NULL;
	double t = 0.4, alpha = 0.66, eta = 0.06, x_max = 1e15;
	struct maxnet_config cfg = { .maxstart = 1, .min_cwnd = 2 };
	int die_with_parent = 0;
	static struct option opts[] = {
		{ "obj", required_argument, 0, 'o' },	    { "cgroup", required_argument, 0, 'c' },
		{ "t", required_argument, 0, 't' },	    { "alpha", required_argument, 0, 'a' },
		{ "eta", required_argument, 0, 'e' },	    { "x-max", required_argument, 0, 'x' },
		{ "no-maxstart", no_argument, 0, 'n' },	    { "fixed-price", required_argument, 0, 'p' },
		{ "fixed-spare", required_argument, 0, 's' }, { "min-cwnd", required_argument, 0, 'm' },
		{ "set-cc", no_argument, 0, 'C' },	    { "pin-dir", required_argument, 0, 'P' },
		{ "die-with-parent", no_argument, 0, 'D' }, { 0, 0, 0, 0 },
	};
	int ch;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'o': obj_path = optarg; break;
		case 'c': cgroup = optarg; break;
		case 't': t = atof(optarg); break;
		case 'a': alpha = atof(optarg); break;
		case 'e': eta = atof(optarg); break;
		case 'x': x_max = atof(optarg); break;
		case 'n': cfg.maxstart = 0; break;
		case 'p': cfg.fixed_price = strtoul(optarg, NULL, 0); break;
		case 's': cfg.fixed_spare = strtoul(optarg, NULL, 0); break;
		case 'm': cfg.min_cwnd = strtoul(optarg, NULL, 0); break;
		case 'C': cfg.set_cc = 1; break;
		case 'P': pin = optarg; break;
		case 'D': die_with_parent = 1; break;
		default: usage(); return 2;
		}
	}
	if (!obj_path || !cgroup || t <= 0 || alpha <= 0 || eta <= 0 || x_max <= 8) {
		usage();
		return 2;
	}
	if (check_child_cgroup(cgroup))
		return 2;
	cfg.t_us = (__u32)llround(t * 1e6);
	cfg.alpha_q = llround(alpha * (1 << Q_BITS));
	cfg.ln_xmax_bytes_q = llround(log(x_max / 8.0) * (1 << Q_BITS));
	cfg.alpha_eta_t_ns = (__u64)llround(alpha * eta * t * 1e9);

	// Block the signals first so that one arriving during set-up is handled after it.
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	if (die_with_parent) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() == 1)
			return 1;
	}

	int rc = 1, cg_fd = -1, st_link_fd = -1;
	char cfg_pin[PATH_MAX + 16] = "", stats_pin[PATH_MAX + 16] = "",
	     gauges_pin[PATH_MAX + 16] = "";
	struct bpf_link *sockops_link = NULL, *fill_link = NULL;
	struct bpf_object *obj = bpf_object__open_file(obj_path, NULL);
	if (!obj) {
		fprintf(stderr, "maxnet_loader: open %s: %s\n", obj_path, strerror(errno));
		return 1;
	}
	struct bpf_map *st_map = bpf_object__find_map_by_name(obj, "maxnet");
	struct bpf_map *cfg_map = bpf_object__find_map_by_name(obj, "maxnet_cfg");
	struct bpf_program *sockops = bpf_object__find_program_by_name(obj, "maxnet_sockops");
	if (!st_map || !cfg_map || !sockops) {
		fprintf(stderr, "maxnet_loader: %s lacks the maxnet struct_ops, config or sockops\n",
			obj_path);
		goto out;
	}
	// A link-based struct_ops map: registration lives exactly as long as the link fd.
	if (bpf_map__set_map_flags(st_map, bpf_map__map_flags(st_map) | XCC_BPF_F_LINK))
		goto out;
	if (bpf_object__load(obj)) {
		fprintf(stderr, "maxnet_loader: loading %s failed (see libbpf messages above)\n",
			obj_path);
		goto out;
	}
	__u32 zero = 0;
	if (bpf_map_update_elem(bpf_map__fd(cfg_map), &zero, &cfg, BPF_ANY)) {
		perror("maxnet_loader: config");
		goto out;
	}
	// Fills the struct_ops value with the program fds (for a BPF_F_LINK map this does not
	// register anything), then the link registers "maxnet".
	fill_link = bpf_map__attach_struct_ops(st_map);
	if (!fill_link) {
		perror("maxnet_loader: struct_ops value");
		goto out;
	}
	st_link_fd = bpf_link_create(bpf_map__fd(st_map), 0, XCC_BPF_STRUCT_OPS_ATTACH, NULL);
	if (st_link_fd < 0) {
		fprintf(stderr, "maxnet_loader: registering maxnet: %s\n", strerror(-st_link_fd));
		goto out;
	}
	cg_fd = open(cgroup, O_RDONLY | O_DIRECTORY);
	if (cg_fd < 0) {
		perror("maxnet_loader: cgroup");
		goto out;
	}
	sockops_link = bpf_program__attach_cgroup(sockops, cg_fd);
	if (!sockops_link) {
		perror("maxnet_loader: attaching sock_ops");
		goto out;
	}
	// The config and counters, pinned for `xcc kernel status` and test-mode changes.
	if (pin) {
		struct bpf_map *stats = bpf_object__find_map_by_name(obj, "maxnet_stats");
		struct bpf_map *gauges = bpf_object__find_map_by_name(obj, "maxnet_gauges");
		mkdir(pin, 0700);
		snprintf(cfg_pin, sizeof(cfg_pin), "%s/config", pin);
		snprintf(stats_pin, sizeof(stats_pin), "%s/stats", pin);
		snprintf(gauges_pin, sizeof(gauges_pin), "%s/gauges", pin);
		if (bpf_obj_pin(bpf_map__fd(cfg_map), cfg_pin) ||
		    (stats && bpf_obj_pin(bpf_map__fd(stats), stats_pin)) ||
		    (gauges && bpf_obj_pin(bpf_map__fd(gauges), gauges_pin))) {
			fprintf(stderr, "maxnet_loader: pin in %s: %s\n", pin, strerror(errno));
			goto out;
		}
	}
	printf("ready pid %d cgroup %s\n", getpid(), cgroup);
	fflush(stdout);

	int sig = 0;
	sigwait(&sigs, &sig);
	fprintf(stderr, "maxnet_loader: signal %d, detaching\n", sig);
	rc = 0;
out:
	if (pin) {
		unlink(cfg_pin);
		unlink(stats_pin);
		unlink(gauges_pin);
		rmdir(pin);
	}
	bpf_link__destroy(sockops_link);
	if (st_link_fd >= 0)
		close(st_link_fd);
	if (fill_link) {
		// For a link map libbpf's detach (a map delete) fails harmlessly; just free it.
		bpf_link__disconnect(fill_link);
		bpf_link__destroy(fill_link);
	}
	if (cg_fd >= 0)
		close(cg_fd);
	bpf_object__close(obj);
	return rc;
}
