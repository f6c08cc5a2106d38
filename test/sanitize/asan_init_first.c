/*
 * test/sanitize/asan_init_first.c — preloaded after the ASan runtime into
 * the uninstrumented PostgreSQL server of test/sanitize/run, so that ASan
 * initializes before any library constructor holds one of glibc's gettext
 * locks.
 *
 * Why: with only libasan preloaded, Debian's postgres (and psql) hang at
 * start.  The first constructor that allocates is libgpg-error's (pulled in
 * by libsystemd and libgcrypt), inside bindtextdomain() with glibc's
 * _nl_state_lock write-locked; that malloc() starts ASan's lazy
 * initialization, which calls dlerror(), whose gettext takes and releases
 * the same lock; the lock is left corrupt and PostgreSQL's own
 * bindtextdomain() in main() waits on it for ever (seen in gdb).
 *
 * This bindtextdomain() makes one allocation first, outside the lock, so
 * ASan is initialized by then, and calls glibc's.  Not part of the product.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>

char	   *bindtextdomain(const char *domainname, const char *dirname);

char *
bindtextdomain(const char *domainname, const char *dirname)
{
	static char *(*real) (const char *, const char *);
	void	   *volatile first = malloc(1);	/* volatile: not optimized away */

	free(first);
	if (real == NULL)
		real = (char *(*) (const char *, const char *)) dlsym(RTLD_NEXT, "bindtextdomain");
	return real(domainname, dirname);
}
