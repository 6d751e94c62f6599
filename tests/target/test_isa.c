/* The ISA variant: what the library finds on this core must be what the core runs, and
 * GEMM_RVV_ISA must force a variant or fail cleanly.
 *
 * The truth it is held against is the core itself: an instruction that raises SIGILL is not
 * there. The choice is made once per process, so each GEMM_RVV_ISA value is tried in a forked
 * child that has not touched the library yet. GEMM_RVV_TEST_EXPECT_ISA (set by
 * tools/run-target-tests.sh per emulator) pins what the automatic choice must be, so an emulator
 * started without the extension fails here instead of silently testing the base variant. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "gemm_rvv.h"
#include "isa.h"

/* ---- What the core runs: SIGILL or not ---- */

static sigjmp_buf sigill_jump;

static void on_sigill(int sig)
{
    (void)sig;
    siglongjmp(sigill_jump, 1);
}

static int executes(void (*insn)(void))
{
    struct sigaction catch_it, old;
    memset(&catch_it, 0, sizeof catch_it);
    catch_it.sa_handler = on_sigill;
    sigemptyset(&catch_it.sa_mask);
    sigaction(SIGILL, &catch_it, &old);
    volatile int ran = 0;
    if (sigsetjmp(sigill_jump, 1) == 0) {
        insn();
        ran = 1;
    }
    sigaction(SIGILL, &old, NULL);
    return ran;
}

/* The assembler is told about V and Zvfbfwma here only: the program is built for rv64gc, so
 * the compiler keeps nothing in vector registers that these could clobber. */
static void run_vsetvli(void)
{
    __asm__ volatile(".option push\n"
                     ".option arch, +v\n"
                     "vsetivli zero, 1, e32, m1, ta, ma\n"
                     ".option pop");
}

static void run_vfwmaccbf16(void)
{
    __asm__ volatile(".option push\n"
                     ".option arch, +v, +zvfbfwma\n"
                     "vsetivli zero, 1, e16, mf2, ta, ma\n"
                     "vfwmaccbf16.vv v8, v9, v10\n"
                     ".option pop");
}

static int core_has_v, core_has_zvfbfwma;

/* ---- One fresh process per GEMM_RVV_ISA value ---- */

struct choice {
    char isa[16];    /* the variant chosen (detected, or forced) */
    char serves[16]; /* gemm_rvv_isa(): the variant whose kernels serve */
    gemm_rvv_status status;
    struct gr_isa_caps caps;
    char reason[256];
};

/* What the library chooses in a child whose GEMM_RVV_ISA is `forced` (NULL: unset). */
static struct choice choice_in_child(const char *forced)
{
    struct choice c;
    memset(&c, 0, sizeof c);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        if (forced)
            setenv("GEMM_RVV_ISA", forced, 1);
        else
            unsetenv("GEMM_RVV_ISA");
        snprintf(c.isa, sizeof c.isa, "%s", gr_isa_name(gr_isa_selected()));
        snprintf(c.serves, sizeof c.serves, "%s", gemm_rvv_isa());
        c.status = gemm_rvv_isa_status();
        c.caps = *gr_isa_caps();
        snprintf(c.reason, sizeof c.reason, "%s", gr_isa_reason());
        _exit(write(fds[1], &c, sizeof c) == (ssize_t)sizeof c ? 0 : 1);
    }
    close(fds[1]);
    size_t got = 0;
    while (got < sizeof c) {
        ssize_t r = read(fds[0], (char *)&c + got, sizeof c - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fds[0]);
    int wstatus = 0;
    assert_int_equal(waitpid(pid, &wstatus, 0), pid);
    assert_true(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
    assert_int_equal(got, sizeof c);
    if (forced)
        printf("  GEMM_RVV_ISA=\"%s\" -> %s\n", forced, c.reason);
    else
        printf("  GEMM_RVV_ISA unset -> %s\n", c.reason);
    return c;
}

static void test_detection_matches_the_core(void **state)
{
    (void)state;
    struct choice c = choice_in_child(NULL);
    assert_int_equal(c.caps.vector, core_has_v);
    assert_int_equal(c.caps.zvfbfwma, core_has_zvfbfwma);
    if (c.caps.zvfbfwma)
        assert_true(c.caps.zvfbfwma_source == GR_ISA_FROM_HWPROBE ||
                    c.caps.zvfbfwma_source == GR_ISA_FROM_CPUINFO);
    else
        assert_int_equal(c.caps.zvfbfwma_source, GR_ISA_FROM_NOWHERE);
    assert_string_equal(c.isa, core_has_zvfbfwma ? "zvfbfwma" : "base");
    /* Every plan has both variants' tiles: the variant chosen is the one that serves. */
    assert_string_equal(c.serves, c.isa);
    assert_int_equal(c.status, GEMM_RVV_OK);
    assert_true(strncmp(c.reason, c.isa, strlen(c.isa)) == 0);

    /* The emulator's configuration says what the automatic choice must be. */
    const char *expect = getenv("GEMM_RVV_TEST_EXPECT_ISA");
    if (expect != NULL && expect[0] != '\0')
        assert_string_equal(c.isa, expect);

    /* Whatever the isa line says must hold too: it never claims what the core cannot run. */
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f != NULL) {
        const int listed = gr_cpuinfo_lists(f, "zvfbfwma");
        fclose(f);
        printf("  /proc/cpuinfo: %s\n", listed < 0 ? "no isa line"
                                        : listed ? "lists zvfbfwma" : "no zvfbfwma");
        if (listed == 1)
            assert_true(core_has_zvfbfwma);
    }
}

