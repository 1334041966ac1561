/* SPDX-License-Identifier: MIT */
/*
 * The sanity catalogue's invalidation_* cases across processes: mappings do not cross fork
 * (VM_DONTCOPY), a child's frees and maps leave the parent's as they were, and an fd inherited
 * across fork or passed over a UNIX socket answers EACCES to anyone but its opener.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "vmtest.h"

static int child_status(pid_t pid, const char *what)
{
	int st = test_wait(pid);

	CHECK(st == 0, "child: %s (exit status %d)", what, st);
	return TEST_PASS;
}

static int case_fork_access_after_free(void)
{
	int to_parent[2], to_child[2], ret, sig;
	struct vm_buf b;
	uint32_t v;
	char c;
	pid_t pid;
	gdr_t g = vm_gdr_open();

	CHECK(g, "gdr_open");
	ret = vm_map_filled(g, GPU_PAGE, 16, VM_MAGIC_PARENT, &b);
	if (ret)
		return ret;
	CHECK_OK(vm_free(b.a.va));
	CHECK(pipe(to_parent) == 0 && pipe(to_child) == 0, "pipe");

	pid = test_fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		struct vm_buf mine;
		gdr_t cg;

		/* Its own GPU context and its own gdrdrv fd, like a new CUDA process. */
		vm_sim_reopen();
		cg = vm_gdr_open();
		if (!cg || vm_map_filled(cg, GPU_PAGE, 16, VM_MAGIC_CHILD, &mine))
			_exit(1);
		if (write(to_parent[1], "r", 1) != 1 || read(to_child[0], &c, 1) != 1)
			_exit(2);
		_exit(0);
	}
	CHECK(read(to_parent[0], &c, 1) == 1, "the child did not map its buffer");
	/* Whatever the parent's stale mapping shows, it is never the child's data. */
	sig = vm_try_read32(&b.map[0], &v);
	CHECK(write(to_child[1], "d", 1) == 1, "pipe");
	ret = child_status(pid, "could not map its own buffer");
	if (ret)
		return ret;
	CHECK(sig != 0 || v != VM_MAGIC_CHILD, "the parent's stale mapping shows the child's data");
	if (vm_persistent())
		CHECK(sig == 0 && v == VM_MAGIC_PARENT, "the persistent mapping lost the parent's data");
	else
		CHECK(sig != 0, "the revoked mapping did not fault");
	return TEST_PASS;
}

static int case_fork_after_gdr_map(void)
{
	struct vm_buf b;
	uint32_t v;
	pid_t pid;
	gdr_t g = vm_gdr_open();
	int ret;

	CHECK(g, "gdr_open");
	ret = vm_map_filled(g, GPU_PAGE, 4, VM_MAGIC_PARENT, &b);
	if (ret)
		return ret;
	pid = test_fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		/* VM_DONTCOPY: the child has nothing at that address. */
		int sig = vm_try_read32(&b.map[0], &v);

		_exit(sig == SIGSEGV || sig == SIGBUS ? 0 : 1);
	}
	ret = child_status(pid, "the parent's mapping was readable in the child");
	if (ret)
		return ret;
	CHECK(vm_try_read32(&b.map[0], &v) == 0 && v == VM_MAGIC_PARENT,
	      "the parent's mapping broke after fork");
	CHECK_OK(gdr_close(g));
	return TEST_PASS;
}

static int case_fork_child_gdr_map_parent(void)
{
	struct nvp2p_sim_alloc a;
	gdr_mh_t mh;
	void *p;
	pid_t pid;
	gdr_t g = vm_gdr_open();
	int ret;

	CHECK(g, "gdr_open");
	CHECK_OK(vm_alloc(GPU_PAGE, 0, &a));
	CHECK_OK(gdr_pin_buffer(g, a.va, GPU_PAGE, 0, 0, &mh));
	pid = test_fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		/* The parent's gdr_t, fd and handle, used from another process. */
		_exit(gdr_map(g, mh, &p, GPU_PAGE) != 0 ? 0 : 1);
	}
	ret = child_status(pid, "gdr_map of the parent's handle succeeded in the child");
	if (ret)
		return ret;
	CHECK_OK(gdr_map(g, mh, &p, GPU_PAGE));
	CHECK(vm_try_write32(p, 1) == 0, "the parent's mapping faulted");
	CHECK_OK(gdr_close(g));
	return TEST_PASS;
}

