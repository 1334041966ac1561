/* SPDX-License-Identifier: MIT */
/*
 * gdrcopy_sanity: the invalidation_* cases (what a mapping shows after close, free, fork and fd
 * passing) and the extended leakage case. Cases where two processes both use CUDA fork before
 * either initialises it, as CUDA requires.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gdrdrv.h"
#include "sanity.h"

#define NO_KERNEL_FD "it has no kernel fd, so the per-process checks of gdrdrv do not apply " \
		     "(GDRCopy waives this under dma-buf too)"

/* Fail unless bytes at ptr (read with 32-bit loads) fault, or differ from the pattern seed. */
static void expect_gone(const void *ptr, size_t bytes, unsigned seed, const char *after)
{
	char *got = malloc(bytes), *want = malloc(bytes);

	SANITY_CHECK(got && want);
	tool_fill_pattern(want, bytes, seed);
	if (!read_faults(ptr, got, bytes) && !memcmp(got, want, bytes))
		sanity_fail("the mapping still reads the data after %s", after);
	free(got);
	free(want);
}

/* Fail unless bytes at ptr read back, without a fault, as the pattern seed. */
static void expect_data(const void *ptr, size_t bytes, unsigned seed, const char *after)
{
	char *got = malloc(bytes), *want = malloc(bytes);

	SANITY_CHECK(got && want);
	tool_fill_pattern(want, bytes, seed);
	if (read_faults(ptr, got, bytes))
		sanity_fail("reading the mapping after %s raised SIGBUS/SIGSEGV", after);
	if (tool_compare(got, want, bytes))
		sanity_fail("the mapping reads other data after %s", after);
	free(got);
	free(want);
}

static void access_after_gdr_close(enum sanity_mem mem)
{
	struct sanity_ctx c;
	struct gpu_buf b;
	gdr_mh_t mh;
	void *ptr;

	need_mem(mem);
	ctx_init(&c);
	buf_alloc(&c, &b, SANITY_SIZE, mem);
	pin_map(&c, &b, -1, &mh, &ptr);
	write_words(ptr, b.size, 3);
	SANITY_RET(gdr_close(c.g), 0);
	c.g = NULL;
	expect_gone(ptr, b.size, 3, "gdr_close");
	buf_free(&b);
	tool_cuda_fini(&c.cu);
}

static void access_after_free(enum sanity_mem mem)
{
	struct sanity_ctx c;
	struct gpu_buf b;
	gdr_mh_t mh;
	void *ptr;
	int flag = -1;

	need_mem(mem);
	ctx_init(&c);
	buf_alloc(&c, &b, SANITY_SIZE, mem);
	pin_map(&c, &b, -1, &mh, &ptr);
	write_words(ptr, b.size, 4);
	buf_free(&b);
	SANITY_RET(gdr_get_callback_flag(c.g, mh, &flag), 0);
	if (sanity_plat->persistent) {
		/* The pin holds the pages: freeing the CUDA allocation does not take them. */
		SANITY_CHECK(flag == 0);
		expect_data(ptr, b.size, 4, "freeing the memory of a persistent pin");
	} else {
		SANITY_CHECK(flag == 1);
		expect_gone(ptr, b.size, 4, "freeing the memory (non-persistent pin)");
	}
	unmap_unpin(&c, mh, ptr, b.size);
	ctx_fini(&c);
}

static void two_mappings(enum sanity_mem mem)
{
	struct sanity_ctx c;
	struct gpu_buf b[2];
	gdr_mh_t mh[2];
	void *ptr[2];

	need_mem(mem);
	ctx_init(&c);
	for (int i = 0; i < 2; i++) {
		buf_alloc(&c, &b[i], SANITY_SIZE, mem);
		pin_map(&c, &b[i], -1, &mh[i], &ptr[i]);
		write_words(ptr[i], b[i].size, 5u + (unsigned)i);
	}
	buf_free(&b[0]);
	expect_data(ptr[1], b[1].size, 6, "freeing another mapped buffer");
	for (int i = 0; i < 2; i++)
		unmap_unpin(&c, mh[i], ptr[i], b[i].size);
	buf_free(&b[1]);
	ctx_fini(&c);
}