static void test_auto_and_empty_mean_unset(void **state)
{
    (void)state;
    const char *isa = core_has_zvfbfwma ? "zvfbfwma" : "base";
    struct choice c = choice_in_child("auto");
    assert_string_equal(c.isa, isa);
    assert_int_equal(c.status, GEMM_RVV_OK);
    c = choice_in_child("");
    assert_string_equal(c.isa, isa);
    assert_int_equal(c.status, GEMM_RVV_OK);
}

static void test_force_base(void **state)
{
    (void)state;
    struct choice c = choice_in_child("base");
    assert_string_equal(c.isa, "base");
    assert_int_equal(c.status, GEMM_RVV_OK);
    assert_non_null(strstr(c.reason, "forced by GEMM_RVV_ISA"));
}

static void test_force_zvfbfwma(void **state)
{
    (void)state;
    struct choice c = choice_in_child("zvfbfwma");
    if (core_has_zvfbfwma) {
        assert_string_equal(c.isa, "zvfbfwma");
        assert_int_equal(c.status, GEMM_RVV_OK);
    } else {
        assert_string_equal(c.isa, "none");
        assert_int_equal(c.status, GEMM_RVV_ERR_ISA);
        assert_non_null(strstr(c.reason, "GEMM_RVV_ISA=\"zvfbfwma\""));
    }
}

static void test_unknown_value_fails(void **state)
{
    (void)state;
    const char *bad[] = {"Zvfbfwma", "zvfbfmin", "base ", "v", "rvv"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct choice c = choice_in_child(bad[i]);
        assert_string_equal(c.isa, "none");
        assert_int_equal(c.status, GEMM_RVV_ERR_ISA);
    }
    assert_non_null(strstr(gemm_rvv_strerror(GEMM_RVV_ERR_ISA), "GEMM_RVV_ISA"));
}

/* ---- The pure choice, on made-up cores ---- */

