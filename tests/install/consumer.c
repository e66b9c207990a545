/* A program outside the tree: only the installed header and library. It
 * reads the ID and the segments and drives the aperture. Not a test by
 * itself: tests/install/test_install.sh builds it against a staged install
 * and fails unless its output equals the expected text exactly; it also
 * exits non-zero on any error or a read-back mismatch. */
#include <stdio.h>
#include <string.h>

#include <gmc_regs.h>
#include <gmc_sim.h>

int main(void)
{
    gmc_sim *s;
    if (gmc_sim_create(NULL, &s) != GMC_SIM_OK) return 1;
    uint32_t id = 0, n = 0;
    if (gmc_sim_reg_read(s, GMC_REG_ID, &id) || gmc_sim_reg_read(s, GMC_REG_SEG_COUNT, &n)) return 2;
    printf("id %08x segments %u\n", id, n);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t base = 0, size = 0;
        uint32_t flags = 0;
        if (gmc_sim_reg_read64(s, GMC_REG_SEG_BASE_LO_N(i), &base) ||
            gmc_sim_reg_read64(s, GMC_REG_SEG_SIZE_LO_N(i), &size) ||
            gmc_sim_reg_read(s, GMC_REG_SEG_FLAGS_N(i), &flags))
            return 3;
        printf("segment %u base %llx size %llx flags %x\n", i + 1, (unsigned long long)base,
               (unsigned long long)size, flags);
    }
    const char msg[] = "through BAR1";
    char back[sizeof msg] = {0};
    if (gmc_sim_aperture_write(s, 0x1003, msg, sizeof msg) || gmc_sim_aperture_read(s, 0x1003, back, sizeof msg))
        return 4;
    printf("aperture %s\n", back);
    gmc_sim_destroy(s);
    return strcmp(back, msg) != 0;
}