/* Every ioctl and mmap of an fd that another process opened: EACCES (0 here means that). */
static int foreign_fd_denied(int fd, uint64_t h, uint64_t va)
{
	struct gdrdrv_pin_buffer_params p1 = { .addr = va, .size = GPU_PAGE };
	struct gdrdrv_pin_buffer_v2_params p2 = { .addr = va, .size = GPU_PAGE };
	struct gdrdrv_unpin_buffer_params up = { .handle = h };
	struct gdrdrv_get_cb_flag_params cb = { .handle = h };
	struct gdrdrv_get_info_params i1 = { .handle = h };
	struct gdrdrv_get_info_v2_params i2 = { .handle = h };
	struct gdrdrv_get_attr_params at = { .attr = GDRDRV_ATTR_USE_PERSISTENT_MAPPING };
	struct gdrdrv_req_mapping_type_params rq = { .handle = h, .mapping_type = GDR_MR_WC };
	struct gdrdrv_get_version_params ver;
	const struct { unsigned long cmd; void *arg; } calls[] = {
		{ GDRDRV_IOC_PIN_BUFFER, &p1 }, { GDRDRV_IOC_PIN_BUFFER_V2, &p2 },
		{ GDRDRV_IOC_UNPIN_BUFFER, &up }, { GDRDRV_IOC_GET_CB_FLAG, &cb },
		{ GDRDRV_IOC_GET_INFO, &i1 }, { GDRDRV_IOC_GET_INFO_V2, &i2 },
		{ GDRDRV_IOC_GET_ATTR, &at }, { GDRDRV_IOC_REQ_MAPPING_TYPE, &rq },
		{ GDRDRV_IOC_GET_VERSION, &ver },
	};
	unsigned int i;
	int err;

	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		err = vm_ioctl(fd, calls[i].cmd, calls[i].arg);
		if (err != EACCES) {
			printf("FAIL: ioctl %#lx on a foreign fd: %s, want EACCES\n", calls[i].cmd,
			       test_strerror(err));
			return 10 + i;
		}
	}
	if (vm_raw_map(fd, h, GPU_PAGE, &err) || err != EACCES) {
		printf("FAIL: mmap on a foreign fd: %s, want EACCES\n", test_strerror(err));
		return 20;
	}
	return 0;
}

static int case_fork_child_ioctl_eacces(void)
{
	struct nvp2p_sim_alloc a;
	uint64_t h;
	void *map;
	pid_t pid;
	int fd = vm_gdrdrv_open(), err, ret;

	CHECK(fd >= 0, "open");
	CHECK_OK(vm_alloc(GPU_PAGE, 0, &a));
	CHECK_OK(vm_raw_pin(fd, a.va, GPU_PAGE, 0, &h));
	pid = test_fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0)
		_exit(foreign_fd_denied(fd, h, a.va));
	ret = child_status(pid, "an ioctl or mmap of the inherited fd was not refused");
	if (ret)
		return ret;
	/* The child's attempts changed nothing. */
	map = vm_raw_map(fd, h, GPU_PAGE, &err);
	CHECK(map, "mmap after the child's attempts: %s", strerror(err));
	CHECK_OK(vm_raw_unpin(fd, h));
	return TEST_PASS;
}

static int send_fd(int sock, int fd, const void *data, size_t len)
{
	char ctl[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = (void *)data, .iov_len = len };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == (ssize_t)len ? 0 : errno;
}

static int recv_fd(int sock, void *data, size_t len)
{
	char ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = data, .iov_len = len };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl),
	};
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &msg, 0) != (ssize_t)len)
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/*
 * The child exists before the parent opens gdrdrv, so the fd reaches it only over the socket;
 * with it come the parent's handle and va.
 */