/* The child's half of fork_access_after_free: map a buffer of its own and write to it. */
static void fork_free_child(enum sanity_mem mem, int go, int done)
{
	struct sanity_ctx c;
	struct gpu_buf b;
	gdr_mh_t mh;
	void *ptr;

	msg_recv(go);
	ctx_init(&c);
	buf_alloc(&c, &b, SANITY_SIZE, mem);
	pin_map(&c, &b, -1, &mh, &ptr);
	write_words(ptr, b.size, 12);
	msg_send(done, 'w');
	msg_recv(go);		/* keep the buffer until the parent has looked */
	unmap_unpin(&c, mh, ptr, b.size);
	buf_free(&b);
	ctx_fini(&c);
	fflush(NULL);
	_exit(0);
}

static void fork_access_after_free(enum sanity_mem mem)
{
	int to_child[2], to_parent[2];
	struct sanity_ctx c;
	struct gpu_buf b;
	gdr_mh_t mh;
	void *ptr;
	char *got, *child;
	pid_t pid;

	need_mem(mem);
	need_shared_device();
	SANITY_RET(pipe(to_child) ? errno : 0, 0);
	SANITY_RET(pipe(to_parent) ? errno : 0, 0);
	pid = sanity_fork();
	if (pid == 0)
		fork_free_child(mem, to_child[0], to_parent[1]);
	ctx_init(&c);
	buf_alloc(&c, &b, SANITY_SIZE, mem);
	pin_map(&c, &b, -1, &mh, &ptr);
	write_words(ptr, b.size, 11);
	buf_free(&b);
	msg_send(to_child[1], 'g');
	msg_recv(to_parent[0]);
	got = malloc(b.size);
	child = malloc(b.size);
	SANITY_CHECK(got && child);
	tool_fill_pattern(child, b.size, 12);
	if (!read_faults(ptr, got, b.size) && !memcmp(got, child, b.size))
		sanity_fail("the parent's mapping of freed memory shows the child's new data");
	free(got);
	free(child);
	msg_send(to_child[1], 'f');
	wait_child_ok(pid, "the child's own buffer");
	unmap_unpin(&c, mh, ptr, b.size);
	ctx_fini(&c);
}

static void fork_after_gdr_map(enum sanity_mem mem)
{
	struct sanity_ctx c;
	struct gpu_buf b;
	gdr_mh_t mh;
	void *ptr;
	pid_t pid;

	need_mem(mem);
	ctx_init(&c);
	buf_alloc(&c, &b, SANITY_SIZE, mem);
	pin_map(&c, &b, -1, &mh, &ptr);
	write_words(ptr, b.size, 13);
	pid = sanity_fork();
	if (pid == 0) {
		uint32_t word;

		if (!read_faults(ptr, &word, sizeof(word)))
			sanity_fail("the fork child could read the parent's mapping");
		_exit(0);
	}
	wait_child_ok(pid, "reading the mapping in a fork child");
	expect_data(ptr, b.size, 13, "a fork");
	unmap_unpin(&c, mh, ptr, b.size);
	buf_free(&b);
	ctx_fini(&c);
}

