// SPDX-License-Identifier: GPL-2.0
// Registers one BPF congestion control (a struct_ops tcp_congestion_ops map of an object, by
// name) through a struct_ops *link*, pins the object's other maps under --pin-dir for readers
// (bpftool), prints "ready", then waits for SIGINT/SIGTERM/SIGHUP (or its parent's death with
// --die-with-parent) and detaches. The link is a file descriptor only this process holds, so
// even SIGKILL leaves nothing registered. maxnet_loader.c is the same with MaxNet's sock_ops
// program and config; this one serves congestion controls that need neither (dctcp.bpf.c).
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
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
#define MAX_PINS 8

static void usage(void)
{
	fprintf(stderr, "usage: ca_loader --obj FILE --struct-ops NAME [--pin-dir DIR [--pin MAP]...]\n"
			"       [--die-with-parent]\n");
}

int main(int argc, char **argv)
{
	const char *obj_path = NULL, *name = NULL, *pin = NULL;
	const char *pins[MAX_PINS];
	char pin_paths[MAX_PINS][PATH_MAX];
	int n_pins = 0, pinned = 0, die_with_parent = 0;
	static struct option opts[] = {
		{ "obj", required_argument, 0, 'o' },	  { "struct-ops", required_argument, 0, 's' },
		{ "pin-dir", required_argument, 0, 'P' }, { "pin", required_argument, 0, 'p' },
		{ "die-with-parent", no_argument, 0, 'D' }, { 0, 0, 0, 0 },
	};
	int ch;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'o': obj_path = optarg; break;
		case 's': name = optarg; break;
		case 'P': pin = optarg; break;
		case 'p':
			if (n_pins == MAX_PINS) {
				fprintf(stderr, "ca_loader: at most %d --pin\n", MAX_PINS);
				return 2;
			}
			pins[n_pins++] = optarg;
			break;
		case 'D': die_with_parent = 1; break;
		default: usage(); return 2;
		}
	}
	if (!obj_path || !name || (n_pins && !pin)) {
		usage();
		return 2;
	}

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

	int rc = 1, st_link_fd = -1;
	struct bpf_link *fill_link = NULL;
	struct bpf_object *obj = bpf_object__open_file(obj_path, NULL);
	if (!obj) {
		fprintf(stderr, "ca_loader: open %s: %s\n", obj_path, strerror(errno));
		return 1;
	}
	struct bpf_map *st_map = bpf_object__find_map_by_name(obj, name);
	if (!st_map || bpf_map__type(st_map) != BPF_MAP_TYPE_STRUCT_OPS) {
		fprintf(stderr, "ca_loader: %s has no struct_ops named %s\n", obj_path, name);
		goto out;
	}
	// A link-based struct_ops map: registration lives exactly as long as the link fd.
	if (bpf_map__set_map_flags(st_map, bpf_map__map_flags(st_map) | XCC_BPF_F_LINK))
		goto out;
	if (bpf_object__load(obj)) {
		fprintf(stderr, "ca_loader: loading %s failed (see libbpf messages above)\n", obj_path);
		goto out;
	}
	// Fills the struct_ops value with the program fds (for a BPF_F_LINK map this does not
	// register anything), then the link registers the congestion control.
	fill_link = bpf_map__attach_struct_ops(st_map);
	if (!fill_link) {
		perror("ca_loader: struct_ops value");
		goto out;
	}
	st_link_fd = bpf_link_create(bpf_map__fd(st_map), 0, XCC_BPF_STRUCT_OPS_ATTACH, NULL);
	if (st_link_fd < 0) {
		fprintf(stderr, "ca_loader: registering %s: %s\n", name, strerror(-st_link_fd));
		goto out;
	}
	if (pin) {
		mkdir(pin, 0700);
		for (; pinned < n_pins; pinned++) {
			struct bpf_map *m = bpf_object__find_map_by_name(obj, pins[pinned]);
			snprintf(pin_paths[pinned], PATH_MAX, "%s/%s", pin, pins[pinned]);
			if (!m || bpf_obj_pin(bpf_map__fd(m), pin_paths[pinned])) {
				fprintf(stderr, "ca_loader: pin %s: %s\n", pin_paths[pinned],
					m ? strerror(errno) : "no such map");
				goto out;
			}
		}
	}
	printf("ready pid %d struct_ops %s\n", getpid(), name);
	fflush(stdout);

	int sig = 0;
	sigwait(&sigs, &sig);
	fprintf(stderr, "ca_loader: signal %d, detaching\n", sig);
	rc = 0;
out:
	for (int i = 0; i < pinned; i++)
		unlink(pin_paths[i]);
	if (pin)
		rmdir(pin);
	if (st_link_fd >= 0)
		close(st_link_fd);
	if (fill_link) {
		// For a link map libbpf's detach (a map delete) fails harmlessly; just free it.
		bpf_link__disconnect(fill_link);
		bpf_link__destroy(fill_link);
	}
	bpf_object__close(obj);
	return rc;
}