static int unix_sock_case(int try_map)
{
	struct { uint64_t h, va; } info;
	struct nvp2p_sim_alloc a;
	int sv[2], fd, ret;
	pid_t pid;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
	pid = test_fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		struct nvp2p_sim_alloc mine;
		uint64_t h2;
		int got, err;

		close(sv[0]);
		vm_sim_reopen();
		got = recv_fd(sv[1], &info, sizeof(info));
		if (got < 0)
			_exit(2);
		/* Not even its own memory can be pinned through the parent's fd. */
		if (vm_alloc(GPU_PAGE, 0, &mine))
			_exit(3);
		if (vm_raw_pin(got, mine.va, GPU_PAGE, 0, &h2) != EACCES)
			_exit(4);
		if (try_map) {
			if (vm_raw_map(got, info.h, GPU_PAGE, &err) || err != EACCES)
				_exit(5);
			_exit(0);
		}
		_exit(foreign_fd_denied(got, info.h, info.va));
	}
	close(sv[1]);
	fd = vm_gdrdrv_open();
	CHECK(fd >= 0, "open");
	CHECK_OK(vm_alloc(GPU_PAGE, 0, &a));
	CHECK_OK(vm_raw_pin(fd, a.va, GPU_PAGE, 0, &info.h));
	info.va = a.va;
	CHECK_OK(send_fd(sv[0], fd, &info, sizeof(info)));
	ret = child_status(pid, "the fd passed over a UNIX socket was usable by the receiver");
	if (ret)
		return ret;
	CHECK_OK(vm_raw_unpin(fd, info.h));
	return TEST_PASS;
}

static int case_unix_sock_shared_fd_gdr_pin_buffer(void)
{
	return unix_sock_case(0);
}

static int case_unix_sock_shared_fd_gdr_map(void)
{
	return unix_sock_case(1);
}

/*
 * The child knows the parent's GPU address and P2P tokens. Without tokens it does not own the
 * memory, so its pin fails. With them: persistent gdrdrv takes no tokens (EINVAL); a
 * non-persistent one passes them to nvidia_p2p, where they are what lets another process pin
 * (GDRCopy's own library drops them, so its sanity test sees that pin fail too).
 */
static int case_fork_child_gdr_pin_parent_with_tokens(void)
{
	struct nvp2p_sim_alloc a;
	uint32_t magic = VM_MAGIC_PARENT;
	pid_t pid;
	int ret;

	CHECK_OK(vm_alloc(GPU_PAGE, 0, &a));
	CHECK_OK(vm_sim_write(a.va, &magic, sizeof(magic)));
	pid = test_fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		gdr_mh_t mh;
		uint32_t v = 0;
		void *p;
		gdr_t cg = vm_gdr_open();

		if (!cg)
			_exit(2);
		if (gdr_pin_buffer(cg, a.va, GPU_PAGE, 0, 0, &mh) != EINVAL)
			_exit(3);
		ret = gdr_pin_buffer(cg, a.va, GPU_PAGE, a.p2p_token, a.va_space, &mh);
		if (vm_persistent())
			_exit(ret == EINVAL ? 0 : 4);
		if (ret || gdr_map(cg, mh, &p, GPU_PAGE) ||
		    gdr_copy_from_mapping(mh, &v, p, sizeof(v)) || v != VM_MAGIC_PARENT)
			_exit(5);
		_exit(gdr_close(cg) ? 6 : 0);
	}
	return child_status(pid, "a pin of the parent's memory behaved wrongly");
}

static int case_fork_map_and_free(void)
{
	struct vm_buf b;
	uint32_t v;
	pid_t pid;
	gdr_t g = vm_gdr_open();
	int ret, i;

	CHECK(g, "gdr_open");
	ret = vm_map_filled(g, GPU_PAGE, 8, VM_MAGIC_PARENT, &b);
	if (ret)
		return ret;
	pid = test_fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		struct vm_buf mine;
		gdr_t cg;

		vm_sim_reopen();
		cg = vm_gdr_open();
		if (!cg || vm_map_filled(cg, GPU_PAGE, 8, VM_MAGIC_CHILD, &mine))
			_exit(1);
		if (vm_free(mine.a.va))
			_exit(2);
		_exit(0);
	}
	ret = child_status(pid, "could not map and free its own buffer");
	if (ret)
		return ret;
	for (i = 0; i < 8; i++)
		CHECK(vm_try_read32(&b.map[i], &v) == 0 && v == VM_MAGIC_PARENT + (uint32_t)i,
		      "the parent's mapping changed when the child freed its buffer");
	CHECK_OK(gdr_close(g));
	return TEST_PASS;
}