static void test_choose_table(void **state)
{
    (void)state;
    const struct gr_isa_caps no_v = {0, 0, GR_ISA_FROM_NOWHERE};
    const struct gr_isa_caps v = {1, 0, GR_ISA_FROM_NOWHERE};
    const struct gr_isa_caps bf = {1, 1, GR_ISA_FROM_HWPROBE};
    const struct {
        const struct gr_isa_caps *caps;
        const char *forced;
        gemm_rvv_status status;
        enum gr_isa isa;
    } rows[] = {
        {&no_v, NULL, GEMM_RVV_OK, GR_ISA_BASE},
        {&no_v, "base", GEMM_RVV_OK, GR_ISA_BASE},
        {&no_v, "zvfbfwma", GEMM_RVV_ERR_ISA, GR_ISA_NONE},
        {&v, NULL, GEMM_RVV_OK, GR_ISA_BASE},
        {&v, "auto", GEMM_RVV_OK, GR_ISA_BASE},
        {&v, "zvfbfwma", GEMM_RVV_ERR_ISA, GR_ISA_NONE},
        {&bf, NULL, GEMM_RVV_OK, GR_ISA_ZVFBFWMA},
        {&bf, "", GEMM_RVV_OK, GR_ISA_ZVFBFWMA},
        {&bf, "base", GEMM_RVV_OK, GR_ISA_BASE},
        {&bf, "zvfbfwma", GEMM_RVV_OK, GR_ISA_ZVFBFWMA},
        {&bf, "ZVFBFWMA", GEMM_RVV_ERR_ISA, GR_ISA_NONE},
        {&bf, "none", GEMM_RVV_ERR_ISA, GR_ISA_NONE},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        enum gr_isa isa = GR_ISA_BASE;
        assert_int_equal(gr_isa_choose(rows[i].forced, rows[i].caps, &isa), rows[i].status);
        assert_int_equal(isa, rows[i].isa);
    }
    assert_string_equal(gr_isa_name(GR_ISA_BASE), "base");
    assert_string_equal(gr_isa_name(GR_ISA_ZVFBFWMA), "zvfbfwma");
    assert_string_equal(gr_isa_name(GR_ISA_NONE), "none");
}

/* ---- The /proc/cpuinfo fallback, on made-up texts ---- */

static int lists(const char *text)
{
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    assert_non_null(f);
    const int r = gr_cpuinfo_lists(f, "zvfbfwma");
    fclose(f);
    return r;
}

static void test_cpuinfo_parsing(void **state)
{
    (void)state;
    /* One hart, the name last on its line or in the middle. */
    assert_int_equal(lists("processor\t: 0\nhart\t\t: 0\nisa\t\t: rv64imafdcv_zicbom_zvfbfwma\n"
                           "mmu\t\t: sv39\n"), 1);
    assert_int_equal(lists("isa\t\t: rv64imafdcv_zvfbfmin_zvfbfwma_zvfh\n"), 1);
    assert_int_equal(lists("isa : rv64imafdcv_zvfbfwma"), 1); /* no newline at the end */
    /* Names that merely contain it, or a base without it. */
    assert_int_equal(lists("isa\t\t: rv64imafdcv_zvfbfwmax_zvfbfmin\n"), 0);
    assert_int_equal(lists("isa\t\t: rv64imafdcv_xzvfbfwma\n"), 0);
    assert_int_equal(lists("isa\t\t: rv64imafdcv\n"), 0);
    /* Every hart must have it, as hwprobe's answer is the AND over the CPUs. */
    assert_int_equal(lists("processor\t: 0\nisa\t\t: rv64imafdcv_zvfbfwma\n"
                           "processor\t: 1\nisa\t\t: rv64imafdc\n"), 0);
    assert_int_equal(lists("processor\t: 0\nisa\t\t: rv64imafdcv_zvfbfwma\n"
                           "processor\t: 1\nisa\t\t: rv64imafdcv_zvfbfwma\n"), 1);
    /* "hart isa" is a different key; with it alone nothing is known. */
    assert_int_equal(lists("hart isa\t: rv64imafdcv_zvfbfwma\nisa\t\t: rv64imafdcv\n"), 0);
    assert_int_equal(lists("hart isa\t: rv64imafdcv_zvfbfwma\n"), -1);
    /* An x86 host's cpuinfo (what QEMU user mode may show) has no isa line. */
    assert_int_equal(lists("processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu avx2\n"),
                     -1);
    assert_int_equal(lists(""), -1);
}

int main(void)
{
    core_has_v = executes(run_vsetvli);
    core_has_zvfbfwma = core_has_v && executes(run_vfwmaccbf16);
    printf("this core runs: V %s, vfwmaccbf16 %s\n", core_has_v ? "yes" : "no",
           core_has_zvfbfwma ? "yes" : "no");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_detection_matches_the_core),
        cmocka_unit_test(test_auto_and_empty_mean_unset),
        cmocka_unit_test(test_force_base),
        cmocka_unit_test(test_force_zvfbfwma),
        cmocka_unit_test(test_unknown_value_fails),
        cmocka_unit_test(test_choose_table),
        cmocka_unit_test(test_cpuinfo_parsing),
    };
    return cmocka_run_group_tests_name("isa", tests, NULL, NULL);
}
