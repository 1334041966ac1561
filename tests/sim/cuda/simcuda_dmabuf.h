/* SPDX-License-Identifier: MIT */
/*
 * Test hooks of the simulated CUDA driver's dma-buf export (tests/sim/cuda/dmabuf.c). Not part
 * of the CUDA API: the dma-buf backend's tests read these to check that every fd is closed.
 */
#ifndef SIMCUDA_DMABUF_H
#define SIMCUDA_DMABUF_H

struct simcuda_dmabuf_counters {
	long exported;		/* fds handed out by cuMemGetHandleForAddressRange, ever */
	long open;		/* of those, the ones still open in this process */
};

/* A snapshot, taken under the simulator's lock. */
void simcuda_dmabuf_get_counters(struct simcuda_dmabuf_counters *c);

#endif