static void fork_child_gdr_map_parent(enum sanity_mem mem)
{
	struct sanity_ctx c;
	struct gpu_buf b;
	gdr_mh_t mh;
	void *ptr;
	pid_t pid;

	/* The library refuses a parent's gdr_t in a fork child on every backend, not only gdrdrv. */
	need_mem(mem);
	ctx_init(&c);
	buf_alloc(&c, &b, SANITY_SIZE, mem);
	SANITY_RET(gdr_pin_buffer(c.g, b.ptr, b.size, 0, 0, &mh), 0);
	pid = sanity_fork();
	if (pid == 0) {
		void *va;

		if (gdr_map(c.g, mh, &va, b.size) == 0)
			sanity_fail("the fork child could map the parent's pinned buffer");
		_exit(0);
	}
	wait_child_ok(pid, "gdr_map of the parent's handle in a fork child");
	SANITY_RET(gdr_map(c.g, mh, &ptr, b.size), 0);
	write_words(ptr, b.size, 14);
	check_device(b.ptr, b.size, 14);
	unmap_unpin(&c, mh, ptr, b.size);
	buf_free(&b);
	ctx_fini(&c);
}

static void fork_map_and_free(enum sanity_mem mem)
{
	int to_child[2], to_parent[2];
	struct sanity_ctx c;
	struct gpu_buf b;
	gdr_mh_t mh;
	void *ptr;
	pid_t pid;

	need_mem(mem);
	need_shared_device();
	SANITY_RET(pipe(to_child) ? errno : 0, 0);
	SANITY_RET(pipe(to_parent) ? errno : 0, 0);
	pid = sanity_fork();
	if (pid == 0) {
		msg_recv(to_child[0]);
		ctx_init(&c);
		buf_alloc(&c, &b, SANITY_SIZE, mem);
		pin_map(&c, &b, -1, &mh, &ptr);
		write_words(ptr, b.size, 16);
		unmap_unpin(&c, mh, ptr, b.size);
		buf_free(&b);
		ctx_fini(&c);
		msg_send(to_parent[1], 'd');
		fflush(NULL);
		_exit(0);
	}
	ctx_init(&c);
	buf_alloc(&c, &b, SANITY_SIZE, mem);
	pin_map(&c, &b, -1, &mh, &ptr);
	write_words(ptr, b.size, 15);
	msg_send(to_child[1], 'g');
	msg_recv(to_parent[0]);
	expect_data(ptr, b.size, 15, "another process mapped and freed its own buffer");
	check_device(b.ptr, b.size, 15);
	wait_child_ok(pid, "the child's own buffer");
	unmap_unpin(&c, mh, ptr, b.size);
	buf_free(&b);
	ctx_fini(&c);
}