/*
 * The child's side of fork_child_inherited_gdr_t: the library answers for the parent's gdr_t and
 * handle itself, EINVAL as on the other backends, before gdrdrv's EACCES; nothing of the child's
 * own memory at the parent's mapping address is touched; gdr_close returns; a gdr_open of the
 * child's own works. Exit status: 0, or the number of the check that failed.
 */
static int inherited_child(gdr_t g, struct vm_buf *b)
{
	uint32_t *own, host = VM_MAGIC_CHILD, v;
	struct vm_buf mine;
	gdr_info_t info;
	void *p = NULL;
	gdr_t cg;
	int flag;

	own = mmap(b->map, GPU_PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (own != b->map)
		return 10;
	own[0] = VM_MAGIC_CHILD;
	if (gdr_get_info(g, b->mh, &info) != EINVAL || gdr_map(g, b->mh, &p, GPU_PAGE) != EINVAL ||
	    gdr_get_callback_flag(g, b->mh, &flag) != EINVAL ||
	    gdr_pin_buffer(g, b->a.va, GPU_PAGE, 0, 0, &mine.mh) != EINVAL)
		return 11;
	if (gdr_copy_to_mapping(b->mh, own, &host, sizeof(host)) != EINVAL ||
	    gdr_copy_from_mapping(b->mh, &host, own, sizeof(host)) != EINVAL ||
	    gdr_unmap(g, b->mh, own, GPU_PAGE) != EINVAL || gdr_unpin_buffer(g, b->mh) != EINVAL)
		return 12;
	if (vm_try_read32(own, &v) || v != VM_MAGIC_CHILD || host != VM_MAGIC_CHILD)
		return 13;
	if (gdr_close(g))
		return 14;
	vm_sim_reopen();
	cg = vm_gdr_open();
	if (!cg || vm_map_filled(cg, GPU_PAGE, 8, VM_MAGIC_CHILD, &mine) ||
	    gdr_close(cg))
		return 15;
	return 0;
}

/* A fork child and the parent's gdr_t: see inherited_child. The parent's pin is unharmed. */
static int case_fork_child_inherited_gdr_t(void)
{
	struct vm_buf b;
	uint32_t v;
	pid_t pid;
	gdr_t g = vm_gdr_open();
	int ret;

	CHECK(g, "gdr_open");
	ret = vm_map_filled(g, GPU_PAGE, 8, VM_MAGIC_PARENT, &b);
	if (ret)
		return ret;
	pid = test_fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0)
		_exit(inherited_child(g, &b));
	ret = child_status(pid, "the parent's gdr_t misbehaved in the child (exit status: the "
			   "check in inherited_child)");
	if (ret)
		return ret;
	CHECK(vm_try_read32(&b.map[0], &v) == 0 && v == VM_MAGIC_PARENT,
	      "the parent's mapping changed");
	CHECK_OK(gdr_copy_to_mapping(b.mh, b.map, &v, sizeof(v)));
	CHECK_OK(gdr_unmap(g, b.mh, b.map, GPU_PAGE));
	CHECK_OK(gdr_unpin_buffer(g, b.mh));
	CHECK_OK(gdr_close(g));
	return TEST_PASS;
}

const struct vm_case vm_cases[] = {
	{ "invalidation_fork_access_after_free", case_fork_access_after_free, "pn" },
	{ "invalidation_fork_after_gdr_map", case_fork_after_gdr_map, "pn" },
	{ "invalidation_fork_child_gdr_map_parent", case_fork_child_gdr_map_parent, "pn" },
	{ "invalidation_fork_child_ioctl_eacces", case_fork_child_ioctl_eacces, "pn" },
	{ "invalidation_fork_map_and_free", case_fork_map_and_free, "pn" },
	{ "invalidation_fork_child_inherited_gdr_t", case_fork_child_inherited_gdr_t, "pn" },
	{ "invalidation_unix_sock_shared_fd_gdr_pin_buffer",
	  case_unix_sock_shared_fd_gdr_pin_buffer, "pn" },
	{ "invalidation_unix_sock_shared_fd_gdr_map", case_unix_sock_shared_fd_gdr_map, "pn" },
	{ "invalidation_fork_child_gdr_pin_parent_with_tokens",
	  case_fork_child_gdr_pin_parent_with_tokens, "pn" },
	{ NULL, NULL, NULL },
};
