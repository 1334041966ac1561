/* SPDX-License-Identifier: MIT */
/*
 * test_copy_select's parts: its main and the cases that need a process where nothing is chosen
 * yet (test_copy_select.c), and the checks of the tables themselves (copy_select_tables.c).
 */
#ifndef GDR_TEST_COPY_SELECT_H
#define GDR_TEST_COPY_SELECT_H

#include "copy_impl.h"

/* The automatic choice for this CPU, chosen before any case. */
extern struct gdr_copy_table auto_table;
/* The same routines and classes in both directions, and the same fence. */
int tables_equal(const struct gdr_copy_table *a, const struct gdr_copy_table *b);

/* copy_select_tables.c */
void copy_select_tables(void);
void copy_select_auto(void);
void copy_select_forced(void);
void copy_select_names(void);
void copy_select_size_names(void);
void copy_select_fences(void);
void copy_select_impl_mask(void);
void copy_select_impl_for(void);

#endif