static void send_fd(int sock, int fd, const void *data, size_t len)
{
	char control[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { (void *)data, len };
	struct msghdr msg;
	struct cmsghdr *cm;

	memset(&msg, 0, sizeof(msg));
	memset(control, 0, sizeof(control));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = control;
	msg.msg_controllen = sizeof(control);
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	if (sendmsg(sock, &msg, 0) != (ssize_t)len)
		sanity_fail("sendmsg with SCM_RIGHTS failed: %s", strerror(errno));
}

static int recv_fd(int sock, void *data, size_t len)
{
	char control[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { data, len };
	struct msghdr msg;
	struct cmsghdr *cm;
	int fd;

	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = control;
	msg.msg_controllen = sizeof(control);
	if (recvmsg(sock, &msg, 0) != (ssize_t)len)
		sanity_fail("recvmsg failed: %s", strerror(errno));
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		sanity_fail("no fd came with the message");
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/* PIN_BUFFER_V2 (gdrdrv 2.5+), else the legacy PIN_BUFFER; 0 or errno, handle in *handle. */
static int raw_pin(int fd, uint64_t addr, uint64_t size, uint64_t *handle)
{
	struct gdrdrv_pin_buffer_v2_params v2;
	struct gdrdrv_pin_buffer_params v1;

	memset(&v2, 0, sizeof(v2));
	v2.addr = addr;
	v2.size = size;
	if (ioctl(fd, GDRDRV_IOC_PIN_BUFFER_V2, &v2) == 0) {
		*handle = v2.handle;
		return 0;
	}
	if (errno != ENOTTY)
		return errno;
	memset(&v1, 0, sizeof(v1));
	v1.addr = addr;
	v1.size = size;
	if (ioctl(fd, GDRDRV_IOC_PIN_BUFFER, &v1))
		return errno;
	*handle = v1.handle;
	return 0;
}

struct sock_msg {
	uint64_t addr;
	uint64_t size;
	uint64_t handle;	/* a gdrdrv handle the parent pinned, for the map case */
};

/*
 * The parent's /dev/gdrdrv fd goes to a fork child over a Unix socket. The child may neither pin
 * through it (pin_case) nor mmap a buffer the parent pinned through it.
 */
static void unix_sock_shared_fd(enum sanity_mem mem, int pin_case)
{
	struct sanity_ctx c;
	struct sock_msg m;
	struct gpu_buf b;
	int sv[2], fd;
	pid_t pid;

	need_gdrdrv(NO_KERNEL_FD);
	need_mem(mem);
	ctx_init(&c);
	buf_alloc(&c, &b, SANITY_SIZE, mem);
	fd = find_gdrdrv_fd();
	if (fd < 0)
		sanity_fail("the library holds no /dev/gdrdrv fd under the gdrdrv backend");
	memset(&m, 0, sizeof(m));
	m.addr = b.ptr;
	m.size = b.size;
	if (!pin_case)
		SANITY_RET(raw_pin(fd, m.addr, m.size, &m.handle), 0);
	SANITY_RET(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) ? errno : 0, 0);
	pid = sanity_fork();
	if (pid == 0) {
		struct sock_msg got;
		int theirs = recv_fd(sv[1], &got, sizeof(got));

		if (pin_case) {
			uint64_t h;

			if (raw_pin(theirs, got.addr, got.size, &h) == 0)
				sanity_fail("the child pinned through the parent's gdrdrv fd");
		} else {
			long shift = __builtin_ctzl((unsigned long)sysconf(_SC_PAGESIZE));
			void *va = mmap(NULL, got.size, PROT_READ | PROT_WRITE, MAP_SHARED, theirs,
					(off_t)(got.handle << shift));

			if (va != MAP_FAILED)
				sanity_fail("the child mapped the parent's pin through its gdrdrv fd");
		}
		_exit(0);
	}
	send_fd(sv[0], fd, &m, sizeof(m));
	wait_child_ok(pid, pin_case ? "pin through a passed fd" : "mmap through a passed fd");
	if (!pin_case) {
		struct gdrdrv_unpin_buffer_params unpin = { m.handle };

		SANITY_RET(ioctl(fd, GDRDRV_IOC_UNPIN_BUFFER, &unpin) ? errno : 0, 0);
	}
	close(sv[0]);
	close(sv[1]);
	buf_free(&b);
	ctx_fini(&c);
}

/*
 * GDRCopy's library drops gdr_pin_buffer's tokens (it sends PIN_BUFFER_V2), so its child fails
 * as the memory is not its own. This library passes them to gdrdrv (gdr_pin_buffer(3)): with
 * persistent mappings gdrdrv refuses them, without it hands them to nvidia_p2p, for which tokens
 * are what lets another process pin. So the child must fail without tokens in both modes, and
 * with them under persistent mappings; a non-persistent pin with the tokens may succeed.
 */
static void fork_child_gdr_pin_parent_with_tokens(void)
{
	CUDA_POINTER_ATTRIBUTE_P2P_TOKENS tokens;
	struct sanity_ctx c;
	struct gpu_buf b;
	pid_t pid;

	need_gdrdrv(NO_KERNEL_FD);
	need_mem(MEM_CUMEMALLOC);
	ctx_init(&c);
	buf_alloc(&c, &b, SANITY_SIZE, MEM_CUMEMALLOC);
	SANITY_CU(cuPointerGetAttribute(&tokens, CU_POINTER_ATTRIBUTE_P2P_TOKENS, b.ptr));
	pid = sanity_fork();
	if (pid == 0) {
		gdr_mh_t mh;
		gdr_t g;

		/* The child must not touch CUDA: only gdrdrv, which needs none, is asked for. */
		setenv("GDRCOPY_BACKEND", "gdrdrv", 1);
		g = gdr_open();
		if (!g)
			sanity_fail("gdr_open in the fork child failed");
		if (gdr_pin_buffer_v2(g, b.ptr, b.size, GDR_PIN_FLAG_DEFAULT, &mh) == 0)
			sanity_fail("the fork child pinned the parent's memory without tokens");
		if (gdr_pin_buffer(g, b.ptr, b.size, tokens.p2pToken, tokens.vaSpaceToken,
				   &mh) == 0) {
			if (sanity_plat->persistent)
				sanity_fail("the fork child pinned the parent's memory with its "
					    "tokens under persistent mappings");
			sanity_log("the fork child pinned with the parent's tokens "
				   "(non-persistent gdrdrv hands them to nvidia_p2p)");
			SANITY_RET(gdr_unpin_buffer(g, mh), 0);
		}
		gdr_close(g);
		_exit(0);
	}
	wait_child_ok(pid, "pin of the parent's memory in a fork child");
	buf_free(&b);
	ctx_fini(&c);
}

#define REFCOUNT_FILE "/proc/driver/gdrdrv/nv_get_pages_refcount"

static long read_refcount(void)
{
	FILE *f = fopen(REFCOUNT_FILE, "r");
	long v = -1;
	int ch;

	if (!f)
		sanity_fail("cannot open %s: %s", REFCOUNT_FILE, strerror(errno));
	while ((ch = fgetc(f)) != EOF && (ch < '0' || ch > '9'))
		;
	if (ch != EOF) {
		ungetc(ch, f);
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
	}
	fclose(f);
	if (v < 0)
		sanity_fail("%s holds no number", REFCOUNT_FILE);
	return v;
}

/*
 * Issue #313: a pin whose fd is closed in one process and gdr_close'd in another is released (a
 * non-persistent one once its memory is freed: NVIDIA releases it only in its own process).
 */
static void leakage_pin_pages_fork_cumemalloc(void)
{
	struct sanity_ctx c;
	struct gpu_buf b;
	long before, after;
	int go[2], fd, shared;
	gdr_mh_t mh;
	pid_t pid;

	if (access(REFCOUNT_FILE, R_OK))
		sanity_waive("%s is absent (no gdrdrv loaded; NVIDIA's gdrdrv without dbg_enabled=1 "
			     "or older than 2.5; or not root)", REFCOUNT_FILE);
	need_gdrdrv("the refcount is gdrdrv's");
	ctx_init(&c);
	before = read_refcount();
	SANITY_RET(pipe(go) ? errno : 0, 0);
	/*
	 * This library closes its own descriptor in fork children, where GDRCopy's leaves it: the
	 * child shares the file through a copy made behind the library's back, as GDRCopy's
	 * child did through the library's (or one passed over a UNIX socket would).
	 */
	fd = find_gdrdrv_fd();
	if (fd < 0)
		sanity_fail("the library holds no /dev/gdrdrv fd under the gdrdrv backend");
	shared = dup(fd);
	SANITY_RET(shared < 0 ? errno : 0, 0);
	pid = sanity_fork();
	if (pid == 0) {
		msg_recv(go[0]);
		gdr_close(c.g);
		_exit(0);
	}
	close(shared);
	buf_alloc(&c, &b, SANITY_SIZE, MEM_CUMEMALLOC);
	SANITY_RET(gdr_pin_buffer(c.g, b.ptr, b.size, 0, 0, &mh), 0);
	close(fd);
	msg_send(go[1], 'c');
	wait_child_ok(pid, "gdr_close in the fork child");
	after = read_refcount();
	if (!sanity_plat->persistent) {
		/*
		 * NVIDIA releases a non-persistent pin only in the process that made it: released in
		 * the child, it waits for its free callback, which freeing the memory brings.
		 */
		if (after != before + 1)
			sanity_fail("nv_get_pages refcount is %ld after the child let go, %ld before: "
				    "the pin must wait for its free callback", after, before);
		buf_free(&b);
		after = read_refcount();
		if (after != before)
			sanity_fail("nv_get_pages refcount is %ld after the memory was freed, %ld "
				    "before", after, before);
	} else {
		if (after != before)
			sanity_fail("nv_get_pages refcount is %ld after both processes let go, %ld "
				    "before", after, before);
		buf_free(&b);
	}
	tool_cuda_fini(&c.cu);
}

#define BOTH(name) \
	static void name##_cumemalloc(void) { name(MEM_CUMEMALLOC); } \
	static void name##_vmmalloc(void) { name(MEM_VMM); }

BOTH(access_after_gdr_close)
BOTH(access_after_free)
BOTH(two_mappings)
BOTH(fork_access_after_free)
BOTH(fork_after_gdr_map)
BOTH(fork_child_gdr_map_parent)
BOTH(fork_map_and_free)

static void unix_sock_pin_cumemalloc(void) { unix_sock_shared_fd(MEM_CUMEMALLOC, 1); }
static void unix_sock_pin_vmmalloc(void) { unix_sock_shared_fd(MEM_VMM, 1); }
static void unix_sock_map_cumemalloc(void) { unix_sock_shared_fd(MEM_CUMEMALLOC, 0); }
static void unix_sock_map_vmmalloc(void) { unix_sock_shared_fd(MEM_VMM, 0); }

#define INV(name, fn) { "invalidation_" name, fn, 0 }

const struct sanity_case sanity_cases_invalidation[] = {
	INV("access_after_gdr_close_cumemalloc", access_after_gdr_close_cumemalloc),
	INV("access_after_gdr_close_vmmalloc", access_after_gdr_close_vmmalloc),
	INV("access_after_free_cumemalloc", access_after_free_cumemalloc),
	INV("access_after_free_vmmalloc", access_after_free_vmmalloc),
	INV("two_mappings_cumemalloc", two_mappings_cumemalloc),
	INV("two_mappings_vmmalloc", two_mappings_vmmalloc),
	INV("fork_access_after_free_cumemalloc", fork_access_after_free_cumemalloc),
	INV("fork_access_after_free_vmmalloc", fork_access_after_free_vmmalloc),
	INV("fork_after_gdr_map_cumemalloc", fork_after_gdr_map_cumemalloc),
	INV("fork_after_gdr_map_vmmalloc", fork_after_gdr_map_vmmalloc),
	INV("fork_child_gdr_map_parent_cumemalloc", fork_child_gdr_map_parent_cumemalloc),
	INV("fork_child_gdr_map_parent_vmmalloc", fork_child_gdr_map_parent_vmmalloc),
	INV("fork_map_and_free_cumemalloc", fork_map_and_free_cumemalloc),
	INV("fork_map_and_free_vmmalloc", fork_map_and_free_vmmalloc),
	INV("unix_sock_shared_fd_gdr_pin_buffer_cumemalloc", unix_sock_pin_cumemalloc),
	INV("unix_sock_shared_fd_gdr_pin_buffer_vmmalloc", unix_sock_pin_vmmalloc),
	INV("unix_sock_shared_fd_gdr_map_cumemalloc", unix_sock_map_cumemalloc),
	INV("unix_sock_shared_fd_gdr_map_vmmalloc", unix_sock_map_vmmalloc),
	INV("fork_child_gdr_pin_parent_with_tokens", fork_child_gdr_pin_parent_with_tokens),
	{ "leakage_pin_pages_fork_cumemalloc", leakage_pin_pages_fork_cumemalloc, 1 },
	{ NULL, NULL, 0 },
};
