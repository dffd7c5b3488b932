/* SPDX-License-Identifier: GPL-3.0-or-later */
/* kallsyms: kernel and module symbols from /proc/kallsyms, for naming kernel frames. */
#ifndef KALLSYMS_H
#define KALLSYMS_H

#include <stdint.h>
#include <stdio.h>

struct ksyms;

/*
 * Parse kallsyms-format text from F ("ADDR TYPE NAME[\t[MODULE]]" per line). Only text
 * symbols (types t, T, w, W) are kept; lines that do not parse are skipped, names are bounded
 * to 255 bytes. Returns a new table the caller frees with ksyms__free, or NULL with errno set
 * (ENOMEM; ENODATA when every address is 0, i.e. kptr_restrict hides them).
 */
struct ksyms *ksyms__parse(FILE *f);

/* ksyms__parse of the file at PATH (normally "/proc/kallsyms"); NULL with errno on failure. */
struct ksyms *ksyms__load(const char *path);

/* Free the table. NULL is fine. */
void ksyms__free(struct ksyms *ks);

/*
 * The symbol with the greatest address <= ADDR. Returns its name (owned by KS) and sets
 * *offset to ADDR - start when OFFSET is not NULL; NULL when ADDR is below every symbol.
 * *module gets the module name or NULL for the kernel itself, when MODULE is not NULL.
 */
const char *ksyms__lookup(const struct ksyms *ks, uint64_t addr, uint64_t *offset,
			  const char **module);

/* Number of symbols kept. */
size_t ksyms__count(const struct ksyms *ks);

#endif
