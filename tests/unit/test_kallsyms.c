// SPDX-License-Identifier: GPL-3.0-or-later
/* kallsyms: parsing and lookup. */
#include <errno.h>
#include <string.h>
#include "symbolize/kallsyms.h"
#include "suites.h"

static const char sample[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81001000 t do_one_initcall\n"
	"ffffffff81002000 D some_data\n"			/* not text: skipped */
	"ffffffff81003000 W weak_fn\n"
	"this line is garbage\n"
	"ffffffffc0001000 t mod_fn\t[e1000]\n"
	"ffffffffc0002000 T mod_fn2\t[e1000]\n"
	"ffffffff80fff000 T below\n";				/* out of order on purpose */

static struct ksyms *parse_string(const char *text)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct ksyms *ks;

	if (!f)
		return NULL;
	ks = ksyms__parse(f);
	fclose(f);
	return ks;
}

static void test_parse_lookup(void)
{
	static const struct {
		uint64_t addr;
		const char *name;
		uint64_t off;
		const char *module;
	} cases[] = {
		{ 0xffffffff81000000, "_stext", 0, NULL },
		{ 0xffffffff81000fff, "_stext", 0xfff, NULL },
		{ 0xffffffff81002500, "do_one_initcall", 0x1500, NULL },	/* data skipped */
		{ 0xffffffff81003010, "weak_fn", 0x10, NULL },
		{ 0xffffffffc0001004, "mod_fn", 4, "e1000" },
		{ 0xffffffffc0002000, "mod_fn2", 0, "e1000" },
		{ 0xffffffff80fff001, "below", 1, NULL },
		{ 0xffffffff80ffefff, NULL, 0, NULL },
	};
	struct ksyms *ks = parse_string(sample);

	CU_ASSERT_PTR_NOT_NULL_FATAL(ks);
	CU_ASSERT_EQUAL(ksyms__count(ks), 6);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *module = "x", *name;
		uint64_t off = 99;

		name = ksyms__lookup(ks, cases[i].addr, &off, &module);
		if (!cases[i].name) {
			CU_ASSERT_PTR_NULL(name);
			continue;
		}
		CU_ASSERT_PTR_NOT_NULL_FATAL(name);
		CU_ASSERT_STRING_EQUAL(name, cases[i].name);
		CU_ASSERT_EQUAL(off, cases[i].off);
		if (cases[i].module) {
			CU_ASSERT(module && !strcmp(module, cases[i].module));
		} else {
			CU_ASSERT_PTR_NULL(module);
		}
	}
	ksyms__free(ks);
}

static void test_hidden_addresses(void)
{
	struct ksyms *ks = parse_string("0000000000000000 T _stext\n0000000000000000 t foo\n");

	CU_ASSERT_PTR_NULL(ks);
	CU_ASSERT_EQUAL(errno, ENODATA);
}

static void test_long_name_bounded(void)
{
	char text[2048];
	struct ksyms *ks;

	memset(text, 'a', sizeof(text));
	memcpy(text, "ffffffff81000000 T ", 19);
	memcpy(text + 1000, "\nffffffff81001000 T ok\n", 24);
	ks = parse_string(text);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ks);
	CU_ASSERT_EQUAL(ksyms__count(ks), 1);
	CU_ASSERT_STRING_EQUAL(ksyms__lookup(ks, 0xffffffff81001000, NULL, NULL), "ok");
	ksyms__free(ks);
}

static void test_real_kallsyms(void)
{
	struct ksyms *ks = ksyms__load("/proc/kallsyms");

	if (!ks && errno == ENODATA)
		return;	/* not root: addresses hidden */
	CU_ASSERT_PTR_NOT_NULL_FATAL(ks);
	CU_ASSERT(ksyms__count(ks) > 1000);
	ksyms__free(ks);
}

int register_kallsyms_suite(void)
{
	CU_pSuite s = CU_add_suite("kallsyms", NULL, NULL);

	if (!s || !CU_add_test(s, "parse and look up", test_parse_lookup) ||
	    !CU_add_test(s, "all-zero addresses are refused", test_hidden_addresses) ||
	    !CU_add_test(s, "overlong names are skipped", test_long_name_bounded) ||
	    !CU_add_test(s, "the real /proc/kallsyms", test_real_kallsyms))
		return -1;
	return 0;
}
