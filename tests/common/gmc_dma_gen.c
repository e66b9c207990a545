/* gmc_dma_gen: see gmc_dma_gen.h. */
#include "gmc_dma_gen.h"

#include "gmc_regs.h"

#define PAGE 4096u

static uint8_t gen_u8(struct gmc_dma_gen_in *in)
{
    if (in->n == 0)
        return 0;
    in->n--;
    return *in->p++;
}

static uint64_t gen_uint(struct gmc_dma_gen_in *in, unsigned bytes)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes; i++)
        v |= (uint64_t)gen_u8(in) << (8u * i);
    return v;
}

static uint32_t gen_below(struct gmc_dma_gen_in *in, uint32_t n)
{
    return (uint32_t)(gen_uint(in, n > 256u ? (n > 65536u ? 4u : 2u) : 1u) % n);
}

static uint64_t vram_addr(const struct gmc_dma_gen_env *f, struct gmc_dma_gen_in *in, uint32_t len)
{
    uint32_t base = f->vwin[gen_u8(in) & 1u];
    uint32_t off = gen_below(in, 65536);
    (void)len;
    return base + off;
}

static struct gmc_side pick_side(const struct gmc_dma_gen_env *f, struct gmc_dma_gen_in *in, uint32_t len)
{
    switch (gen_below(in, 3)) {
    case 0:
        return gmc_side_gpu(vram_addr(f, in, len));
    case 1:
        return gmc_side_gpu(f->ap_base + gen_below(in, f->ap_pages * PAGE));
    default: {
        struct gmc_side sd = { 1, f->meta, gen_below(in, f->data_pages), gen_below(in, PAGE) };
        return sd;
    }
    }
}

struct gmc_pkt gmc_dma_gen_packet(const struct gmc_dma_gen_env *f, struct gmc_dma_gen_in *in)
{
    uint8_t k = gen_u8(in);
    uint32_t len = gen_u8(in) < 200 ? 1u + gen_below(in, 256) : 1u + gen_below(in, 8192);
    switch (k % 16u) {
    case 0:
        return gmc_pkt_nop();
    case 1:
    case 2:
    case 3:
    case 4: {
        struct gmc_side a = pick_side(f, in, len), b = pick_side(f, in, len);
        return gmc_pkt_transfer(a, b, len);
    }
    case 5:
        return gmc_pkt_fill((uint32_t)vram_addr(f, in, len), len, (uint32_t)gen_uint(in, 4));
    case 6:
        return gmc_pkt_discard((uint32_t)vram_addr(f, in, len), len, gen_u8(in) & 1u);
    case 7:
    case 8: {
        unsigned size = 1u + gen_below(in, 8);
        uint64_t at;
        int gpu = 1;
        switch (gen_below(in, 3)) {
        case 0:
            at = vram_addr(f, in, size);
            break;
        case 1:
            at = f->ap_base + gen_below(in, f->ap_pages * PAGE);
            break;
        default:
            at = f->data + gen_below(in, f->data_pages * PAGE - 8);
            gpu = 0;
        }
        if ((k % 16u) == 7)
            return gmc_pkt_read_physical(at, gpu, size);
        return gmc_pkt_write_physical(at, gpu, size, gen_uint(in, 8));
    }
    case 9: {
        uint32_t pg = gen_below(in, f->ap_pages), n = 1u + gen_below(in, 4);
        uint8_t fl = gen_u8(in);
        return gmc_pkt_map_aperture(f->ap_base + pg * PAGE, n, f->meta, gen_below(in, f->data_pages), fl & 1u, !(fl & 2u),
                                    !(fl & 4u));
    }
    case 10:
        return gmc_pkt_unmap_aperture(f->ap_base + gen_below(in, f->ap_pages) * PAGE, 1u + gen_below(in, 3));
    case 11:
        return gmc_pkt_flush_tlb();
    case 12: {
        uint8_t fl = gen_u8(in);
        return gmc_pkt_fence(gen_uint(in, 8), f->data + 8u * gen_below(in, f->data_pages * PAGE / 8u), fl & 1u,
                             (fl >> 1) & 1u);
    }
    case 13: { /* anything */
        struct gmc_pkt p;
        for (unsigned i = 0; i < 4; i++)
            p.w[i] = gen_uint(in, 8);
        if ((p.w[0] & GMC_PKT_W0_OPCODE_MASK) == GMC_DMA_OP_INDIRECT)
            p.w[0] &= ~GMC_PKT_W0_OPCODE_MASK; /* opcode 0: an OPCODE fault */
        return p;
    }
    case 14: { /* a GPU address anywhere */
        struct gmc_side a = gmc_side_gpu(gen_uint(in, 4)), b = gmc_side_gpu(vram_addr(f, in, len));
        return (gen_u8(in) & 1u) ? gmc_pkt_transfer(a, b, len) : gmc_pkt_transfer(b, a, len);
    }
    default: { /* a valid packet with one bit flipped */
        struct gmc_side a = pick_side(f, in, len), b = pick_side(f, in, len); /* in this order */
        struct gmc_pkt p = gmc_pkt_transfer(a, b, len);
        unsigned bit = gen_below(in, 256);
        p.w[bit / 64u] ^= 1ull << (bit % 64u);
        return p;
    }
    }
}

